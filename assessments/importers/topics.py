"""Ad hoc topics: classic TREC topic files, TREC web-track XML, TSV and JSON lines; and the TREC topic file written back.

The format is told from the content (or named): `<top>` opens a classic topic (tags not closed, as NIST ships
them: `<num> Number: 301`, `<title>`, `<desc> Description:`, `<narr> Narrative:`, and the older `<dom>`, `<smry>`,
`<con>`, `<fac>`, `<def>`, `<nat>`); any other `<` an XML file of `<topic number=…>` elements (web track: `<query>`,
`<description>`, `<narrative>`, `<subtopic>`); `{` JSON lines (`query_id`/`qid`/`id`/`_id`, `text`/`query`/`title`,
`description`, `narrative`, anything else); else TSV (`qid<TAB>text`).

Stored on Topic (kind ad hoc): `title` the short query (a classic `<title>`, a web-track `<query>`, the TSV text,
JSON `title` else its text), `text` the query systems searched with (the same, or JSON `text`), and in `metadata`:
"description", "narrative", "subtopics" ([{"number", "type", "text"}], web track), and every other field under
its own name (classic tags by their long names: "domain", "summary", "concepts", "factors", "definitions",
"nationality"; XML attributes such as "type"; other JSON keys). The whole file is checked first and written in
one transaction: a bad file writes nothing.
"""

import re
from dataclasses import dataclass, field
from xml.parsers import expat

from django.conf import settings
from django.db import connection, transaction

from assessments.importers.sniff import but_looks_like
from assessments.importers.topic_ids import topic_id
from assessments.importers.trec import check_slug, no_progress, raise_if_any, topics_by_id
from assessments.models import Topic
from config.ids import batched
from retrieval.ingest import InputTooLarge, Problems, file_batches, id_problem, json_type, parse_json_lines
from retrieval.models import Collection

FORMATS = ("auto", "trec", "xml", "tsv", "jsonl")
TOPICS = "a topics file"  # what a wrong file is said not to be (sniff.but_looks_like)
MAX_EXTERNAL_ID = 200  # Topic.external_id
MAX_TITLE = 500  # Topic.title
MAX_TOPIC_BYTES = 64 * 1024 * 1024  # a topics file is read whole (its unpacked text)

# classic tag → (metadata key, the label NIST writes after the tag)
CLASSIC = {
    "num": ("num", "Number:"), "title": ("title", "Topic:"), "desc": ("description", "Description:"),
    "narr": ("narrative", "Narrative:"), "dom": ("domain", "Domain:"), "smry": ("summary", "Summary:"),
    "con": ("concepts", "Concept(s):"), "fac": ("factors", "Factor(s):"), "def": ("definitions", "Definition(s):"),
    "nat": ("nationality", "Nationality:"), "head": ("head", ""),
}
TAG_OF_KEY = {key: tag for tag, (key, _) in CLASSIC.items()}
CLASSIC_ORDER = ["head", "num", "dom", "title", "desc", "smry", "narr", "con", "fac", "nat", "def"]
_TAG = re.compile(r"<(/?)([A-Za-z][\w-]*)\s*>")
_PLAIN_TAG = re.compile(r"[A-Za-z][\w-]*\Z")
JSON_ID = ("query_id", "qid", "id", "_id")
JSON_TEXT = ("text", "query", "title")
# a TSV header line's two columns (MS MARCO, ir_datasets exports, BEIR-style files), compared lowercased
TSV_HEADER_IDS = {"qid", "query_id", "query-id", "queryid", "id", "_id", "topic_id", "topic-id", "topicid", "topic",
                  "number", "num"}
TSV_HEADER_TEXTS = {"text", "query", "title", "query_text", "query-text", "querytext", "question", "topic",
                    "keywords"}


@dataclass
class TopicRecord:
    """One topic as read: its id, the line it starts on, title, query text and every other field."""

    qid: str
    line: int
    title: str = ""
    text: str = ""
    metadata: dict = field(default_factory=dict)
    id_field: str = "id"  # the field its id came from (num, number, qid, query_id…), for problems


