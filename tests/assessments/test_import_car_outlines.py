"""import_car_outlines: the Y3 JSON cast file and official CBOR outlines become topics with facets, checked whole."""

import json
import time
import tracemalloc
from io import StringIO

import cbor
import pytest
from django.core.management import CommandError, call_command

from assessments.importers.car.outlines import parse_cbor_outlines
from assessments.models import Facet, Topic
from retrieval.ingest import ImportFailed
from retrieval.models import Collection
from tests import factories
from tests.factories import db_snapshot

pytestmark = pytest.mark.django_db

CAST = "car-y3/tqa-heading-cast-and-more-6.json"


def run_import(path, *args):
    """Call the command; returns what it printed."""
    out = StringIO()
    call_command("import_car_outlines", str(path), "--no-progress", *args, stdout=out)
    return out.getvalue()


def rejected(path, *args):
    """Call the command expecting a rejection that writes nothing; returns the error message."""
    before = db_snapshot()
    with pytest.raises(CommandError) as excinfo:
        run_import(path, *args)
    assert db_snapshot() == before
    message = str(excinfo.value)
    assert message.startswith("nothing was imported")
    return message


def path_of(page, heading):
    return [{"tag": "SectionPathPage", "contents": page}, {"tag": "SectionPathHeading", "contents": heading}]


def small_cast(**changes):
    """A small cast file in the real file's shape: two test pages and one train page."""
    doc = {
        "headings": [
            [path_of("tqa2:L_0001", "T_0001"), "Lava"],
            [path_of("tqa2:L_0001", "T_0002"), "Ash"],
            [path_of("tqa2:L_0002", "T_0003"), "Rivers"],
            [path_of("tqa2:L_0003", "T_0004"), "Clouds"],
        ],
        "notes": [[path_of("tqa2:L_0001", "T_0002"), "volcanic ash and its effects"]],
        "trainTitles": ["tqa2:L_0003"],
        "includePages": ["tqa2:L_0001", "tqa2:L_0002", "tqa2:L_0003"],
        "titles": {"tqa2:L_0001": "volcanoes", "tqa2:L_0002": "rivers", "tqa2:L_0003": "weather"},
        "includeSections": [
            path_of("tqa2:L_0001", "T_0001"),
            path_of("tqa2:L_0001", "T_0002"),
            path_of("tqa2:L_0002", "T_0003"),
            path_of("tqa2:L_0003", "T_0004"),
        ],
    }
    doc.update(changes)
    return doc


@pytest.fixture
def write(tmp_path):
    def write(content, name="outlines.json"):
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_text(json.dumps(content, indent=2), encoding="utf-8")
        return path

    return write


def stored_facets(external_id, collection="car-y3"):
    topic = Topic.objects.get(collection__name=collection, external_id=external_id)
    return [(f.heading_id, f.heading, f.notes) for f in topic.facets.order_by("position")]


# --- the real Y3 file ------------------------------------------------------------------------------------------


def test_it_imports_the_132_y3_test_topics_with_their_sections_in_file_order(data_dir):
    doc = json.loads((data_dir / CAST).read_text())
    train = set(doc["trainTitles"])
    test_pages = [p for p in doc["includePages"] if p not in train]
    sections = {p: [] for p in test_pages}
    for path in doc["includeSections"]:
        page, heading = path[0]["contents"], path[1]["contents"]
        if page in sections:
            sections[page].append(f"{page}/{heading}")
    assert len(test_pages) == 132

    output = run_import(data_dir / CAST)

    facet_count = sum(len(s) for s in sections.values())
    assert output.startswith(f"132 topics, {facet_count} facets imported into collection 'car-y3'")
    collection = Collection.objects.get(name="car-y3")
    assert collection.kind == Collection.Kind.PASSAGES
    topics = Topic.objects.filter(collection=collection)
    assert topics.count() == 132
    assert set(topics.values_list("external_id", flat=True)) == set(test_pages)
    assert set(topics.values_list("kind", flat=True)) == {Topic.Kind.OUTLINE}
    assert not any(t.metadata.get("train") for t in topics)
    assert Facet.objects.filter(topic__collection=collection).count() == facet_count
    for page in test_pages:
        topic = topics.get(external_id=page)
        assert topic.title == doc["titles"][page]
        facets = list(topic.facets.order_by("position"))
        assert [f.heading_id for f in facets] == sections[page]
        assert [f.position for f in facets] == list(range(1, len(facets) + 1))


