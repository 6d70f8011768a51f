"""TREC run and qrels files: parse and check the whole file, then write it in one transaction.

Run files have six columns, `qid Q0 docid rank score tag`; qrels files four,
`topic iteration docid grade`. Columns are separated by any run of whitespace;
blank lines are skipped; CRLF, a BOM and gzip are handled by read_text.

Stored ranks follow trec_eval, which ignores the rank column: it sorts a topic's
documents by score, highest first, and breaks ties by docid in *descending*
strcmp order (form_res_rels.c, comp_sim_docno: `strcmp(p2->docno, p1->docno)`).
Python compares str by code point, which is the byte order of their UTF-8, so
sorting on (score, docid) in reverse gives exactly trec_eval's order. The file's
rank column is kept in RunEntry.origin["rank"].
"""

import math
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from django.db import IntegrityError, transaction
from django.utils.text import slugify

from assessments.models import Qrel, QrelSet, Run, RunEntry, Topic
from retrieval.ingest import ImportFailed, Problem, Problems, read_text
from retrieval.models import Collection, Passage

BATCH_SIZE = 1000
LOOKUP_CHUNK = 500
MAX_EXTERNAL_ID = 200  # Topic.external_id and Passage.external_id
MAX_RUN_NAME = 100  # Run.name
MAX_SLUG = 100  # Collection.name, QrelSet.name
MAX_SUBTOPIC = 300  # Qrel.subtopic
MAX_GRADE = 2**31 - 1  # Qrel.grade is a 32-bit integer column

INTEGER = re.compile(r"[+-]?[0-9]+\Z")
NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\Z")
SLUG = re.compile(r"[-a-zA-Z0-9_]+\Z")
NO_SUBTOPIC = {"0", "Q0"}  # qrels column 2 values that mean "no subtopic" (trec_eval ignores the column)


def no_progress(iterable=None, **kwargs):
    """Stand-in for ImportCommand.progress when no bar is wanted."""
    return iterable


# --- shared plumbing (also used by the Cranfield importer) -------------------------------------------------


def raise_if_any(*collectors: Problems):
    """Stop with the problems of several sources (files) at once, if there are any."""
    total = sum(c.total for c in collectors)
    if total:
        raise ImportFailed([p for c in collectors for p in c.items], total)


def ids_by_external_id(queryset, external_ids) -> dict[str, int]:
    """external id → primary key for the ids of `external_ids` that exist in `queryset` (batched lookups)."""
    ids = list(external_ids)
    found = {}
    for start in range(0, len(ids), LOOKUP_CHUNK):
        chunk = ids[start : start + LOOKUP_CHUNK]
        found.update(queryset.filter(external_id__in=chunk).values_list("external_id", "pk"))
    return found


def bulk_insert(model, objects, progress=no_progress, desc=""):
    """bulk_create in batches of BATCH_SIZE, with a progress bar over the rows."""
    bar = progress(total=len(objects), desc=desc, unit="row")
    for start in range(0, len(objects), BATCH_SIZE):
        batch = objects[start : start + BATCH_SIZE]
        model.objects.bulk_create(batch, batch_size=BATCH_SIZE)
        if bar is not None:
            bar.update(len(batch))
    if bar is not None:
        bar.close()


def refused(source, exc):
    """An ImportFailed for a write the database refused (e.g. the same file imported at the same time)."""
    message = f"the database refused the import, nothing was written ({exc})"
    return ImportFailed([Problem(str(source), None, None, message)])


def check_slug(value, what, problems, *, field):
    if not value:
        problems.add(f"{what} is empty", field=field)
    elif not SLUG.match(value) or len(value) > MAX_SLUG:
        problems.add(
            f"{value!r} is not a valid {what} (letters, digits, '-' and '_', at most {MAX_SLUG})", field=field
        )


def find_collection(name, create_missing, problems):
    """The collection called `name`, or None when there is none (a problem unless create_missing)."""
    collection = Collection.objects.filter(name=name).first()
    if collection is None:
        if create_missing:
            check_slug(name, "collection name", problems, field="collection")
        else:
            problems.add(f"no collection named {name!r} (--create-missing creates it)", field="collection")
    return collection