@dataclass
class TopicsResult:
    collection: Collection
    created_collection: bool
    created: int
    updated: int
    topic_ids: list
    notes: list = field(default_factory=list)  # what the reading passed over (a TSV header line)
    filled: int = 0  # placeholders (topics a run or qrels named, made by --create-missing) filled in
    unchanged: int = 0  # of `updated`: topics the file repeats as they are, not written again

    def summary(self) -> str:
        made = " (created the collection)" if self.created_collection else ""
        updated = f", updated {self.updated:,}" if self.updated else ""
        if self.filled:
            updated += f", filled in {self.filled:,} that runs or qrels had named"
        notes = "".join(f"; {note}" for note in self.notes)
        same = f" {self.unchanged:,} of those updated were already as the file has them (not written again)." if (
            self.unchanged) else ""
        return f"Imported {self.created:,} topics{updated} into {self.collection.name}{made}{notes}.{same}"


def _label_stripped(value: str, label: str) -> str:
    value = value.strip()
    if label:
        stem = re.escape(label.rstrip(":")).replace(r"\(s\)", r"(?:\(s\)|s)?")
        # the label as a word: "Topical steroids" begins with no "Topic" label
        value = re.sub(rf"\A{stem}(?!\w)\s*:?\s*", "", value, flags=re.IGNORECASE)
    return value


def _paragraphs(value: str) -> str:
    """Hard-wrapped lines joined; paragraphs (blank lines between) kept."""
    parts = (" ".join(p.split()) for p in re.split(r"\n\s*\n", value))
    return "\n\n".join(p for p in parts if p)


class _Lines:
    """Line numbers of offsets in a text."""

    def __init__(self, text, first=1):
        self.text, self.pos, self.line = text, 0, first

    def at(self, offset):
        if offset >= self.pos:
            self.line += self.text.count("\n", self.pos, offset)
        else:
            self.line -= self.text.count("\n", offset, self.pos)
        self.pos = offset
        return self.line


def _check_id(raw, line, seen, problems, field_name) -> str | None:
    """The id a topic is stored under (topic_ids.topic_id: `051` is topic 51), or None when `raw` is no id or one
    the file already has (a problem each); `seen` holds {id: (line, id as written)} of the file's topics so far."""
    if not raw:
        problems.add("the topic has no number", line=line, field=field_name)
        return None
    if len(raw) > MAX_EXTERNAL_ID or any(c.isspace() for c in raw):
        problems.add(f"{raw[:60]!r} is not a topic id (no spaces, at most {MAX_EXTERNAL_ID} characters)",
                     line=line, field=field_name)
        return None
    if problem := id_problem(raw):
        problems.add(f"{raw[:60]!r} is not a topic id: {problem}", line=line, field=field_name)
        return None
    qid = topic_id(raw)
    if qid in seen:
        first_line, first_raw = seen[qid]
        if raw == first_raw:
            problems.add(f"topic {raw!r} is in the file twice (first on line {first_line})", line=line,
                         field=field_name)
        else:
            problems.add(f"topic {raw!r} is in the file twice: line {first_line} numbers it {first_raw!r} (leading "
                         "zeros do not count)", line=line, field=field_name)
        return None
    seen[qid] = (line, raw)
    return qid


def _as_written(qid, raw) -> dict:
    """The metadata that keeps a topic's id as the file wrote it, when topic_id changed it (`051`)."""
    return {"id_as_written": raw} if raw != qid else {}


def _starts_line(text, offset) -> bool:
    """Whether only blanks stand before `offset` on its line."""
    return not text[text.rfind("\n", 0, offset) + 1 : offset].strip()


