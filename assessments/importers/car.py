"""TREC CAR Y3: outlines become topics with facets, submitted articles become runs.

Outlines come either as the organisers' JSON cast file
(tqa-heading-cast-and-more-6.json: `headings`, `notes`, `titles`,
`includePages`, `trainTitles`, `includeSections`) or as an official CBOR
outlines file. The test topics of the JSON file are `includePages` minus
`trainTitles`; a page's facets are its `includeSections` in file order, titled
from `headings` and annotated from `notes`, each keyed by its section path
`page/heading` (e.g. tqa2:L_0002/T_0016).

Articles (runs) come as Y3 submission files, one page per JSON line, or as the
older single-page files of the assessment tool's trial data (one JSON object,
possibly pretty-printed). A page's paragraphs in order are the article, so the
stored rank is the position in the article. Pages whose squid starts with
`tqa2:` are held to the Y3 submission rules; the trial pages (`tqa:...`,
`enwiki:...`) are taken as they are, except that a paragraph repeated within a
trial page (they do repeat) is kept once, at its first place.

Every importer parses and checks all of its input first and collects every
problem with its place; only a clean input is written, in one transaction.
"""

import io
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from cbor import cbor as pure_cbor
from django.db import IntegrityError, transaction
from trec_car.read_data import Page as CarPage

from assessments.importers.trec import (
    bulk_insert,
    check_slug,
    ids_by_external_id,
    no_progress,
    raise_if_any,
    refused,
)
from assessments.models import Facet, Run, RunEntry, Topic
from retrieval.ingest import ImportFailed, Problem, Problems, decode_text, json_type, parse_json_lines, read_text
from retrieval.models import Collection, Passage

DEFAULT_COLLECTION = "car-y3"
LOOKUP_CHUNK = 500
MAX_EXTERNAL_ID = 200  # Topic.external_id, Passage.external_id
MAX_TITLE = 500  # Topic.title
MAX_HEADING = 500  # Facet.heading
MAX_HEADING_ID = 300  # Facet.heading_id
MAX_RUN_NAME = 100  # Run.name
MAX_FACETS = 1000  # far more than any outline; keeps positions well inside a small integer
SHOWN_DIFFERENCES = 3

# --- small helpers ------------------------------------------------------------------------------------------


def short(value, limit=60) -> str:
    """repr() of a value, cut to `limit` characters for messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"


def check_text(value, problems, *, line, field, limit, what="", required=True) -> bool:
    """A string of at most `limit` characters (non-blank when required); a problem otherwise."""
    if not isinstance(value, str):
        expected = f"{what} as a string" if what else "a string"
        problems.add(f"expected {expected}, got {json_type(value)}", line=line, field=field)
        return False
    if required and not value.strip():
        problems.add(f"{what or 'the value'} is empty", line=line, field=field)
        return False
    if len(value) > limit:
        label = f"{what} " if what else ""
        problems.add(f"{label}{short(value)} is longer than {limit} characters", line=line, field=field)
        return False
    return True


def merge_failure(exc: ImportFailed, problems: Problems):
    """Copy the problems of an ImportFailed (e.g. from read_text) into a collector of the same source."""
    for problem in exc.problems:
        problems.add(problem.message, line=problem.line, field=problem.field)


def find_collection(name, problems):
    """The collection called `name` (None if there is none yet); it must hold passages."""
    collection = Collection.objects.filter(name=name).first()
    if collection is not None and collection.kind != Collection.Kind.PASSAGES:
        problems.add(
            f"collection {name!r} holds {collection.get_kind_display().lower()}, not passages", field="collection"
        )
    return collection


# --- outlines: parsing ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OutlineFacet:
    heading_id: str  # full section path, e.g. tqa2:L_0002/T_0016
    heading: str
    notes: str | None  # None: the source has no notes at all (CBOR), so they are neither compared nor replaced


@dataclass
class OutlinePage:
    page_id: str
    title: str
    facets: list
    train: bool | None  # None: the source does not say (CBOR)
    line: int | None = None  # record number in a CBOR file
    field: str | None = None  # where the page is named, for messages


@dataclass
class Outlines:
    source: str
    pages: list
    ignored_sections: int = 0  # includeSections of pages that are not in includePages


OUTLINE_KEYS = {
    "headings": list,
    "notes": list,
    "titles": dict,
    "includePages": list,
    "trainTitles": list,
    "includeSections": list,
}
SECTION_PATH_SHAPE = '[{"tag": "SectionPathPage", "contents": PAGE}, {"tag": "SectionPathHeading", "contents": ID}]'


def section_path(value, problems, field):
    """(page id, heading id) of a top-level section path in the cast file's shape, or None (a problem)."""
    ok = (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(part, dict) for part in value)
        and value[0].get("tag") == "SectionPathPage"
        and value[1].get("tag") == "SectionPathHeading"
        and all(isinstance(part.get("contents"), str) and part["contents"].strip() for part in value)
    )
    if not ok:
        problems.add(f"expected a section path {SECTION_PATH_SHAPE}, got {short(value, 120)}", field=field)
        return None
    page, heading = value[0]["contents"], value[1]["contents"]
    if "/" in heading:
        problems.add(f"heading id {heading!r} contains '/'", field=field)
        return None
    return page, heading


