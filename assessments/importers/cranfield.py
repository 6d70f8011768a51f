"""The Cranfield collection in SMART format: documents, queries and graded qrels, checked whole, written at once.

- cran.all.1400: records `.I n` followed by fields `.T` title, `.A` author, `.B`
  bibliography, `.W` text, each field's text on the lines after its marker.
  Passage external_id = str(int(n)); metadata {"author", "bibliography"}.
- cran.qry: records `.I nnn` / `.W`. The .I numbers run 001…365 with gaps, but
  cranqrel numbers the queries 1…225 in file order, so Topic.external_id is the
  position in the file and the .I number is kept in metadata["original_id"].
- cranqrel: `query document code`, code 1 (complete answer) … 4 (minimum
  interest), or −1 (no code). Stored Qrel.grade is a gain: 5 − code for 1…4 and
  `minus_one_gain` for −1, by default 0: judged but not relevant, as trec_eval and
  ir_measures read a −1 at their default threshold (grade ≥ 1); 1 counts it like
  code 4. QrelSet.description says which.

A field marker repeated inside one record (records 240, 576 and 578 of the
distributed file have stray `.A`, `.B` or a second `.W` in their abstract) does
not start a new field: the lines after it stay in the current field, and the
summary names those records. A document may be empty (471 and 995 are: their
fields have no text); the summary names those too. A query needs its .W text.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

from django.db import IntegrityError, transaction

from assessments.importers.trec import (
    MAX_GRADE, bulk_insert, check_slug, ids_by_external_id, no_progress, raise_if_any, refused,
)
from assessments.models import Qrel, QrelSet, Topic
from config.ids import parse_id
from retrieval.ingest import ImportFailed, Problem, Problems, read_text
from retrieval.models import Collection, Passage

DOCUMENTS, QUERIES, QRELS = "cran.all.1400", "cran.qry", "cranqrel"
CODES = (1, 2, 3, 4, -1)
MAX_TITLE = 500  # Passage.title and Topic.title
TOPIC_TITLE_LENGTH = 80

MARKER = re.compile(r"\.([A-Z])(?:[ \t]+(.*))?\Z")
NUMBER = re.compile(r"[0-9]+\Z")
SIGNED = re.compile(r"[+-]?[0-9]+\Z")


@dataclass
class Record:
    """One `.I` record: where it starts, its id text, and the lines of each field."""

    line: int
    id_text: str
    fields: dict = field(default_factory=dict)
    repeated: list = field(default_factory=list)  # (line, letter) of markers seen twice

    def text(self, letter):
        """A field's lines as a block: trailing spaces and blank edges removed, inner line breaks kept."""
        return "\n".join(line.rstrip() for line in self.fields.get(letter, [])).strip()

    def words(self, letter):
        """A field's text on one line, runs of whitespace made single spaces."""
        return " ".join(" ".join(self.fields.get(letter, [])).split())


def parse_smart(text, problems, letters):
    """The records of a SMART file; `letters` are the field markers allowed beside .I."""
    records, current, letter, stray_reported = [], None, None, False
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip()
        marker = MARKER.match(line)
        if marker:
            mark, rest = marker.group(1), (marker.group(2) or "").strip()
            if mark == "I":
                current, letter = Record(number, rest), None
                records.append(current)
                if not rest:
                    problems.add(".I has no record number", line=number, field=".I")
                continue
            if mark not in letters:
                expected = ", ".join("." + x for x in letters)
                problems.add(f"unknown field marker .{mark} (expected {expected})", line=number)
                continue
            if current is None:
                if not stray_reported:
                    problems.add(f"field .{mark} before the first .I: a record with no .I", line=number)
                    stray_reported = True
                continue
            if mark in current.fields:
                current.repeated.append((number, mark))
            else:
                current.fields[mark] = []
                letter = mark
            if rest:
                current.fields[letter].append(rest)
            continue
        if not line.strip():
            if current is not None and letter is not None:
                current.fields[letter].append("")
            continue
        if current is None:
            if not stray_reported:
                problems.add("text before the first .I: a record with no .I", line=number)
                stray_reported = True
        elif letter is None:
            problems.add(f"text outside any field (expected {', '.join('.' + x for x in letters)})", line=number)
        else:
            current.fields[letter].append(line)
    return records


