"""TREC RAG files (castorini nuggetizer, TREC RAG 2024): generated answers, nugget banks, nugget assignments.

Each file is JSON lines, plain or packed (retrieval.ingest.text_batches), read whole and checked first: every
problem is listed with file, line and field (retrieval.ingest.Problems) and nothing is written unless there is
none. Where the data go is assessments.models.answers (answers) and assessments.services.nuggets (banks and
support labels, both Judgements stored through record_judgement). A campaign is given as a Scope, so that this
module imports nothing from annotation.

- answers: `{"run_id", "topic_id", "topic", "references": [docid, …], "response_length",
  "answer": [{"text", "citations": [index into references, …]}, …]}`, one answer a line (TREC RAG 2024); or TREC
  RAG 2025's `{"metadata": {"team_id", "run_id", "type", "narrative_id", "narrative"[, "prompt"]}, "references",
  "answer": [{"text", "citations"}, …]}`, the run from metadata.run_id, the topic from metadata.narrative_id, a
  citation an index into references (the guidelines' format 1) or a docid of references (format 2), kept as its
  index; team_id, type, narrative and prompt are not stored. A line is 2025's when it has `metadata` and no
  `run_id`;
- nuggets: `{"qid", "query", "nuggets": [{"text", "importance": "vital"|"okay"[, "suggested"][, "made_by"]}, …]}`,
  one topic a line; `suggested` (ours, which the nuggetizer ignores: {"text", "importance"}) is the LLM suggestion a
  nugget was taken from, kept through export and import; `made_by` (ours, written on export, ignored on import) who
  made the nugget (assessments.services.nuggets.made_by);
- assignments: `{"qid", "run_id", "nuggets": [{"text", "importance", "assignment": "support"|"partial_support"|
  "not_support"}, …]}`, one (topic, run) a line; a nugget is the topic's nugget of the same text, and of the same
  importance where the line gives one (the nuggetizer scores by the file's importance, the campaign by its bank's).
"""

import json
from collections import Counter
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.utils import timezone

from assessments.importers.topic_ids import topic_id
from assessments.importers.trec import (
    MAX_RUN_NAME, References, create_collection_and_references, ids_by_external_id, refused,
)
from assessments.models import Answer, AnswerCitation, AnswerSentence, JudgementChange, Layer, Run, Topic
from assessments.services import nuggets
from assessments.services.judging import record_judgement
from assessments.services.runs import RunLookupError, find_run, name_taken_message, taken_names
from retrieval.bulk import no_progress
from retrieval.ingest import InvalidJSON, Problems, id_problem, json_type, load_json
from retrieval.models import Passage

MAX_LINE_CHARS = 1_000_000  # one answer, bank or assignment line: a longer one is refused, not read
MAX_SENTENCES = 500  # sentences of one answer
MAX_REFERENCES = 1000  # references of one answer
MAX_SENTENCE_TEXT = 20_000


@dataclass(frozen=True)
class Scope:
    """Where a file goes: the campaign (id and name), its collection and its topics by external id."""

    campaign_id: int
    name: str
    collection: object
    topics: dict  # external id -> Topic


def json_lines(batches, problems):
    """(line number, object) of every non-blank line of text_batches; a line that is too long, not JSON or not an
    object is a problem naming the line."""
    for first, text in batches:
        for number, line in enumerate(text.split("\n"), start=first):
            if not line.strip():
                continue
            if len(line) > MAX_LINE_CHARS:
                problems.add(f"a line of {len(line):,} characters; at most {MAX_LINE_CHARS:,} are read", line=number,
                             field="line")
                continue
            try:
                obj = load_json(line, first_line=number)
            except InvalidJSON as exc:
                problems.add(exc.message, line=exc.line, field="line")
                continue
            if not isinstance(obj, dict):
                problems.add(f"expected a JSON object, got {json_type(obj)}", line=number, field="line")
                continue
            yield number, obj


def _text(obj, key, number, problems, *, place=None, required=True, limit=None):
    """obj[key] as a non-blank string (an id given as a whole number is taken as its digits), or None (a problem)."""
    value = obj.get(key)
    place = place or key
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        what = "missing" if value is None else f"{json_type(value)}, not text" if not isinstance(value, str) else "empty"
        problems.add(f"the text is {what}", line=number, field=place)
        return None
    if limit and len(value) > limit:
        problems.add(f"{len(value):,} characters; at most {limit:,}", line=number, field=place)
        return None
    return value