def section_map(entries, name, problems):
    """{(page, heading id): text} from the cast file's list of [section path, text] pairs (headings, notes)."""
    found, places = {}, {}
    for index, entry in enumerate(entries):
        place = f"{name}[{index}]"
        if not isinstance(entry, list) or len(entry) != 2:
            problems.add(f"expected a pair [section path, text], got {short(entry, 120)}", field=place)
            continue
        path = section_path(entry[0], problems, f"{place}[0]")
        if not isinstance(entry[1], str):
            problems.add(f"expected a string, got {json_type(entry[1])}", field=f"{place}[1]")
            continue
        if path is None:
            continue
        if path in found and found[path] != entry[1]:
            problems.add(
                f"section {'/'.join(path)} is also at {places[path]} with a different text", field=place
            )
            continue
        found.setdefault(path, entry[1])
        places.setdefault(path, place)
    return found


def parse_cast_outlines(text, source, *, include_train=False, progress=no_progress) -> Outlines:
    """The pages to import from the JSON cast file; ImportFailed with every problem if it is broken."""
    problems = Problems(source)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.fail(f"invalid JSON: {exc.msg} at column {exc.colno}", line=exc.lineno)
    except RecursionError:
        problems.fail("invalid JSON: nested too deeply")
    if not isinstance(doc, dict):
        problems.fail(f"expected a JSON object with the keys {', '.join(OUTLINE_KEYS)}, got {json_type(doc)}")
    for key, kind in OUTLINE_KEYS.items():
        if key not in doc:
            problems.add(f"missing key {key!r} (an outline file has {', '.join(OUTLINE_KEYS)})")
        elif not isinstance(doc[key], kind):
            problems.add(f"expected {json_type(kind())}, got {json_type(doc[key])}", field=key)
    problems.raise_if_any()

    headings = section_map(doc["headings"], "headings", problems)
    notes = section_map(doc["notes"], "notes", problems)
    train = set()
    for index, page_id in enumerate(doc["trainTitles"]):
        if isinstance(page_id, str):
            train.add(page_id)
        else:
            problems.add(f"expected a page id (a string), got {json_type(page_id)}", field=f"trainTitles[{index}]")

    listed, pages = {}, {}
    for index, page_id in enumerate(doc["includePages"]):
        place = f"includePages[{index}]"
        if not check_text(page_id, problems, line=None, field=place, limit=MAX_EXTERNAL_ID, what="page id"):
            continue
        if page_id in listed:
            problems.add(f"page {page_id!r} is listed twice (also {listed[page_id]})", field=place)
            continue
        listed[page_id] = place
        is_train = page_id in train
        if is_train and not include_train:
            continue
        title = doc["titles"].get(page_id)
        if title is None:
            problems.add(f"page {page_id!r} ({place}) has no title", field="titles")
            continue
        if not check_text(title, problems, line=None, field=f"titles[{page_id!r}]", limit=MAX_TITLE, what="title"):
            continue
        pages[page_id] = OutlinePage(page_id, title, [], is_train, field=place)

    seen, ignored = {}, 0
    sections = doc["includeSections"]
    for index, entry in enumerate(progress(sections, total=len(sections), desc="sections", unit="section")):
        place = f"includeSections[{index}]"
        path = section_path(entry, problems, place)
        if path is None:
            continue
        page_id, heading_key = path
        heading_id = f"{page_id}/{heading_key}"
        if path in seen:
            problems.add(f"section {heading_id} is listed twice (also {seen[path]})", field=place)
            continue
        seen[path] = place
        if page_id not in pages:
            ignored += page_id not in listed  # sections of train pages are simply not wanted
            continue
        page = pages[page_id]
        heading = headings.get(path)
        if heading is None:
            problems.add(f"section {heading_id} has no entry in headings", field=place)
            continue
        ok = check_text(heading, problems, line=None, field=place, limit=MAX_HEADING, what=f"heading of {heading_id}")
        ok &= check_text(heading_id, problems, line=None, field=place, limit=MAX_HEADING_ID, what="section path")
        if ok:
            page.facets.append(OutlineFacet(heading_id, heading, notes.get(path, "")))
    for page in pages.values():
        if len(page.facets) > MAX_FACETS:
            problems.add(f"page {page.page_id!r} has {len(page.facets)} sections, more than {MAX_FACETS}")
    problems.raise_if_any()
    return Outlines(source, list(pages.values()), ignored)


CAR_FILE_TYPES = {0: "pages", 1: "outlines", 2: "paragraphs"}


class StrictBytes(io.BytesIO):
    """A byte stream whose short reads raise EOFError, so a truncated item stops the decoder (not a short string)."""

    def read(self, size=-1):
        data = super().read(size)
        if size is not None and size > 0 and len(data) < size:
            raise EOFError
        return data


