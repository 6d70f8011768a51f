"""Documents of a collection from files: TREC SGML, JSON lines (Pyserini, BEIR) and TSV (MS MARCO), streamed.

A file is plain, gzip, bzip2 or xz (retrieval.ingest.text_batches unpacks it on the way, and refuses a line longer
than ingest.MAX_LINE_BYTES, 16 MiB, or a NUL byte or bytes that are not UTF-8). Its format is told from its first
characters: `<` TREC SGML (`<DOC>` … `</DOC>`), `{` JSON lines, else TSV (`id<TAB>text`, `id<TAB>title<TAB>text`,
or MS MARCO documents' `id<TAB>url<TAB>title<TAB>text`; the first line fixes the columns).

- SGML: the id from DOCNO; the title from the first of HEADLINE, TITLE, HEAD, HL, TI (FBIS puts it in <H3><TI>);
  the text from TEXT (every TEXT element), its paragraphs (<P> elements, or blank lines) kept as blank lines
  between them and the hard-wrapped lines of each joined; every other element without child elements kept in
  the passage's metadata under its lower-cased name (a list when it repeats), comments dropped; character
  references (`AT&amp;T`, `&#233;`) decoded in all but DOCNO, as the page shows the text and not its markup.
  A <TEXT> never closed ends at </DOC>; a web page (GOV2, WT10g: <DOCHDR>, no <TEXT>) is the text after
  </DOCHDR>; a second DOCNO in a DOC is refused (see _sgml_document).
- JSON lines: the id from `id`, `docid`, `doc_id` or `_id`; `title`; the text from `contents`, `text`, `body` or
  `segment` (MS MARCO V2.1 segmented, TREC RAG); every other key in metadata (BEIR's nested `metadata` merged in).

Writing: import_documents writes every file inside one transaction, so a file that fails rolls all back: nothing
is stored. Into a collection without passages the rows go in one streamed COPY (executemany on SQLite), and a
DOCNO seen twice is the unique constraint's error, then located by reading the files again; into a collection
that has passages, a batch at a time: ids already there are filled in when they are placeholders (runs and qrels
imported with --create-missing make passages without text), else refused unless `update`; even then a document
whose text would change is refused while assessors' evidence spans (offsets into that text) mark it. Memory stays bounded by
a batch (and one document), whatever the file's size.
"""

import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, connection, transaction

from retrieval import ingest
from retrieval.bulk import copy_escaped, insert_rows, no_progress
from retrieval.ingest import (
    ImportFailed, InputTooLarge, Problem, Problems, file_batches, id_problem, json_type, parse_json_lines,
)
from retrieval.models import Collection, Passage

FORMATS = ("auto", "sgml", "jsonl", "tsv")
MAX_EXTERNAL_ID = 200  # Passage.external_id
MAX_TITLE = 500  # Passage.title
MAX_PROBLEMS = 50  # reading stops after this many problems
BATCH = 10_000  # documents a batch, into a collection that has passages
TITLE_TAGS = ("HEADLINE", "TITLE", "HEAD", "HL", "TI")
JSON_ID = ("id", "docid", "doc_id", "_id")
JSON_TEXT = ("contents", "text", "body", "segment")  # segment: MS MARCO V2.1 segmented (TREC RAG 2024)
COLUMNS = ["collection", "external_id", "title", "text", "metadata"]  # what a document's row gives
_SPACE = re.compile(r"\s")
TSV_COLUMNS = {2: ("id", "text"), 3: ("id", "title", "text"), 4: ("id", "url", "title", "text")}
# a TSV header line's column names (pandas' to_csv, hand-made files), compared lowercased: every column a name
TSV_HEADER = {"id": {"id", "docid", "doc_id", "doc-id", "_id", "docno", "pid", "passage_id"},
              "text": {"text", "contents", "body", "passage", "segment"}, "title": {"title", "headline"},
              "url": {"url"}}
