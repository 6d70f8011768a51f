"""The LLM's nugget work (TREC RAG's AutoNuggetizer, Pradeep et al. 2024/2025), through the LLM judge's endpoint
client and job life (assessments.machine.llm: rate limit, retries, spend cap, resuming):

- **assign**: for each answer of a nuggets campaign and each nugget of its topic's bank, support /
  partial_support / not_support. One request per answer and batch of at most ASSIGN_BATCH nuggets, the answer a
  list of labels in the nuggets' order (the nuggetizer's form). A label is a MachineLabel of a NUGGET_ASSIGN
  source keyed (topic, item "<answer id>:<nugget id>"), grade 0/1/2 (not_support < partial_support < support), its
  value {"label", "nugget": the text asked about}.
- **suggest**: for each topic of the campaign with answers, the atomic nuggets of its answers and their cited
  passages, each vital or okay (the nuggetizer's create and score steps in one request). A topic's suggestions are one
  MachineLabel of a NUGGET_SUGGEST source keyed on the topic alone, grade 1, value [{"text", "importance"}].

The prompts are the campaign's own where it has them (settings llm_nugget_assign_prompt, llm_nugget_suggest_prompt;
PROMPTS), else the nuggetizer's; the source keeps the prompt it asks with (its settings and identity: another prompt
is another source).

Answers are read whole and strictly: a request's answer either gives every label (or nugget) it was asked for,
each a known value, or none of them is stored as a label: each of its items is stored with grade None and the
error (counted on the job, its first error in the job's message; `retry_errors` asks them again). Nothing here is
a Judgement: people's scores never count these labels unless a source is named (assessments.evaluation.nuggets).
A nugget whose text changed since it was labelled is asked again (its old label is dropped when the next job is
made, and never counted meanwhile).
"""

import ast
import json
import re
import time
from dataclasses import dataclass

from django.db import transaction

from assessments.machine import examples as texts_of
from assessments.machine import llm
from assessments.models import Answer, AnswerCitation, MachineJob, MachineLabel, MachineLabelSource, Topic
from assessments.services import nuggets

ASSIGN_BATCH = 10  # nuggets per request, as the nuggetizer asks
MAX_SUGGESTIONS = 30  # nuggets a topic's suggestion may hold
SUGGEST_ANSWERS = 10  # answers (and their cited passages) shown to the LLM per topic
MAX_CONTEXT = 1500  # characters of each passage or answer in a suggestion's context
GRADE = dict(nuggets.SUPPORT_ORDER)  # not_support 0, partial_support 1, support 2
LABEL_OF = {grade: label for label, grade in GRADE.items()}
THINKING = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)

ASSIGN_PROMPT = """You are NuggetizeAssignerLLM, an intelligent assistant that can label a list of atomic nuggets \
based on if they are captured by a given passage.

Based on the query and passage, label each of the {count} nuggets either as support, partial_support, or \
not_support using the following criteria. A nugget that is fully captured in the passage should be labeled as \
support. A nugget that is partially captured in the passage should be labeled as partial_support. If the nugget is \
not captured at all, label it as not_support. Return the list of labels as a JSON list of strings. The list should \
be in the same order as the input nuggets. Make sure to provide a label for each nugget.

Search Query: {query}
Passage: {answer}
Nugget List: {nuggets}

Only return the list of labels (a JSON list of strings). Do not explain.
Labels:"""

SUGGEST_PROMPT = """You are NuggetizerLLM, an intelligent assistant that can extract atomic nuggets of information \
from provided contexts for a query.

List the atomic nuggets of information (1-12 words each) that best provide the information required for the \
query, using only the context below. Make sure there is no redundant information. Give at most {most} nuggets \
(can be less), in decreasing order of importance, and mark each one vital (it must be present in a good answer) \
or okay (good to have, but not essential).

Search Query: {query}
Context:
{context}

Return only a JSON list of objects, each {{"text": "...", "importance": "vital"}} or \
{{"text": "...", "importance": "okay"}}. Do not explain.
Nuggets:"""