def cbor_records(data: bytes, problems: Problems):
    """Yield (record number, decoded item) of a TREC CAR CBOR file, following trec_car.read_data's framing.

    Decoded with the pure-Python CBOR decoder over a strict in-memory stream: the C decoder that
    trec_car.read_data.iter_outlines uses never returns on a truncated file (it waits for bytes that never
    come), which an importer of untrusted files cannot afford. Records are numbered from 1.
    """
    stream = StrictBytes(data)
    size = len(data)

    def load(record):
        offset = stream.tell()
        try:
            return pure_cbor.load(stream)
        except EOFError:
            problems.fail(f"the file ends inside a CBOR item that starts at byte {offset} (truncated?)", line=record)
        except Exception as exc:  # noqa: BLE001 - untrusted bytes make the decoder fail in many ways
            problems.fail(f"not valid CBOR at byte {offset} ({type(exc).__name__}: {exc})", line=record)

    first = load(1)
    if not (isinstance(first, list) and first and first[0] == "CAR"):
        yield 1, first  # no header: one page after the other until the end of the file
        record = 1
        while stream.tell() < size:
            record += 1
            yield record, load(record)
        return
    try:
        file_type = first[1][0]
    except (IndexError, KeyError, TypeError):
        problems.fail(f"broken TREC CAR header {short(first, 120)}")
    if file_type != 1:
        kind = CAR_FILE_TYPES.get(file_type, "unknown")
        problems.fail(f"this is a TREC CAR file of type {file_type!r} ({kind}), not an outlines file (type 1)")
    if data[stream.tell() : stream.tell() + 1] != b"\x9f":
        problems.fail(f"broken TREC CAR file: no list of pages after the header (byte {stream.tell()})")
    stream.seek(1, io.SEEK_CUR)
    record = 0
    while stream.tell() < size and data[stream.tell() : stream.tell() + 1] != b"\xff":
        record += 1
        yield record, load(record)


def parse_cbor_outlines(data: bytes, source, *, progress=no_progress) -> Outlines:
    """The pages of an official TREC CAR outlines file (CBOR); facets are the top-level sections."""
    problems = Problems(source)
    pages, first_record = [], {}
    for record, item in progress(cbor_records(data, problems), desc="outlines", unit="page"):
        try:
            page = CarPage.from_cbor(item)
        except Exception as exc:  # noqa: BLE001 - any malformed record
            problems.add(f"not a TREC CAR outline page ({type(exc).__name__}: {exc})", line=record)
            continue
        ok = check_text(page.page_id, problems, line=record, field="page_id", limit=MAX_EXTERNAL_ID)
        ok &= check_text(page.page_name, problems, line=record, field="page_name", limit=MAX_TITLE)
        if not ok:
            continue
        if page.page_id in first_record:
            problems.add(
                f"page {page.page_id!r} appears twice (also record {first_record[page.page_id]})",
                line=record, field="page_id",
            )
            continue
        first_record[page.page_id] = record
        facets, seen = [], {}
        for index, section in enumerate(page.outline()):
            place = f"sections[{index}]"
            if not check_text(
                section.headingId, problems, line=record, field=f"{place}.headingId", limit=MAX_HEADING_ID
            ):
                continue
            heading_id = f"{page.page_id}/{section.headingId}"
            if section.headingId in seen:
                problems.add(
                    f"section {heading_id} appears twice (also sections[{seen[section.headingId]}])",
                    line=record, field=f"{place}.headingId",
                )
                continue
            seen[section.headingId] = index
            ok = check_text(heading_id, problems, line=record, field=f"{place}.headingId", limit=MAX_HEADING_ID)
            ok &= check_text(section.heading, problems, line=record, field=f"{place}.heading", limit=MAX_HEADING)
            if ok:
                facets.append(OutlineFacet(heading_id, section.heading, None))
        if len(facets) > MAX_FACETS:
            problems.add(f"{len(facets)} sections, more than {MAX_FACETS}", line=record)
        pages.append(OutlinePage(page.page_id, page.page_name, facets, None, line=record, field="page_id"))
    if not pages and not problems:
        problems.add("no pages in the file")
    problems.raise_if_any()
    return Outlines(source, pages)


def looks_like_cbor(path: Path, data: bytes) -> bool:
    """A .cbor file, or one that starts like a CBOR array (TREC CAR files do) rather than like JSON text."""
    if path.suffix.lower() == ".cbor":
        return True
    head = data.lstrip(b" \t\r\n\xef\xbb\xbf")[:1]
    return bool(head) and 0x80 <= head[0] <= 0x9F


def read_outlines(path, *, include_train=False, progress=no_progress) -> Outlines:
    """The outline pages of a JSON cast file or a CBOR outlines file; ImportFailed if anything is wrong."""
    path = Path(path)
    source = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImportFailed([Problem(source, None, None, f"cannot read: {exc.strerror or exc}")]) from None
    if not data.strip():
        Problems(source).fail("the file is empty")
    if looks_like_cbor(path, data):
        return parse_cbor_outlines(data, source, progress=progress)
    return parse_cast_outlines(decode_text(data, source), source, include_train=include_train, progress=progress)


# --- outlines: writing ----------------------------------------------------------------------------------------


@dataclass
class OutlineImport:
    collection: str
    topics: int
    facets: int
    new: int
    updated: int
    unchanged: int
    ignored_sections: int

    def summary(self):
        note = (
            f"; {self.ignored_sections:,} sections of pages outside includePages ignored"
            if self.ignored_sections
            else ""
        )
        return (
            f"{self.topics:,} topics, {self.facets:,} facets imported into collection {self.collection!r} "
            f"({self.new:,} new, {self.updated:,} updated, {self.unchanged:,} unchanged){note}."
        )


def is_train(topic) -> bool:
    return isinstance(topic.metadata, dict) and bool(topic.metadata.get("train"))