def parse_documents(text, problems):
    """{external id: Record} in file order."""
    documents, first_line = {}, {}
    for record in parse_smart(text, problems, "TABW"):
        if not record.id_text:
            continue
        if not NUMBER.match(record.id_text):
            problems.add(f"{record.id_text!r} is not a document number", line=record.line, field=".I")
            continue
        doc_id = str(int(record.id_text))
        if doc_id in first_line:
            problems.add(
                f"duplicate .I {record.id_text} (first on line {first_line[doc_id]})", line=record.line, field=".I"
            )
            continue
        first_line[doc_id] = record.line
        if len(record.words("T")) > MAX_TITLE:
            problems.add(f"the title is longer than {MAX_TITLE} characters", line=record.line, field=".T")
        documents[doc_id] = record
    return documents


def parse_queries(text, problems):
    """Records in file order; query n (1-based) of cranqrel is the n-th record."""
    queries, first_line = [], {}
    for record in parse_smart(text, problems, "W"):
        if not record.id_text:
            continue
        if not NUMBER.match(record.id_text):
            problems.add(f"{record.id_text!r} is not a query number", line=record.line, field=".I")
            continue
        number = int(record.id_text)
        if number in first_line:
            problems.add(
                f"duplicate .I {record.id_text} (first on line {first_line[number]})", line=record.line, field=".I"
            )
            continue
        first_line[number] = record.line
        if not record.words("W"):
            problems.add(f"query {record.id_text} has no .W text", line=record.line, field=".W")
        queries.append(record)
    return queries


@dataclass(frozen=True)
class QrelLine:
    line: int
    query: int  # 1-based position in cran.qry
    doc_id: str
    code: int


def parse_qrels(text, problems, query_count, doc_ids):
    rows, seen = [], {}
    for number, raw in enumerate(text.split("\n"), start=1):
        cols = raw.split()
        if not cols:
            continue
        if len(cols) != 3:
            problems.add(f"expected 3 columns (query document grade), got {len(cols)}", line=number)
            continue
        query_text, doc_text, code_text = cols
        ok = True
        if not NUMBER.match(query_text) or int(query_text) < 1:
            problems.add(f"{query_text!r} is not a query number (1 and up)", line=number, field="query")
            ok = False
        elif int(query_text) > query_count:
            problems.add(
                f"query {int(query_text)} is beyond the {query_count} queries of {QUERIES}", line=number, field="query"
            )
            ok = False
        if not NUMBER.match(doc_text):
            problems.add(f"{doc_text!r} is not a document number", line=number, field="document")
            ok = False
        elif str(int(doc_text)) not in doc_ids:
            problems.add(f"unknown document {doc_text} (not in {DOCUMENTS})", line=number, field="document")
            ok = False
        if not SIGNED.match(code_text) or int(code_text) not in CODES:
            problems.add(f"grade {code_text!r} is not one of -1, 1, 2, 3, 4", line=number, field="grade")
            ok = False
        if not ok:
            continue
        key = (int(query_text), str(int(doc_text)))
        if key in seen:
            problems.add(
                f"query {key[0]} grades document {key[1]} twice (first on line {seen[key]})", line=number,
                field="document",
            )
            continue
        seen[key] = number
        rows.append(QrelLine(number, key[0], key[1], int(code_text)))
    return rows


def gain(code, minus_one_gain):
    return minus_one_gain if code == -1 else 5 - code