def _list(obj, key, number, problems, *, place=None, limit):
    value = obj.get(key)
    if not isinstance(value, list):
        problems.add(f"expected a list, got {json_type(value)}", line=number, field=place or key)
        return None
    if len(value) > limit:
        problems.add(f"{len(value):,} entries; at most {limit:,}", line=number, field=place or key)
        return None
    return value


def _topic(qid, number, scope, problems, place):
    """The campaign's topic a file's id names, matched as every topic id is (topic_ids.topic_id: `051` is `51`;
    a topic stored padded before that rule is still found by its own spelling)."""
    topic = None if qid is None else scope.topics.get(topic_id(qid)) or scope.topics.get(qid)
    if qid is not None and topic is None:
        problems.add(f"topic {qid!r} is not a topic of campaign {scope.name!r}", line=number, field=place)
    return topic


# --- answers ------------------------------------------------------------------------------------------------


@dataclass
class ParsedAnswer:
    line: int
    run_id: str
    topic: Topic
    references: list
    response_length: int | None
    sentences: list = field(default_factory=list)  # [(text, [reference index, …]), …]


@dataclass(frozen=True)
class AnswersImport:
    answers: int
    runs: list
    created_passages: int

    def summary(self):
        return (f"Imported {self.answers:,} answers of {len(self.runs):,} runs ({', '.join(self.runs)})"
                + (f"; made {self.created_passages:,} placeholder documents" if self.created_passages else "") + ".")


class TooManyRuns(Exception):
    """The file brings more runs than its uploader may still add (parse_answers' `max_runs`): reading stopped."""

    def __init__(self, runs: int, line: int):
        super().__init__(f"line {line}: the file's run number {runs}")
        self.runs, self.line = runs, line


def parse_answers(batches, problems, scope, *, max_runs: int | None = None) -> list[ParsedAnswer]:
    """The answers of a TREC RAG answers file, checked one by one (the database's checks come in import_answers).

    With `max_runs`, reading stops (TooManyRuns) at the first line of a run past that many, so what is held stays
    bounded by the runs one may upload times the campaign's topics (a run answers a topic once), whatever the file
    (100 MB of answers of many runs were held whole, 350 MB, before the run limit was checked)."""
    answers, seen, runs = [], {}, set()
    for number, obj in json_lines(batches, problems):
        before = problems.total
        head, run_key, topic_key = obj, "run_id", "topic_id"
        if "metadata" in obj and "run_id" not in obj:  # TREC RAG 2025
            head, run_key, topic_key = obj["metadata"], "metadata.run_id", "metadata.narrative_id"
            if not isinstance(head, dict):
                problems.add(f"expected an object, got {json_type(head)}", line=number, field="metadata")
                continue
        run_id = _text(head, "run_id", number, problems, place=run_key, limit=MAX_RUN_NAME)
        if run_id is not None and run_id not in runs:
            runs.add(run_id)
            if max_runs is not None and len(runs) > max_runs:
                raise TooManyRuns(len(runs), number)
        if run_id is not None and id_problem(run_id):
            problems.add(f"run name {run_id!r}: {id_problem(run_id)}", line=number, field=run_key)
        qid = _text(head, "topic_id" if head is obj else "narrative_id", number, problems, place=topic_key)
        topic = _topic(qid, number, scope, problems, topic_key)
        qid = qid if topic is None else topic.external_id  # one topic however the lines pad its id
        references = _list(obj, "references", number, problems, limit=MAX_REFERENCES) or []
        for i, docid in enumerate(references):
            if not isinstance(docid, str) or not docid.strip() or len(docid) > 200:
                problems.add(f"a document id is text of 1 to 200 characters, got {json_type(docid)}", line=number,
                             field=f"references[{i}]")
        length = obj.get("response_length")
        if length is not None and (isinstance(length, bool) or not isinstance(length, int) or not 0 <= length < 2**31):
            problems.add("a whole number, 0 or more", line=number, field="response_length")
        sentences, positions = [], None
        for i, sentence in enumerate(_list(obj, "answer", number, problems, limit=MAX_SENTENCES) or []):
            if not isinstance(sentence, dict):
                problems.add(f"expected {{text, citations}}, got {json_type(sentence)}", line=number,
                             field=f"answer[{i}]")
                continue
            text = _text(sentence, "text", number, problems, place=f"answer[{i}].text", limit=MAX_SENTENCE_TEXT)
            cited = _list(sentence, "citations", number, problems, place=f"answer[{i}].citations",
                          limit=MAX_REFERENCES) or []
            if head is not obj:  # 2025's format 2 cites a reference by its docid: taken as its (first) index
                if positions is None:
                    positions = {}
                    for k, docid in enumerate(references):
                        if isinstance(docid, str):
                            positions.setdefault(docid, k)
                cited = [positions.get(c, c) if isinstance(c, str) else c for c in cited]
            for j, index in enumerate(cited):
                if isinstance(index, str) and head is not obj:
                    problems.add(f"{index[:200]!r} is not one of the references", line=number,
                                 field=f"answer[{i}].citations[{j}]")
                elif isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(references):
                    problems.add(f"{index!r} is not an index into the {len(references)} references", line=number,
                                 field=f"answer[{i}].citations[{j}]")
            sentences.append((text, cited))
        if "answer" in obj and not sentences and isinstance(obj["answer"], list):
            problems.add("the answer has no sentences: leave the line out (a topic the run does not answer scores 0, "
                         "as an empty answer does in the nuggetizer)", line=number, field="answer")
        if run_id is not None and qid is not None:
            if (qid, run_id) in seen:
                problems.add(f"run {run_id!r} answers topic {qid!r} on line {seen[qid, run_id]} too", line=number,
                             field=topic_key)
            seen.setdefault((qid, run_id), number)
        if problems.total == before:
            answers.append(ParsedAnswer(number, run_id, topic, references, length, sentences))
    if not answers and not problems:
        problems.add("no answers in the file")
    return answers


