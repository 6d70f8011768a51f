"""TREC CAR Y3 outlines become topics with facets: the organisers' JSON cast file or an official CBOR outlines file.

The test topics of the JSON file are `includePages` minus `trainTitles`; a page's facets are its `includeSections`
in file order, titled from `headings` and annotated from `notes`, each keyed by its section path `page/heading`.
"""

import io
from dataclasses import dataclass
from pathlib import Path

from cbor import cbor as pure_cbor
from django.db import IntegrityError, transaction
from trec_car.read_data import Page as CarPage

from assessments.importers.trec import (
    bulk_insert,
    check_slug,
    ids_by_external_id,
    no_progress,
    refused,
)
from assessments.models import Facet, Topic
from assessments.services.judging import forget_topic_facets
from assessments.importers.sniff import but_looks_like
from retrieval.ingest import ImportFailed, InvalidJSON, Problem, Problems, decode_text, json_type, load_json
from retrieval.models import Collection

from assessments.importers.car.common import (
    DEFAULT_COLLECTION, LOOKUP_CHUNK, MAX_EXTERNAL_ID, MAX_FACETS, MAX_HEADING, MAX_HEADING_ID, MAX_TITLE,
    SHOWN_DIFFERENCES, check_text, find_collection, short,
)


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
OUTLINES = "CAR outlines (the Y3 cast file)"  # as assessments.importers.sniff names them
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
        doc = load_json(text)
    except InvalidJSON as exc:
        problems.fail(exc.message + but_looks_like(text, OUTLINES), line=exc.line)
    if not isinstance(doc, dict):
        problems.fail(f"expected a JSON object with the keys {', '.join(OUTLINE_KEYS)}, got {json_type(doc)}"
                      + but_looks_like(text, OUTLINES))
    if not any(key in doc for key in OUTLINE_KEYS) and but_looks_like(text, OUTLINES):
        problems.fail(f"not an outlines file{but_looks_like(text, OUTLINES)}")
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
# The CBOR limits: an outlines file is walked item head by item head before anything is decoded (check_cbor), so
# that the pure-Python decoder never meets what makes it slow or big: a tag (TREC CAR uses none; a bignum, tag 2 or
# 3, decodes in time quadratic in its length), lists or maps nested deeper than MAX_CBOR_DEPTH, more than
# MAX_CBOR_ITEMS items in the file (2 MB of empty lists were 150 MB of Python lists). The Y3 outlines have ~20
# items a facet, 14 levels at most.
MAX_CBOR_DEPTH = 64
MAX_CBOR_ITEMS = 1_000_000
STOP_AFTER_PROBLEMS = 1000  # a CBOR file with this many bad records is not read further
_CBOR_ARGUMENT_BYTES = {24: 1, 25: 2, 26: 4, 27: 8}


def check_cbor(data: bytes, problems: Problems) -> None:
    """Refuse CBOR the decoder should not be given (see MAX_CBOR_DEPTH): walks the item heads only, skipping string
    contents, in time linear in the items and at most MAX_CBOR_ITEMS of them; what is merely broken or truncated is
    left to the decoder, which says where."""
    size, at, items = len(data), 0, 0
    open_counts = []  # items still expected by each open list or map; None: indefinite (ends with a break)
    while at < size:
        start, head = at, data[at]
        major, info = head >> 5, head & 0x1F
        if head == 0xFF:  # a break ends an indefinite list, map or string
            if not open_counts or open_counts[-1] is not None:
                return
            open_counts.pop()
            at += 1
        else:
            items += 1
            if items > MAX_CBOR_ITEMS:
                problems.fail(f"more than {MAX_CBOR_ITEMS:,} CBOR items: larger than an outlines file can be")
            if major == 6:
                what = "a big number (CBOR tag 2 or 3)" if info in (2, 3) else "a CBOR tag"
                problems.fail(f"{what} at offset {start}: TREC CAR outlines have none")
            width = _CBOR_ARGUMENT_BYTES.get(info, 0)
            if info in (28, 29, 30) or at + 1 + width > size:
                return  # broken or truncated: the decoder says so
            argument = int.from_bytes(data[at + 1 : at + 1 + width], "big") if width else info
            at += 1 + width
            if major in (2, 3) and info != 31:
                at += argument  # a string's bytes
            elif major in (2, 3, 4, 5) and info == 31:
                open_counts.append(None)
            elif major in (4, 5) and argument:
                open_counts.append(argument * (2 if major == 5 else 1))
            else:  # a number, a simple value, an empty list or map: no items inside
                pass
            if len(open_counts) > MAX_CBOR_DEPTH:
                problems.fail(f"CBOR lists or maps nested more than {MAX_CBOR_DEPTH} deep at offset {start}")
            if major in (4, 5) and (info == 31 or argument):
                continue  # its items come next
        while open_counts and open_counts[-1] is not None:  # an item ended: count it in the list or map it is in
            open_counts[-1] -= 1
            if open_counts[-1]:
                break
            open_counts.pop()


class StrictBytes(io.BytesIO):
    """A byte stream whose short reads raise EOFError, so a truncated item stops the decoder (not a short string)."""

    def read(self, size=-1):
        data = super().read(size)
        if size is not None and size > 0 and len(data) < size:
            raise EOFError
        return data


def cbor_fault(exc: Exception) -> str:
    """What the pure-Python decoder's exception means, in words."""
    if isinstance(exc, UnicodeDecodeError):
        return "a text string that is not UTF-8"
    if isinstance(exc, AssertionError):  # _tag_aux: additional information 28 to 30 is reserved
        return "a byte that starts no CBOR item (its low five bits are 28, 29 or 30)"
    if isinstance(exc, RecursionError) or "recursion" in str(exc):
        return "items nested too deeply"
    if "tag 7 byte" in str(exc):
        return "a simple value CBOR does not define"
    return "the bytes are not CBOR"


def cbor_records(data: bytes, problems: Problems):
    """Yield (record number, decoded item) of a TREC CAR CBOR file, following trec_car.read_data's framing.

    Decoded with the pure-Python CBOR decoder over a strict in-memory stream: the C decoder that
    trec_car.read_data.iter_outlines uses never returns on a truncated file (it waits for bytes that never
    come), which an importer of untrusted files cannot afford. Records are numbered from 1.
    """
    check_cbor(data, problems)
    stream = StrictBytes(data)
    size = len(data)

    def load(record):
        offset = stream.tell()
        try:
            return pure_cbor.load(stream)
        except EOFError:
            problems.fail(f"the file ends inside a CBOR item that starts at offset {offset} (truncated?)", line=record)
        except Exception as exc:  # noqa: BLE001 - untrusted bytes make the decoder fail in many ways
            problems.fail(f"not valid CBOR at offset {offset}: {cbor_fault(exc)}", line=record)

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
            problems.add(f"not a TREC CAR outline page (a list [kind, name, id bytes, sections, page type, metadata]): "
                         f"got {short(item, 80)}", line=record)
            if problems.total >= STOP_AFTER_PROBLEMS:
                problems.stop(f"reading stopped after {STOP_AFTER_PROBLEMS:,} problems")
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
    forget_topic_facets(topic.pk)  # bulk writes send no signals


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