_DOC_MARK = re.compile(r"<(/?)DOC(?:\s[^<>]*)?>", re.IGNORECASE)  # [^<>]: each try stops at the next tag (linear)
_TAG = re.compile(r"<(/?)([A-Za-z][\w.-]*)([^<>]*)>")
_DOCNO_OPEN = re.compile(r"<DOCNO(?:\s[^<>]*)?>", re.IGNORECASE)
_TEXT_OPEN = re.compile(r"<TEXT(?![\w.-])[^<>]*>", re.IGNORECASE)  # as _TAG reads an opening <TEXT>
# what a web page's text leaves out: its <head> (the <title> is the title), scripts and styles
_WEB_NOT_TEXT = re.compile(r"<(head|script|style)\b[^<>]*>", re.IGNORECASE)
_WEB_END = {name: re.compile(rf"</{name}\s*>", re.IGNORECASE) for name in ("head", "script", "style")}
_PARAGRAPH = re.compile(r"</?P(?:\s[^<>]*)?>|\n[ \t]*\n", re.IGNORECASE)


@dataclass
class Document:
    """One document as read: its id, the line it starts on, title, text and every other field."""

    docid: str
    line: int
    title: str = ""
    text: str = ""
    fields: dict = field(default_factory=dict)


BAD_BYTES = ("refuse", "replace")  # what a byte the files' encoding cannot read does (read_documents)


def _lines(path, problems, encoding="utf-8", warn=None, max_bytes=None):
    """The file's lines, numbered. Packed, it may unpack to at most API_MAX_COMPRESSION_RATIO times its size (a
    command's corpus too: text packs 3 to 10 times), and to `max_bytes` (an upload's limit, as a run's)."""
    try:
        for first, block in file_batches(path, encoding=encoding, warn=warn, max_bytes=max_bytes,
                                         max_ratio=settings.API_MAX_COMPRESSION_RATIO):
            yield from enumerate(block.split("\n"), start=first)
    except InputTooLarge as exc:
        problems.fail(str(exc), field="file")


def _stopping(problems):
    if problems.total >= MAX_PROBLEMS:
        problems.stop(f"stopped reading after {problems.total} problems")


def detect_format(head: str) -> str:
    head = head.lstrip("\ufeff \t\r\n")
    if head.startswith("<"):
        return "sgml"
    if head.startswith("{"):
        return "jsonl"
    return "tsv"


def read_documents(path, problems: Problems, fmt="auto", *, encoding="utf-8", bad_bytes="refuse", max_bytes=None):
    """Yield the Documents of a file in order; every problem is added to `problems` (reading stops after
    MAX_PROBLEMS). Ids are checked one by one (empty, too long, spaces); a repeated id is left to the writer.
    `encoding`: the files' (ingest.check_encoding); `bad_bytes` "replace": a byte it cannot read becomes U+FFFD,
    with a warning naming the place (web crawls mix encodings), "refuse" (the default): the file is refused."""
    if fmt not in FORMATS:
        problems.fail(f"{fmt!r} is not one of {', '.join(FORMATS)}", field="format")
    if bad_bytes not in BAD_BYTES:
        problems.fail(f"{bad_bytes!r} is not one of {', '.join(BAD_BYTES)}", field="bad_bytes")
    try:
        encoding = ingest.check_encoding(encoding)
    except ValueError as exc:
        problems.fail(str(exc), field="encoding")
    lines = _lines(path, problems, encoding, problems.warn if bad_bytes == "replace" else None, max_bytes)
    for number, line in lines:
        if line.strip():
            break
    else:
        return
    if fmt == "auto":
        fmt = detect_format(line)

    def all_lines():
        yield number, line
        yield from lines

    reader = {"sgml": _sgml, "jsonl": _jsonl, "tsv": _tsv}[fmt]
    yield from reader(all_lines(), problems)


def _valid_id(docid, line, problems, field_name) -> bool:
    if not docid:
        problems.add("the document has no id", line=line, field=field_name)
    elif len(docid) > MAX_EXTERNAL_ID:
        problems.add(f"an id longer than {MAX_EXTERNAL_ID} characters", line=line, field=field_name)
    elif _SPACE.search(docid):
        problems.add(f"{docid[:60]!r} is not a document id: it holds a space", line=line, field=field_name)
    elif problem := id_problem(docid):
        problems.add(f"{docid[:60]!r} is not a document id: {problem}", line=line, field=field_name)
    else:
        return True
    _stopping(problems)
    return False


