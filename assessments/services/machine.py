"""Machine assistance: THE service that manage.py (train_annotator, machine_label, llm_judge), the organiser's
console (/campaigns/<name>/machine/) and the API (/api/campaigns/<name>/machine/…) call, so that each accepts and
refuses exactly the same and starts the same background job.

- Starting work: train() (an auto-annotator: k-fold cross-validation on human labels, then the classifier),
  label() (a trained annotator labels pools' unjudged candidates) and judge() (the LLM judge, or its query filter)
  check their options and store a MachineJob; send() queues it for the workers (gpu queue for training and
  labelling: the CPU where a worker has no GPU; in-process without a broker) and run() is what a command does
  (here with a progress bar, or following the workers' job row). The work itself is assessments.machine.
- `within` (a campaign id) is how pages and campaign tokens are kept to one campaign: the pools named must be
  the campaign's, an annotator used must be the campaign's, and what is made is the campaign's.
- Reading: job_status(), source_summary() (the k-fold figures beside the human–human κ, the LLM's spend),
  campaign_sources(), campaign_jobs(); pool_scores() gives a source's scores for a pool's candidates (the
  judging order `machine` and triage read them).
- Nothing leaves the site unless an LLM endpoint is configured (settings LLM_JUDGE_BASE_URL/LLM_JUDGE_MODEL, from
  the environment); pages and the API cannot name another endpoint (only the command's --endpoint can).

Errors are MachineInvalid(field, message): commands show the field as a flag, pages beside the field, the API as
a JSON field.
"""

import hashlib
import math
import re
from pathlib import Path

from django.conf import settings
from django.db.models import Count, Exists, OuterRef, Q

from assessments.machine import annotator, llm
from assessments.machine import nuggets as llm_nuggets
from assessments.machine import examples as human
from assessments.machine.jobs import run_here_or_send
from assessments.machine.metrics import FIGURES
from assessments.models import MachineJob, MachineLabel, MachineLabelSource, Pool, PoolCandidate, Topic
from assessments.models.machine import several_sources
from retrieval.services import background
from retrieval.specs import model_problem

BUNDLED_MODEL = annotator.DEFAULT_MODEL
HUB_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}(/[A-Za-z0-9][A-Za-z0-9_.-]{0,95})?$")
LIMITS = {  # option: (least, most) — what a page or a client may ask for; the command takes the same
    "folds": (2, 20), "epochs": (1, 50), "max_length": (8, 512), "batch_size": (1, 512), "threshold": (0, 10),
    "max_examples": (2, 10_000_000), "limit": (1, 10_000_000),
    "max_requests": (1, 100_000_000), "max_tokens": (1, 10**12), "retries": (0, 20),
}


class MachineInvalid(ValueError):
    """Machine work that cannot be done as asked; `field` names the option to fix and `message` says why."""

    def __init__(self, field, message):
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


def _invalid(exc, default_field=None) -> MachineInvalid:
    """The machine modules' "field: message" errors as MachineInvalid."""
    field, sep, message = str(exc).partition(": ")
    if sep and re.fullmatch(r"[a-z_, ]+", field) and "," not in field and " " not in field:
        return MachineInvalid(field, message)
    return MachineInvalid(default_field, str(exc))


def _bounded(name, value, *, optional=False):
    if value is None and optional:
        return None
    least, most = LIMITS[name]
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
        raise MachineInvalid(name, f"expected a whole number from {least:,} to {most:,}")
    return value


def check_model(name) -> str:
    """The annotator's model: `features` (the default: logistic regression on rank, BM25 and encoder features,
    seconds on a CPU), or a transformer to fine-tune: `minilm` (the bundled all-MiniLM-L6-v2), a folder holding a
    Hugging Face model (its config.json), or a Hugging Face hub name (organisation/model) on MODEL_ALLOW_LIST
    (retrieval.specs.model_problem: no request starts a download)."""
    name = (name or BUNDLED_MODEL).strip()
    if name in (BUNDLED_MODEL, annotator.BUNDLED_TRANSFORMER):
        return name
    if name.startswith(("/", ".", "~")):
        folder = Path(name).expanduser()
        if not (folder / "config.json").is_file():
            raise MachineInvalid("model", f"{name!r} is not a folder holding a Hugging Face model (no config.json)")
        return str(folder)
    if not HUB_NAME.fullmatch(name):
        raise MachineInvalid("model", f"{name[:100]!r}: give features, minilm, a model folder, or a Hugging Face "
                                      "name such as organisation/model")
    if problem := model_problem(name):
        raise MachineInvalid("model", problem)
    return name