def parse_classic(text, problems) -> list[TopicRecord]:
    """Classic TREC topics: `<top>` … `</top>`, each field from its tag to the next tag (a closing tag ends it); a
    tag that is not NIST's and does not begin its line is text of the field it stands in."""
    lines = _Lines(text)
    topics, seen = [], {}
    top = None  # (line, {tag: (line, raw value)}) of the open topic
    current = None  # (tag, line, start offset) of the open field
    last_end = 0

    def close_field(end):
        nonlocal current
        if current is not None and top is not None:
            tag, line, start = current
            if tag in top[1]:
                problems.add(f"a second <{tag}> in the topic of line {top[0]}", line=line, field=tag)
            else:
                top[1][tag] = (line, text[start:end])
        current = None

    def close_topic():
        record = _classic_record(top[0], top[1], problems, seen)
        if record is not None:
            topics.append(record)

    for match in _TAG.finditer(text):
        closing, tag = match.group(1) == "/", match.group(2).lower()
        if (current is not None and tag not in CLASSIC and tag != "top" and not (closing and tag == current[0])
                and not _starts_line(text, match.start())):
            continue  # a tag NIST does not use, inside a field's line (<b>, <script> in a title): the field's text
        line = lines.at(match.start())
        between = text[last_end : match.start()]
        last_end = match.end()
        if top is None and between.strip() and tag != "top":
            problems.add("text outside <top> … </top>", line=lines.at(match.start() - len(between.lstrip())))
        if tag == "top":
            if closing:
                if top is None:
                    problems.add("</top> without a <top> before it", line=line, field="top")
                    continue
                close_field(match.start())
                close_topic()
                top = None
            else:
                if top is not None:
                    problems.add("<top> is never closed: </top> is missing before the next <top>", line=top[0],
                                 field="top")
                    current = None
                top, current = (line, {}), None
            continue
        if top is None:
            problems.add(f"<{tag}> outside <top> … </top>", line=line, field=tag)
            continue
        if closing:  # any closing tag ends the open field (<fac> holds <nat> in TREC 1-3 topics)
            close_field(match.start())
            continue
        close_field(match.start())
        current = (tag, line, match.end())
    if top is not None:
        problems.add("<top> is never closed: the file ends before </top>", line=top[0], field="top")
    elif text[last_end:].strip():
        problems.add("text outside <top> … </top>", line=lines.at(last_end))
    if not topics and not problems:
        problems.add("no topics in the file")
    return topics


def _classic_record(line, fields, problems, seen) -> TopicRecord | None:
    if "num" not in fields:
        problems.add("the topic has no <num>", line=line, field="num")
        return None
    num_line, raw = fields.pop("num")
    written = _label_stripped(raw, "Number:")
    qid = _check_id(written, num_line, seen, problems, "num")
    if qid is None:
        return None
    record = TopicRecord(qid, num_line, metadata=_as_written(qid, written), id_field="num")
    for tag, (_, raw) in fields.items():
        key, label = CLASSIC.get(tag, (tag, ""))
        value = _label_stripped(raw, label)
        if tag == "title":
            record.title = " ".join(value.split())
        elif _paragraphs(value):  # an empty field (<fac> Factor(s): around <nat>) holds nothing to keep
            record.metadata[key] = _paragraphs(value)
    if "title" not in fields and record.metadata.get("description"):
        # TREC-4's topics (201-250) have no <title>: their description is the query systems searched with
        record.title = " ".join(record.metadata["description"].split())
    if not record.title:
        problems.add("the topic has no <title>" + ("" if "title" in fields else " (nor a <desc> to take the query "
                                                   "from)"), line=line, field="title")
    record.text = record.title
    return record


def parse_xml(text, problems) -> list[TopicRecord]:
    """TREC web-track topics: <topic number=… type=…> with <query>, <description>, <narrative>, <subtopic>…"""
    body = re.sub(r"\A\s*<\?xml[^>]*\?>", lambda m: "\n" * m.group().count("\n"), text)
    declared = re.search(r"<!(?:DOCTYPE|ENTITY)", body)
    if declared:  # no entities: nothing expands
        problems.add("a DOCTYPE or entity declaration (not taken)", line=body.count("\n", 0, declared.start()) + 1)
        return []
    topics, seen, stack = [], {}, []
    state = {"topic": None, "child": None, "chars": []}
    parser = expat.ParserCreate()

    def start(name, attrs):
        line = parser.CurrentLineNumber
        stack.append(name)
        if name == "topic":
            if state["topic"] is not None:
                problems.add("a <topic> inside another topic", line=line, field="topic")
            written = (attrs.get("number") or attrs.get("id") or "").strip()
            record = TopicRecord(written, line, metadata={k: v for k, v in attrs.items() if k not in ("number", "id")},
                                 id_field="number")
            state["topic"] = record
            if not written:
                problems.add("the topic has no number (<topic number=…>)", line=line, field="number")
            elif (qid := _check_id(written, line, seen, problems, "number")) is not None:
                record.qid = qid
                record.metadata.update(_as_written(qid, written))
                topics.append(record)
        elif state["topic"] is not None and state["child"] is None:
            state["child"], state["chars"], state["attrs"], state["depth"] = name, [], attrs, len(stack)

    def end(name):
        stack.pop()
        record, child = state["topic"], state["child"]
        if name == "topic":
            state["topic"] = None
            if record is not None and record.qid and not record.text:
                problems.add("the topic has no <query>", line=record.line, field="query")
        elif record is not None and child == name and len(stack) + 1 == state["depth"]:
            value = "".join(state["chars"])
            if name == "query":
                record.text = record.title = " ".join(value.split())
            elif name == "subtopic":
                item = {"number": state["attrs"].get("number", ""), **{
                    k: v for k, v in state["attrs"].items() if k != "number"}, "text": _paragraphs(value)}
                record.metadata.setdefault("subtopics", []).append(item)
            else:
                record.metadata[name] = _paragraphs(value)
            state["child"] = None

    def chars(data):
        if state["child"] is not None:
            state["chars"].append(data)

    parser.StartElementHandler, parser.EndElementHandler, parser.CharacterDataHandler = start, end, chars
    try:
        parser.Parse("<pooljudge-topics>" + body + "</pooljudge-topics>", True)
    except expat.ExpatError as exc:
        problems.add(f"not well-formed XML: {expat.errors.messages[exc.code]} (column {exc.offset + 1})",
                     line=exc.lineno)
    if not topics and not problems:
        problems.add("no <topic number=…> elements in the file" + but_looks_like(text, TOPICS))
    return topics