def parse_score(text):
    """(value, None) for a finite decimal number, else (None, what is wrong)."""
    if NUMBER.match(text):
        value = float(text)
        if math.isfinite(value):
            return value, None
        return None, f"{text!r} is out of range"
    try:
        value = float(text)
    except ValueError:
        return None, f"{text!r} is not a number"
    if not math.isfinite(value):
        return None, f"{text!r} is not a finite number"
    return None, f"{text!r} is not a plain decimal number"


@dataclass
class References:
    """Topics and passages a file names: the pks of those that exist, and the ids still to create."""

    topics: dict
    passages: dict
    new_topics: list
    new_passages: list


def resolve_references(collection, topic_lines, doc_lines, create_missing, problems, *, topic_field, doc_field):
    """Look up the topics and documents a file names ({external id: first line}); unknown ones are problems
    unless create_missing, in which case they are listed for creation."""
    if collection is None:
        topics, passages = {}, {}
    else:
        topics = ids_by_external_id(Topic.objects.filter(collection=collection), topic_lines)
        passages = ids_by_external_id(Passage.objects.filter(collection=collection), doc_lines)
    new_topics = [t for t in topic_lines if t not in topics]
    new_passages = [d for d in doc_lines if d not in passages]
    if not create_missing and collection is not None:
        for qid in new_topics:
            problems.add(
                f"unknown topic {qid!r} in collection {collection.name!r} (--create-missing creates it)",
                line=topic_lines[qid], field=topic_field,
            )
        for docid in new_passages:
            problems.add(
                f"unknown document {docid!r} in collection {collection.name!r} (--create-missing creates it)",
                line=doc_lines[docid], field=doc_field,
            )
    return References(topics, passages, new_topics, new_passages)


def create_collection_and_references(collection, collection_name, refs, progress):
    """Inside the write transaction: the collection if new, then the missing topics (ad hoc) and passages."""
    if collection is None:
        collection = Collection.objects.create(name=collection_name, kind=Collection.Kind.DOCUMENTS)
    if refs.new_topics:
        bulk_insert(
            Topic,
            [Topic(collection=collection, external_id=qid, kind=Topic.Kind.ADHOC) for qid in refs.new_topics],
            progress, "topics",
        )
        refs.topics.update(ids_by_external_id(Topic.objects.filter(collection=collection), refs.new_topics))
    if refs.new_passages:
        bulk_insert(
            Passage,
            [Passage(collection=collection, external_id=docid, text="") for docid in refs.new_passages],
            progress, "documents",
        )
        refs.passages.update(ids_by_external_id(Passage.objects.filter(collection=collection), refs.new_passages))
    return collection


def created_note(created_collection, refs):
    parts = ["the collection"] if created_collection else []
    if refs.new_topics:
        parts.append(f"{len(refs.new_topics):,} topics")
    if refs.new_passages:
        parts.append(f"{len(refs.new_passages):,} documents")
    return f" (created {', '.join(parts)})" if parts else ""


def check_id(value, problems, number, field):
    if len(value) > MAX_EXTERNAL_ID:
        problems.add(f"longer than {MAX_EXTERNAL_ID} characters", line=number, field=field)
        return False
    return True


# --- runs ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunLine:
    """One line of a run file."""

    line: int
    qid: str
    docid: str
    rank: int
    score: float
    tag: str


def parse_run(text, problems, progress=no_progress):
    """The well-formed lines of a run file, in file order; every malformed line is a problem.

    Returns (lines, tags) where tags maps each tag (column 6) to the line it first appears on.
    """
    rows, tags, seen = [], {}, {}
    lines = text.split("\n")
    for number, raw in enumerate(progress(lines, total=len(lines), desc="reading run", unit="line"), start=1):
        cols = raw.split()
        if not cols:
            continue
        if len(cols) != 6:
            problems.add(f"expected 6 columns (qid Q0 docid rank score tag), got {len(cols)}", line=number)
            continue
        qid, _iteration, docid, rank_text, score_text, tag = cols
        ok = check_id(qid, problems, number, "qid") & check_id(docid, problems, number, "docid")
        if not INTEGER.match(rank_text):
            problems.add(f"{rank_text!r} is not an integer", line=number, field="rank")
            ok = False
        score, error = parse_score(score_text)
        if error:
            problems.add(error, line=number, field="score")
            ok = False
        tags.setdefault(tag, number)
        key = (qid, docid)
        if key in seen:
            problems.add(
                f"{docid!r} appears twice for topic {qid!r} (first on line {seen[key]})", line=number, field="docid"
            )
            continue
        seen[key] = number
        if ok:
            rows.append(RunLine(number, qid, docid, int(rank_text), score, tag))
    return rows, tags


