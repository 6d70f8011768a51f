"""The LLM judge: any OpenAI-compatible chat endpoint grades (query, passage) pairs on the TREC 0–3 scale, or keeps
and drops queries (seed 000 step 2: keep a reader's comment that describes a plot, drop one that only expresses a
feeling).

- Nothing leaves the site unless an endpoint is configured (LLM_JUDGE_BASE_URL, or --endpoint); the key comes
  from LLM_JUDGE_API_KEY and is never stored.
- The default prompt follows UMBRELA (Upadhyay et al., 2024, after Thomas et al., 2023) and asks for its answer
  form, `##final score: N`; a campaign may replace it (settings["llm_prompt"], with {query} and {passage} and no
  other {name}: PROMPTS). Temperature 0. The answer is stored as it came and read strictly: exactly one
  `##final score: N` with N a single digit 0–3; anything else is an error, counted and shown, never a 0.
- One source per (kind, endpoint, model, prompt, temperature, campaign): running the same judge again finds it
  and asks only what it has no answer for, so a restart asks nothing twice (each answer is stored as it comes).
- Requests are spaced by the rate limit, retried with exponential backoff on timeouts, connection errors, 429
  and 5xx (Retry-After honoured), and stop at the spend cap: requests and tokens over every run of the source.
  A refused key or an unknown model (401, 403, 404) stops the job: asking again would not help.
"""

import hashlib
import json
import re
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Sum

from assessments.machine import examples as texts_of
from assessments.machine.jobs import Progress, claim, end
from assessments.models import MachineJob, MachineLabel, MachineLabelSource, Pool, PoolCandidate, Topic
from retrieval.ingest import load_json

DEFAULT_PROMPT = """Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the \
following meanings:
0 = represent that the passage has nothing to do with the query,
1 = represents that the passage seems related to the query but does not answer it,
2 = represents that the passage has some answer for the query, but the answer may be a bit unclear, or hidden \
amongst extraneous information and
3 = represents that the passage is dedicated to the query and contains the exact answer.

Important Instruction: Assign category 1 if the passage is somewhat related to the topic but not completely, \
category 2 if passage presents something very important related to the entire topic but also has some extra \
information and category 3 if the passage only and entirely refers to the topic. If none of the above satisfies \
give it category 0.

Query: {query}
Passage: {passage}

Split this problem into steps:
Consider the underlying intent of the search.
Measure how well the content matches a likely intent of the query (M).
Measure how trustworthy the passage is (T).
Consider the aspects above and the relative importance of each, and decide on a final score (O). Final score \
must be an integer value only.
Do not provide any code in result. Provide each score in the format of: ##final score: score without providing \
any reasoning."""

FILTER_PROMPT = """A reader wrote this comment while reading a book:

Comment: {query}

Does the comment describe a specific plot of the book (an event, an action, what a character does or what \
happens), or does it only express the reader's feeling or opinion (for example "This is so funny!" or \
"I can't understand this")?
Answer in the format: ##plot: yes (it describes a plot) or ##plot: no (it only expresses a feeling), without \
providing any reasoning."""

# A campaign's own prompts (its settings keys): the default, the placeholders a prompt must have, those it may have.
PROMPTS = {
    "llm_prompt": (DEFAULT_PROMPT, ("{query}", "{passage}"), ()),
    "llm_filter_prompt": (FILTER_PROMPT, ("{query}",), ()),
}
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
SCORE = re.compile(r"##\s*final score:[ \t]*([^\n]*)", re.IGNORECASE)
PLOT = re.compile(r"##\s*plot:[ \t]*([^\n]*)", re.IGNORECASE)
GRADES = (0, 1, 2, 3)
TRANSIENT_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
FATAL_STATUS = {401, 403, 404}
MAX_RETRY_AFTER = 120.0
MAX_REPLY_BYTES = 8 * 1024 * 1024  # a chat completion is kilobytes; a bigger reply is refused unread (issue 38, 8)
READ_CHUNK = 64 * 1024


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is not followed: urllib would send the request's headers, the key among them, to wherever the
    endpoint points (another host included). The 3xx comes back as an HTTPError (_refused_redirect)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