def test_facets_take_their_heading_from_headings_and_their_notes_from_notes(data_dir):
    doc = json.loads((data_dir / CAST).read_text())
    headings = {f"{p[0]['contents']}/{p[1]['contents']}": text for p, text in doc["headings"]}
    notes = {f"{p[0]['contents']}/{p[1]['contents']}": text for p, text in doc["notes"]}

    run_import(data_dir / CAST)

    geology = Facet.objects.get(topic__external_id="tqa2:L_0002", heading_id="tqa2:L_0002/T_0016")
    assert geology.heading == "Geology" == headings["tqa2:L_0002/T_0016"]
    assert geology.notes == notes["tqa2:L_0002/T_0016"]
    assert geology.notes.startswith("rocks, minerals, erosion")
    for facet in Facet.objects.all():
        assert facet.heading == headings[facet.heading_id]
        assert facet.notes == notes.get(facet.heading_id, "")


def test_include_train_also_imports_the_train_pages_marked_as_train(data_dir):
    doc = json.loads((data_dir / CAST).read_text())
    train = set(doc["trainTitles"])

    output = run_import(data_dir / CAST, "--include-train")

    assert output.startswith(f"{len(doc['includePages'])} topics")
    topics = Topic.objects.filter(collection__name="car-y3")
    assert topics.count() == len(set(doc["includePages"])) == 141
    marked = {t.external_id for t in topics if t.metadata.get("train")}
    assert marked == train and len(train) == 9


def test_reimporting_the_same_file_writes_nothing_and_counts_the_topics_as_unchanged(data_dir):
    run_import(data_dir / CAST)
    before = db_snapshot()
    facet_ids = set(Facet.objects.values_list("pk", flat=True))

    output = run_import(data_dir / CAST)

    assert db_snapshot() == before
    assert set(Facet.objects.values_list("pk", flat=True)) == facet_ids
    assert "(0 new, 0 updated, 132 unchanged)" in output


def test_it_imports_into_the_collection_named_by_collection(write):
    run_import(write(small_cast()), "--collection", "y3-small")

    assert list(Topic.objects.values_list("collection__name", "external_id")) == [
        ("y3-small", "tqa2:L_0001"),
        ("y3-small", "tqa2:L_0002"),
    ]


def test_a_stored_topic_with_different_content_is_a_problem_that_names_the_difference(data_dir):
    run_import(data_dir / CAST)
    topic = Topic.objects.get(external_id="tqa2:L_0002")
    topic.title = "something else"
    topic.save()
    Facet.objects.filter(heading_id="tqa2:L_0002/T_0016").update(heading="Rocks")

    message = rejected(data_dir / CAST)

    assert "topic 'tqa2:L_0002' already exists with different content" in message
    assert "title 'something else' in the database, 'Earth Science and its branches' in the file" in message
    assert "heading 'Rocks' in the database, 'Geology' in the file" in message
    assert "--update" in message


def test_update_makes_stored_topics_match_the_file_and_keeps_their_facets(write):
    run_import(write(small_cast()))
    lava = Facet.objects.get(heading_id="tqa2:L_0001/T_0001")
    changed = small_cast(
        headings=small_cast()["headings"] + [[path_of("tqa2:L_0001", "T_0009"), "Magma"]],
        titles={"tqa2:L_0001": "volcanoes and magma", "tqa2:L_0002": "rivers", "tqa2:L_0003": "weather"},
        includeSections=[
            path_of("tqa2:L_0001", "T_0009"),
            path_of("tqa2:L_0001", "T_0001"),
            path_of("tqa2:L_0002", "T_0003"),
        ],
    )
    rejected(write(changed, "changed.json"))

    output = run_import(write(changed, "changed.json"), "--update")

    assert "(0 new, 1 updated, 1 unchanged)" in output
    assert Topic.objects.get(external_id="tqa2:L_0001").title == "volcanoes and magma"
    assert stored_facets("tqa2:L_0001") == [
        ("tqa2:L_0001/T_0009", "Magma", ""),
        ("tqa2:L_0001/T_0001", "Lava", ""),
    ]
    assert Facet.objects.get(heading_id="tqa2:L_0001/T_0001").pk == lava.pk
    assert "(0 new, 0 updated, 2 unchanged)" in run_import(write(changed, "changed.json"))