PROMPTS = {**llm.PROMPTS, **llm_nuggets.PROMPTS}  # a campaign's own LLM prompts (settings keys): one check for all


def check_prompt(text, *, filter_queries=False, key=None) -> str:
    """A campaign's own LLM prompt under `key` (a PROMPTS key; default llm_prompt, or llm_filter_prompt for the query
    filter), checked as its job reads it: text with every placeholder the job needs and none it does not fill."""
    key = key or ("llm_filter_prompt" if filter_queries else "llm_prompt")
    if key not in PROMPTS:
        raise MachineInvalid("which", f"{str(key)[:100]!r} is not one of {', '.join(PROMPTS)}")
    if not isinstance(text, str) or not text.strip():
        raise MachineInvalid(key, "write the prompt, or reset it to the default")
    if len(text) > 20_000:
        raise MachineInvalid(key, "at most 20,000 characters")
    try:
        return llm.campaign_prompt(key, {key: text}, PROMPTS)
    except llm.LLMInvalid as exc:
        raise _invalid(exc, key) from None


def default_prompt(*, filter_queries=False, key=None) -> str:
    return PROMPTS[key or ("llm_filter_prompt" if filter_queries else "llm_prompt")][0]


def llm_configured() -> dict:
    """What the site's LLM judge would use (never the key): {"configured", "endpoint", "model"}."""
    endpoint, model = settings.LLM_JUDGE_BASE_URL, settings.LLM_JUDGE_MODEL
    return {"configured": bool(endpoint and model), "endpoint": endpoint or None, "model": model or None}


def campaign_pools(campaign_id):
    return Pool.objects.filter(campaigns__pk=campaign_id)


def _check_pools(names, within, field="pools") -> list:
    names = list(dict.fromkeys(names or []))
    if not names:
        raise MachineInvalid(field, "choose at least one pool")
    if within is not None:
        own = set(campaign_pools(within).filter(name__in=names).values_list("name", flat=True))
        other = [n for n in names if n not in own]
        if other:
            raise MachineInvalid(field, f"{other[0]!r} is not a pool of this campaign")
    return names


# Starting work ---------------------------------------------------------------------------------------------------


def train(*, campaign_id=None, campaign_name="", qrels=None, pool=None, topics=(), model=BUNDLED_MODEL, folds=5,
          epochs=1, max_length=256, batch_size=16, learning_rate=3e-5, threshold=1, max_examples=None, seed=0,
          name="", within=None, run_blind=False) -> MachineJob:
    """Store a new auto-annotator and its training job (not yet sent): from a campaign's judgements
    (`campaign_id`), or from a qrel set over a pool (`qrels`, `pool`), `topics` (external ids) only if given.
    `run_blind`: the feature model reads no run's rank or score (for labels that fill qrels ranking those runs)."""
    model = check_model(model)
    if isinstance(folds, int) and not isinstance(folds, bool) and folds < 2:
        raise MachineInvalid("folds", "cross-validation needs at least 2 folds")
    for option, value in (("folds", folds), ("epochs", epochs), ("max_length", max_length),
                          ("batch_size", batch_size), ("threshold", threshold)):
        _bounded(option, value)
    _bounded("max_examples", max_examples, optional=True)
    if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float)) or not (
            math.isfinite(learning_rate) and 0 < learning_rate < 1):
        raise MachineInvalid("learning_rate", "expected a number between 0 and 1, e.g. 3e-5")
    if not isinstance(run_blind, bool):
        raise MachineInvalid("run_blind", "expected true or false")
    if (campaign_id is None) == (qrels is None):
        raise MachineInvalid("campaign", "learn from a campaign's judgements, or from a qrel set over a pool")
    if within is not None:
        if campaign_id is not None and campaign_id != within:
            raise MachineInvalid("campaign", "a campaign's page or token trains on that campaign's labels")
        if qrels is not None:
            _check_pools([pool] if pool else [], within, field="pool")
    _check_name(name)
    request = annotator.AnnotatorRequest(
        campaign_id=campaign_id, campaign_name=campaign_name, qrel_set=qrels, pool=pool, topics=tuple(topics or ()),
        model=model, folds=folds, epochs=epochs, max_length=max_length, batch_size=batch_size,
        learning_rate=float(learning_rate), grade_threshold=threshold, max_examples=max_examples, seed=seed,
        name=(name or "").strip(), owner_campaign_id=within, run_blind=run_blind,
    )
    try:
        return annotator.create_annotator(request)
    except annotator.AnnotatorInvalid as exc:
        raise _invalid(exc) from None
    except human.ExamplesInvalid as exc:
        raise _invalid(exc, "campaign" if campaign_id is not None else "qrels") from None