_opener = urllib.request.build_opener(_NoRedirects)


class ReplyTooLarge(ValueError):
    """A reply over MAX_REPLY_BYTES: one unreadable answer, its rest never read."""


class LLMInvalid(ValueError):
    """A judge that cannot run as asked (no endpoint, a prompt without its fields); the message names the option."""


class AnswerInvalid(ValueError):
    """An answer that is not in the asked form; the message says what was wrong."""


class Fatal(Exception):
    """The endpoint refuses the judge itself (key, model, address): the job stops."""


class Transient(Exception):
    """A failure worth trying again (timeout, connection, 429, 5xx); `wait` is what the endpoint asked for."""

    def __init__(self, message, wait=None):
        super().__init__(message)
        self.wait = wait


# Answers -------------------------------------------------------------------------------------------------------


def parse_grade(answer: str) -> int:
    """The grade of an answer: exactly one `##final score: N`, N one of 0-3 and nothing else on its line."""
    return _parse(answer, SCORE, "##final score: N", {str(g): g for g in GRADES})


def parse_keep(answer: str) -> int:
    """1 (the query describes a plot: keep it) or 0 (only a feeling: drop it), from `##plot: yes|no`."""
    return _parse(answer, PLOT, "##plot: yes|no", {"yes": 1, "no": 0})


def _parse(answer, pattern, form, values):
    found = pattern.findall(answer or "")
    if not found:
        raise AnswerInvalid(f"no {form!r} in the answer")
    if len(found) > 1:
        raise AnswerInvalid(f"{len(found)} times {form!r} in the answer: which one?")
    value = found[0].strip().lower()
    if value not in values:
        raise AnswerInvalid(f"{form!r}: {found[0].strip()[:40]!r} is not one of {', '.join(values)}")
    return values[value]


# The endpoint --------------------------------------------------------------------------------------------------