def differences(topic, page: OutlinePage) -> list[str]:
    """What differs between a stored topic and an outline page (empty: the same)."""
    found = []
    if topic.kind != Topic.Kind.OUTLINE:
        found.append(f"it is a {topic.get_kind_display().lower()} topic")
    if topic.title != page.title:
        found.append(f"title {short(topic.title)} in the database, {short(page.title)} in the file")
    if page.train is not None and is_train(topic) != page.train:
        found.append("a train page in the database, a test page in the file" if is_train(topic) else
                     "a test page in the database, a train page in the file")
    stored = sorted(topic.facets.all(), key=lambda f: f.position)
    if len(stored) != len(page.facets):
        found.append(f"{len(stored)} facets in the database, {len(page.facets)} in the file")
    shown = 0
    for position, (old, new) in enumerate(zip(stored, page.facets), start=1):
        if old.heading_id != new.heading_id:
            what = f"facet {position}: {old.heading_id!r} in the database, {new.heading_id!r} in the file"
        elif old.heading != new.heading:
            what = f"facet {position} ({new.heading_id}): heading {short(old.heading)} in the database, " \
                   f"{short(new.heading)} in the file"
        elif new.notes is not None and old.notes != new.notes:
            what = f"facet {position} ({new.heading_id}): the notes differ"
        else:
            continue
        shown += 1
        if shown > SHOWN_DIFFERENCES:
            found.append("more facets differ")
            break
        found.append(what)
    return found


def update_topic(topic, page: OutlinePage):
    """Make a stored topic match the page: title, train mark, and its facets (kept by heading id, so ids last)."""
    topic.title = page.title
    topic.kind = Topic.Kind.OUTLINE
    if page.train is not None:
        metadata = dict(topic.metadata) if isinstance(topic.metadata, dict) else {}
        if page.train:
            metadata["train"] = True
        else:
            metadata.pop("train", None)
        topic.metadata = metadata
    topic.save(update_fields=["title", "kind", "metadata"])

    stored = {f.heading_id: f for f in topic.facets.all()}
    wanted = [f.heading_id for f in page.facets]
    Facet.objects.filter(topic=topic).exclude(heading_id__in=wanted).delete()
    kept = [stored[h] for h in wanted if h in stored]
    # Move the kept facets past every position in use, so the new order never collides with the old one.
    offset = max([f.position for f in stored.values()] + [len(wanted)]) + 1
    for index, facet in enumerate(kept):
        facet.position = offset + index
    Facet.objects.bulk_update(kept, ["position"])
    new = []
    for position, facet in enumerate(page.facets, start=1):
        if facet.heading_id in stored:
            old = stored[facet.heading_id]
            old.position, old.heading = position, facet.heading
            if facet.notes is not None:
                old.notes = facet.notes
        else:
            new.append(Facet(topic=topic, heading_id=facet.heading_id, heading=facet.heading, position=position,
                             notes=facet.notes or ""))
    Facet.objects.bulk_update(kept, ["position", "heading", "notes"])
    Facet.objects.bulk_create(new)


def import_outlines(
    path, collection_name=DEFAULT_COLLECTION, *, include_train=False, update=False, progress=no_progress
) -> OutlineImport:
    """Import outline topics and their facets; ImportFailed (nothing written) if anything is wrong.

    A topic already in the collection with the same title and facets is left as it is; one with different
    content is a problem unless `update`, which makes it match the file.
    """
    outlines = read_outlines(path, include_train=include_train, progress=progress)
    source = outlines.source
    problems = Problems(source)
    check_slug(collection_name, "collection name", problems, field="collection")
    if not outlines.pages:
        problems.add("no pages to import (all are train pages? --include-train imports them)")
    problems.raise_if_any()
    pages = outlines.pages
    try:
        with transaction.atomic():
            collection = find_collection(collection_name, problems)
            stored = {}
            if collection is not None:
                ids = [p.page_id for p in pages]
                for start in range(0, len(ids), LOOKUP_CHUNK):
                    chunk = ids[start : start + LOOKUP_CHUNK]
                    topics = Topic.objects.filter(collection=collection, external_id__in=chunk)
                    stored.update((t.external_id, t) for t in topics.prefetch_related("facets"))
            new, changed, unchanged = [], [], 0
            for page in pages:
                topic = stored.get(page.page_id)
                if topic is None:
                    new.append(page)
                    continue
                found = differences(topic, page)
                if not found:
                    unchanged += 1
                elif update:
                    changed.append((topic, page))
                else:
                    problems.add(
                        f"topic {page.page_id!r} already exists with different content: {'; '.join(found)} "
                        "(--update replaces it)",
                        line=page.line, field=page.field,
                    )
            problems.raise_if_any()

            if collection is None:
                collection = Collection.objects.create(name=collection_name, kind=Collection.Kind.PASSAGES)
            bulk_insert(
                Topic,
                [
                    Topic(
                        collection=collection, external_id=p.page_id, kind=Topic.Kind.OUTLINE, title=p.title,
                        metadata={"train": True} if p.train else {},
                    )
                    for p in new
                ],
                progress, "topics",
            )
            topic_ids = ids_by_external_id(Topic.objects.filter(collection=collection), [p.page_id for p in new])
            bulk_insert(
                Facet,
                [
                    Facet(
                        topic_id=topic_ids[p.page_id], heading_id=f.heading_id, heading=f.heading,
                        position=position, notes=f.notes or "",
                    )
                    for p in new
                    for position, f in enumerate(p.facets, start=1)
                ],
                progress, "facets",
            )
            for topic, page in progress(changed, total=len(changed), desc="updating topics", unit="topic"):
                update_topic(topic, page)
    except IntegrityError as exc:
        raise refused(source, exc) from exc
    return OutlineImport(
        collection=collection_name,
        topics=len(pages),
        facets=sum(len(p.facets) for p in pages),
        new=len(new),
        updated=len(changed),
        unchanged=unchanged,
        ignored_sections=outlines.ignored_sections,
    )