def _tsv(lines, problems):
    columns = None
    for number, line in lines:
        if not line:
            continue
        parts = line.split("\t")
        if columns is None:
            columns = TSV_COLUMNS.get(len(parts))
            if columns is None:
                problems.fail(f"{len(parts)} columns: a TSV documents file has 2 (id, text), 3 (id, title, text) or 4 "
                              "(id, url, title, text) separated by tabs", line=number)
            if all(part.strip().lower() in TSV_HEADER[name] for part, name in zip(parts, columns)):
                problems.warn(f"a header line ({', '.join(p.strip() for p in parts)}), not a document: skipped",
                              line=number)
                continue
        if len(parts) != len(columns):
            if line.isspace():
                continue
            problems.add(f"{len(parts)} columns, where the file's first line has {len(columns)} "
                         f"({', '.join(columns)})", line=number)
            _stopping(problems)
            continue
        docid = parts[0].strip()
        if not _valid_id(docid, number, problems, "id"):
            continue
        if len(parts) == 2:
            yield Document(docid, number, "", parts[1].strip())
        elif len(parts) == 3:
            yield Document(docid, number, parts[1].strip(), parts[2].strip())
        else:
            yield Document(docid, number, parts[2].strip(), parts[3].strip(), {"url": parts[1].strip()})


def _jsonl(lines, problems):
    for number, line in lines:
        for _, obj in parse_json_lines(line, problems, number):
            document = _json_document(number, obj, problems)
            if document is not None:
                yield document
        _stopping(problems)


def _json_document(number, obj, problems) -> Document | None:
    key = next((k for k in JSON_ID if k in obj), None)
    if key is None:
        problems.add(f"the record has no id ({', '.join(JSON_ID)})", line=number, field="id")
        return None
    raw = obj.pop(key)
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        problems.add(f"expected a string or an integer, got {json_type(raw)}", line=number, field=key)
        return None
    docid = str(raw).strip()
    if not _valid_id(docid, number, problems, key):
        return None
    values, bad = {}, False
    for name in ("title", *JSON_TEXT):
        if name in obj and (name == "title" or not any(k in values for k in JSON_TEXT)):
            value = obj.pop(name)
            if value is None:
                value = ""
            if not isinstance(value, str):
                problems.add(f"expected a string, got {json_type(value)}", line=number, field=name)
                bad = True
            values[name] = value
    if bad:
        return None
    nested = obj.pop("metadata", None)
    if isinstance(nested, dict):  # BEIR's corpus.jsonl
        obj = {**nested, **obj}
    elif nested is not None:
        obj["metadata"] = nested
    text = next((values[k] for k in JSON_TEXT if k in values), "")
    return Document(docid, number, " ".join(values.get("title", "").split()), text.strip(), obj)


def _sgml(lines, problems):
    start, body, size = None, [], 0
    most = ingest.MAX_LINE_BYTES  # a document may be as long as a line may
    for number, line in lines:
        marks = list(_DOC_MARK.finditer(line)) if "<" in line else []
        if not marks:
            if start is None:
                if line.strip():
                    topics = not problems.total and re.match(r"\s*<top\s*>", line, re.IGNORECASE)
                    problems.add("text outside <DOC> … </DOC>" + (
                        ": this looks like TREC topics, not documents (import_topics reads them)" if topics else ""),
                        line=number)
                    _stopping(problems)
                continue
            body.append(line)
            size += len(line) + 1
            if size > most:
                problems.fail(f"a document longer than {most:,} characters (is its </DOC> missing?)", line=start,
                              field="DOC")
            continue
        at = 0
        for mark in marks:
            piece = line[at : mark.start()]
            if mark.group(1):  # </DOC>
                if start is None:
                    problems.add("</DOC> without a <DOC> before it", line=number, field="DOC")
                    _stopping(problems)
                else:
                    body.append(piece)
                    document = _sgml_document("\n".join(body), start, problems)
                    if document is not None:
                        yield document
                    start, body, size = None, [], 0
            else:
                if start is not None:
                    problems.add("<DOC> is never closed: </DOC> is missing before the next <DOC>", line=start,
                                 field="DOC")
                    _stopping(problems)
                elif piece.strip():
                    problems.add("text outside <DOC> … </DOC>", line=number)
                    _stopping(problems)
                start, body, size = number, [], 0
            at = mark.end()
        rest = line[at:]
        if start is not None:
            body.append(rest)
            size += len(rest) + 1
        elif rest.strip():
            problems.add("text outside <DOC> … </DOC>", line=number)
            _stopping(problems)
    if start is not None:
        problems.add("<DOC> is never closed: the file ends before </DOC>", line=start, field="DOC")


