"""Machine labels from outside (an LLM judge run elsewhere, e.g. UMBRELA): read, checked whole, stored as a source.

Three formats, told apart by the file's first line unless given:
- `tsv`: `topic doc p`, p the probability of relevance (0..1); the label's score is p, its grade 1 at
  p >= THRESHOLD (as a classifier's);
- `qrels`: TREC qrels of machine grades as UMBRELA writes them, `topic 0 doc grade`, grades 0-3; score = grade
  (as the LLM judge's);
- `jsonl`: `{"topic_id", "doc_id", "probs": [p0, …, pk]}`, a probability per grade summing to 1 (within
  PROBS_TOLERANCE); score = 1 - p0 (the probability of grade 1 or more), grade the most probable one, the
  probabilities kept in the label's value.

Files are read as every importer reads them (retrieval.ingest: plain, gzip, bzip2 or xz, the upload's compression
ratio limit); every problem is collected with its line (file:line: field: message) and a file with any is refused
whole. Topics and documents are matched by external id in the collection (batched lookups). The labels are
MachineLabel rows of a MachineLabelSource of kind `imported`, with its provenance (model, prompt, file, who, when)
in the source's settings: never human Judgements.
"""

import hashlib
import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from assessments.campaign_link import campaign_named, track_of
from assessments.importers.sniff import but_looks_like
from assessments.importers.topic_ids import topic_id
from assessments.importers.trec import ids_by_external_id, refused, topics_by_id
from assessments.importers.trec_files import MAX_EXTERNAL_ID, QrelsReader, parse_score
from assessments.models import MachineLabel, MachineLabelSource, Topic
from retrieval.bulk import insert_rows, no_progress
from retrieval.ingest import InputTooLarge, Problems, file_batches, json_type, parse_json_lines, text_batches
from retrieval.models import Collection, Passage

FORMATS = ("auto", "tsv", "qrels", "jsonl")
THRESHOLD = 0.5  # a TSV probability at least this is grade 1
MAX_GRADE = 3  # UMBRELA's scale: 0-3
PROBS_TOLERANCE = 0.01  # how far a JSON line's probabilities may sum from 1 (rounded outputs)
MAX_PROMPT = 100_000  # characters of a prompt kept as provenance
FIELDS = {"tsv": ("topic", "doc"), "qrels": ("topic", "docid"), "jsonl": ("topic_id", "doc_id")}  # problems' names


@dataclass
class ParsedLabels:
    """A file's well-formed labels as columns, in file order."""

    lines: list = field(default_factory=list)
    qids: list = field(default_factory=list)
    docids: list = field(default_factory=list)
    grades: list = field(default_factory=list)
    scores: list = field(default_factory=list)
    values: list = field(default_factory=list)  # jsonl: {"probs": [...]}; else None
    grade_count: int | None = None  # jsonl: the length of every line's probs

    def first_lines(self, keys) -> dict:
        return dict(zip(reversed(keys), reversed(self.lines)))

    def add(self, line, qid, docid, grade, score, value=None):
        self.lines.append(line)
        self.qids.append(qid)
        self.docids.append(docid)
        self.grades.append(grade)
        self.scores.append(score)
        self.values.append(value)


def detect_format(text: str) -> str:
    """The format of a file from its first non-blank line: JSON lines, 4 columns (qrels), else TSV."""
    first = next((line for line in text.split("\n") if line.strip()), "")
    if first.lstrip().startswith("{"):
        return "jsonl"
    return "qrels" if len(first.split()) == 4 else "tsv"


def _ids_ok(qid, docid, problems, number, names) -> bool:
    ok = True
    for value, what in zip((qid, docid), names):
        if not value:
            problems.add("empty", line=number, field=what)
            ok = False
        elif len(value) > MAX_EXTERNAL_ID:
            problems.add(f"longer than {MAX_EXTERNAL_ID} characters", line=number, field=what)
            ok = False
    return ok