# --- runs (articles): parsing ---------------------------------------------------------------------------------

PARA_ID = re.compile(r"[0-9a-f]{40}\Z")
Y3_RUN_ID = re.compile(r"[A-Za-z0-9_.-]{1,15}\Z")
Y3_HEADING_ID = re.compile(r"(tqa2:L_[0-9]+)/T_[0-9]+\Z")
Y3_PREFIX = "tqa2:"
Y3_MAX_PARAGRAPHS = 20


@dataclass
class Paragraph:
    para_id: str
    text: str | None  # None: no para_body, the passage must exist already
    index: int  # place in the file's paragraphs list, for messages
    origin: dict = field(default_factory=dict)  # the paragraph's paragraph_origins entry
    score: float | None = None


@dataclass
class Article:
    """One page of a submission: a run's article for one topic."""

    problems: Problems  # the collector of the file the page is in
    source: str
    line: int
    squid: str
    title: str
    run_id: str
    facets: list  # [(heading_id, heading)] from query_facets
    paragraphs: list
    strict: bool  # held to the Y3 rules (squid tqa2:...)
    repeats: int = 0  # repeated paragraphs dropped (trial pages only)

    def add(self, message, field=None):
        self.problems.add(message, line=self.line, field=field)


def json_records(text, problems):
    """(line, object) of a file that is one JSON object (the trial pages, maybe pretty-printed) or JSON lines."""
    try:
        whole = json.loads(text)
    except json.JSONDecodeError as exc:
        error = exc
    except RecursionError:
        problems.add("invalid JSON: nested too deeply")
        return
    else:
        first_line = text[: len(text) - len(text.lstrip())].count("\n")  # blank lines before the object
        if isinstance(whole, dict):
            yield first_line + 1, whole
        else:
            problems.add(
                f"expected a JSON object (one page) or JSON lines, got {json_type(whole)}", line=first_line + 1
            )
        return
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    first = lines[0] if lines else ""
    try:
        json.loads(first)
        first_is_json = True
    except (json.JSONDecodeError, RecursionError):
        first_is_json = False
    if first_is_json or (first.startswith("{") and first.endswith("}")):
        yield from parse_json_lines(text, problems)
    else:
        # Neither one object nor JSON lines: most likely a broken (e.g. truncated) single page.
        problems.add(f"invalid JSON: {error.msg} at column {error.colno}", line=error.lineno)


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def parse_article(obj, line, source, problems) -> Article | None:
    """One page of a submission, checked; None when it has problems (all added to `problems`)."""
    before = problems.total

    def add(message, field=None):
        problems.add(message, line=line, field=field)

    squid = obj.get("squid")
    if "squid" not in obj:
        add("missing key 'squid'")
    else:
        check_text(squid, problems, line=line, field="squid", limit=MAX_EXTERNAL_ID)
    strict = isinstance(squid, str) and squid.startswith(Y3_PREFIX)

    run_id = obj.get("run_id")
    if "run_id" not in obj:
        add("missing key 'run_id'")
    elif check_text(run_id, problems, line=line, field="run_id", limit=MAX_RUN_NAME):
        if strict and not Y3_RUN_ID.match(run_id):
            add(f"{short(run_id)} is not a Y3 run id (at most 15 characters of A-Z a-z 0-9 _ . -)", "run_id")
        elif run_id != run_id.strip():
            add(f"{short(run_id)} has leading or trailing spaces", "run_id")

    title = obj.get("title")
    if "title" not in obj:
        add("missing key 'title'")
    else:
        check_text(title, problems, line=line, field="title", limit=MAX_TITLE, required=False)

    facets = []
    query_facets = obj.get("query_facets")
    if "query_facets" not in obj:
        add("missing key 'query_facets'")
    elif not isinstance(query_facets, list):
        add(f"expected a list, got {json_type(query_facets)}", "query_facets")
    else:
        seen = {}
        for index, facet in enumerate(query_facets):
            place = f"query_facets[{index}]"
            if not isinstance(facet, dict):
                add(f"expected an object, got {json_type(facet)}", place)
                continue
            heading_id, heading = facet.get("heading_id"), facet.get("heading")
            ok = check_text(heading_id, problems, line=line, field=f"{place}.heading_id", limit=MAX_HEADING_ID)
            ok &= check_text(heading, problems, line=line, field=f"{place}.heading", limit=MAX_HEADING)
            if not ok:
                continue
            if strict:
                match = Y3_HEADING_ID.match(heading_id)
                if not match:
                    add(f"{short(heading_id)} is not of the form tqa2:L_xxxx/T_yyyy", f"{place}.heading_id")
                    continue
                if isinstance(squid, str) and match.group(1) != squid:
                    add(f"{short(heading_id)} is a section of another page than {squid!r}", f"{place}.heading_id")
                    continue
            if heading_id in seen:
                add(f"{heading_id!r} is also query_facets[{seen[heading_id]}]", f"{place}.heading_id")
                continue
            seen[heading_id] = index
            facets.append((heading_id, heading))

    paragraphs, by_id, repeats = [], {}, 0
    items = obj.get("paragraphs")
    if "paragraphs" not in obj:
        add("missing key 'paragraphs'")
    elif not isinstance(items, list):
        add(f"expected a list, got {json_type(items)}", "paragraphs")
    elif not items:
        add("the article has no paragraphs", "paragraphs")
    else:
        if strict and len(items) > Y3_MAX_PARAGRAPHS:
            add(f"{len(items)} paragraphs: a Y3 article has at most {Y3_MAX_PARAGRAPHS}", "paragraphs")
        for index, item in enumerate(items):
            place = f"paragraphs[{index}]"
            if not isinstance(item, dict):
                add(f"expected an object, got {json_type(item)}", place)
                continue
            para_id = item.get("para_id")
            if not isinstance(para_id, str):
                add(f"expected a string, got {json_type(para_id)}", f"{place}.para_id")
                continue
            if not PARA_ID.match(para_id):
                add(f"{short(para_id)} is not 40 hexadecimal characters (0-9, a-f)", f"{place}.para_id")
                continue
            text = None
            body = item.get("para_body")
            if body is not None:
                if not isinstance(body, list):
                    add(f"expected a list, got {json_type(body)}", f"{place}.para_body")
                    continue
                if not body:
                    add("is empty", f"{place}.para_body")
                    continue
                pieces = []
                for k, element in enumerate(body):
                    if not isinstance(element, dict):
                        add(f"expected an object, got {json_type(element)}", f"{place}.para_body[{k}]")
                    elif not isinstance(element.get("text"), str):
                        add(f"expected a string, got {json_type(element.get('text'))}", f"{place}.para_body[{k}].text")
                    else:
                        pieces.append(element["text"])
                if len(pieces) != len(body):
                    continue
                text = "".join(pieces)
            if para_id in by_id:
                first = by_id[para_id]
                if strict:
                    add(f"{para_id!r} is also paragraphs[{first.index}]: a paragraph appears once in an article",
                        f"{place}.para_id")
                elif text is not None and first.text is not None and text != first.text:
                    add(f"{para_id!r} is also paragraphs[{first.index}], with a different text", f"{place}.para_body")
                else:
                    repeats += 1  # the trial pages repeat paragraphs; keep the first place
                    if first.text is None:
                        first.text = text
                continue
            paragraph = Paragraph(para_id, text, index)
            by_id[para_id] = paragraph
            paragraphs.append(paragraph)

    origins = obj.get("paragraph_origins")
    if origins is not None:
        if not isinstance(origins, list):
            add(f"expected a list, got {json_type(origins)}", "paragraph_origins")
        else:
            placed = {}
            for index, origin in enumerate(origins):
                place = f"paragraph_origins[{index}]"
                if not isinstance(origin, dict):
                    add(f"expected an object, got {json_type(origin)}", place)
                    continue
                para_id = origin.get("para_id")
                if not isinstance(para_id, str):
                    add(f"expected a string, got {json_type(para_id)}", f"{place}.para_id")
                    continue
                ok = True
                if "rank_score" in origin and not is_number(origin["rank_score"]):
                    add(f"expected a finite number, got {short(origin['rank_score'])}", f"{place}.rank_score")
                    ok = False
                rank = origin.get("rank")
                if "rank" in origin and (not isinstance(rank, int) or isinstance(rank, bool)):
                    add(f"expected an integer, got {short(rank)}", f"{place}.rank")
                    ok = False
                if "section_path" in origin and not isinstance(origin["section_path"], str):
                    add(f"expected a string, got {json_type(origin['section_path'])}", f"{place}.section_path")
                    ok = False
                if para_id in placed:
                    add(f"{short(para_id)} is also paragraph_origins[{placed[para_id]}]", f"{place}.para_id")
                    continue
                placed[para_id] = index
                if para_id not in by_id:
                    add(f"{short(para_id)} is not a paragraph of the article", f"{place}.para_id")
                    continue
                if ok:
                    by_id[para_id].origin = origin
                    if "rank_score" in origin:
                        by_id[para_id].score = float(origin["rank_score"])

    if problems.total > before:
        return None
    return Article(problems, source, line, squid, title, run_id, facets, paragraphs, strict, repeats)