def _plain(raw: str, *, entities=True) -> str:
    """The text of SGML without its tags, white space collapsed, character references (&amp;, &#233;, &eacute;)
    decoded unless `entities` is False (a DOCNO is kept as written, as runs and qrels write it)."""
    text = _TAG.sub(" ", raw)
    if entities and "&" in text:
        text = html.unescape(text)
    return " ".join(text.split())


def _paragraphs(raw: str) -> str:
    parts = (_plain(p) for p in _PARAGRAPH.split(raw))
    return "\n\n".join(p for p in parts if p)


def _without_comments(raw: str) -> str:
    """`raw` less its <!-- … --> comments; a comment never closed is left as it is. By find, not a regular
    expression: `<!--.*?-->` tried every unclosed `<!--` to the end, time quadratic in their number."""
    parts, at = [], 0
    while (start := raw.find("<!--", at)) >= 0 and (end := raw.find("-->", start + 4)) >= 0:
        parts.append(raw[at:start])
        at = end + 3
    return "".join(parts) + raw[at:] if parts else raw


def _sgml_document(raw: str, line: int, problems) -> Document | None:
    """One <DOC>'s content: DOCNO, title, text and the other elements.

    An element left open at </DOC> ends there, as SGML lets an end tag be left out where the enclosing element's
    end implies it (a tag never closed inside an element is that element's text): so a <TEXT> with no </TEXT>
    is the text up to </DOC>. A web page (GOV2, WT10g: a <DOCHDR> of URL and HTTP headers, then the page, no
    <TEXT>) has what follows </DOCHDR> for its text, the page's <title> for its title, and only the elements
    before the page in its metadata (with "url", the DOCHDR's first word). A second <DOCNO> is refused."""
    original, raw = raw, _without_comments(raw)
    # stack: [name, content start, has child elements]; elements: (name, content start, content end, leaf, end,
    # outermost: no element of its name is open around it). Offsets, not slices: n nested elements held n slices of
    # O(n) each (12,000 nested tags, 108 KB, took 1 GB); only what is kept is sliced, and of a name nested in itself
    # only the outermost (a <TEXT> in a <TEXT> is the outer one's text already).
    stack, elements = [], []
    open_at = {}  # name -> the depths in the stack where it is open: a closing tag finds its element at once
    for match in _TAG.finditer(raw):
        name = match.group(2).upper()
        if name == "P":
            continue
        if not match.group(1):
            if stack:
                stack[-1][2] = True
            open_at.setdefault(name, []).append(len(stack))
            stack.append([name, match.end(), False])
            continue
        depths = open_at.get(name)
        if not depths:  # a closing tag nothing opened (HTML's </td> after <br>s): not searched for down the stack
            continue
        depth = depths[-1]
        _, begin, parent = stack[depth]
        for inner, _, _ in stack[depth:]:  # an inner tag never closed is text of the element
            open_at[inner].pop()
        del stack[depth:]
        elements.append((name, begin, match.start(), not parent, match.end(), not open_at[name]))
    unclosed_text = None  # the offset in `raw` of a <TEXT> never closed
    if open_at.get("TEXT"):  # a <TEXT> never closed: up to </DOC>
        _, begin, parent = stack[open_at["TEXT"][0]]
        elements = [e for e in elements if not (e[0] == "TEXT" and e[1] > begin)]  # inside it: its text already
        elements.append(("TEXT", begin, len(raw), not parent, len(raw), True))
        unclosed_text = begin
    elements = [(name, _Content(raw, begin, stop, outermost), leaf, end)
                for name, begin, stop, leaf, end, outermost in elements if outermost or leaf]
    docnos = [str(content) for name, content, _, _ in elements if name == "DOCNO"]
    if not docnos:
        problems.add("the document has no <DOCNO>", line=line, field="DOCNO")
        _stopping(problems)
        return None
    docid = _plain(docnos[0], entities=False)
    if len(docnos) > 1:
        problems.add(f"a second <DOCNO> in the document (the first is {docid[:60]!r})",
                     line=line + _second_docno_line(original), field="DOCNO")
        _stopping(problems)
        return None
    if not _valid_id(docid, line, problems, "DOCNO"):
        return None
    if unclosed_text is not None:  # repaired, and said: the text may run on over what was meant to follow it
        nth = len(_TEXT_OPEN.findall(raw, 0, unclosed_text))
        problems.warn(f"document {docid[:60]!r}: <TEXT> is never closed; its text was taken up to </DOC>",
                      line=line + _tag_line(original, _TEXT_OPEN, nth), field="TEXT")
    names = {element[0] for element in elements}
    page_at = None  # where a web page (after </DOCHDR>) begins
    if "TEXT" not in names and "DOCHDR" in names:
        page_at = next(end for name, _, _, end in elements if name == "DOCHDR")
        page = _web_text(raw[page_at:])
        text = _paragraphs(page)
        titles = [c for n, c, _, end in elements if n == "TITLE" and end > page_at]
        title = _plain(str(titles[0])) if titles else ""
        title_tag = None
    else:
        title_tag = next((t for t in TITLE_TAGS if t in names), None)
        title = (" ".join(_plain(str(c)) for n, c, _, _ in elements if n == title_tag and c.outermost)
                 if title_tag else "")
        text = "\n\n".join(p for p in (_paragraphs(str(c)) for n, c, _, _ in elements if n == "TEXT" and c.outermost)
                             if p)
    fields = {}
    for name, content, leaf, end in elements:
        if not leaf or name in ("DOCNO", "TEXT", title_tag) or (page_at is not None and end > page_at):
            continue
        key, value = name.lower(), _paragraphs(str(content))
        if key in fields:
            fields[key] = [*fields[key], value] if isinstance(fields[key], list) else [fields[key], value]
        else:
            fields[key] = value
    if page_at is not None and "url" not in fields:
        first = fields.get("dochdr", "")
        first = (first[0] if isinstance(first, list) else first).split(maxsplit=1)
        if first and "://" in first[0]:
            fields["url"] = first[0]
    return Document(docid, line, title, text, fields)