class _Duplicates:
    """(topic, doc) pairs seen, with their first line: a pair labelled twice is a problem."""

    def __init__(self):
        self.first = {}

    def seen(self, qid, docid, number, problems, field_name) -> bool:
        earlier = self.first.setdefault((qid, docid), number)
        if earlier != number:
            problems.add(f"{docid!r} is labelled twice for topic {qid!r} (first on line {earlier})",
                         line=number, field=field_name)
            return True
        return False


def parse_tsv(blocks, problems, parsed):
    """`topic doc p` lines; a first line whose third column is a word (a header) is passed over."""
    duplicates, content_seen = _Duplicates(), False
    for first, text in blocks:
        for number, raw in enumerate(text.split("\n"), start=first):
            cols = raw.split()
            if not cols:
                continue
            header = not content_seen and len(cols) == 3 and cols[2].isidentifier()
            content_seen = True
            if header:
                problems.warn("a header line, passed over", line=number)
                continue
            if len(cols) != 3:
                problems.add(f"expected 3 columns (topic doc p), got {len(cols)}"
                             f"{'' if problems.total else but_looks_like(text, 'TSV')}", line=number)
                continue
            qid, docid, p_text = topic_id(cols[0]), cols[1], cols[2]
            ok = _ids_ok(qid, docid, problems, number, FIELDS["tsv"])
            p, why = parse_score(p_text)
            if why is None and not 0 <= p <= 1:
                why = f"{p_text!r} is not a probability (0 to 1)"
            if why is not None:
                problems.add(why, line=number, field="p")
                ok = False
            if duplicates.seen(qid, docid, number, problems, "doc") or not ok:
                continue
            parsed.add(number, qid, docid, int(p >= THRESHOLD), p)


def parse_qrels(blocks, problems, parsed):
    """`topic 0 doc grade` lines (the qrels reader's checks), grades 0 to MAX_GRADE, no subtopic."""
    q = QrelsReader(problems).read(blocks)
    for number, qid, subtopic, docid, grade in zip(q.lines, q.qids, q.subtopics, q.docids, q.grades):
        ok = True
        if subtopic:
            problems.add(f"{subtopic!r}: machine grades have no subtopic (write 0)", line=number, field="iteration")
            ok = False
        if not 0 <= grade <= MAX_GRADE:
            problems.add(f"{grade} is not a grade 0 to {MAX_GRADE}", line=number, field="grade")
            ok = False
        if ok:
            parsed.add(number, qid, docid, grade, float(grade))


def _probs_problem(probs) -> str | None:
    if not isinstance(probs, list):
        return f"expected a list of probabilities, got {json_type(probs)}"
    if len(probs) < 2:
        return "expected a probability for each of at least two grades"
    for i, p in enumerate(probs):
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p):
            return f"[{i}]: {p!r} is not a number"
        if not 0 <= p <= 1:
            return f"[{i}]: {p!r} is not a probability (0 to 1)"
    total = math.fsum(probs)
    if abs(total - 1) > PROBS_TOLERANCE:
        return f"the probabilities sum to {total:g}, not 1 (±{PROBS_TOLERANCE:g})"
    return None


def parse_jsonl(blocks, problems, parsed):
    """`{"topic_id", "doc_id", "probs"}` lines; every line's probs of the same length."""
    duplicates = _Duplicates()
    for first, text in blocks:
        for number, obj in parse_json_lines(text, problems, first):
            ids = []
            for key in ("topic_id", "doc_id"):
                value = obj.get(key)
                if isinstance(value, bool) or not isinstance(value, (str, int)):
                    problems.add(f"expected a string, got {json_type(value)}" if key in obj else "missing",
                                 line=number, field=key)
                ids.append(None if isinstance(value, bool) or not isinstance(value, (str, int)) else str(value).strip())
            probs = obj.get("probs")
            why = "missing" if "probs" not in obj else _probs_problem(probs)
            if why is None and parsed.grade_count is not None and len(probs) != parsed.grade_count:
                why = (f"{len(probs)} probabilities, where line {parsed.lines[0]} gave {parsed.grade_count}: "
                       "every line has one per grade of the same scale")
            if why is not None:
                problems.add(why, line=number, field="probs")
            if None in ids:
                continue
            qid, docid = topic_id(ids[0]), ids[1]
            ok = _ids_ok(qid, docid, problems, number, FIELDS["jsonl"]) and why is None
            if duplicates.seen(qid, docid, number, problems, "doc_id") or not ok:
                continue
            if parsed.grade_count is None:
                parsed.grade_count = len(probs)
            probs = [float(p) for p in probs]
            grade = max(range(len(probs)), key=probs.__getitem__)  # the most probable; a tie: the lower grade
            parsed.add(number, qid, docid, grade, max(0.0, 1.0 - probs[0]), {"probs": probs})


