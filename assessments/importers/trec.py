"""TREC run and qrels files: parse and check the whole file, then write it in one transaction.

Run files have six columns, `qid Q0 docid rank score tag`; qrels files four,
`topic iteration docid grade`. Columns are separated by any run of whitespace;
blank lines are skipped; CRLF, a BOM and gzip are handled by retrieval.ingest.text_batches, which streams the
file. The lines are read into columns by assessments.importers.trec_files (a fast path for clean blocks, the
line-by-line checks for any other) and written with PostgreSQL's COPY (executemany on SQLite).

Stored ranks follow trec_eval, which ignores the rank column: it sorts a topic's
documents by score, highest first, and breaks ties by docid in *descending*
strcmp order (form_res_rels.c, comp_sim_docno: `strcmp(p2->docno, p1->docno)`).
Python compares str by code point, which is the byte order of their UTF-8, so
sorting on (score, docid) in reverse gives exactly trec_eval's order. The file's
rank column is kept in RunEntry.origin["rank"].
"""

import json
import re
from dataclasses import dataclass
from itertools import count, repeat
from pathlib import Path

from django.db import IntegrityError, connection, transaction
from django.utils.text import slugify

from assessments.importers.trec_files import (  # noqa: F401  (MAX_* and parse_score are imported from here too)
    INTEGER,
    MAX_EXTERNAL_ID,
    MAX_GRADE,
    MAX_SUBTOPIC,
    NO_SUBTOPIC,
    NUMBER,
    QrelsReader,
    RunReader,
    parse_score,
)
from assessments.importers.topic_ids import topic_id
from assessments.models import Qrel, QrelSet, Run, RunEntry, Topic
from assessments.services.runs import name_taken_message, taken_names
from config import ids as ids_module
from config.ids import batched
from retrieval.bulk import has_copy_specials, insert_rows, no_progress  # noqa: F401  (imported from here too)
from retrieval.ingest import ImportFailed, Problem, Problems, file_batches, id_problem
from retrieval.models import Collection, Passage

BATCH_SIZE = 1000
LOOKUP_ARRAY = 100_000  # external ids looked up a query on PostgreSQL (one array parameter)
MAX_RUN_NAME = 100  # Run.name
MAX_SLUG = 100  # Collection.name, QrelSet.name

SLUG = re.compile(r"[-a-zA-Z0-9_]+\Z")


# --- shared plumbing (also used by the Cranfield importer) -------------------------------------------------


def raise_if_any(*collectors: Problems):
    """Stop with the problems of several sources (files) at once, if there are any."""
    total = sum(c.total for c in collectors)
    if total:
        raise ImportFailed([p for c in collectors for p in c.items], total)


def ids_by_external_id(queryset, external_ids) -> dict[str, int]:
    """external id → primary key for the ids of `external_ids` that exist in `queryset` (batched lookups, as many
    ids a query as the database takes parameters)."""
    ids = list(external_ids)
    queryset = queryset.order_by()
    found = {}
    if connection.vendor == "postgresql":  # one array parameter a query: no SQL text with 100,000 placeholders
        column = f"{connection.ops.quote_name(queryset.model._meta.db_table)}.{connection.ops.quote_name('external_id')}"
        for start in range(0, len(ids), LOOKUP_ARRAY):
            chunk = ids[start : start + LOOKUP_ARRAY]
            rows = queryset.extra(where=[f"{column} = ANY(%s)"], params=[chunk]).values_list("external_id", "pk")
            found.update(rows)
        return found
    for chunk in batched(ids, min(ids_module.LOOKUP_BATCH, (connection.features.max_query_params or 1000) - 50)):
        found.update(queryset.filter(external_id__in=chunk).values_list("external_id", "pk"))
    return found