class _Content:
    """An element's content as offsets into its document, sliced (str) only where it is kept."""

    __slots__ = ("raw", "begin", "end", "outermost")

    def __init__(self, raw, begin, end, outermost):
        self.raw, self.begin, self.end, self.outermost = raw, begin, end, outermost

    def __str__(self):
        return self.raw[self.begin : self.end]


def _web_text(page: str) -> str:
    """A web page less its <head>, <script> and <style> elements (one never closed is left as it is). By search from
    each opener, not one pattern with `.*?`, which tried every unclosed opener to the page's end (quadratic)."""
    parts, at, unclosed = [], 0, set()
    for match in _WEB_NOT_TEXT.finditer(page):
        name = match.group(1).lower()
        if match.start() < at or name in unclosed:
            continue
        end = _WEB_END[name].search(page, match.end())
        if end is None:  # nothing after this one closes it, nor any later one
            unclosed.add(name)
            continue
        parts.append(page[at : match.start()])
        parts.append(" ")
        at = end.end()
    return "".join(parts) + page[at:] if parts else page


def _second_docno_line(raw: str) -> int:
    """How many lines into `raw` (a DOC's content, comments in it) its second <DOCNO> outside a comment is."""
    return _tag_line(raw, _DOCNO_OPEN, 2)