def _tsv_header(lines) -> str | None:
    """The first column of line 1 when it is a header line: both its columns are column names, an id's
    (`qid`, `query_id`, `id`, `topic`…) then a text's (`query`, `text`, `title`…), as `qid<TAB>query`. Told by the
    names alone: a one-topic file `id<TAB>identity documents` is a topic called "id", not a header."""
    if not lines:
        return None
    parts = [part.strip() for part in lines[0].split("\t")]
    if len(parts) != 2 or parts[0].lower() not in TSV_HEADER_IDS or parts[1].lower() not in TSV_HEADER_TEXTS:
        return None
    return parts[0]


def parse_tsv(text, problems, notes=None) -> list[TopicRecord]:
    """`qid<TAB>text` lines; a header line first (`qid<TAB>query`…) is skipped, and `notes` says so."""
    topics, seen = [], {}
    lines = text.split("\n")
    header = _tsv_header(lines)
    if header is not None and notes is not None:
        notes.append(f"line 1 is a header ({header}…): skipped")
    for number, line in enumerate(lines, start=1):
        if not line.strip() or (number == 1 and header is not None):
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            problems.add(f"expected 2 columns (qid, text) separated by a tab, got {len(parts)}"
                         f"{'' if problems.total else but_looks_like(text, TOPICS)}", line=number)
            continue
        written, query = parts[0].strip(), " ".join(parts[1].split())
        qid = _check_id(written, number, seen, problems, "qid")
        if qid is None:
            continue
        if not query:
            problems.add("the query text is empty", line=number, field="text")
            continue
        topics.append(TopicRecord(qid, number, title=query, text=query, metadata=_as_written(qid, written),
                                  id_field="qid"))
    return topics


def parse_jsonl(text, problems) -> list[TopicRecord]:
    topics, seen = [], {}
    for number, obj in parse_json_lines(text, problems):
        key = next((k for k in JSON_ID if k in obj), None)
        if key is None:
            problems.add(f"the record has no id ({', '.join(JSON_ID)})", line=number, field="query_id")
            continue
        raw = obj.pop(key)
        if not isinstance(raw, (str, int)) or isinstance(raw, bool):
            problems.add(f"expected a string or an integer, got {json_type(raw)}", line=number, field=key)
            continue
        written = str(raw).strip()
        qid = _check_id(written, number, seen, problems, key)
        if qid is None:
            continue
        values = {}
        for name in ("title", "text", "query", "description", "narrative"):
            if name in obj:
                value = obj.pop(name)
                if not isinstance(value, str):
                    problems.add(f"expected a string, got {json_type(value)}", line=number, field=name)
                    value = ""
                values[name] = value
        query = next((" ".join(values[k].split()) for k in JSON_TEXT if values.get(k, "").strip()), "")
        if not query:
            problems.add("the record has no query text (text, query or title)", line=number, field="text")
            continue
        record = TopicRecord(qid, number, title=" ".join(values.get("title", "").split()) or query, text=query,
                             metadata=_as_written(qid, written), id_field=key)
        for name in ("description", "narrative"):
            if values.get(name, "").strip():
                record.metadata[name] = _paragraphs(values[name])
        nested = obj.pop("metadata", None)
        if isinstance(nested, dict):  # BEIR's queries.jsonl: {"_id", "text", "metadata": {…}}
            obj = {**nested, **obj}
        elif nested is not None:
            obj["metadata"] = nested
        record.metadata.update(obj)
        topics.append(record)
    return topics