def read_articles(path, problems, progress=no_progress) -> list[Article]:
    """The checked pages of one submission file (problems go to `problems`); one file holds one run."""
    try:
        text = read_text(path)
    except ImportFailed as exc:
        merge_failure(exc, problems)
        return []
    return parse_articles(text, problems, progress)


def parse_articles(text, problems, progress=no_progress) -> list[Article]:
    """The checked pages of one submission's text (problems go to `problems`); one submission holds one run."""
    return articles_of(json_records(text, problems), problems, progress)


def parse_article_batches(batches, problems, progress=no_progress) -> list[Article]:
    """parse_articles of a stream of (first line, text) blocks (retrieval.ingest.text_batches), read block by
    block when the file is JSON lines (its first line is a JSON object, as Y3 submissions are); a file that is
    one JSON object over several lines (the older trial pages) is read whole, as parse_articles reads it."""

    def records():
        batches_left = iter(batches)
        head = []
        for first, text in batches_left:
            head.append(text)
            first_line = next((line.strip() for line in text.split("\n") if line.strip()), None)
            if first_line is not None:
                break
        else:
            first_line = None
        try:
            lines_mode = isinstance(json.loads(first_line), dict) if first_line is not None else False
        except (json.JSONDecodeError, RecursionError):
            lines_mode = False
        if not lines_mode:
            yield from json_records("\n".join(head + [text for _, text in batches_left]), problems)
            return
        number = 1
        for text in head:
            yield from parse_json_lines(text, problems, number)
            number += text.count("\n") + 1
        for first, text in batches_left:
            yield from parse_json_lines(text, problems, first)

    return articles_of(records(), problems, progress)