def _check_name(name):
    """A new source's name, as given (empty: the default, e.g. annotator-7); MachineInvalid(name) when it is blank,
    too long or digits only (MachineLabelSource.name_problem: digits are read as an id)."""
    if not name:
        return
    problem = MachineLabelSource.name_problem(name.strip()) if name.strip() else "blank: give a name, or none"
    if problem:
        raise MachineInvalid("name", problem)


def label(source_id, pools, *, include_judged=False, batch_size=annotator.LABEL_BATCH, within=None) -> MachineJob:
    """A job (not yet sent) in which a trained annotator labels the pools' candidates it has not labelled and no
    human judged (unless `include_judged`)."""
    source = _source(source_id, within, field="annotator")
    names = _check_pools(pools, within)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or not 1 <= batch_size <= 10_000:
        raise MachineInvalid("batch_size", "expected a whole number from 1 to 10,000")
    try:
        return annotator.create_labelling(source, names, include_judged=bool(include_judged), batch_size=batch_size)
    except annotator.AnnotatorInvalid as exc:
        raise _invalid(exc, "annotator") from None


def zero_shot(method, pools, *, name="", include_judged=False, batch_size=annotator.LABEL_BATCH,
              within=None) -> MachineJob:
    """A zero-shot source and the job (not yet sent) that labels the pools' candidates with it, no human label
    needed: `fusion` (reciprocal-rank fusion of the pools' runs) or `encoder` (the bundled encoder's cosine)."""
    if method not in annotator.ZERO_SHOT:
        raise MachineInvalid("method", f"expected one of {', '.join(annotator.ZERO_SHOT)}")
    names = _check_pools(pools, within)
    _check_name(name)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or not 1 <= batch_size <= 10_000:
        raise MachineInvalid("batch_size", "expected a whole number from 1 to 10,000")
    try:
        return annotator.create_zero_shot(method, names, campaign_id=within, name=(name or "").strip(),
                                          include_judged=bool(include_judged), batch_size=batch_size)
    except annotator.AnnotatorInvalid as exc:
        raise _invalid(exc, "pools") from None


def judge(*, pools=(), topics=(), campaign_id=None, campaign_settings=None, endpoint=None, model=None,
          filter_queries=False, limit=None, max_requests=None, max_tokens=None, per_minute=None, timeout=None,
          retries=None, retry_errors=False, within=None) -> MachineJob:
    """A job (not yet sent) asking the LLM judge for what its source has no answer to yet: the pools' candidates
    graded 0-3, or (`filter_queries`) the topics kept or dropped. The endpoint and model come from the settings
    unless a command names them; the campaign's prompt (settings llm_prompt / llm_filter_prompt) if it has one."""
    if within is not None:
        if campaign_id not in (None, within):
            raise MachineInvalid("campaign", "a campaign's page or token judges for that campaign")
        campaign_id = within
        if pools or not filter_queries:
            _check_pools(pools, within)
        if topics:
            own = set(Topic.objects.filter(Q(pools__campaigns__pk=within) | Q(tracks__campaign_id=within))
                      .filter(external_id__in=topics).values_list("external_id", flat=True))
            other = [t for t in topics if t not in own]
            if other:
                raise MachineInvalid("topics", f"{other[0][:100]!r} is not a topic of this campaign")
    _check_limits(limit=limit, max_requests=max_requests, max_tokens=max_tokens, retries=retries, rate=per_minute,
                  timeout=timeout)
    request = llm.JudgeRequest(
        pools=tuple(pools or ()), topics=tuple(topics or ()), campaign_id=campaign_id,
        campaign_settings=campaign_settings if isinstance(campaign_settings, dict) else None, endpoint=endpoint,
        model=model, filter_queries=bool(filter_queries), limit=limit, max_requests=max_requests,
        max_tokens=max_tokens, per_minute=per_minute, timeout=timeout, retries=retries,
        retry_errors=bool(retry_errors),
    )
    try:
        return llm.create_job(request)
    except llm.LLMInvalid as exc:
        raise _invalid(exc, "endpoint") from None