PARSERS = {"trec": parse_classic, "xml": parse_xml, "tsv": parse_tsv, "jsonl": parse_jsonl}


def detect_format(text) -> str:
    head = re.sub(r"\A(?:\s|<!--.*?-->)*", "", text[:65536], flags=re.DOTALL)
    if re.match(r"<top\s*>", head, re.IGNORECASE):
        return "trec"
    if head.startswith("<"):
        return "xml"
    if head.startswith("{"):
        return "jsonl"
    return "tsv"


def read_topics(path, problems, fmt="auto", notes=None) -> list[TopicRecord]:
    """The topics of a file (plain or gzip/bzip2/xz); every problem is added to `problems`, what was passed over (a
    TSV header line) to `notes` when given."""
    if fmt not in FORMATS:
        problems.fail(f"{fmt!r} is not one of {', '.join(FORMATS)}", field="format")
    parts, size = [], 0
    try:  # packed, at most the compression ratio a run may have (a 670 KB .xz held 2.5 GB)
        for _, block in file_batches(path, max_bytes=MAX_TOPIC_BYTES, max_ratio=settings.API_MAX_COMPRESSION_RATIO):
            parts.append(block)
            size += len(block)
            if size > MAX_TOPIC_BYTES:
                problems.fail(f"more than {MAX_TOPIC_BYTES:,} characters: not a topics file")
    except InputTooLarge as exc:
        problems.fail(str(exc), field="file")
    text = "\n".join(parts)
    fmt = detect_format(text) if fmt == "auto" else fmt
    if fmt == "tsv":
        return parse_tsv(text, problems, notes)
    return PARSERS[fmt](text, problems)


def import_topics(path, collection_name, *, fmt="auto", update=False, progress=no_progress) -> TopicsResult:
    """Read and check a topics file, then write its topics (ad hoc) into the collection, made if new.

    A topic already in the collection is a problem unless `update` (then its title, text and metadata are
    replaced). Raises ImportFailed with every problem; nothing is written then.
    """
    problems, notes = Problems(path), []
    return write_topics(read_topics(path, problems, fmt, notes), problems, collection_name, update=update,
                        progress=progress, notes=notes)


def write_topics(records, problems, collection_name, *, update=False, progress=no_progress,
                 notes=()) -> TopicsResult:
    """Write checked TopicRecords (the problems so far in `problems`) as import_topics does; `notes` (read_topics')
    end the summary."""
    options = Problems("options")
    collection = Collection.objects.filter(name=collection_name).first()
    if collection is None:
        check_slug(collection_name, "collection name", options, field="collection")
    existing = {}
    if collection is not None:  # by topic_ids' rule: a topic stored as `051` is the file's 51
        pks = topics_by_id(Topic.objects.filter(collection=collection), [r.qid for r in records])
        by_pk = {}
        for chunk in batched(pks.values()):  # in_bulk does not batch on PostgreSQL (65,535 parameters at most)
            by_pk.update(Topic.objects.in_bulk(chunk))
        existing = {qid: by_pk[pk] for qid, pk in pks.items()}
    for record in records:
        topic = existing.get(record.qid)
        if topic is None:
            continue
        if topic.kind != Topic.Kind.ADHOC:
            problems.add(f"topic {record.qid!r} is already in {collection_name} as a {topic.get_kind_display()} topic",
                         line=record.line, field=record.id_field)
        elif not update and not _placeholder(topic):
            problems.add(f"topic {record.qid!r} is already in {collection_name} (--update replaces it)",
                         line=record.line, field=record.id_field)
    raise_if_any(problems, options)
    created_collection = collection is None
    with transaction.atomic():
        if collection is None:
            collection = Collection.objects.create(name=collection_name, kind=Collection.Kind.DOCUMENTS)
        new, changed, filled, unchanged = [], [], 0, 0
        for record in progress(records, desc="topics", unit="topic"):
            title = record.title if len(record.title) <= MAX_TITLE else record.title[: MAX_TITLE - 1] + "…"
            topic = existing.get(record.qid)
            if topic is None:
                new.append(Topic(collection=collection, external_id=record.qid, kind=Topic.Kind.ADHOC, title=title,
                                 text=record.text, metadata=record.metadata))
            elif (topic.title, topic.text, topic.metadata) == (title, record.text, record.metadata):
                unchanged += 1  # a file imported again as it was: nothing to write
            else:
                filled += _placeholder(topic)
                topic.title, topic.text, topic.metadata = title, record.text, record.metadata
                changed.append(topic)
        Topic.objects.bulk_create(new, batch_size=1000)
        update_topics(changed)
    ids = list(topics_by_id(Topic.objects.filter(collection=collection), [r.qid for r in records]).values())
    return TopicsResult(collection, created_collection, len(new), len(changed) - filled + unchanged, ids, list(notes),
                        filled, unchanged)