PARSERS = {"tsv": parse_tsv, "qrels": parse_qrels, "jsonl": parse_jsonl}


def read_labels(path, problems, fmt="auto", *, stream=None, size=None):
    """(format, ParsedLabels) of a file (plain or packed, streamed), or of `stream` (an upload of `size` bytes, named
    `path`, read within the uploads' limits); its problems are added to `problems`."""
    if fmt not in FORMATS:
        problems.fail(f"{fmt!r} is not one of {', '.join(FORMATS)}", field="format")
    parsed = ParsedLabels()
    ratio = settings.API_MAX_COMPRESSION_RATIO
    try:
        if stream is None:
            blocks = file_batches(path, max_ratio=ratio)
        else:
            stream.seek(0)
            blocks = text_batches(stream, str(path), size=size, max_bytes=settings.API_MAX_UNCOMPRESSED_BYTES,
                                  max_ratio=ratio)
        head = next(blocks)
        if fmt == "auto":
            fmt = detect_format(head[1])
        PARSERS[fmt](itertools.chain([head], blocks), problems, parsed)
    except InputTooLarge as exc:
        problems.fail(str(exc), field="file")
    if not parsed.lines and not problems:
        problems.add("no labels in the file")
    return fmt, parsed


def sha256_of(path, stream=None) -> str:
    """The SHA-256 of the file at `path`, or of `stream` from its start (left at its start)."""
    if stream is None:
        with open(path, "rb") as handle:
            return sha256_of(path, handle)
    digest = hashlib.sha256()
    stream.seek(0)
    while chunk := stream.read(1 << 20):
        digest.update(chunk)
    stream.seek(0)
    return digest.hexdigest()


@dataclass
class LabelsImport:
    source: MachineLabelSource
    labels: int
    topics: int
    replaced: bool

    def summary(self):
        did = "Replaced the labels of" if self.replaced else "Imported"
        return (f"{did} machine label source {self.source.name!r} (#{self.source.pk}, "
                f"{self.source.settings['format']}) in collection {self.source.collection.name!r}: "
                f"{self.labels:,} labels for {self.topics:,} topics.")


def _collection(collection_name, campaign, problems):
    """The collection named, else the campaign's: its track's, or its pools' when they are of one collection."""
    if collection_name:
        found = Collection.objects.filter(name=collection_name).first()
        if found is None:
            problems.add(f"no collection named {collection_name!r}", field="collection")
        return found
    if campaign is not None:
        track = track_of(campaign.pk)
        if track is not None:
            return track.collection
        pooled = set(campaign.pools.order_by().values_list("collection_id", flat=True).distinct()[:2])
        if len(pooled) == 1:
            return Collection.objects.get(pk=pooled.pop())
    problems.add("give the collection whose topics and documents the file names"
                 + (f": campaign {campaign.name!r} has no one collection" if campaign else ""), field="collection")
    return None


def _existing_source(name, replace, campaign_id, problems):
    """The imported source of this campaign (or of none, as the import) that this import replaces (--replace), or
    None; a name taken otherwise is a problem (another campaign's source is never replaced, nor named)."""
    if why := MachineLabelSource.name_problem(name):
        problems.add(why, field="name")
        return None
    taken = list(MachineLabelSource.objects.filter(name=name).order_by("pk")[:2])
    if not taken:
        return None
    if len(taken) > 1 or taken[0].kind != MachineLabelSource.Kind.IMPORTED or taken[0].campaign_id != campaign_id:
        problems.add(f"a machine label source is already named {name!r}: give another name", field="name")
    elif not replace:
        problems.add(f"machine labels named {name!r} were imported already (#{taken[0].pk}): give another name, "
                     "or --replace to replace its labels with this file's", field="name")
    else:
        return taken[0]
    return None


