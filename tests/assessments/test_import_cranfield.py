"""manage.py import_cranfield: the SMART Cranfield collection, checked whole; counts checked against the raw files."""

import io
import shutil
from collections import Counter

import pytest
from django.core.management import CommandError, call_command

from assessments.models import Qrel, QrelSet, Topic
from retrieval.models import Collection, Passage
from tests.factories import db_snapshot

pytestmark = pytest.mark.django_db

FILES = ("cran.all.1400", "cran.qry", "cranqrel")

MINI_DOCS = """.I 1
.T
first title
.A
author one
.B
bib one
.W
first text
 second line
.I 2
.T
second title
.A
.B
.W
second text
.I 3
.T
third
.A
a3
.B
b3
.W
third text
"""
MINI_QUERIES = ".I 001\n.W\nwhat is first .\n.I 004\n.W\nwhat is\n second .\n"
MINI_QRELS = "1 1 1\n1 2 -1\n2  3  4 \n2 2 2\n"


def cranfield(folder, *args):
    out = io.StringIO()
    call_command("import_cranfield", str(folder), *args, "--no-progress", stdout=out)
    return out.getvalue()


def rejected(folder, *args):
    before = db_snapshot()
    with pytest.raises(CommandError) as exc:
        cranfield(folder, *args)
    assert db_snapshot() == before
    return str(exc.value)


def mini(tmp_path, docs=MINI_DOCS, queries=MINI_QUERIES, qrels=MINI_QRELS):
    folder = tmp_path / "mini"
    folder.mkdir()
    for name, text in zip(FILES, (docs, queries, qrels)):
        if text is not None:
            (folder / name).write_text(text)
    return folder


def raw_lines(path):
    return path.read_bytes().decode("ascii").replace("\r\n", "\n").split("\n")


def test_full_collection_counts_match_the_raw_files(data_dir):
    folder = data_dir / "cranfield"
    doc_ids = [line.split()[1] for line in raw_lines(folder / "cran.all.1400") if line.startswith(".I")]
    query_ids = [line.split()[1] for line in raw_lines(folder / "cran.qry") if line.startswith(".I")]
    qrel_rows = [line.split() for line in raw_lines(folder / "cranqrel") if line.strip()]

    out = cranfield(folder)

    coll = Collection.objects.get(name="cranfield")
    assert Passage.objects.filter(collection=coll).count() == len(doc_ids) == 1400
    assert Topic.objects.filter(collection=coll, kind=Topic.Kind.ADHOC).count() == len(query_ids) == 225
    qrel_set = QrelSet.objects.get(name="cranfield-qrels", collection=coll)
    assert qrel_set.qrels.count() == len(qrel_rows)
    # gains: 5 - code for 1..4, 0 for -1 (default: judged, not relevant at trec_eval's threshold)
    expected_gains = Counter(0 if row[2] == "-1" else 5 - int(row[2]) for row in qrel_rows)
    assert Counter(qrel_set.qrels.values_list("grade", flat=True)) == expected_gains
    assert "−1 (no code given) → 0" in qrel_set.description
    assert out.startswith(f"Imported Cranfield into collection 'cranfield': 1,400 documents, 225 queries, "
                          f"{len(qrel_rows):,} qrels in qrel set 'cranfield-qrels'.")

    # Queries are numbered in file order; the .I number is kept.
    topics = Topic.objects.filter(collection=coll)
    assert sorted(topics.values_list("external_id", flat=True), key=int) == [str(n) for n in range(1, 226)]
    assert [topics.get(external_id=str(n)).metadata["original_id"] for n in (1, 2, 3, 225)] == [
        query_ids[0], query_ids[1], query_ids[2], query_ids[224],
    ]
    first = topics.get(external_id="1")
    assert first.text == (
        "what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft ."
    )
    assert len(first.title) <= 81 and first.text.startswith(first.title.rstrip("…"))

    doc = Passage.objects.get(collection=coll, external_id="1")
    assert doc.title == "experimental investigation of the aerodynamics of a wing in a slipstream ."
    assert doc.metadata == {"author": "brenckman,m.", "bibliography": "j. ae. scs. 25, 1958, 324."}
    assert doc.text.startswith("experimental investigation of the aerodynamics of a\nwing in a slipstream .")
    assert doc.text.endswith("the specific configuration of the experiment .")
    assert sorted(Passage.objects.filter(collection=coll).values_list("external_id", flat=True), key=int) == [
        str(int(i)) for i in doc_ids
    ]

    # Query 1's qrels (file order numbering) point at the right documents.
    q1 = {(row[1], 0 if row[2] == "-1" else 5 - int(row[2])) for row in qrel_rows if row[0] == "1"}
    assert set(Qrel.objects.filter(qrel_set=qrel_set, topic=first).values_list("passage__external_id", "grade")) == q1

    # Records 240, 576 and 578 repeat a field marker inside .W; their text stays in .W and the summary says so.
    assert "document(s) 240, 576, 578 repeat a field marker" in out
    assert "application to turbulent separations" in Passage.objects.get(collection=coll, external_id="240").text
    assert Passage.objects.get(collection=coll, external_id="240").metadata["author"] == "dean r. chapman"
    # Documents 471 and 995 are empty in the distributed file: imported without text, and named.
    assert "Document(s) 471, 995 have no text." in out
    assert Passage.objects.get(collection=coll, external_id="471").text == ""


def test_importing_twice_is_a_clear_error_and_writes_nothing(data_dir):
    cranfield(data_dir / "cranfield")
    message = rejected(data_dir / "cranfield")
    assert "collection 'cranfield' already has 1,400 of these 1,400 documents" in message
    assert "a qrel set named 'cranfield-qrels' already exists" in message