def import_answers(batches, problems, scope, *, parsed=None, create_missing=False, run_fields=None) -> AnswersImport:
    """Check a TREC RAG answers file whole against the campaign and store its answers, each run's as a new Run of the
    campaign's collection with `run_fields` (owner, source, track; default: the organisers' own, IMPORTED). Unknown
    documents are problems unless `create_missing` (placeholders without text). ImportFailed lists every problem.
    `parsed`: the file's parse_answers, where the caller has read it already."""
    parsed = parse_answers(batches, problems, scope) if parsed is None else parsed
    run_fields = {"source": Run.Source.IMPORTED, **(run_fields or {})}
    names = {"owner": run_fields.get("owner"), "track": run_fields.get("track", "")}
    first_line = {}
    for answer in parsed:
        first_line.setdefault(answer.run_id, answer.line)
    for name in sorted(taken_names(scope.collection, first_line, **names), key=first_line.__getitem__):
        problems.add(name_taken_message(scope.collection, name, **names), line=first_line[name], field="run_id")
    doc_lines = {}
    for answer in parsed:
        for docid in answer.references:
            doc_lines.setdefault(docid, answer.line)
    known = ids_by_external_id(Passage.objects.filter(collection=scope.collection), doc_lines)
    missing = [d for d in doc_lines if d not in known]
    if not create_missing:
        for answer in parsed:
            for i, docid in enumerate(answer.references):
                if docid not in known:
                    problems.add(f"unknown document {docid!r} in collection {scope.collection.name!r}",
                                 line=answer.line, field=f"references[{i}]")
    problems.raise_if_any()
    try:
        with transaction.atomic():
            refs = References({}, known, [], missing if create_missing else [])
            create_collection_and_references(scope.collection, scope.collection.name, refs, no_progress)
            runs = {name: Run.objects.create(collection=scope.collection, name=name, source_file=problems.source[:500],
                                             **run_fields) for name in first_line}
            stored = Answer.objects.bulk_create([
                Answer(run=runs[a.run_id], topic=a.topic, campaign_id=scope.campaign_id, references=a.references,
                       response_length=a.response_length) for a in parsed
            ])
            sentences = AnswerSentence.objects.bulk_create([
                AnswerSentence(answer=row, position=i, text=text)
                for row, a in zip(stored, parsed) for i, (text, _) in enumerate(a.sentences)
            ])
            cited = (cites for a in parsed for _, cites in a.sentences)
            AnswerCitation.objects.bulk_create([
                AnswerCitation(sentence=sentence, position=j, reference=index,
                               passage_id=refs.passages[sentence.answer.references[index]])
                for sentence, cites in zip(sentences, cited) for j, index in enumerate(cites)
            ], batch_size=1000)
    except IntegrityError as exc:
        raise refused(problems.source, exc) from exc
    return AnswersImport(len(parsed), list(first_line), len(missing) if create_missing else 0)