def articles_of(records, problems, progress=no_progress) -> list[Article]:
    """The checked pages of (line, object) records of one submission; one submission holds one run."""
    source = problems.source
    articles, run_line = [], {}
    for line, obj in progress(records, desc=Path(source).name, unit="page"):
        run_id = obj.get("run_id")
        if isinstance(run_id, str) and run_id.strip():
            if run_line and run_id not in run_line:
                first_id, first_line = next(iter(run_line.items()))
                problems.add(
                    f"run_id {short(run_id)} differs from {first_id!r} (line {first_line}): a file holds one run",
                    line=line, field="run_id",
                )
            run_line.setdefault(run_id, line)
        article = parse_article(obj, line, source, problems)
        if article is not None:
            articles.append(article)
    if not articles and not problems:
        problems.add("no pages in the file")
    return articles


# --- runs (articles): checking against the database and writing ------------------------------------------------


@dataclass
class RunsImport:
    collection: str
    files: int
    articles: int
    entries: int
    runs: int
    new_runs: int
    new_passages: int
    new_topics: int
    repeats: int

    def summary(self):
        note = f"; {self.repeats:,} repeated paragraphs of trial pages kept once" if self.repeats else ""
        return (
            f"{self.articles:,} articles from {self.files:,} files imported into collection {self.collection!r}: "
            f"{self.entries:,} run entries in {self.runs:,} runs ({self.new_runs:,} new), "
            f"{self.new_passages:,} new passages, {self.new_topics:,} new topics{note}."
        )


def passage_texts(collection, para_ids) -> dict[str, str]:
    """external id → text of the passages of `collection` among `para_ids` (batched lookups)."""
    ids, found = list(para_ids), {}
    for start in range(0, len(ids), LOOKUP_CHUNK):
        chunk = ids[start : start + LOOKUP_CHUNK]
        passages = Passage.objects.filter(collection=collection, external_id__in=chunk)
        found.update(passages.values_list("external_id", "text"))
    return found


def check_articles(articles, collection, collection_name, create_topics, *, create_passages=True, extend_runs=True):
    """Cross-page and database checks; returns (new topics {squid: article}, passages to create {id: text}).

    Without `create_passages` a paragraph the collection lacks is an unknown document even with a para_body;
    without `extend_runs` a run_id that already names a run of the collection is a problem.
    """
    # One article per run and topic, and one text per paragraph id, across all files.
    first_article, bodies = {}, {}
    for article in articles:
        key = (article.run_id, article.squid)
        if key in first_article:
            other = first_article[key]
            article.add(
                f"run {article.run_id!r} has a second article for topic {article.squid!r} "
                f"(first at {other.source}:{other.line})",
                "squid",
            )
        first_article.setdefault(key, article)
        for paragraph in article.paragraphs:
            if paragraph.text is None:
                continue
            if paragraph.para_id in bodies:
                text, other, index = bodies[paragraph.para_id]
                if text != paragraph.text:
                    article.add(
                        f"the text of {paragraph.para_id!r} differs from its text at {other.source}:{other.line} "
                        f"paragraphs[{index}]",
                        f"paragraphs[{paragraph.index}].para_body",
                    )
                continue
            bodies[paragraph.para_id] = (paragraph.text, article, paragraph.index)

    # Topics.
    squids = list(dict.fromkeys(a.squid for a in articles))
    known = set()
    if collection is not None:
        known = set(ids_by_external_id(Topic.objects.filter(collection=collection), squids))
    new_topics = {}
    for article in articles:
        if article.squid in known:
            continue
        if create_topics:
            new_topics.setdefault(article.squid, article)
        else:
            article.add(
                f"unknown topic {article.squid!r} in collection {collection_name!r} "
                "(import its outline first, or use --create-topics)",
                "squid",
            )

    # Passages: a given text must match the stored one; a paragraph without text must be known.
    stored = {} if collection is None else passage_texts(
        collection, {p.para_id for a in articles for p in a.paragraphs}
    )
    reported = set()
    for article in articles:
        for paragraph in article.paragraphs:
            pid, place = paragraph.para_id, f"paragraphs[{paragraph.index}]"
            if paragraph.text is not None:
                if pid not in stored:
                    if not create_passages:
                        article.add(
                            f"unknown document {pid!r}: collection {collection_name!r} has no such passage",
                            f"{place}.para_id",
                        )
                elif stored[pid] != paragraph.text and pid not in reported:
                    reported.add(pid)
                    article.add(
                        f"passage {pid!r} already exists in collection {collection_name!r} with a different text",
                        f"{place}.para_body",
                    )
            elif pid not in stored and pid not in bodies:
                article.add(
                    f"unknown document {pid!r}: no para_body, and collection {collection_name!r} has no such passage",
                    f"{place}.para_id",
                )
    new_passages = {pid: text for pid, (text, _, _) in bodies.items() if pid not in stored}

    # Runs already holding an article for a topic (or, without extend_runs, runs that exist at all).
    if collection is not None and not extend_runs:
        existing = set(
            Run.objects.filter(collection=collection, name__in={a.run_id for a in articles})
            .values_list("name", flat=True)
        )
        for article in articles:
            if article.run_id in existing:
                existing.discard(article.run_id)  # said once per run
                article.add(f"collection {collection_name!r} already has a run named {article.run_id!r}", "run_id")
    elif collection is not None:
        run_ids = {a.run_id for a in articles}
        taken = set(
            RunEntry.objects.filter(run__collection=collection, run__name__in=run_ids, topic__external_id__in=squids)
            .values_list("run__name", "topic__external_id")
            .distinct()
        )
        for article in articles:
            if (article.run_id, article.squid) in taken:
                article.add(f"run {article.run_id!r} already has an article for topic {article.squid!r}", "run_id")
    return new_topics, new_passages