def import_machine_labels(path, name, *, collection_name=None, campaign_name=None, fmt="auto", model="", prompt="",
                          username=None, user=None, replace=False, stream=None, size=None,
                          progress=no_progress) -> LabelsImport:
    """Import an outside judge's labels as a machine label source; ImportFailed (nothing written) if anything is
    wrong: the file's problems with their lines, unknown topics and documents, a name taken.

    The file at `path`, or `stream` (an upload of `size` bytes; `path` its name), read within the uploads' limits.
    Who imports: `user`, or the user named `username`."""
    source_path = str(path)
    problems = Problems(source_path)
    name = (name or "").strip()
    campaign = None
    if campaign_name:
        campaign = campaign_named(campaign_name)
        if campaign is None:
            problems.add(f"no campaign named {campaign_name!r}", field="campaign")
    if user is None and username:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            problems.add(f"no user named {username!r}", field="user")
    if len(prompt) > MAX_PROMPT:
        problems.add(f"longer than {MAX_PROMPT:,} characters", field="prompt")
    if len(model) > MachineLabelSource._meta.get_field("model").max_length:
        problems.add("too long", field="model")
    existing = None
    if not name:
        problems.add("give --name", field="name")
    else:
        existing = _existing_source(name, replace, campaign.pk if campaign else None, problems)
    collection = _collection(collection_name, campaign, problems)
    fmt, parsed = read_labels(path, problems, fmt, stream=stream, size=size)

    fields = FIELDS[fmt]
    topic_lines, doc_lines = parsed.first_lines(parsed.qids), parsed.first_lines(parsed.docids)
    topics, passages = {}, {}
    if collection is not None and parsed.lines:
        topics = topics_by_id(Topic.objects.filter(collection=collection), topic_lines)
        passages = ids_by_external_id(Passage.objects.filter(collection=collection), doc_lines)
        for lines, found, noun, field_name in ((topic_lines, topics, "topic", fields[0]),
                                               (doc_lines, passages, "document", fields[1])):
            for value in sorted((v for v in lines if v not in found), key=lines.__getitem__):
                problems.add(f"unknown {noun} {value!r} in collection {collection.name!r}", line=lines[value],
                             field=field_name)
    problems.raise_if_any()

    grades = {"tsv": [0, 1], "qrels": list(range(MAX_GRADE + 1))}.get(fmt) or list(range(parsed.grade_count))
    provenance = {
        "format": fmt, "file": Path(source_path).name, "file_sha256": sha256_of(path, stream), "prompt": prompt,
        "imported_at": timezone.now().isoformat(), "imported_by": user.get_username() if user else None,
        "score": "grade" if fmt == "qrels" else "probability",
        **({"threshold": THRESHOLD} if fmt == "tsv" else {}),
    }
    row = {"kind": MachineLabelSource.Kind.IMPORTED, "collection": collection,
           "campaign_id": campaign.pk if campaign else None, "model": model, "model_version": "",
           "checksum": provenance["file_sha256"], "settings": provenance, "training": {}, "metrics": {},
           "grades": grades, "status": MachineLabelSource.Status.READY, "error": ""}
    try:
        with transaction.atomic():
            if existing is not None:
                existing.labels.all().delete()
                for key, value in row.items():
                    setattr(existing, key, value)
                existing.save()
                source = existing
            else:
                source = MachineLabelSource.objects.create(name=name, **row)
            written = insert_rows(
                MachineLabel, ["source", "topic", "passage", "grade", "score", "value"],
                zip(itertools.repeat(source.pk), map(topics.__getitem__, parsed.qids),
                    map(passages.__getitem__, parsed.docids), parsed.grades, parsed.scores,
                    (None if v is None else json.dumps(v) for v in parsed.values)),
                total=len(parsed.lines), progress=progress, desc="machine labels",
            )
    except IntegrityError as exc:
        raise refused(source_path, exc) from exc
    return LabelsImport(source, written, len(topic_lines), existing is not None)