# --- nugget banks -------------------------------------------------------------------------------------------


def _suggested(nugget, i, number, problems):
    """A bank nugget's `suggested` ({text, importance}: the LLM suggestion it was taken from), None when absent or
    after a problem."""
    if "suggested" not in nugget:
        return None
    found, place = nugget["suggested"], f"nuggets[{i}].suggested"
    if not isinstance(found, dict) or set(found) != {"text", "importance"}:
        problems.add(f"expected {{text, importance}}, got {json_type(found)}", line=number, field=place)
        return None
    text = _text(found, "text", number, problems, place=f"{place}.text", limit=nuggets.MAX_NUGGET_TEXT)
    if found["importance"] not in nuggets.IMPORTANCE:
        problems.add(f"{found['importance']!r} is not one of {', '.join(nuggets.IMPORTANCE)}", line=number,
                     field=f"{place}.importance")
        return None
    return {"text": text, "importance": found["importance"]} if text is not None else None


def _nugget_list(obj, number, problems, *, with_assignment=False):
    """[(text, importance, assignment or None, suggested or None), …] of a line's nuggets, each checked (`suggested`
    on a bank's only); None after a problem."""
    entries = _list(obj, "nuggets", number, problems, limit=nuggets.MAX_NUGGETS)
    if entries is None:
        return None
    before, found, texts = problems.total, [], {}
    for i, nugget in enumerate(entries):
        if not isinstance(nugget, dict):
            problems.add(f"expected an object, got {json_type(nugget)}", line=number, field=f"nuggets[{i}]")
            continue
        text = _text(nugget, "text", number, problems, place=f"nuggets[{i}].text", limit=nuggets.MAX_NUGGET_TEXT)
        importance = nugget.get("importance")
        if importance is None and not with_assignment:  # never guessed: the nuggetizer's scorer takes it as vital
            problems.add(f"missing: give one of {', '.join(nuggets.IMPORTANCE)} (the nuggetizer would take a nugget "
                         "without one as vital)", line=number, field=f"nuggets[{i}].importance")
        elif importance not in nuggets.IMPORTANCE and not (with_assignment and importance is None):
            problems.add(f"{importance!r} is not one of {', '.join(nuggets.IMPORTANCE)}", line=number,
                         field=f"nuggets[{i}].importance")
        assignment = nugget.get("assignment")
        if with_assignment and assignment not in nuggets.SUPPORT_VALUES:
            problems.add(f"{assignment!r} is not one of {', '.join(nuggets.SUPPORT_VALUES)}", line=number,
                         field=f"nuggets[{i}].assignment")
        if text is not None:
            same = nuggets.same_text(text)
            if same in texts:
                problems.add(f"the same text as nuggets[{texts[same]}]", line=number, field=f"nuggets[{i}].text")
            texts.setdefault(same, i)
        suggested = None if with_assignment else _suggested(nugget, i, number, problems)
        found.append((text, importance, assignment, suggested))
    return found if problems.total == before else None


def _topic_lines(batches, problems, scope, *, also=(), with_assignment=False):
    """{(qid, *also): (line, topic, obj, nuggets)} of a nuggets or assignments file (`also`: the key's other
    fields), a key given twice being a problem."""
    rows = {}
    for number, obj in json_lines(batches, problems):
        before = problems.total
        qid = _text(obj, "qid", number, problems)
        topic = _topic(qid, number, scope, problems, "qid")
        qid = qid if topic is None else topic.external_id  # one topic however the lines pad its id
        key = (qid, *(_text(obj, name, number, problems, limit=200) for name in also))
        found = _nugget_list(obj, number, problems, with_assignment=with_assignment)
        if None not in key and key in rows:
            what = " and run ".join(repr(k) for k in key)
            problems.add(f"{what} is on line {rows[key][0]} too", line=number, field=(("qid",) + also)[-1])
        elif problems.total == before:
            rows[key] = (number, topic, obj, found)
    if not rows and not problems:
        problems.add("no lines in the file")
    return rows