# The campaign's own prompts (settings keys, edited on the console's Machine page as the judge's are): the default,
# the placeholders a prompt must have, those it may have ({count}: the nuggets asked; {most}: MAX_SUGGESTIONS).
PROMPTS = {
    "llm_nugget_assign_prompt": (ASSIGN_PROMPT, ("{query}", "{answer}", "{nuggets}"), ("{count}",)),
    "llm_nugget_suggest_prompt": (SUGGEST_PROMPT, ("{query}", "{context}"), ("{most}",)),
}


@dataclass(frozen=True)
class NuggetRequest(llm.Limits):
    """What to ask about a nuggets campaign, where, and how much it may cost."""

    campaign_id: int | None = None
    campaign_settings: dict | None = None  # its prompt (settings llm_nugget_assign_prompt / …_suggest_prompt), if own
    suggest: bool = False  # suggestions (the create step), else assignments
    topics: tuple = ()  # external ids; default every topic of the campaign


# Answers ---------------------------------------------------------------------------------------------------------


def _json_list(answer: str, what: str) -> list:
    """The list in the answer: JSON (or a Python literal, as the nuggetizer reads it), code fences and a reasoning
    model's <think>…</think> allowed."""
    text = THINKING.sub("", answer or "").strip()
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end < start:
        raise llm.AnswerInvalid(f"no list of {what} in the answer")
    body = text[start:end + 1]
    try:
        found = json.loads(body)
    except (ValueError, RecursionError):
        try:
            found = ast.literal_eval(body)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise llm.AnswerInvalid(f"the list of {what} is neither JSON nor a Python list") from None
    if not isinstance(found, list):
        raise llm.AnswerInvalid(f"no list of {what} in the answer")
    return found


def parse_labels(answer: str, count: int) -> list[str]:
    """The `count` support labels of an answer, in order; AnswerInvalid unless it gives exactly that many, each one
    of support, partial_support, not_support."""
    found = _json_list(answer, "labels")
    if len(found) != count:
        raise llm.AnswerInvalid(f"{len(found)} labels for {count} nuggets")
    labels = []
    for i, value in enumerate(found, start=1):
        label = value.strip().lower() if isinstance(value, str) else None
        if label not in GRADE:
            raise llm.AnswerInvalid(f"label {i}: {str(value)[:40]!r} is not one of {', '.join(nuggets.SUPPORT_VALUES)}")
        labels.append(label)
    return labels


def parse_suggestions(answer: str) -> list[dict]:
    """The nuggets of a suggestion, [{"text", "importance"}] (a repeated text once); AnswerInvalid for no nugget,
    more than MAX_SUGGESTIONS, a nugget without text or with an importance other than vital or okay."""
    found = _json_list(answer, "nuggets")
    if not found:
        raise llm.AnswerInvalid("no nuggets in the list")
    if len(found) > MAX_SUGGESTIONS:
        raise llm.AnswerInvalid(f"{len(found)} nuggets: at most {MAX_SUGGESTIONS} were asked for")
    out, seen = [], set()
    for i, item in enumerate(found, start=1):
        if not isinstance(item, dict):
            raise llm.AnswerInvalid(f"nugget {i}: not an object with text and importance")
        text, importance = item.get("text"), item.get("importance")
        if not isinstance(text, str) or not text.strip() or len(text) > nuggets.MAX_NUGGET_TEXT:
            raise llm.AnswerInvalid(f"nugget {i}: text of 1 to {nuggets.MAX_NUGGET_TEXT} characters expected")
        importance = importance.strip().lower() if isinstance(importance, str) else str(importance)
        if importance not in nuggets.IMPORTANCE:
            raise llm.AnswerInvalid(f"nugget {i}: importance {str(importance)[:40]!r} is not one of vital, okay")
        text = nuggets.same_text(text)
        if text not in seen:
            seen.add(text)
            out.append({"text": text, "importance": importance})
    return out


# Sources and jobs -------------------------------------------------------------------------------------------------