def _tag_line(raw: str, pattern, nth: int) -> int:
    """How many lines into `raw` (a DOC's content, comments in it) the `nth` match of `pattern` outside a comment is
    (0 when there is none)."""
    found = 0
    for match in pattern.finditer(raw):
        before = raw.rfind("<!--", 0, match.start())
        if before >= 0 and raw.find("-->", before + 4, match.start()) < 0:  # inside a comment
            continue
        found += 1
        if found == nth:
            return raw.count("\n", 0, match.start())
    return 0


# --- writing -------------------------------------------------------------------------------------------------


@dataclass
class DocumentsResult:
    collection: Collection
    created_collection: bool
    created: int = 0
    filled: int = 0  # placeholders (passages without text) filled in
    updated: int = 0
    skipped: int = 0  # not needed (only_needed)
    missing: int = 0  # needed and not in the files (only_needed)
    warnings: list = field(default_factory=list)  # what the reading repaired (Problems.warn), with its place
    warning_total: int = 0
    retexted_judged: int = 0  # documents whose text changed under judgements (retext_judged)
    retexted_judgements: int = 0

    def summary(self) -> str:
        parts = [f"Imported {self.created:,} documents into {self.collection.name}"]
        if self.created_collection:
            parts.append(" (created the collection)")
        if self.filled:
            parts.append(f"; filled in {self.filled:,} that runs or qrels had named")
        if self.updated:
            parts.append(f"; updated {self.updated:,}")
        if self.retexted_judged:
            parts.append(f" (the text of {self.retexted_judged:,} changed under {self.retexted_judgements:,} "
                         "judgements given to the old text)")
        if self.skipped or self.missing:
            parts.append(f"; skipped {self.skipped:,} not needed, {self.missing:,} needed ones not in the files")
        lines = ["".join(parts) + "."]
        if self.warning_total:
            lines[0] += f" {self.warning_total:,} warning{'s' if self.warning_total > 1 else ''}:"
            lines.extend(f"warning: {w}" for w in self.warnings)
            if self.warning_total > len(self.warnings):
                lines.append(f"... and {self.warning_total - len(self.warnings):,} more warnings")
        return "\n".join(lines)


def _row(collection_id, document: Document):
    title = document.title
    fields = document.fields
    if len(title) > MAX_TITLE:
        fields = {**fields, "title": title}
        title = title[: MAX_TITLE - 1] + "…"
    return (collection_id, document.docid, title, document.text, json.dumps(fields, ensure_ascii=False)
            if fields else "{}")


def _copy_rows(collection_id, documents):
    """Rows for insert_rows(plain_text=True): on PostgreSQL their texts escaped for COPY's text lines here."""
    if connection.vendor != "postgresql":
        return (_row(collection_id, d) for d in documents), False
    rows = (_row(collection_id, d) for d in documents)
    return ((c, copy_escaped(i), copy_escaped(t), copy_escaped(x), copy_escaped(m)) for c, i, t, x, m in rows), True


def import_documents(paths, collection_name, *, fmt="auto", encoding="utf-8", bad_bytes="refuse", max_bytes=None,
                     **options) -> DocumentsResult:
    """Import documents from files into a collection (made if new), inside one transaction (see write_documents);
    `encoding`, `bad_bytes` and `max_bytes` (unpacked, a file) as read_documents takes them."""
    sources = [(str(path), lambda problems, path=Path(path): read_documents(
        path, problems, fmt, encoding=encoding, bad_bytes=bad_bytes, max_bytes=max_bytes)) for path in paths]
    return write_documents(sources, collection_name, **options)