def update_topics(topics):
    """Write these topics' title, text and metadata: one UPDATE by primary key, sent once per topic in one executemany
    per thousand (psycopg pipelines them on PostgreSQL). bulk_update's CASE per column over each batch's ids took
    146 to 245 s for 70,000 topics on a loaded 2-core machine (this way: about a seventh of that), whatever the batch
    size (benchmarks/bench_topic_update.py prints the ratio)."""
    fields = [Topic._meta.get_field(name) for name in ("title", "text", "metadata")]
    quote = connection.ops.quote_name
    sql = (f"UPDATE {quote(Topic._meta.db_table)} SET {', '.join(f'{quote(f.column)} = %s' for f in fields)} "
           f"WHERE {quote(Topic._meta.pk.column)} = %s")
    with connection.cursor() as cursor:
        for chunk in batched(topics):
            cursor.executemany(sql, [[f.get_db_prep_save(getattr(topic, f.attname), connection) for f in fields]
                                     + [topic.pk] for topic in chunk])


def _placeholder(topic) -> bool:
    """A topic with nothing but its id: made for a run or qrels line (--create-missing), for its topic file to fill
    in (as documents fill in theirs)."""
    return topic.kind == Topic.Kind.ADHOC and not topic.title and not topic.text and not topic.metadata


# --- writing back --------------------------------------------------------------------------------------------


def trec_topic(topic) -> str:
    """One topic as a classic TREC topic: <num>, <title>, <desc>, <narr> and every other text field of its metadata
    (under its classic tag, or its own name), which import_topics reads back to the same topic."""
    meta = topic.metadata if isinstance(topic.metadata, dict) else {}
    title = " ".join((topic.title or topic.text).split())
    written = meta.get("id_as_written")  # the file's `051`, read back as the same topic (topic_ids)
    number = written if isinstance(written, str) and topic_id(written) == topic.external_id else topic.external_id
    fields = {"num": f"Number: {number}", "title": title}
    description = meta.get("description") if isinstance(meta.get("description"), str) else ""
    if not description and topic.text.strip() and " ".join(topic.text.split()) != title:
        description = topic.text.strip()
    if description:
        fields["desc"] = f"Description:\n{description}"
    for key, value in meta.items():
        if key in ("description", "id_as_written") or not isinstance(value, str) or not value.strip():
            continue
        tag = TAG_OF_KEY.get(key, key)
        if tag in ("num", "title", "top") or not _PLAIN_TAG.match(tag) or tag in fields:
            continue
        label = CLASSIC.get(tag, ("", ""))[1]
        fields[tag] = f"{label}\n{value.strip()}" if label else value.strip()
    order = sorted(fields, key=lambda t: (CLASSIC_ORDER.index(t) if t in CLASSIC_ORDER else len(CLASSIC_ORDER), 0))
    body = "".join(f"<{tag}> {fields[tag]}" + ("\n" if tag in ("head", "num") else "\n\n") for tag in order)
    return f"<top>\n{body}</top>\n\n"


def trec_topics(topics) -> str:
    return "".join(trec_topic(t) for t in topics)