def _topics(request) -> list[Topic]:
    rows = Topic.objects.filter(tracks__campaign_id=request.campaign_id).distinct()
    if request.topics:
        rows = rows.filter(external_id__in=request.topics)
        missing = sorted(set(request.topics) - set(rows.values_list("external_id", flat=True)))
        if missing:
            raise llm.LLMInvalid(f"topics: {missing[0][:100]!r} is not a topic of this campaign")
    topics = list(rows.order_by("external_id"))
    if not topics:
        raise llm.LLMInvalid("campaign: the campaign has no topics")
    return topics


def prompt_key(suggest: bool) -> str:
    return "llm_nugget_suggest_prompt" if suggest else "llm_nugget_assign_prompt"


def prompt_for(request: NuggetRequest) -> str:
    """The prompt template: the campaign's own, else the default (LLMInvalid naming the settings key)."""
    return llm.campaign_prompt(prompt_key(request.suggest), request.campaign_settings, PROMPTS)


def create_job(request: NuggetRequest) -> MachineJob:
    """The source (found again when the same work ran before) and a job for what it has no answer to yet."""
    base_url, model = llm.endpoint_and_model(request)
    topics = _topics(request)
    kind = MachineLabelSource.Kind.NUGGET_SUGGEST if request.suggest else MachineLabelSource.Kind.NUGGET_ASSIGN
    prompt = prompt_for(request)
    identity = {"kind": kind, "endpoint": base_url, "model": model, "prompt": prompt, "temperature": 0.0,
                "campaign": request.campaign_id, "collection": topics[0].collection_id}
    source = llm.find_source(
        identity, name=f"{'nugget-suggest' if request.suggest else 'nugget-assign'}:{model}"[:200],
        collection_id=topics[0].collection_id,
        settings={"endpoint": base_url, "prompt": prompt, "temperature": 0.0,
                  "answer_form": "a JSON list of {text, importance}" if request.suggest else "a JSON list of labels"},
        grades=[1] if request.suggest else sorted(LABEL_OF))
    job = MachineJob(source=source, kind=MachineJob.Kind.NUGGET_SUGGEST if request.suggest
                     else MachineJob.Kind.NUGGET_ASSIGN,
                     params={"campaign": request.campaign_id, "topics": [t.pk for t in topics],
                             **llm.job_params(request, model)})
    with transaction.atomic():
        if request.retry_errors:
            source.labels.failed().delete()
        if not request.suggest:
            _forget_changed(source, [t.pk for t in topics])
        job.save()
        job.items_total = sum(_size(item) for item in pending(job))
        job.save(update_fields=["items_total"])
    return job


def _forget_changed(source, topic_ids):
    """Drop the source's labels of nuggets whose text changed since (asked again by the next job)."""
    current = _bank_texts(source.campaign_id, topic_ids)
    stale = [pk for pk, topic_id, item, value in source.labels.filter(topic_id__in=topic_ids).exclude(item="")
             .values_list("pk", "topic_id", "item", "value")
             if _asked_text(value) != current.get(topic_id, {}).get(item.partition(":")[2], _asked_text(value))]
    MachineLabel.objects.filter(pk__in=stale).delete()


def _asked_text(value):
    if isinstance(value, dict) and isinstance(value.get("nugget"), str):
        return nuggets.same_text(value["nugget"])
    return None


def _bank_texts(campaign_id, topic_ids) -> dict:
    """{topic id: {nugget id: its text now}}."""
    return {topic_id: {n["id"]: nuggets.same_text(n["text"]) for n in row.value}
            for topic_id, row in nuggets.topic_banks(campaign_id, topic_ids).items() if isinstance(row.value, list)}


def _size(item) -> int:
    return len(item[2]) if len(item) == 3 else 1