def _check_limits(*, limit, max_requests, max_tokens, retries, rate, timeout):
    """An LLM job's limits (each optional): whole numbers in LIMITS, a positive rate and timeout."""
    for option, value in (("limit", limit), ("max_requests", max_requests), ("max_tokens", max_tokens),
                          ("retries", retries)):
        _bounded(option, value, optional=True)
    for option, value in (("rate", rate), ("timeout", timeout)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value) or value <= 0):
            raise MachineInvalid(option, "expected a positive number")


def nuggets(*, campaign_id, suggest=False, topics=(), campaign_settings=None, endpoint=None, model=None, limit=None,
            max_requests=None, max_tokens=None, per_minute=None, timeout=None, retries=None,
            retry_errors=False) -> MachineJob:
    """A job (not yet sent) asking the LLM about a nuggets campaign (the caller checks it is one): each answer's
    support of each nugget of its topic's bank (the AutoNuggetizer's assign step), or (`suggest`) each topic's
    atomic nuggets, vital or okay (its create step); only what the source has no answer to yet. Endpoint, model and
    limits as judge()'s; the campaign's prompt (settings llm_nugget_assign_prompt / llm_nugget_suggest_prompt) if
    it has one."""
    _check_limits(limit=limit, max_requests=max_requests, max_tokens=max_tokens, retries=retries, rate=per_minute,
                  timeout=timeout)
    request = llm_nuggets.NuggetRequest(
        campaign_id=campaign_id, suggest=bool(suggest), topics=tuple(topics or ()),
        campaign_settings=campaign_settings if isinstance(campaign_settings, dict) else None, endpoint=endpoint,
        model=model, limit=limit, max_requests=max_requests, max_tokens=max_tokens, per_minute=per_minute,
        timeout=timeout, retries=retries, retry_errors=bool(retry_errors))
    try:
        return llm_nuggets.create_job(request)
    except llm.LLMInvalid as exc:
        raise _invalid(exc, "endpoint") from None


def nugget_sources(campaign_id, kind=MachineLabelSource.Kind.NUGGET_ASSIGN):
    """A campaign's LLM nugget assignment sources (or suggestion sources), newest first."""
    return campaign_sources(campaign_id).filter(kind=kind)


def nugget_source(campaign_id, name) -> MachineLabelSource:
    """The campaign's nugget assignment source named by its id or name (MachineLabelSource.objects.named: digits
    are an id, since no source is named with digits only); MachineInvalid(source) when there is none, or when the
    text names several (then give the id)."""
    text = str(name or "").strip()
    if not text:
        raise MachineInvalid("source", "name a machine source (its id or name)")
    rows = MachineLabelSource.objects.filter(campaign_id=campaign_id, kind=MachineLabelSource.Kind.NUGGET_ASSIGN)
    found = rows.named(text)
    if not found:
        known = ", ".join(f"{s.pk} ({s.name})" for s in rows.order_by("pk")[:10]) or "none yet"
        raise MachineInvalid("source", f"{text[:100]!r} is not a nugget assignment source of this campaign "
                                       f"(its sources: {known})")
    if len(found) > 1:
        raise MachineInvalid("source", several_sources(text, found))
    return found[0]