@dataclass(frozen=True)
class BanksImport:
    topics: int
    nuggets: int

    def summary(self):
        return f"Imported {self.nuggets:,} nuggets of {self.topics:,} topics."


def read_banks(batches, problems, scope):
    """The topics' banks of a nuggetizer nuggets file, checked whole (ImportFailed lists every problem). A topic whose
    bank was adjudicated is a problem: the adjudicated bank stays the topic's (nuggets.topic_banks), so an imported
    one would change nothing."""
    rows = _topic_lines(batches, problems, scope)
    banks = nuggets.topic_banks(scope.campaign_id, [topic.pk for _, topic, _, _ in rows.values()])
    for (qid,), (number, topic, _, _) in rows.items():
        if topic.pk in banks and banks[topic.pk].adjudicated:
            problems.add(f"the bank of topic {qid!r} was adjudicated in campaign {scope.name!r}: it stays the topic's "
                         "bank, an imported one would not replace it", line=number, field="qid")
    problems.raise_if_any()
    return rows


def import_nugget_banks(rows, problems, scope, *, assessor) -> BanksImport:
    """The banks read_banks read, each topic's stored as `assessor`'s `nuggets` judgement (source IMPORT),
    replacing the topic's bank; a nugget of the same text as one in the topic's current bank keeps its id (and
    so its support labels) and its origin, the others are new, of origin "imported", with ids no bank or support label
    of the topic has (nuggets.ids_in_use). A nugget the file gives a
    `suggested` is of origin "machine" (taken from an LLM suggestion, the only origin that keeps one) and keeps it;
    one it gives none keeps the suggestion its kept nugget has."""
    topic_ids = [topic.pk for _, topic, _, _ in rows.values()]
    current = nuggets.topic_banks(scope.campaign_id, topic_ids)
    in_use = nuggets.ids_in_use(scope.campaign_id, topic_ids)
    now, count = timezone.now(), 0
    with transaction.atomic():
        for seq, (number, topic, _, found) in enumerate(rows.values()):
            old = {nuggets.same_text(n["text"]): n for n in (current[topic.pk].value if topic.pk in current else [])}
            used = {n["id"] for n in old.values()} | in_use[topic.pk]
            bank = []
            for text, importance, _, suggested in found:
                kept = old.get(nuggets.same_text(text))
                nugget_id = kept["id"] if kept else nuggets.next_id(used)
                used.add(nugget_id)
                suggested = suggested or (kept or {}).get("suggested")
                origin = "machine" if suggested else kept["origin"] if kept else "imported"
                bank.append({"id": nugget_id, "text": text, "importance": importance, "origin": origin,
                             **({"suggested": suggested} if suggested else {})})
            record_judgement(assessor=assessor, layer=Layer.NUGGETS, value=bank, topic=topic, client_time=now,
                             client_seq=seq, source=JudgementChange.Source.IMPORT, campaign_id=scope.campaign_id,
                             session_id=f"import:{problems.source}"[:200])
            count += len(bank)
    return BanksImport(len(rows), count)