def topics_by_id(queryset, qids) -> dict[str, int]:
    """topic id (as topic_ids.topic_id reads it) → primary key, for the ids of `qids` that `queryset` holds: stored
    under that id, or (topics stored before ids were read so) under a zero-padded spelling of it (`051` for 51)."""
    found = ids_by_external_id(queryset, qids)
    missing = {q for q in qids if q not in found and q.isascii() and q.isdigit()}
    if missing:
        for external_id, pk in queryset.filter(external_id__startswith="0").values_list("external_id", "pk"):
            canonical = topic_id(external_id)
            if canonical in missing and canonical not in found:
                found[canonical] = pk
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
        topics = topics_by_id(Topic.objects.filter(collection=collection), topic_lines)
        passages = ids_by_external_id(Passage.objects.filter(collection=collection), doc_lines)
    new_topics = sorted((t for t in topic_lines if t not in topics), key=topic_lines.__getitem__)
    new_passages = sorted((d for d in doc_lines if d not in passages), key=doc_lines.__getitem__)
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
    elif create_missing:  # an id made here is checked as an imported one is (the known ones were, when imported)
        for ids, lines, noun, field in ((new_topics, topic_lines, "topic", topic_field),
                                        (new_passages, doc_lines, "document", doc_field)):
            for value in ids:
                if problem := id_problem(value):
                    problems.add(f"{value[:60]!r} is not a {noun} id: {problem}", line=lines[value], field=field)
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
        refs.topics.update(topics_by_id(Topic.objects.filter(collection=collection), refs.new_topics))
    if refs.new_passages:
        insert_rows(
            Passage, ["collection", "external_id", "text"],
            ((collection.pk, docid, "") for docid in refs.new_passages),
            total=len(refs.new_passages), progress=progress, desc="documents",
            plain_text=not has_copy_specials(refs.new_passages),
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
    """The well-formed lines of a run file's text, in file order; every malformed line is a problem.

    Returns (lines, tags) where tags maps each tag (column 6) to the line it first appears on. (The importers
    read files with read_run, as columns; this is the same reading as RunLine objects.)
    """
    run = RunReader(problems).read([(1, text)])
    rows = [RunLine(*row) for row in zip(run.lines, run.qids, run.docids, run.ranks, run.scores, run.tags)]
    return rows, dict(run.first_tag_line)


def read_run(path, problems, *, progress=no_progress, max_bytes=None, max_ratio=None, stop_after=None):
    """A run file (plain or gzip, streamed) as a ParsedRun; its problems are added to `problems`."""
    bar = progress(total=None, desc="reading run", unit="line")
    parsed = RunReader(problems, stop_after=stop_after).read(
        file_batches(path, max_bytes=max_bytes, max_ratio=max_ratio), bar
    )
    if bar is not None:
        bar.close()
    return parsed


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


def import_run(path, collection_name, *, name=None, create_missing=False, progress=no_progress,
               run_fields=None) -> RunImport:
    """Import a TREC run file as a Run of `collection_name`; ImportFailed (nothing written) if anything is wrong.
    `run_fields`: further Run fields (a campaign's upload: track and owner; import_parsed_run)."""
    source = str(path)
    problems = Problems(source)
    parsed = read_run(path, problems, progress=progress)
    return import_parsed_run(
        parsed, problems, collection_name, name=name, create_missing=create_missing,
        run_fields={"source_file": source, **(run_fields or {})}, progress=progress,
    )


def import_parsed_run(
    parsed, problems, collection_name, *, name=None, create_missing=False, run_fields=None, progress=no_progress
) -> RunImport:
    """Check a ParsedRun (read_run, RunReader) against the database and write it as one Run, in one transaction.

    `problems` is the collector the reader filled (a caller may have added its own checks to it); if it holds
    anything, or these checks find anything, ImportFailed lists it all and nothing is written. `run_fields`
    are further Run fields (owner, source, track, source_file); the source defaults to IMPORTED.
    """
    source = problems.source
    if not len(parsed) and not problems:
        problems.add("no run lines in the file")

    tags = parsed.first_tag_line
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
    elif id_problem(run_name):
        problems.add(f"run name {run_name!r}: {id_problem(run_name)}", field="name")

    collection = find_collection(collection_name, create_missing, problems)
    scope = {"owner": (run_fields or {}).get("owner"), "track": (run_fields or {}).get("track", "")}
    if collection is not None and run_name and taken_names(collection, [run_name], **scope):
        hint = " (give another --name)" if scope["owner"] is None else ""  # a command's import, not an upload
        problems.add(name_taken_message(collection, run_name, **scope) + hint, field="name")
    refs = resolve_references(
        collection, parsed.first_lines(parsed.qids), parsed.first_lines(parsed.docids), create_missing, problems,
        topic_field="qid", doc_field="docid",
    )
    problems.raise_if_any()

    by_topic = parsed.by_topic()
    try:
        with transaction.atomic():
            created = collection is None
            collection = create_collection_and_references(collection, collection_name, refs, progress)
            description = f"Run tags in the file: {', '.join(tags)}." if mixed else ""
            fields = {"source": Run.Source.IMPORTED, "description": description, **(run_fields or {})}
            run = Run.objects.create(collection=collection, name=run_name, **fields)
            entries = insert_rows(
                RunEntry, ["run", "topic", "passage", "rank", "score", "origin"],
                _entry_rows(run.pk, parsed, by_topic, refs, mixed),
                total=len(parsed), progress=progress, desc="run entries",
                plain_text=not has_copy_specials(_origin_tags(parsed, mixed)),
            )
    except IntegrityError as exc:
        raise refused(source, exc) from exc
    return RunImport(run, entries, len(by_topic), created_note(created, refs))


def _origin_tags(parsed, mixed):
    """The tags as they are written into the entries' origin JSON (none unless the run has several)."""
    return [json.dumps(tag, ensure_ascii=False) for tag in parsed.first_tag_line] if mixed else []


def _entry_rows(run_id, parsed, by_topic, refs, mixed):
    """(run, topic, passage, rank, score, origin) of every entry, each topic in trec_eval's order; origin as JSON
    text: the file's rank (and, for a run of several tags, the line's tag)."""
    passage_of, docids, scores, ranks = refs.passages.__getitem__, parsed.docids, parsed.scores, parsed.ranks
    tag_json = {tag: json.dumps(tag, ensure_ascii=False) for tag in parsed.first_tag_line}
    for qid, indices in by_topic.items():
        order = parsed.trec_eval_order(indices)
        file_ranks = map(ranks.__getitem__, order)
        if mixed:
            origins = (
                f'{{"rank": {r}, "tag": {tag_json[parsed.tags[i]]}}}' for r, i in zip(map(ranks.__getitem__, order), order)
            )
        else:
            origins = map('{{"rank": {}}}'.format, file_ranks)
        yield from zip(
            repeat(run_id), repeat(refs.topics[qid]), map(passage_of, map(docids.__getitem__, order)), count(1),
            map(scores.__getitem__, order), origins,
        )


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
    """The well-formed lines of a qrels file's text, in file order; every malformed line is a problem."""
    q = QrelsReader(problems).read([(1, text)])
    return [QrelLine(*row) for row in zip(q.lines, q.qids, q.subtopics, q.docids, q.grades)]


def read_qrels(path, problems, *, progress=no_progress):
    """A qrels file (plain or gzip, streamed) as a ParsedQrels; its problems are added to `problems`."""
    bar = progress(total=None, desc="reading qrels", unit="line")
    parsed = QrelsReader(problems).read(file_batches(path), bar)
    if bar is not None:
        bar.close()
    return parsed


def default_set_name(source) -> str:
    """A qrel set's name from its file's name, less a packing suffix: qrels.txt and qrels.txt.gz are both `qrels`."""
    path = Path(source)
    if path.suffix.lower() in (".gz", ".bz2", ".xz"):
        path = path.with_suffix("")
    return slugify(path.stem)


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
    problems = Problems(source)
    parsed = read_qrels(path, problems, progress=progress)
    if not len(parsed) and not problems:
        problems.add("no qrels lines in the file")

    set_name = name if name is not None else default_set_name(source)
    if name is None and not set_name:
        problems.add(f"cannot make a qrel set name from the file name {Path(source).name!r}; give --name", field="name")
    else:
        check_slug(set_name, "qrel set name", problems, field="name")
    if set_name and QrelSet.objects.filter(name=set_name).exists():
        problems.add(f"a qrel set named {set_name!r} already exists (give another --name)", field="name")

    collection = find_collection(collection_name, create_missing, problems)
    topic_lines = parsed.first_lines(parsed.qids)
    refs = resolve_references(
        collection, topic_lines, parsed.first_lines(parsed.docids), create_missing, problems, topic_field="topic",
        doc_field="docid",
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
            qrels = insert_rows(
                Qrel, ["qrel_set", "topic", "passage", "grade", "subtopic"],
                zip(
                    repeat(qrel_set.pk), map(refs.topics.__getitem__, parsed.qids),
                    map(refs.passages.__getitem__, parsed.docids), parsed.grades, parsed.subtopics,
                ),
                total=len(parsed), progress=progress, desc="qrels",
            )
    except IntegrityError as exc:
        raise refused(source, exc) from exc
    return QrelsImport(qrel_set, qrels, len(topic_lines), created_note(created, refs))