def _tasks(job):
    from assessments import tasks

    if job.kind in (MachineJob.Kind.NUGGET_ASSIGN, MachineJob.Kind.NUGGET_SUGGEST):
        return tasks.llm_nuggets, llm_nuggets.run
    if job.kind == MachineJob.Kind.TRAIN:
        return tasks.gpu_train_annotator, annotator.train
    if job.kind == MachineJob.Kind.LABEL:
        return tasks.gpu_machine_label, annotator.label
    return tasks.llm_judge, llm.run


def send(job: MachineJob, user=None) -> None:
    """Queue the job as all background work is queued (retrieval.services.background.queue_job: after the commit;
    without a broker, in the web process's background thread while serving a request), `user` recorded as who
    started it. Its failure, if any, is stored on the job."""
    if user is not None and user.is_authenticated:
        MachineJob.objects.filter(pk=job.pk).update(created_by=user)
        job.created_by = user
    background.queue_job(job)


def resend_unfinished(**_) -> int:
    """After a worker died (retrieval's node_died), send the unfinished jobs again: it may have taken a queued job's
    message, or died running one. A job is claimed once: a running one only when its lease has run out with no
    news, so its message is sent for then (a live worker's job writes its progress every few seconds and is left
    alone); a second message for a queued one does nothing."""
    return background.resend_unfinished(MachineJob, running_too=True)


def run(job: MachineJob, bar=None) -> MachineJob:
    """What a command does: run the job here without a broker (feeding `bar`), else send it and follow its row."""
    task, work = _tasks(job)
    return run_here_or_send(job, task, work, bar=bar)


# Reading ---------------------------------------------------------------------------------------------------------


def _source(source_id, within, field="source") -> MachineLabelSource:
    if isinstance(source_id, bool) or not isinstance(source_id, int):
        raise MachineInvalid(field, "give the id of a machine label source")
    rows = MachineLabelSource.objects.filter(pk=source_id)
    if within is not None:
        rows = rows.filter(campaign_id=within)
    source = rows.first()
    if source is None:
        raise MachineInvalid(field, f"no machine label source {source_id}" + (" of this campaign" if within else ""))
    return source


def campaign_sources(campaign_id):
    """The machine label sources made for a campaign (trained on its labels or for it, or judging for it), with
    their label counts; newest first."""
    return MachineLabelSource.objects.filter(campaign_id=campaign_id).annotate(
        label_count=Count("labels", filter=Q(labels__grade__isnull=False)),
        unreadable_count=Count("labels", filter=Q(labels__grade__isnull=True)),
    ).order_by("-created_at", "-id")


def campaign_jobs(campaign_id):
    """The machine jobs of a campaign's sources, newest first."""
    return MachineJob.objects.filter(source__campaign_id=campaign_id).select_related("source").order_by(
        "-created_at", "-id")


def job_status(job: MachineJob) -> dict:
    """A job as pages and the API show it: every background job's status (retrieval.services.background.status_of:
    counts, rate, time left, why it stopped or failed) with its source and spend."""
    return background.status_of(job)


def source_summary(source: MachineLabelSource) -> dict:
    """A source with what it is worth: the k-fold figures (mean over folds, each fold) beside the human–human κ of
    its campaign (an annotator), its labels and unreadable answers, and its spend (an LLM judge)."""
    metrics = source.metrics or {}
    labels = getattr(source, "label_count", None)
    unreadable = getattr(source, "unreadable_count", None)
    if labels is None:
        labels = source.labels.filter(grade__isnull=False).count()
        unreadable = source.labels.filter(grade__isnull=True).count()
    not_llm = (MachineLabelSource.Kind.CLASSIFIER, MachineLabelSource.Kind.ZERO_SHOT)
    requests, tokens = llm.spent(source) if source.kind not in not_llm else (0, 0)
    return {
        "id": source.pk, "name": source.name, "kind": source.kind, "kind_label": source.get_kind_display(),
        "status": source.status, "error": source.error, "model": source.model, "model_version": source.model_version,
        "checksum": source.checksum, "grades": source.grades, "campaign": source.campaign_id,
        "snapshot": (source.training or {}).get("id"), "training_labels": (source.training or {}).get("examples"),
        "cross_validation": {**{k: metrics.get(k) for k in FIGURES},
                             **{f"baseline_{k}": metrics.get(f"baseline_{k}") for k in FIGURES},
                             "baseline": metrics.get("baseline"), "beats_baseline": annotator.beats_baseline(metrics),
                             "folds_by": metrics.get("folds_by"), "folds": metrics.get("folds", []),
                             "k": metrics.get("k"), "device": metrics.get("device"), "seconds": metrics.get("seconds")}
        if metrics else None,
        "human_kappa": (metrics.get("human") or {}).get("kappa"), "labels": labels, "unreadable": unreadable,
        "requests": requests, "tokens": tokens, "settings": _public_settings(source), "created_at": source.created_at,
    }