def write_documents(sources, collection_name, *, update=False, needed=None, progress=None,
                    check_slug=None, retext_judged=False) -> DocumentsResult:
    """Write the documents of `sources`, [(name, reader)] where reader(problems) yields Documents (and may be called
    again), into a collection (made if new), inside one transaction.

    `needed`: a set of external ids, or None for all: only those documents are written (the others are read and
    checked, not stored). `check_slug(name, problems)` checks a new collection's name. ImportFailed lists the
    problems (source, line or record, field); nothing is stored then.

    With `update`, a document whose text changes under judgements (a grade given to the old text would stand for
    the new) is refused unless `retext_judged`; then the summary says how many judgements the new texts touch. One
    under evidence spans (offsets into its text) is refused always: they would point at other words, or past its end.
    """
    progress = progress or no_progress
    collection = Collection.objects.filter(name=collection_name).first()
    if collection is None and check_slug is not None:
        options = Problems("options")
        check_slug(collection_name, options)
        options.raise_if_any()
    result = DocumentsResult(collection, collection is None)
    bar = progress(total=None, desc="documents", unit="doc")
    try:
        with transaction.atomic():
            if collection is None:
                collection = result.collection = Collection.objects.create(
                    name=collection_name, kind=Collection.Kind.DOCUMENTS)
            fresh = not Passage.objects.filter(collection=collection).exists()
            last_pk = Passage.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
            for name, reader in sources:
                problems = Problems(name)
                documents = _counted(reader(problems), bar, result, needed)
                if fresh:
                    rows, escaped = _copy_rows(collection.pk, (d for d in documents if not problems))
                    result.created += insert_rows(Passage, COLUMNS, rows, plain_text=escaped)
                    fresh = False  # the next file may repeat an id: look it up
                else:
                    _write_batches(collection, documents, problems, result, (update, retext_judged), last_pk, sources)
                problems.raise_if_any()
                result.warnings.extend(problems.warnings[: ingest.MAX_REPORTED - len(result.warnings)])
                result.warning_total += problems.warning_total
            if needed is not None:
                result.missing = len(needed) - result.filled - result.updated - result.created
    except Exception as exc:  # a document id twice (the unique constraint; COPY's psycopg error is not wrapped)
        if isinstance(exc, IntegrityError) or getattr(exc, "sqlstate", None) == "23505":
            raise _duplicate(sources, exc) from None
        raise
    finally:
        if bar is not None:
            bar.close()
    return result


def _counted(documents, bar, result, needed):
    for n, document in enumerate(documents, start=1):
        if needed is not None and document.docid not in needed:
            result.skipped += 1
        else:
            yield document
        if bar is not None and n % 10_000 == 0:
            bar.update(10_000)


def _write_batches(collection, documents, problems, result, update, last_pk, sources):
    """Write documents a batch at a time into a collection that has passages: new ones inserted, placeholders
    filled in, others refused unless `update` (a pair: update, retext_judged)."""
    batch = {}
    for document in documents:
        if problems:
            continue  # keep reading for more problems; nothing more is written
        first = batch.get(document.docid)
        if first is not None:
            problems.add(f"document {document.docid!r} is in the file twice (first on line {first.line})",
                         line=document.line, field="id")
            _stopping(problems)
            continue
        batch[document.docid] = document
        if len(batch) >= BATCH:
            _write_batch(collection, batch, problems, result, update, last_pk, sources)
            batch = {}
    if batch and not problems:
        _write_batch(collection, batch, problems, result, update, last_pk, sources)