@dataclass
class Endpoint:
    """An OpenAI-compatible chat completions endpoint: base URL (…/v1), model, key, timeout."""

    base_url: str
    model: str
    api_key: str = ""
    timeout: float = 60.0

    def chat(self, prompt: str, temperature: float = 0.0) -> dict:
        """One request: {"text", "tokens", "model"}; Transient or Fatal on failure (other HTTP errors: ValueError)."""
        body = json.dumps({"model": self.model, "temperature": temperature,
                           "messages": [{"role": "user", "content": prompt}]}).encode()
        request = urllib.request.Request(self.base_url.rstrip("/") + "/chat/completions", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        if self.api_key:
            request.add_header("Authorization", f"Bearer {self.api_key}")
        try:
            with _opener.open(request, timeout=self.timeout) as response:
                data = load_json(self._read(response).decode("utf-8"))  # a NUL or lone surrogate: unreadable
        except urllib.error.HTTPError as exc:
            if 300 <= exc.code < 400:
                raise Fatal(f"HTTP {exc.code} from {self.base_url}: the endpoint redirects (to "
                            f"{str(exc.headers.get('Location') or '?')[:200]}), and a redirect is not followed: "
                            "the key goes to the configured address only. Configure the address it names.") from None
            detail = exc.read(300)[:300].decode("utf-8", "replace")
            if exc.code in TRANSIENT_STATUS:
                raise Transient(f"HTTP {exc.code}", _retry_after(exc.headers.get("Retry-After"))) from None
            if exc.code in FATAL_STATUS:
                raise Fatal(f"HTTP {exc.code} from {self.base_url}: {detail}") from None
            raise ValueError(f"HTTP {exc.code}: {detail}") from None
        except (TimeoutError, socket.timeout) as exc:
            raise Transient(f"no answer within {self.timeout:g} s") from exc
        except (urllib.error.URLError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise Transient(f"no answer within {self.timeout:g} s") from exc
            raise Transient(f"cannot reach {self.base_url}: {reason}") from exc
        except ReplyTooLarge:
            raise
        except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested past Python's limit
            raise ValueError(f"the answer is not JSON: {str(exc)[:200]}") from None
        try:
            text = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ValueError("the answer has no choices[0].message.content") from None
        usage = data.get("usage") or {}
        tokens = usage.get("total_tokens")
        if not isinstance(tokens, int):
            tokens = (usage.get("prompt_tokens") or 0) + (usage.get("completion_tokens") or 0)
        return {"text": text if isinstance(text, str) else json.dumps(text), "tokens": int(tokens or 0),
                "model": str(data.get("model") or self.model)}


    def _read(self, response) -> bytes:
        """The reply's body: at most MAX_REPLY_BYTES (ValueError past them, the rest unread), and all of it within
        the timeout (a reply dripping in keeps every single read under the socket's timeout)."""
        length = response.headers.get("Content-Length")
        if length and length.isdigit() and int(length) > MAX_REPLY_BYTES:
            raise ReplyTooLarge(f"the answer is {int(length):,} bytes, over the {MAX_REPLY_BYTES:,} taken")
        deadline = time.monotonic() + self.timeout
        chunks, size = [], 0
        while chunk := response.read(READ_CHUNK):
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                raise ReplyTooLarge(f"the answer is over the {MAX_REPLY_BYTES:,} bytes taken")
            if time.monotonic() > deadline:
                raise TimeoutError
            chunks.append(chunk)
        return b"".join(chunks)


def _retry_after(value):
    try:
        return min(MAX_RETRY_AFTER, max(0.0, float(value)))
    except (TypeError, ValueError):
        return None


class RateLimit:
    """At most `per_minute` requests a minute: each waits until its slot."""

    def __init__(self, per_minute: float, clock=time.monotonic, sleep=time.sleep):
        self.interval = 60.0 / per_minute if per_minute and per_minute > 0 else 0.0
        self.clock, self.sleep = clock, sleep
        self.next = 0.0

    def wait(self):
        now = self.clock()
        if now < self.next:
            self.sleep(self.next - now)
            now = self.next
        self.next = now + self.interval


# Sources and jobs -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """Where an LLM job asks (the settings' endpoint and model unless named) and how much it may cost."""

    endpoint: str | None = None
    model: str | None = None
    limit: int | None = None
    max_requests: int | None = None
    max_tokens: int | None = None
    per_minute: float | None = None
    timeout: float | None = None
    retries: int | None = None
    backoff: float = 1.0
    retry_errors: bool = False


@dataclass(frozen=True)
class JudgeRequest(Limits):
    """What the judge asks (pools' candidates graded, or queries kept or dropped), where, and how much it may cost."""

    pools: tuple = ()
    topics: tuple = ()  # query filter: these topics (external ids), or the pools' topics
    campaign_id: int | None = None
    campaign_settings: dict | None = None
    filter_queries: bool = False


def prompt_for(request: JudgeRequest) -> str:
    """The prompt template: the campaign's own (settings llm_prompt / llm_filter_prompt), else the default."""
    return campaign_prompt("llm_filter_prompt" if request.filter_queries else "llm_prompt", request.campaign_settings)


def campaign_prompt(key, campaign_settings, prompts=None) -> str:
    """The template a campaign's settings hold under `key` (one of `prompts`, default PROMPTS), else its default;
    LLMInvalid naming `key` for a template that is not text, lacks a placeholder its job fills, or has a {name} no
    job fills (it would reach the LLM as it is)."""
    default, required, optional = (prompts or PROMPTS)[key]
    prompt = (campaign_settings or {}).get(key) or default
    if not isinstance(prompt, str):
        raise LLMInvalid(f"{key}: the campaign's prompt must be text")
    missing = [field for field in required if field not in prompt]
    if missing:
        raise LLMInvalid(f"{key}: the campaign's prompt has no {' or '.join(missing)}")
    unknown = sorted({f"{{{name}}}" for name in PLACEHOLDER.findall(prompt)} - set(required) - set(optional))
    if unknown:
        known = ", ".join((*required, *optional))
        raise LLMInvalid(f"{key}: the campaign's prompt has {', '.join(unknown)[:200]}, which nothing fills "
                         f"(its placeholders are {known})")
    return prompt


def endpoint_and_model(request) -> tuple[str, str]:
    """The base URL and model a request names, else the settings'; LLMInvalid when either is missing."""
    base_url = request.endpoint or settings.LLM_JUDGE_BASE_URL
    if not base_url:
        raise LLMInvalid("endpoint: no LLM endpoint is configured (LLM_JUDGE_BASE_URL or --endpoint): nothing was sent")
    if not base_url.startswith(("http://", "https://")):
        raise LLMInvalid(f"endpoint: {base_url!r} is not an http(s) URL")
    model = request.model or settings.LLM_JUDGE_MODEL
    if not model:
        raise LLMInvalid("model: no LLM model is configured (LLM_JUDGE_MODEL or --model)")
    return base_url.rstrip("/"), model


def find_source(identity: dict, **fields) -> MachineLabelSource:
    """The source made before for the same `identity` (kind, endpoint, model, prompt, temperature, campaign...),
    else a new one with `fields`: running the same LLM work again goes on with its answers."""
    key = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
    source = MachineLabelSource.objects.filter(key=key).order_by("pk").first()
    if source is None:
        source = MachineLabelSource.objects.create(
            kind=identity["kind"], key=key, checksum=key, model=identity["model"], campaign_id=identity["campaign"],
            status=MachineLabelSource.Status.READY, **fields)
    return source


def job_params(request: Limits, model) -> dict:
    """The limits of a job: the request's, else the settings'."""
    return {
        "limit": request.limit,
        "max_requests": request.max_requests if request.max_requests is not None else settings.LLM_JUDGE_MAX_REQUESTS,
        "max_tokens": request.max_tokens if request.max_tokens is not None else settings.LLM_JUDGE_MAX_TOKENS,
        "per_minute": request.per_minute if request.per_minute is not None else settings.LLM_JUDGE_REQUESTS_PER_MINUTE,
        "timeout": request.timeout if request.timeout is not None else settings.LLM_JUDGE_TIMEOUT,
        "retries": request.retries if request.retries is not None else settings.LLM_JUDGE_RETRIES,
        "backoff": request.backoff, "model": model,
    }


def create_job(request: JudgeRequest) -> MachineJob:
    """The judge's source (found again when the same judge ran before) and a job for what it has not answered."""
    base_url, model = endpoint_and_model(request)
    prompt = prompt_for(request)
    kind = MachineLabelSource.Kind.QUERY_FILTER if request.filter_queries else MachineLabelSource.Kind.LLM
    pools, topics = _scope(request)
    collection = (pools[0].collection if pools else topics[0].collection)
    identity = {"kind": kind, "endpoint": base_url, "model": model, "prompt": prompt, "temperature": 0.0,
                "campaign": request.campaign_id, "collection": collection.pk}
    source = find_source(
        identity, name=f"{'query-filter' if request.filter_queries else 'llm'}:{model}"[:200], collection=collection,
        settings={"endpoint": base_url, "prompt": prompt, "temperature": 0.0,
                  "answer_form": "##plot: yes|no" if request.filter_queries else "##final score: N"},
        grades=[0, 1] if request.filter_queries else list(GRADES))
    if request.retry_errors:
        source.labels.failed().delete()
    params = {"pools": [p.pk for p in pools], "topics": [t.pk for t in topics], **job_params(request, model)}
    job = MachineJob.objects.create(source=source, kind=MachineJob.Kind.FILTER if request.filter_queries
                                    else MachineJob.Kind.LLM, params=params)
    job.items_total = len(pending(job))
    job.save(update_fields=["items_total"])
    return job


def _scope(request):
    pools = list(Pool.objects.filter(name__in=request.pools))
    missing = sorted(set(request.pools) - {p.name for p in pools})
    if missing:
        raise LLMInvalid(f"pool: no pool named {missing[0]!r}")
    if len({p.collection_id for p in pools}) > 1:
        raise LLMInvalid("pool: the pools are of several collections; judge one collection at a time")
    topics = []
    if request.topics:
        rows = Topic.objects.filter(external_id__in=request.topics)
        if pools:
            rows = rows.filter(collection=pools[0].collection)
        topics = list(rows)
        missing = sorted(set(request.topics) - {t.external_id for t in topics})
        if missing:
            raise LLMInvalid(f"topics: no topic {missing[0]!r}")
        if len({t.collection_id for t in topics}) > 1:
            raise LLMInvalid("topics: the topics are of several collections; name a pool")
    if not pools and not topics:
        raise LLMInvalid("pool: name the pools (or, filtering queries, the topics) to judge")
    if not request.filter_queries and not pools:
        raise LLMInvalid("pool: relevance is judged on a pool's candidates: name the pools")
    return pools, topics


def pending(job: MachineJob) -> list:
    """What the job still has to ask, in a fixed order: (topic id, passage id) pairs, or (topic id, None) for the
    query filter; anything the source already answered (even with an error) is never asked again."""
    source, params = job.source, job.params
    answered = MachineLabel.objects.filter(source=source)
    if job.kind == MachineJob.Kind.FILTER:
        ids = params["topics"] or list(Topic.objects.filter(pools__pk__in=params["pools"]).values_list("pk", flat=True))
        done = set(answered.filter(passage__isnull=True).values_list("topic_id", flat=True))
        items = [(t, None) for t in sorted(set(ids)) if t not in done]
    else:
        rows = PoolCandidate.objects.filter(pool_id__in=params["pools"]).order_by("topic_id", "rank", "passage_id")
        if params["topics"]:
            rows = rows.filter(topic_id__in=params["topics"])
        wanted = dict.fromkeys(rows.values_list("topic_id", "passage_id"))
        done = set(answered.filter(passage__isnull=False).values_list("topic_id", "passage_id"))
        items = [pair for pair in wanted if pair not in done]
    return items[: params["limit"]] if params.get("limit") else items


def spent(source) -> tuple:
    """(requests, tokens) over every run of the source."""
    totals = source.jobs.aggregate(requests=Sum("requests"), tokens=Sum("tokens"))
    return totals["requests"] or 0, totals["tokens"] or 0


def run(job_id: int, listener=None, *, sleep=time.sleep) -> dict:
    """Ask for the job's pending items one by one, storing each answer as it comes; stops at the spend cap."""
    return ask_each(job_id, _JudgeWork, listener=listener, sleep=sleep)


class _JudgeWork:
    """The judge's and the query filter's items: (topic id, passage id or None), a grade read from each answer."""

    def __init__(self, job):
        self.job, self.source = job, job.source
        self.items = pending(job)
        self.filtering = job.kind == MachineJob.Kind.FILTER
        self.parse = parse_keep if self.filtering else parse_grade
        self.queries = {t.pk: t for t in Topic.objects.filter(pk__in={t for t, _ in self.items})
                        .prefetch_related("facets")}
        self.passages = {}
        if not self.filtering:
            from retrieval.models import Passage

            self.passages = {p.pk: p for p in Passage.objects.filter(pk__in={p for _, p in self.items})}

    def size(self, item) -> int:
        return 1

    def prompt(self, item) -> str:
        topic_id, passage_id = item
        text = self.source.settings["prompt"].replace("{query}", texts_of.query_text(self.queries[topic_id]))
        if passage_id is not None:
            text = text.replace("{passage}", texts_of.passage_text(self.passages[passage_id]))
        return text

    def store(self, item, outcome) -> int:
        """Store the item's label (its answer, or why there is none); the number of unreadable labels."""
        topic_id, passage_id = item
        label = MachineLabel(source=self.source, topic_id=topic_id, passage_id=passage_id, tokens=outcome.get("tokens"))
        if "error" in outcome:
            label.error, label.raw_answer = outcome["error"], outcome.get("text", "")
        else:
            label.raw_answer = outcome["text"]
            try:
                label.grade = self.parse(outcome["text"])
                label.score = float(label.grade)
            except AnswerInvalid as exc:
                label.error = f"unparseable answer: {exc}"
        MachineLabel.objects.bulk_create([label], ignore_conflicts=True)
        return int(label.grade is None)


def ask_each(job_id: int, work_of, *, listener=None, sleep=time.sleep) -> dict:
    """The life of an LLM job: claim it, ask for each of `work_of(job).items` (a prompt each, within the rate
    limit, retried as Transient says, up to the spend cap over every run of the source), and have the work store
    each answer as it comes (`work.store(item, outcome)`: the number of labels it could not read); `work.size(item)`
    labels each item counts for. A Fatal answer fails the job; anything else unforeseen fails it and is raised."""
    job = claim(job_id)
    if job is None:
        return {"job": job_id, "status": "skipped"}
    source, params = job.source, job.params
    endpoint = Endpoint(source.settings["endpoint"], params["model"], settings.LLM_JUDGE_API_KEY, params["timeout"])
    limiter = RateLimit(params["per_minute"], sleep=sleep)
    progress = Progress(job, listener)
    work = work_of(job)
    job.items_done = 0
    progress.set_total(sum(work.size(item) for item in work.items))
    before_requests, before_tokens = spent(source)
    before_requests -= job.requests
    before_tokens -= job.tokens
    try:
        for item in work.items:
            outcome = _ask(endpoint, work.prompt(item), job, params, limiter, progress, sleep,
                           (before_requests, before_tokens))
            if outcome is None:  # the spend cap
                progress.write()
                used_r, used_t = before_requests + job.requests, before_tokens + job.tokens
                return _stopped(job, f"spend cap reached: {used_r:,} of {params['max_requests']:,} requests, "
                                     f"{used_t:,} of {params['max_tokens']:,} tokens over every run of this source; "
                                     f"raise the cap and run again to go on")
            if "error" not in outcome and not source.model_version:
                source.model_version = outcome["model"][:200]
                MachineLabelSource.objects.filter(pk=source.pk).update(model_version=source.model_version)
            progress(work.size(item), errors=work.store(item, outcome))
    except Fatal as exc:
        progress.write()
        end(job, MachineJob.Status.FAILED, error=str(exc))
        return {"job": job_id, "status": "failed", "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 — stored on the job; what was answered stays answered
        progress.write()
        end(job, MachineJob.Status.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    progress.write()
    message = f"{job.items_done:,} answered, {job.errors:,} unreadable or refused"
    first = getattr(work, "first_error", "")
    end(job, MachineJob.Status.DONE, message=message + (f"; first: {first}" if first else ""))
    return {"job": job_id, "status": "done", "answered": job.items_done, "errors": job.errors}


def _stopped(job, message):
    end(job, MachineJob.Status.STOPPED, message=message)
    return {"job": job.pk, "status": "stopped", "message": message}


def _ask(endpoint, text, job, params, limiter, progress, sleep, before) -> dict | None:
    """One item's answer: {"text", "tokens", "model"}, or {"error", "tokens"} after the retries, or None at the cap."""
    attempt, last = 0, ""
    while True:
        if (before[0] + job.requests >= params["max_requests"]
                or before[1] + job.tokens >= params["max_tokens"]):
            return None
        limiter.wait()
        try:
            answer = endpoint.chat(text)
        except Transient as exc:
            progress(0, requests=1)
            last = str(exc)
            if attempt >= params["retries"]:
                return {"error": f"gave up after {attempt + 1} tries: {last}", "tokens": None}
            wait = exc.wait if exc.wait is not None else params["backoff"] * 2**attempt
            sleep(min(MAX_RETRY_AFTER, wait))
            attempt += 1
            continue
        except ValueError as exc:  # refused for this item (400, a malformed answer): an error, counted, not retried
            progress(0, requests=1)
            return {"error": str(exc), "tokens": None}
        progress(0, requests=1, tokens=answer["tokens"])
        return answer