def judge_summary(job) -> dict:
    """What an LLM judge's run did and what the source holds now: answered, unreadable (with the first few), spend."""
    source = job.source
    labels = source.labels.all()
    failed = labels.failed()
    requests, tokens = llm.spent(source)
    examples = failed.order_by("pk").values_list("topic__external_id", "passage__external_id", "item", "error",
                                                  "raw_answer")[:5]
    out = {"source": source.pk, "name": source.name, "kind": source.kind, "model": source.model,
           "status": job.status, "message": job.message, "asked_now": job.items_done, "errors_now": job.errors,
           "requests_now": job.requests, "tokens_now": job.tokens, "labels": labels.count(),
           "unreadable": failed.count(), "requests": requests, "tokens": tokens,
           "unreadable_examples": [{"topic": t, "passage": p or i or None, "error": e, "answer": a[:200]}
                                   for t, p, i, e, a in examples]}
    if source.kind == MachineLabelSource.Kind.NUGGET_SUGGEST:
        out["topics"] = labels.filter(grade__isnull=False).count()
    elif source.kind == "query_filter":
        verdicts = labels.filter(passage__isnull=True, grade__isnull=False).order_by("topic__external_id")
        out["keep"] = list(verdicts.filter(grade=1).values_list("topic__external_id", flat=True))
        out["drop"] = list(verdicts.filter(grade=0).values_list("topic__external_id", flat=True))
    else:
        names = llm_nuggets.LABEL_OF if source.kind == MachineLabelSource.Kind.NUGGET_ASSIGN else {}
        out["grades"] = {names.get(g, str(g)): labels.filter(grade=g).count() for g in source.grades}
    return out


def _public_settings(source) -> dict:
    """The source's settings as shown: everything but the prompt's full text (its length and its SHA-256,
    prompt_sha256, stand in: the same as a campaign prompt's is that prompt)."""
    shown = dict(source.settings or {})
    if isinstance(shown.get("prompt"), str):
        shown["prompt_sha256"] = hashlib.sha256(shown["prompt"].encode()).hexdigest()
        shown["prompt"] = f"{len(shown['prompt']):,} characters"
    return shown


def campaign_human_kappa(campaign_id) -> dict:
    """The human–human κ of a campaign's labels now (relevant or not), what an annotator's κ is read beside."""
    try:
        collection = human.campaign_collection(campaign_id)
    except human.ExamplesInvalid as exc:
        return {"kappa": None, "pairs": [], "reason": str(exc)}
    return human.human_kappa(campaign_id, collection)


def pool_scores(source_id: int, pool, topic_ids=None, field="score") -> dict:
    """{(topic id, passage id): score} of a source's labels on a pool's candidates (a classifier's probability of
    relevant, an LLM's grade); candidates it has not labelled, or could not, are absent. `pool`: a Pool or its id.
    `field="grade"`: the labels' grades instead (triage of a zero-shot source, whose score is no probability)."""
    pool_id = pool.pk if isinstance(pool, Pool) else pool
    candidate = PoolCandidate.objects.filter(pool_id=pool_id, topic_id=OuterRef("topic_id"),
                                             passage_id=OuterRef("passage_id"))
    rows = MachineLabel.objects.filter(Exists(candidate), source_id=source_id, passage__isnull=False,
                                       score__isnull=False)
    if topic_ids is not None:
        rows = rows.filter(topic_id__in=topic_ids)
    return {(t, p): s for t, p, s in rows.order_by().values_list("topic_id", "passage_id", field)}