def import_car_runs(
    paths, collection_name=DEFAULT_COLLECTION, *, create_topics=False, progress=no_progress
) -> RunsImport:
    """Import CAR Y3 submission files (and the older single-page files) together; ImportFailed if anything is wrong."""
    collectors, articles = [], []
    for path in paths:
        problems = Problems(str(path))
        collectors.append(problems)
        articles.extend(read_articles(path, problems, progress))
    return import_articles(articles, collectors, collection_name, create_topics=create_topics, progress=progress)


def import_articles(
    articles, collectors, collection_name=DEFAULT_COLLECTION, *, create_topics=False, create_passages=True,
    extend_runs=True, run_fields=None, progress=no_progress,
) -> RunsImport:
    """Check parsed pages together and against the database, then write them, in one transaction.

    `collectors` are the Problems of the parsed inputs (a caller may have added its own checks to them); if
    any holds anything, or these checks find anything, ImportFailed lists it all and nothing is written.
    `create_passages` and `extend_runs` are as in check_articles; `run_fields` are further fields of the
    runs created (owner, source, track, source_file); the source defaults to IMPORTED.
    """
    general = Problems(f"--collection {collection_name}")
    check_slug(collection_name, "collection name", general, field=None)

    try:
        with transaction.atomic():
            # The well-formed pages are checked against each other and the database even when other pages
            # had problems, so that one rejection lists everything.
            collection = find_collection(collection_name, general)
            new_topics, new_passages = check_articles(
                articles, collection, collection_name, create_topics,
                create_passages=create_passages, extend_runs=extend_runs,
            )
            raise_if_any(general, *collectors)

            if collection is None:
                collection = Collection.objects.create(name=collection_name, kind=Collection.Kind.PASSAGES)
            bulk_insert(
                Topic,
                [
                    Topic(collection=collection, external_id=squid, kind=Topic.Kind.OUTLINE, title=article.title)
                    for squid, article in new_topics.items()
                ],
                progress, "topics",
            )
            topic_ids = ids_by_external_id(
                Topic.objects.filter(collection=collection), list(dict.fromkeys(a.squid for a in articles))
            )
            bulk_insert(
                Facet,
                [
                    Facet(topic_id=topic_ids[squid], heading_id=heading_id, heading=heading, position=position)
                    for squid, article in new_topics.items()
                    for position, (heading_id, heading) in enumerate(article.facets, start=1)
                ],
                progress, "facets",
            )
            bulk_insert(
                Passage,
                [Passage(collection=collection, external_id=pid, text=text) for pid, text in new_passages.items()],
                progress, "passages",
            )
            passage_ids = ids_by_external_id(
                Passage.objects.filter(collection=collection), {p.para_id for a in articles for p in a.paragraphs}
            )
            runs, new_runs = {}, 0
            for article in articles:
                if article.run_id in runs:
                    continue
                run = Run.objects.filter(collection=collection, name=article.run_id).first() if extend_runs else None
                if run is None:
                    fields = {"source": Run.Source.IMPORTED, "source_file": article.source, **(run_fields or {})}
                    run = Run.objects.create(collection=collection, name=article.run_id, **fields)
                    new_runs += 1
                runs[article.run_id] = run
            entries = [
                RunEntry(
                    run=runs[article.run_id], topic_id=topic_ids[article.squid],
                    passage_id=passage_ids[paragraph.para_id], rank=rank, score=paragraph.score,
                    origin=paragraph.origin,
                )
                for article in articles
                for rank, paragraph in enumerate(article.paragraphs, start=1)
            ]
            bulk_insert(RunEntry, entries, progress, "run entries")
    except IntegrityError as exc:
        raise refused(", ".join(c.source for c in collectors), exc) from exc
    return RunsImport(
        collection=collection_name,
        files=len(collectors),
        articles=len(articles),
        entries=len(entries),
        runs=len(runs),
        new_runs=new_runs,
        new_passages=len(new_passages),
        new_topics=len(new_topics),
        repeats=sum(a.repeats for a in articles),
    )