def short_title(text, limit=TOPIC_TITLE_LENGTH):
    """The text's first `limit` characters or so, cut at a word boundary, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
    return cut.rstrip(" .,;:") + "…"


def describe(minus_one_gain, folder, query_count):
    return (
        f"Cranfield relevance codes from {folder}/{QRELS} stored as gains: code 1 (complete answer) → 4, "
        f"2 → 3, 3 → 2, 4 (minimum interest) → 1, and −1 (no code given) → {minus_one_gain}. "
        f"Topics are the queries of {QUERIES} numbered 1…{query_count} in file order (original .I in metadata)."
    )


@dataclass
class CranfieldImport:
    collection: Collection
    documents: int
    queries: int
    qrels: int
    qrel_set: QrelSet
    repeated: list  # (document id, line, letter)
    empty: list  # ids of documents with no .W text

    def summary(self):
        text = (
            f"Imported Cranfield into collection {self.collection.name!r}: {self.documents:,} documents, "
            f"{self.queries:,} queries, {self.qrels:,} qrels in qrel set {self.qrel_set.name!r}."
        )
        if self.repeated:
            ids = sorted({doc_id for doc_id, _, _ in self.repeated}, key=int)
            text += (
                f" Note: document(s) {', '.join(ids)} repeat a field marker inside a record; "
                "the lines after it were kept in the field before it."
            )
        if self.empty:
            text += f" Document(s) {', '.join(self.empty)} have no text."
        return text


def import_cranfield(folder, collection_name="cranfield", *, minus_one_gain=0, progress=no_progress):
    """Import cran.all.1400, cran.qry and cranqrel from `folder`; ImportFailed (nothing written) on any problem."""
    folder = Path(folder)
    paths = {name: folder / name for name in (DOCUMENTS, QUERIES, QRELS)}
    missing = [p for p in paths.values() if not p.is_file()]
    if missing:
        raise ImportFailed(
            [Problem(str(p), None, None, "missing: the Cranfield folder needs this file") for p in missing]
        )
    texts, read_problems = {}, []
    for name, path in paths.items():
        try:
            texts[name] = read_text(path)
        except ImportFailed as exc:
            read_problems.extend(exc.problems)
    if read_problems:
        raise ImportFailed(read_problems)

    doc_problems, query_problems, qrel_problems = (Problems(paths[n]) for n in (DOCUMENTS, QUERIES, QRELS))
    setup = Problems(folder)
    documents = parse_documents(texts[DOCUMENTS], doc_problems)
    queries = parse_queries(texts[QUERIES], query_problems)
    rows = parse_qrels(texts[QRELS], qrel_problems, len(queries), documents)
    for problems, what, items in ((doc_problems, "documents", documents), (query_problems, "queries", queries),
                                  (qrel_problems, "qrels", rows)):
        if not items and not problems:
            problems.add(f"no {what} in the file")

    check_slug(collection_name, "collection name", setup, field="collection")
    if abs(minus_one_gain) > MAX_GRADE:
        setup.add(f"{minus_one_gain} is out of range", field="minus-one-gain")
    qrel_set_name = f"{collection_name}-qrels"
    collection = Collection.objects.filter(name=collection_name).first()
    if collection is not None:
        existing = ids_by_external_id(Passage.objects.filter(collection=collection), documents)
        if existing:
            examples = ", ".join(sorted(existing, key=lambda x: parse_id(x, minimum=0) or 0)[:5])
            setup.add(
                f"collection {collection_name!r} already has {len(existing):,} of these {len(documents):,} documents "
                f"(e.g. {examples}); was Cranfield imported before? Use another --collection",
                field="collection",
            )
        topic_ids = [str(n) for n in range(1, len(queries) + 1)]
        taken = ids_by_external_id(Topic.objects.filter(collection=collection), topic_ids)
        if taken:
            setup.add(
                f"collection {collection_name!r} already has {len(taken):,} topics with these numbers",
                field="collection",
            )
    if QrelSet.objects.filter(name=qrel_set_name).exists():
        setup.add(f"a qrel set named {qrel_set_name!r} already exists", field="collection")
    raise_if_any(doc_problems, query_problems, qrel_problems, setup)

    try:
        with transaction.atomic():
            if collection is None:
                collection = Collection.objects.create(
                    name=collection_name, title="Cranfield 1400", kind=Collection.Kind.DOCUMENTS,
                    description="The Cranfield collection: 1,400 aeronautics abstracts, 225 queries, graded qrels.",
                )
            passages = [
                Passage(
                    collection=collection, external_id=doc_id, title=record.words("T"), text=record.text("W"),
                    metadata={"author": record.words("A"), "bibliography": record.words("B")},
                )
                for doc_id, record in documents.items()
            ]
            bulk_insert(Passage, passages, progress, "documents")
            topics = []
            for position, record in enumerate(queries, start=1):
                text = record.words("W")
                topics.append(
                    Topic(
                        collection=collection, external_id=str(position), kind=Topic.Kind.ADHOC,
                        title=short_title(text), text=text, metadata={"original_id": record.id_text},
                    )
                )
            bulk_insert(Topic, topics, progress, "queries")
            passage_pk = ids_by_external_id(Passage.objects.filter(collection=collection), documents)
            topic_pk = ids_by_external_id(Topic.objects.filter(collection=collection), [t.external_id for t in topics])
            qrel_set = QrelSet.objects.create(
                name=qrel_set_name, collection=collection, description=describe(minus_one_gain, folder, len(queries)),
                source_file=str(paths[QRELS]),
            )
            qrels = [
                Qrel(
                    qrel_set=qrel_set, topic_id=topic_pk[str(row.query)], passage_id=passage_pk[row.doc_id],
                    grade=gain(row.code, minus_one_gain),
                )
                for row in rows
            ]
            bulk_insert(Qrel, qrels, progress, "qrels")
    except IntegrityError as exc:
        raise refused(folder, exc) from exc
    repeated = [(doc_id, line, mark) for doc_id, record in documents.items() for line, mark in record.repeated]
    empty = [p.external_id for p in passages if not p.text]
    return CranfieldImport(collection, len(passages), len(topics), len(qrels), qrel_set, repeated, empty)