def test_it_leaves_out_sections_of_pages_it_does_not_import(write):
    doc = small_cast()
    doc["includeSections"].append(path_of("tqa2:L_0343", "T_1827"))  # as in the real file: no page, no heading

    output = run_import(write(doc))

    assert "2 topics, 3 facets" in output
    assert "1 sections of pages outside includePages ignored" in output
    assert not Topic.objects.filter(external_id="tqa2:L_0003").exists()  # a train page
    assert stored_facets("tqa2:L_0001") == [
        ("tqa2:L_0001/T_0001", "Lava", ""),
        ("tqa2:L_0001/T_0002", "Ash", "volcanic ash and its effects"),
    ]


# --- broken cast files --------------------------------------------------------------------------------------


def test_it_rejects_a_truncated_file_and_writes_nothing(data_dir, write):
    text = (data_dir / CAST).read_text()
    path = write(text[: len(text) // 2])

    message = rejected(path)

    assert f"{path}:{text[: len(text) // 2].count(chr(10)) + 1}: invalid JSON" in message


def test_it_rejects_a_file_that_is_not_json(write):
    path = write("headings: none\n")
    assert f"{path}:1: invalid JSON: Expecting value at column 1" in rejected(path)


def test_it_rejects_binary_garbage(write):
    path = write(b"\x00\x01\x02 garbage \xff\xfe" * 10)
    assert f"{path}:1: not a text file: NUL byte at offset 0" in rejected(path)


def test_it_rejects_an_empty_file(write):
    path = write("  \n")
    assert f"{path}: the file is empty" in rejected(path)


def test_it_rejects_a_json_value_that_is_not_an_object(write):
    path = write([1, 2])
    assert f"{path}: expected a JSON object with the keys headings" in rejected(path)


def test_it_rejects_a_file_with_a_missing_key(write):
    doc = small_cast()
    del doc["titles"]
    path = write(doc)
    assert f"{path}: missing key 'titles'" in rejected(path)


def test_it_rejects_a_key_of_the_wrong_type(write):
    path = write(small_cast(includePages="tqa2:L_0001"))
    assert f"{path}: includePages: expected a list, got a string" in rejected(path)


def test_it_rejects_a_section_whose_heading_is_missing(write):
    doc = small_cast()
    doc["includeSections"].insert(1, path_of("tqa2:L_0001", "T_0077"))
    path = write(doc)
    assert f"{path}: includeSections[1]: section tqa2:L_0001/T_0077 has no entry in headings" in rejected(path)


def test_it_rejects_duplicate_page_ids(write):
    doc = small_cast()
    doc["includePages"].append("tqa2:L_0001")
    path = write(doc)
    assert f"{path}: includePages[3]: page 'tqa2:L_0001' is listed twice (also includePages[0])" in rejected(path)


def test_it_rejects_duplicate_sections(write):
    doc = small_cast()
    doc["includeSections"].append(path_of("tqa2:L_0001", "T_0002"))
    path = write(doc)
    message = rejected(path)
    expected = "includeSections[4]: section tqa2:L_0001/T_0002 is listed twice (also includeSections[1])"
    assert f"{path}: {expected}" in message


def test_it_rejects_a_malformed_section_path_and_a_page_without_title_and_reports_both(write):
    doc = small_cast(titles={"tqa2:L_0002": "rivers"})
    doc["includeSections"][2] = [{"tag": "SectionPathPage", "contents": "tqa2:L_0002"}]
    path = write(doc)

    message = rejected(path)

    assert f"{path}: titles: page 'tqa2:L_0001' (includePages[0]) has no title" in message
    assert f"{path}: includeSections[2]: expected a section path" in message


def test_a_rejected_import_leaves_existing_rows_alone(write):
    coll = factories.collection("car-y3")
    factories.topic(coll, "tqa2:L_0001", title="volcanoes", facets=[("tqa2:L_0001/T_0001", "Lava")])
    path = write(small_cast())

    message = rejected(path)  # the stored topic has one facet, the file two

    expected = "topic 'tqa2:L_0001' already exists with different content: 1 facets in the database, 2 in the file"
    assert expected in message


def test_it_refuses_a_collection_that_is_not_a_passage_collection(write):
    factories.collection("car-y3", kind=Collection.Kind.BOOK)
    message = rejected(write(small_cast()))
    assert "collection: collection 'car-y3' holds book chunks, not passages" in message


# --- CBOR outlines ------------------------------------------------------------------------------------------


def cbor_section(heading_id, heading, children=()):
    return [0, heading, heading_id.encode("ascii"), list(children)]


def cbor_page(page_id, name, skeleton):
    """A page as trec_car.read_data.Page.from_cbor reads it: [1, name, id bytes, skeleton, page type, metadata]."""
    return [1, name, page_id.encode("ascii"), skeleton, [0], []]


def cbor_paragraph(para_id, text):
    return [1, [0, para_id.encode("ascii"), [[0, text]]]]


CBOR_PAGES = [
    cbor_page(
        "tqa2:L_0001", "volcanoes",
        [
            cbor_section("T_0001", "Lava", [cbor_section("T_0005", "Lava flows")]),  # a subsection: no facet
            cbor_paragraph("a" * 40, "Stray text."),
            cbor_section("T_0002", "Ash"),
        ],
    ),
    cbor_page("tqa2:L_0002", "rivers", [cbor_section("T_0003", "Rivers")]),
]


def cbor_file(pages, header=True, file_type=1):
    """An outlines file in trec_car.read_data's framing: header, then an indefinite list of pages."""
    if not header:
        return b"".join(cbor.dumps(page) for page in pages)
    head = cbor.dumps(["CAR", [file_type], [["test", "provenance"]]])
    return head + b"\x9f" + b"".join(cbor.dumps(page) for page in pages) + b"\xff"


@pytest.mark.parametrize("header", [True, False], ids=["with-header", "without-header"])
def test_it_imports_cbor_outlines_with_the_top_level_sections_as_facets(write, header):
    output = run_import(write(cbor_file(CBOR_PAGES, header), "outlines.cbor"))

    assert output.startswith("2 topics, 3 facets imported into collection 'car-y3' (2 new")
    titles = dict(Topic.objects.values_list("external_id", "title"))
    assert titles == {"tqa2:L_0001": "volcanoes", "tqa2:L_0002": "rivers"}
    assert stored_facets("tqa2:L_0001") == [("tqa2:L_0001/T_0001", "Lava", ""), ("tqa2:L_0001/T_0002", "Ash", "")]
    assert stored_facets("tqa2:L_0002") == [("tqa2:L_0002/T_0003", "Rivers", "")]


def test_it_reads_cbor_whatever_the_file_is_called(write):
    run_import(write(cbor_file(CBOR_PAGES), "outlines.bin"))
    assert Topic.objects.count() == 2


def test_cbor_outlines_of_topics_imported_from_the_cast_file_are_unchanged_despite_having_no_notes(write):
    run_import(write(small_cast()))
    same = cbor_page("tqa2:L_0001", "volcanoes", [cbor_section("T_0001", "Lava"), cbor_section("T_0002", "Ash")])

    output = run_import(write(cbor_file([same]), "outlines.cbor"))

    assert "(0 new, 0 updated, 1 unchanged)" in output
    assert stored_facets("tqa2:L_0001")[1] == ("tqa2:L_0001/T_0002", "Ash", "volcanic ash and its effects")


def test_it_rejects_a_truncated_cbor_file_without_hanging(write):
    data = cbor_file(CBOR_PAGES)
    path = write(data[:-12], "outlines.cbor")
    assert f"{path}:2: the file ends inside a CBOR item" in rejected(path)


def test_it_rejects_a_cbor_file_that_is_not_an_outlines_file(write):
    path = write(cbor_file(CBOR_PAGES, file_type=2), "paragraphs.cbor")
    assert "this is a TREC CAR file of type 2 (paragraphs), not an outlines file" in rejected(path)


def test_it_rejects_cbor_garbage(write):
    path = write(b"\x9f\x1c garbage", "outlines.cbor")
    assert f"{path}:1: not valid CBOR at offset 0: a byte that starts no CBOR item (its low five bits are 28, 29 or " \
           "30)" in rejected(path)


def test_it_rejects_a_cbor_record_that_is_not_a_page(write):
    path = write(cbor_file([CBOR_PAGES[0], [7, "x"]]), "outlines.cbor")
    assert f"{path}:2: not a TREC CAR outline page" in rejected(path)


def test_it_rejects_duplicate_pages_and_sections_in_cbor(write):
    pages = [
        CBOR_PAGES[0],
        cbor_page("tqa2:L_0001", "volcanoes again", []),
        cbor_page("tqa2:L_0004", "lakes", [cbor_section("T_0008", "Lakes"), cbor_section("T_0008", "Ponds")]),
    ]
    path = write(cbor_file(pages), "outlines.cbor")

    message = rejected(path)

    assert f"{path}:2: page_id: page 'tqa2:L_0001' appears twice (also record 1)" in message
    assert f"{path}:3: sections[1].headingId: section tqa2:L_0004/T_0008 appears twice (also sections[0])" in message


def test_it_rejects_a_number_of_more_digits_than_python_converts(write):
    path = write('{"headings": [],\n "notes": ' + "1" * 5000 + "}")
    assert f"{path}:2: invalid JSON: a number of 5,000 digits (at most 4,300 are taken) at column 11" in rejected(path)


def test_an_unclosed_string_is_named_once_at_its_column_from_1(write):
    path = write('{"headings": "abc')
    assert f"{path}:1: invalid JSON: a string that is never closed starts at column 14" in rejected(path)


# --- hostile CBOR: refused before decoding, in bounded time and memory ------------------------------------------

HOSTILE_MB = 20 * 1024 * 1024  # the most an outlines upload may have


@pytest.mark.parametrize("data, expected", [
    (b"\xc2\x5a" + HOSTILE_MB.to_bytes(4, "big") + b"\xa5" * HOSTILE_MB, "a big number (CBOR tag 2 or 3) at offset 0"),
    (b"\x80" * HOSTILE_MB, "more than 1,000,000 CBOR items"),
    (b"\x9f" + b"\x80" * HOSTILE_MB + b"\xff", "more than 1,000,000 CBOR items"),
    (b"\x81" * HOSTILE_MB, "CBOR lists or maps nested more than 64 deep at offset 64"),
], ids=["bignum", "empty-lists", "empty-lists-in-one-list", "nested-lists"])
def test_a_hostile_20_mb_cbor_file_is_refused_in_bounded_time_and_50_mb(data, expected):
    """The pure-Python decoder took 15.9 s for a 300 KB bignum (quadratic: 20 MB, hours) and 150 MB for 2 MB of
    empty lists; check_cbor refuses each before decoding (0.4 s at most on an idle machine, nothing kept). The
    bound is a guard against hours, not a pace: 60 s of CPU (a 5 s bound read 9.7 s of wall clock, then CPU time
    near it on a loaded 2-core machine, whose hyperthreads run at half speed)."""
    started = time.process_time()
    with pytest.raises(ImportFailed) as excinfo:
        parse_cbor_outlines(data, "outlines.cbor")
    assert time.process_time() - started < 60
    assert expected in excinfo.value.report()
    tracemalloc.start()  # again, for its memory (tracemalloc slows it)
    try:
        with pytest.raises(ImportFailed):
            parse_cbor_outlines(data, "outlines.cbor")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20


def test_the_most_items_allowed_in_one_hostile_record_decode_in_time_linear_in_their_number():
    """A record of the most items the check lets through (1,000,000 less ten) decodes in time linear in their number:
    at most 400× the CPU time of a hundredth of them in the same process (linear is about 100×, quadratic 10,000×:
    hours, which is what the check is for). CPU time, not the wall clock (other processes' turns), and a wide ratio,
    not seconds: a 2-core machine's hyperthreads run at half speed or less under load, and the same decode read 1.6,
    3.0 and 7.5 s of CPU on different machines and loads (a 25× bound on a tenth failed at 28× under xdist)."""

    def decode(n):
        started = time.process_time()
        with pytest.raises(ImportFailed) as excinfo:
            parse_cbor_outlines(b"\x9a" + n.to_bytes(4, "big") + b"\x80" * n, "outlines.cbor")
        return time.process_time() - started, excinfo

    n = 1_000_000 - 10
    hundredth = min(decode(n // 100)[0] for _ in range(5))
    spent, excinfo = decode(n)
    assert spent < 400 * hundredth + 1.0, f"{spent:.2f} s for {n:,} items, {hundredth:.3f} s for a hundredth"
    assert "1: not a TREC CAR outline page" in excinfo.value.report()