def trec_eval_order(rows):
    """One topic's lines in trec_eval's order: score descending, ties broken by docid descending (strcmp)."""
    return sorted(rows, key=lambda row: (row.score, row.docid), reverse=True)


@dataclass
class RunImport:
    run: Run
    entries: int
    topics: int
    note: str

    def summary(self):
        return (
            f"Imported run {self.run.name!r} into collection {self.run.collection.name!r}: "
            f"{self.entries:,} entries for {self.topics:,} topics{self.note}."
        )


def import_run(path, collection_name, *, name=None, create_missing=False, progress=no_progress) -> RunImport:
    """Import a TREC run file as a Run of `collection_name`; ImportFailed (nothing written) if anything is wrong."""
    source = str(path)
    text = read_text(path)
    problems = Problems(source)
    rows, tags = parse_run(text, problems, progress)
    return import_parsed_run(
        rows, tags, problems, collection_name, name=name, create_missing=create_missing,
        run_fields={"source_file": source}, progress=progress,
    )


def import_parsed_run(
    rows, tags, problems, collection_name, *, name=None, create_missing=False, run_fields=None, progress=no_progress
) -> RunImport:
    """Check the lines parse_run gave against the database and write them as one Run, in one transaction.

    `problems` is the collector parse_run filled (a caller may have added its own checks to it); if it holds
    anything, or these checks find anything, ImportFailed lists it all and nothing is written. `run_fields`
    are further Run fields (owner, source, track, source_file); the source defaults to IMPORTED.
    """
    source = problems.source
    if not rows and not problems:
        problems.add("no run lines in the file")

    mixed = len(tags) > 1
    if mixed and name is None:
        first_tag, first_line = next(iter(tags.items()))
        for tag, line in list(tags.items())[1:]:
            problems.add(
                f"run tag {tag!r} differs from {first_tag!r} (line {first_line}): a run file holds one run "
                "(give --name to import it as one run anyway)",
                line=line, field="tag",
            )
    run_name = name if name is not None else next(iter(tags), "")
    if not run_name.strip():
        problems.add("the run name is empty", field="name")
    elif len(run_name) > MAX_RUN_NAME:
        problems.add(f"run name {run_name[:40]!r}... is longer than {MAX_RUN_NAME} characters", field="name")

    collection = find_collection(collection_name, create_missing, problems)
    if collection is not None and run_name and Run.objects.filter(collection=collection, name=run_name).exists():
        problems.add(
            f"collection {collection.name!r} already has a run named {run_name!r} (give another --name)", field="name"
        )
    topic_lines, doc_lines = {}, {}
    for row in rows:
        topic_lines.setdefault(row.qid, row.line)
        doc_lines.setdefault(row.docid, row.line)
    refs = resolve_references(
        collection, topic_lines, doc_lines, create_missing, problems, topic_field="qid", doc_field="docid"
    )
    problems.raise_if_any()

    by_topic = defaultdict(list)
    for row in rows:
        by_topic[row.qid].append(row)
    try:
        with transaction.atomic():
            created = collection is None
            collection = create_collection_and_references(collection, collection_name, refs, progress)
            description = f"Run tags in the file: {', '.join(tags)}." if mixed else ""
            fields = {"source": Run.Source.IMPORTED, "description": description, **(run_fields or {})}
            run = Run.objects.create(collection=collection, name=run_name, **fields)
            entries = []
            for qid, topic_rows in by_topic.items():
                topic_id = refs.topics[qid]
                for rank, row in enumerate(trec_eval_order(topic_rows), start=1):
                    origin = {"rank": row.rank, "tag": row.tag} if mixed else {"rank": row.rank}
                    entries.append(
                        RunEntry(
                            run=run, topic_id=topic_id, passage_id=refs.passages[row.docid], rank=rank,
                            score=row.score, origin=origin,
                        )
                    )
            bulk_insert(RunEntry, entries, progress, "run entries")
    except IntegrityError as exc:
        raise refused(source, exc) from exc
    return RunImport(run, len(entries), len(by_topic), created_note(created, refs))