def pending(job: MachineJob) -> list:
    """What the job still has to ask, in a fixed order: (topic id, answer id, [nuggets]) batches of the answers'
    unlabelled nuggets, or (topic id,) for suggestions; anything the source has a label for (even an error) is
    never asked again. `limit` counts labels: (answer, nugget) pairs, or topics."""
    source, params = job.source, job.params
    limit = params.get("limit")
    if job.kind == MachineJob.Kind.NUGGET_SUGGEST:  # a topic without answers has nothing to read nuggets from
        done = set(source.labels.filter(item="", passage__isnull=True).values_list("topic_id", flat=True))
        answered = set(Answer.objects.filter(campaign_id=params["campaign"], topic_id__in=params["topics"])
                       .values_list("topic_id", flat=True))
        items = [(t,) for t in params["topics"] if t in answered and t not in done]
        return items[:limit] if limit else items
    banks = nuggets.topic_banks(params["campaign"], params["topics"])
    done = set(source.labels.exclude(item="").values_list("item", flat=True))
    items, left = [], limit
    answers = Answer.objects.filter(campaign_id=params["campaign"], topic_id__in=list(banks)).order_by("topic_id", "pk")
    for answer_id, topic_id in answers.values_list("pk", "topic_id"):
        bank = banks[topic_id].value if isinstance(banks[topic_id].value, list) else []
        wanted = [n for n in bank if nuggets.support_item(answer_id, n["id"]) not in done]
        if left is not None:
            wanted = wanted[:left]
            left -= len(wanted)
        for start in range(0, len(wanted), ASSIGN_BATCH):
            items.append((topic_id, answer_id, wanted[start:start + ASSIGN_BATCH]))
        if left == 0:
            break
    return items


def run(job_id: int, listener=None, *, sleep=time.sleep) -> dict:
    """Ask for the job's pending items one by one, storing each answer as it comes; stops at the spend cap."""
    job_kind = MachineJob.objects.filter(pk=job_id).values_list("kind", flat=True).first()
    work = _SuggestWork if job_kind == MachineJob.Kind.NUGGET_SUGGEST else _AssignWork
    return llm.ask_each(job_id, work, listener=listener, sleep=sleep)


def _topics_of(items) -> dict:
    return {t.pk: t for t in Topic.objects.filter(pk__in={i[0] for i in items}).prefetch_related("facets")}


class _AssignWork:
    """(topic id, answer id, nuggets) batches: a list of labels read from each answer, stored whole or not at all."""

    def __init__(self, job):
        self.job, self.source = job, job.source
        self.items = pending(job)
        self.first_error = ""
        self.topics = _topics_of(self.items)
        self.answers = {}
        for answer in Answer.objects.filter(pk__in={i[1] for i in self.items}).prefetch_related("sentences"):
            self.answers[answer.pk] = " ".join(s.text for s in sorted(answer.sentences.all(), key=lambda s: s.position))

    def size(self, item) -> int:
        return len(item[2])

    def prompt(self, item) -> str:
        topic_id, answer_id, batch = item
        return (self.source.settings["prompt"].replace("{count}", str(len(batch)))
                .replace("{query}", texts_of.query_text(self.topics[topic_id]))
                .replace("{nuggets}", json.dumps([n["text"] for n in batch], ensure_ascii=False))
                .replace("{answer}", self.answers[answer_id]))

    def store(self, item, outcome) -> int:
        topic_id, answer_id, batch = item
        error, labels = outcome.get("error", ""), None
        if not error:
            try:
                labels = parse_labels(outcome["text"], len(batch))
            except llm.AnswerInvalid as exc:
                error = f"unparseable answer: {exc}"
        rows = []
        for i, nugget in enumerate(batch):
            row = MachineLabel(source=self.source, topic_id=topic_id,
                               item=nuggets.support_item(answer_id, nugget["id"]), raw_answer=outcome.get("text") or "",
                               tokens=outcome.get("tokens") if i == 0 else None,
                               value={"nugget": nugget["text"]})
            if labels is None:
                row.error = error
            else:
                row.grade = GRADE[labels[i]]
                row.score = float(row.grade)
                row.value["label"] = labels[i]
            rows.append(row)
        with transaction.atomic():
            MachineLabel.objects.bulk_create(rows, ignore_conflicts=True)
        if labels is None:
            ids = ", ".join(n["id"] for n in batch)
            self.first_error = self.first_error or f"answer {answer_id}, nuggets {ids}: {error}"
            return len(batch)
        return 0