def nugget_lines(scope, banks) -> str:
    """The banks ({topic id: judgement}) as a nuggetizer nuggets file: one topic a line, by external id; a nugget
    taken from an LLM suggestion with its `suggested` (read back by import_nugget_banks); every nugget with
    `made_by` (nuggets.made_by: a person, an import or a machine; not read back: a nugget imported is the import's)."""
    lines = []
    made_by = nuggets.made_by(scope.campaign_id, banks)
    for topic in sorted(scope.topics.values(), key=lambda t: t.external_id):
        if topic.pk in banks:
            value = [{"text": n["text"], "importance": n["importance"],
                      **({"suggested": n["suggested"]} if "suggested" in n else {}),
                      "made_by": made_by[topic.pk, n["id"]]} for n in banks[topic.pk].value]
            # the query in full (a title may be cut: Cranfield's are its query's first words and an ellipsis)
            lines.append(json.dumps({"qid": topic.external_id, "query": topic.text or topic.title, "nuggets": value},
                                    ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


# --- nugget assignments -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AssignmentsImport:
    answers: int
    labels: int
    assessor: str
    unanswered: tuple = ()  # (qid, run) lines of the nuggetizer's empty answers: the run did not answer the topic

    def summary(self):
        skipped = (f"; left out {len(self.unanswered):,} lines of topics their run did not answer (the nuggetizer's "
                   f"empty answers: such a topic scores 0): " + ", ".join(f"{q} {r}" for q, r in self.unanswered[:10])
                   + (", …" if len(self.unanswered) > 10 else "")) if self.unanswered else ""
        return f"Imported {self.labels:,} nugget labels of {self.answers:,} answers as {self.assessor!r}{skipped}."


def read_assignments(batches, problems, scope, unanswered=None) -> list:
    """The labels of a nuggetizer assignments file, checked whole (ImportFailed lists every problem): each line's
    run is the run (name, or owner/name) that answered the topic in the campaign, each nugget the topic's nugget
    of its text. [(topic, answer, nugget id, assignment), …]. A line of a run of the campaign for a topic it did not
    answer, with the empty answer_text the nuggetizer's assign step writes there, is left out (a topic a run did not
    answer scores 0), its (qid, run) added to `unanswered` (a list) where one is given."""
    rows = _topic_lines(batches, problems, scope, also=("run_id",), with_assignment=True)
    topic_ids = {topic.pk for _, topic, _, _ in rows.values()}
    banks = nuggets.topic_banks(scope.campaign_id, topic_ids)
    answers = Answer.objects.select_related("run").filter(  # the run: its name is the label's run_ids
        campaign_id=scope.campaign_id, topic_id__in=topic_ids)
    runs = Run.objects.filter(pk__in=answers.values("run_id"))
    campaign_runs = Run.objects.filter(
        pk__in=Answer.objects.filter(campaign_id=scope.campaign_id).values("run_id")).select_related("owner")
    labels = []
    for (qid, run_name), (number, topic, obj, found) in rows.items():
        if topic.pk not in banks:
            problems.add(f"topic {qid!r} has no nuggets in campaign {scope.name!r}: import them first", line=number,
                         field="qid")
            continue
        try:
            run = find_run(run_name, runs.filter(answers__topic=topic), field="run_id")
        except RunLookupError as exc:
            if obj.get("answer_text") == "" and _is_run(run_name, campaign_runs):  # the nuggetizer's empty answer
                if unanswered is not None:
                    unanswered.append((qid, run_name))
                continue
            problems.add(f"{exc.message} answering topic {qid!r} in campaign {scope.name!r}", line=number,
                         field="run_id")
            continue
        answer = answers.get(run=run, topic=topic)
        bank = {nuggets.same_text(n["text"]): n for n in banks[topic.pk].value}
        for i, (text, importance, assignment, _) in enumerate(found):
            nugget = bank.get(nuggets.same_text(text))
            if nugget is None:
                problems.add(f"no nugget of topic {qid!r} has this text", line=number, field=f"nuggets[{i}].text")
                continue
            if importance is not None and importance != nugget["importance"]:  # scored by the bank's, not the file's
                problems.add(f"{importance!r} is not the bank's importance of this nugget ({nugget['importance']!r}): "
                             "the scores take the bank's; import the bank this file was assigned against first",
                             line=number, field=f"nuggets[{i}].importance")
                continue
            labels.append((topic, answer, nugget["id"], assignment))
    problems.raise_if_any()
    return labels


def _is_run(name, runs) -> bool:
    """Whether `name` is one of `runs` (find_run's rules: a name, or owner/name where names are shared)."""
    try:
        find_run(name, runs, field="run_id")
    except RunLookupError:
        return False
    return True


def store_assignments(labels, problems, scope, *, assessor, unanswered=()) -> AssignmentsImport:
    """The labels read_assignments read, as `assessor`'s nugget_support judgements (source IMPORT)."""
    now = timezone.now()
    with transaction.atomic():
        for seq, (topic, answer, nugget_id, assignment) in enumerate(labels):
            record_judgement(assessor=assessor, layer=Layer.NUGGET_SUPPORT, value=assignment, topic=topic,
                             item=nuggets.support_item(answer.pk, nugget_id), client_time=now, client_seq=seq,
                             run_ids=[answer.run.name], source=JudgementChange.Source.IMPORT,
                             campaign_id=scope.campaign_id, session_id=f"import:{problems.source}"[:200])
    return AssignmentsImport(len(Counter((a.pk for _, a, _, _ in labels))), len(labels), assessor.username,
                             tuple(unanswered))