# --- qrels --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QrelLine:
    """One line of a qrels file; subtopic is "" when column 2 is 0 (or Q0)."""

    line: int
    qid: str
    subtopic: str
    docid: str
    grade: int


def parse_qrels(text, problems, progress=no_progress):
    """The well-formed lines of a qrels file, in file order; every malformed line is a problem."""
    rows, seen = [], {}
    lines = text.split("\n")
    for number, raw in enumerate(progress(lines, total=len(lines), desc="reading qrels", unit="line"), start=1):
        cols = raw.split()
        if not cols:
            continue
        if len(cols) != 4:
            problems.add(f"expected 4 columns (topic iteration docid grade), got {len(cols)}", line=number)
            continue
        qid, iteration, docid, grade_text = cols
        ok = check_id(qid, problems, number, "topic") & check_id(docid, problems, number, "docid")
        subtopic = "" if iteration in NO_SUBTOPIC else iteration
        if len(subtopic) > MAX_SUBTOPIC:
            problems.add(f"longer than {MAX_SUBTOPIC} characters", line=number, field="iteration")
            ok = False
        if not INTEGER.match(grade_text):
            problems.add(f"{grade_text!r} is not an integer", line=number, field="grade")
            ok = False
        elif abs(int(grade_text)) > MAX_GRADE:
            problems.add(f"{grade_text!r} is out of range", line=number, field="grade")
            ok = False
        key = (qid, subtopic, docid)
        if key in seen:
            where = f"topic {qid!r}" + (f" subtopic {subtopic!r}" if subtopic else "")
            problems.add(
                f"{docid!r} is graded twice for {where} (first on line {seen[key]})", line=number, field="docid"
            )
            continue
        seen[key] = number
        if ok:
            rows.append(QrelLine(number, qid, subtopic, docid, int(grade_text)))
    return rows


@dataclass
class QrelsImport:
    qrel_set: QrelSet
    qrels: int
    topics: int
    note: str

    def summary(self):
        return (
            f"Imported qrel set {self.qrel_set.name!r} into collection {self.qrel_set.collection.name!r}: "
            f"{self.qrels:,} qrels for {self.topics:,} topics{self.note}."
        )


def import_qrels(path, collection_name, *, name=None, create_missing=False, progress=no_progress) -> QrelsImport:
    """Import a TREC qrels file as a QrelSet; ImportFailed (nothing written) if anything is wrong."""
    source = str(path)
    text = read_text(path)
    problems = Problems(source)
    rows = parse_qrels(text, problems, progress)
    if not rows and not problems:
        problems.add("no qrels lines in the file")

    set_name = name if name is not None else slugify(Path(source).stem)
    if name is None and not set_name:
        problems.add(f"cannot make a qrel set name from the file name {Path(source).name!r}; give --name", field="name")
    else:
        check_slug(set_name, "qrel set name", problems, field="name")
    if set_name and QrelSet.objects.filter(name=set_name).exists():
        problems.add(f"a qrel set named {set_name!r} already exists (give another --name)", field="name")

    collection = find_collection(collection_name, create_missing, problems)
    topic_lines, doc_lines = {}, {}
    for row in rows:
        topic_lines.setdefault(row.qid, row.line)
        doc_lines.setdefault(row.docid, row.line)
    refs = resolve_references(
        collection, topic_lines, doc_lines, create_missing, problems, topic_field="topic", doc_field="docid"
    )
    problems.raise_if_any()

    try:
        with transaction.atomic():
            created = collection is None
            collection = create_collection_and_references(collection, collection_name, refs, progress)
            qrel_set = QrelSet.objects.create(
                name=set_name, collection=collection, source_file=source,
                description=(
                    f"TREC qrels from {Path(source).name}; grades as in the file. Column 2 is kept as the "
                    "subtopic, except 0 (and Q0), which mean none."
                ),
            )
            qrels = [
                Qrel(
                    qrel_set=qrel_set, topic_id=refs.topics[row.qid], passage_id=refs.passages[row.docid],
                    grade=row.grade, subtopic=row.subtopic,
                )
                for row in rows
            ]
            bulk_insert(Qrel, qrels, progress, "qrels")
    except IntegrityError as exc:
        raise refused(source, exc) from exc
    return QrelsImport(qrel_set, len(qrels), len(topic_lines), created_note(created, refs))