class _SuggestWork:
    """(topic id,): the topic's answers and cited passages in, its suggested nuggets out."""

    def __init__(self, job):
        self.job, self.source = job, job.source
        self.items = pending(job)
        self.first_error = ""
        self.topics = _topics_of(self.items)

    def size(self, item) -> int:
        return 1

    def context(self, topic_id) -> str:
        """The topic's answers (the first few) and the passages they cite, numbered [1], [2], …"""
        answers = list(Answer.objects.filter(campaign_id=self.job.params["campaign"], topic_id=topic_id)
                       .order_by("pk").prefetch_related("sentences")[:SUGGEST_ANSWERS])
        parts = [" ".join(s.text for s in sorted(a.sentences.all(), key=lambda s: s.position))[:MAX_CONTEXT]
                 for a in answers]
        cited = (AnswerCitation.objects.filter(sentence__answer__in=answers).select_related("passage")
                 .order_by("sentence__answer_id", "sentence__position", "position"))
        seen = set()
        for citation in cited:
            if citation.passage_id not in seen and len(seen) < SUGGEST_ANSWERS:
                seen.add(citation.passage_id)
                parts.append(texts_of.passage_text(citation.passage)[:MAX_CONTEXT])
        return "\n".join(f"[{i}] {' '.join(text.split())}" for i, text in enumerate(parts, start=1)) or "(none)"

    def prompt(self, item) -> str:
        topic_id, = item
        return (self.source.settings["prompt"].replace("{most}", str(MAX_SUGGESTIONS))
                .replace("{query}", texts_of.query_text(self.topics[topic_id]))
                .replace("{context}", self.context(topic_id)))

    def store(self, item, outcome) -> int:
        topic_id, = item
        row = MachineLabel(source=self.source, topic_id=topic_id, raw_answer=outcome.get("text", "") or "",
                           tokens=outcome.get("tokens"))
        if "error" in outcome:
            row.error = outcome["error"]
        else:
            try:
                row.value = parse_suggestions(outcome["text"])
                row.grade, row.score = 1, float(len(row.value))
            except llm.AnswerInvalid as exc:
                row.error = f"unparseable answer: {exc}"
        MachineLabel.objects.bulk_create([row], ignore_conflicts=True)
        if row.grade is None:
            self.first_error = self.first_error or f"topic {self.topics[topic_id].external_id}: {row.error}"
            return 1
        return 0


# Reading ---------------------------------------------------------------------------------------------------------


def support_labels(source_id, campaign_id, topic_ids=None) -> dict[str, str]:
    """{item "<answer id>:<nugget id>": label} of a NUGGET_ASSIGN source's readable labels, only those of nuggets
    whose text is still the one asked about."""
    rows = MachineLabel.objects.filter(source_id=source_id, grade__isnull=False).exclude(item="")
    if topic_ids is not None:
        rows = rows.filter(topic_id__in=list(topic_ids))
    current = _bank_texts(campaign_id, topic_ids)
    out = {}
    for topic_id, item, grade, value in rows.values_list("topic_id", "item", "grade", "value"):
        if grade in LABEL_OF and _asked_text(value) == current.get(topic_id, {}).get(item.partition(":")[2]):
            out[item] = LABEL_OF[grade]
    return out


def topic_suggestions(campaign_id, topic_id) -> dict | None:
    """The newest readable suggestion of the campaign's NUGGET_SUGGEST sources for a topic:
    {"source", "source_name", "nuggets": [{"text", "importance"}]}, or None."""
    row = (MachineLabel.objects.filter(source__campaign_id=campaign_id, topic_id=topic_id, item="", passage__isnull=True,
                                       source__kind=MachineLabelSource.Kind.NUGGET_SUGGEST, grade__isnull=False)
           .select_related("source").order_by("-created_at", "-pk").first())
    if row is None or not isinstance(row.value, list):
        return None
    return {"source": row.source_id, "source_name": row.source.name, "nuggets": row.value}