def _write_batch(collection, batch, problems, result, update, last_pk, sources):
    update, retext_judged = update
    found, retexted = {}, {}  # retexted: pk -> docid of documents already there whose text the files change
    ids = list(batch)
    step = 10_000 if connection.vendor == "postgresql" else 500
    for start in range(0, len(ids), step):
        rows = Passage.objects.filter(collection=collection, external_id__in=ids[start : start + step]).values_list(
            "external_id", "pk", "title", "text", "metadata")
        for docid, pk, title, text, metadata in rows:
            found[docid] = (pk, not title and not text and not metadata)
            if update and text and text != batch[docid].text:
                retexted[pk] = docid
    marked = _with_evidence(retexted)
    judged = _judged(retexted)
    changed = []
    for docid, (pk, placeholder) in found.items():
        document = batch[docid]
        if pk > last_pk:
            first = _first_line(sources, docid)
            where = f" (first on line {first[1]} of {Path(first[0]).name})" if first else ""
            problems.add(f"document {docid!r} is in the files twice{where}", line=document.line, field="id")
        elif not placeholder and not update:
            problems.add(f"document {docid!r} is already in {collection.name} (--update replaces it)",
                         line=document.line, field="id")
        elif pk in marked:
            problems.add(f"document {docid!r}: its text would change, but {marked[pk]} label(s) mark evidence in it "
                         f"by character offsets, which would then point at other words; keep its text, or import "
                         f"the new text under a new id", line=document.line, field="text")
        elif pk in judged and not retext_judged:
            problems.add(f"document {docid!r}: its text would change, but {judged[pk]} judgement(s) were given to "
                         f"the text it has, and would stand for the new one; keep its text, import the new text under "
                         f"a new id, or change it under them (--retext-judged)", line=document.line, field="text")
        else:
            result.retexted_judgements += judged.get(pk, 0)
            result.retexted_judged += pk in judged
            changed.append((pk, placeholder, document))
        _stopping(problems)
    if problems:
        return
    values = []
    for pk, placeholder, document in changed:
        _, _, title, text, metadata = _row(collection.pk, document)
        values.append((title, text, metadata, pk))
        if placeholder:
            result.filled += 1
        else:
            result.updated += 1
    if values:
        table = connection.ops.quote_name(Passage._meta.db_table)
        cast = "::jsonb" if connection.vendor == "postgresql" else ""
        with connection.cursor() as cursor:
            cursor.executemany(f"UPDATE {table} SET title = %s, text = %s, metadata = %s{cast} WHERE id = %s", values)
    new = [batch[d] for d in ids if d not in found]
    if new:
        rows, escaped = _copy_rows(collection.pk, new)
        result.created += insert_rows(Passage, COLUMNS, rows, plain_text=escaped)


def _judged(passages: dict) -> dict:
    """{pk: how many judgements (with a value) name it} for those of these passages that have any."""
    if not passages:
        return {}
    from django.apps import apps  # read by name: retrieval imports nothing from assessments

    judgement = apps.get_model("assessments", "Judgement")
    counts = {}
    ids = list(passages)
    for start in range(0, len(ids), 500):
        for pk in judgement.objects.filter(passage_id__in=ids[start:start + 500], value__isnull=False).values_list(
                "passage_id", flat=True):
            counts[pk] = counts.get(pk, 0) + 1
    return counts


def _with_evidence(passages: dict) -> dict:
    """{pk: how many evidence labels mark spans in it} for those of these passages that have any: a label's spans are
    offsets into the text (assessments.services.judging._evidence), so that text cannot change under them."""
    if not passages:
        return {}
    from django.apps import apps  # read by name: retrieval imports nothing from assessments

    judgement = apps.get_model("assessments", "Judgement")
    marked = {}
    ids = list(passages)
    for start in range(0, len(ids), 500):
        for pk, value in judgement.objects.filter(passage_id__in=ids[start:start + 500], layer="evidence").values_list(
                "passage_id", "value"):
            if value:  # a cleared mark is null or []
                marked[pk] = marked.get(pk, 0) + 1
    return marked


def _first_line(sources, docid):
    """(source, line) where `docid` first stands in the sources, or None."""
    for name, reader in sources:
        for document in reader(Problems(name, cap=0)):
            if document.docid == docid:
                return name, document.line
    return None


def _duplicate(sources, exc) -> ImportFailed:
    """Where the id that broke the unique constraint stands twice (PostgreSQL names it; else the sources are read
    for their first repeated id)."""
    error = exc if hasattr(exc, "diag") else exc.__cause__  # psycopg's own error, from COPY, is not wrapped
    detail = getattr(getattr(error, "diag", None), "message_detail", None) or ""
    named = re.search(r"=\(\d+, (.*)\) already exists", detail)
    seen = {}
    for name, reader in sources:
        for document in reader(Problems(name, cap=0)):
            if named is not None and document.docid != named.group(1):
                continue
            first = seen.get(document.docid)
            if first is not None:
                where = f"line {first[1]}" + ("" if first[0] == name else f" of {Path(first[0]).name}")
                message = f"document {document.docid!r} is in the files twice (first on {where})"
                return ImportFailed([Problem(name, document.line, "id", message)])
            seen[document.docid] = (name, document.line)
    return ImportFailed([Problem(sources[0][0], None, None, f"the database refused the documents ({exc})")])