def test_bad_qrels_line_in_the_real_files_is_reported_with_its_line(data_dir, tmp_path):
    folder = tmp_path / "cran"
    shutil.copytree(data_dir / "cranfield", folder)
    lines = [line for line in raw_lines(folder / "cranqrel") if line.strip()]
    with open(folder / "cranqrel", "ab") as f:
        f.write(b"\r\n226 1 2\r\n")
    message = rejected(folder)
    assert f"{folder / 'cranqrel'}:{len(lines) + 1}: query: query 226 is beyond the 225 queries of cran.qry" in message


def test_minus_one_gain_option_and_collection_name(tmp_path):
    out = cranfield(mini(tmp_path), "--collection", "cran-mini", "--minus-one-gain", "1")
    qrel_set = QrelSet.objects.get(name="cran-mini-qrels")
    assert sorted(qrel_set.qrels.values_list("topic__external_id", "passage__external_id", "grade")) == [
        ("1", "1", 4), ("1", "2", 1), ("2", "2", 3), ("2", "3", 1),
    ]
    assert "−1 (no code given) → 1" in qrel_set.description
    assert "2 queries, 4 qrels" in out
    doc2 = Passage.objects.get(collection__name="cran-mini", external_id="2")
    assert (doc2.title, doc2.text, doc2.metadata) == ("second title", "second text", {"author": "", "bibliography": ""})
    assert Passage.objects.get(collection__name="cran-mini", external_id="1").text == "first text\n second line"
    second = Topic.objects.get(collection__name="cran-mini", external_id="2")
    assert (second.text, second.metadata) == ("what is second .", {"original_id": "004"})


def test_an_existing_empty_collection_is_filled(tmp_path):
    Collection.objects.create(name="cranfield")
    cranfield(mini(tmp_path))
    assert Passage.objects.filter(collection__name="cranfield").count() == 3


def test_missing_files_are_all_named(tmp_path):
    folder = mini(tmp_path, queries=None, qrels=None)
    message = rejected(folder)
    assert f"{folder / 'cran.qry'}: missing" in message and f"{folder / 'cranqrel'}: missing" in message


@pytest.mark.parametrize(
    "broken, expected",
    [
        ({"docs": ".T\nno id\n" + MINI_DOCS}, "cran.all.1400:1: field .T before the first .I: a record with no .I"),
        ({"docs": "stray words\n" + MINI_DOCS}, "cran.all.1400:1: text before the first .I: a record with no .I"),
        ({"docs": MINI_DOCS + ".I 2\n.W\nagain\n"}, "cran.all.1400:27: .I: duplicate .I 2 (first on line 11)"),
        ({"docs": MINI_DOCS + ".I\n.W\nx\n"}, "cran.all.1400:27: .I: .I has no record number"),
        ({"docs": MINI_DOCS + ".I 4\n.X\nx\n"}, "cran.all.1400:28: unknown field marker .X"),
        ({"queries": MINI_QUERIES + ".I 004\n.W\nagain\n"}, "cran.qry:8: .I: duplicate .I 004 (first on line 4)"),
        ({"queries": MINI_QUERIES + ".I 005\n.W\n\n"}, "cran.qry:8: .W: query 005 has no .W text"),
        ({"qrels": "1 1 1\n1 2\n"}, "cranqrel:2: expected 3 columns (query document grade), got 2"),
        ({"qrels": "1 1 1 0\n"}, "cranqrel:1: expected 3 columns (query document grade), got 4"),
        ({"qrels": "1 1 1\n3 1 1\n"}, "cranqrel:2: query: query 3 is beyond the 2 queries of cran.qry"),
        ({"qrels": "0 1 1\n"}, "cranqrel:1: query: '0' is not a query number (1 and up)"),
        ({"qrels": "1 1 1\n1 99 1\n"}, "cranqrel:2: document: unknown document 99 (not in cran.all.1400)"),
        ({"qrels": "1 1 5\n"}, "cranqrel:1: grade: grade '5' is not one of -1, 1, 2, 3, 4"),
        ({"qrels": "1 1 0\n"}, "cranqrel:1: grade: grade '0' is not one of -1, 1, 2, 3, 4"),
        ({"qrels": "1 1 x\n"}, "cranqrel:1: grade: grade 'x' is not one of -1, 1, 2, 3, 4"),
        ({"qrels": "1 1 1\n1 1 2\n"}, "cranqrel:2: document: query 1 grades document 1 twice (first on line 1)"),
        ({"qrels": "1 1 1\n\x00"}, "cranqrel:2: not a text file"),
    ],
    ids=[
        "field-before-I", "text-before-I", "duplicate-doc", "I-without-number", "unknown-marker", "duplicate-query", "empty-query",
        "qrels-2-columns", "qrels-4-columns", "query-beyond", "query-zero", "unknown-document", "grade-5",
        "grade-0", "grade-word", "duplicate-qrel", "binary-qrels",
    ],
)
def test_broken_input_is_rejected_naming_file_and_line_and_nothing_is_written(tmp_path, broken, expected):
    folder = mini(tmp_path, **broken)
    message = rejected(folder)
    assert f"{folder}/{expected}" in message


def test_problems_in_several_files_are_reported_together(tmp_path):
    folder = mini(tmp_path, docs=MINI_DOCS + ".I 1\n.W\nx\n", qrels="1 1 1\n9 1 1\n")
    message = rejected(folder)
    assert "cran.all.1400:27: .I: duplicate .I 1" in message and "cranqrel:2: query: query 9" in message
