"""manage.py import_trec_run: TREC 6-column runs, checked whole, ranks in trec_eval's order."""

import gzip
import io

import pytest
from django.core.management import CommandError, call_command

from assessments.models import Run, RunEntry, Topic
from retrieval.models import Collection, Passage
from tests import factories
from tests.factories import db_snapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def coll():
    """Collection 'web' with topics 301, 302 and documents d1…d5."""
    c = factories.collection("web")
    for qid in ("301", "302"):
        factories.topic(c, qid, kind=Topic.Kind.ADHOC)
    for n in range(1, 6):
        factories.passage(c, f"d{n}")
    return c


def write(tmp_path, text, name="run.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def run_import(path, *args):
    out = io.StringIO()
    call_command("import_trec_run", str(path), *args, "--no-progress", stdout=out)
    return out.getvalue()


def rejected(path, *args):
    """Run the import expecting a rejection; assert nothing was written; return the message."""
    before = db_snapshot()
    with pytest.raises(CommandError) as exc:
        run_import(path, *args)
    assert db_snapshot() == before
    return str(exc.value)


def ranking(run, qid):
    return list(
        RunEntry.objects.filter(run=run, topic__external_id=qid).order_by("rank").values_list(
            "passage__external_id", "rank", "score", "origin"
        )
    )


def test_run_is_stored_with_scores_and_file_ranks_in_origin(coll, tmp_path):
    path = write(tmp_path, "301 Q0 d1 1 3.5 bm25\n301 Q0 d2 2 2.0 bm25\n302 Q0 d3 1 9 bm25\n")
    out = run_import(path, "--collection", "web")
    run = Run.objects.get(collection=coll, name="bm25")
    assert run.source == Run.Source.IMPORTED and run.source_file == str(path)
    assert ranking(run, "301") == [("d1", 1, 3.5, {"rank": 1}), ("d2", 2, 2.0, {"rank": 2})]
    assert ranking(run, "302") == [("d3", 1, 9.0, {"rank": 1})]
    assert out.strip() == "Imported run 'bm25' into collection 'web': 3 entries for 2 topics."


def test_stored_rank_ignores_rank_column_and_breaks_score_ties_by_docid_descending_like_trec_eval(coll, tmp_path):
    # trec_eval (form_res_rels.c, comp_sim_docno) sorts by score descending, then strcmp(docno2, docno1):
    # equal scores put the lexicographically *larger* docid first. The rank column is ignored.
    path = write(
        tmp_path,
        "301 Q0 d1 1 1.0 r\n"
        "301 Q0 d5 2 0.5 r\n"
        "301 Q0 d3 3 2.0 r\n"
        "301 Q0 d2 4 1.0 r\n"
        "301 Q0 d4 5 1.0 r\n",
    )
    run_import(path, "--collection", "web")
    got = ranking(Run.objects.get(name="r"), "301")
    assert [(docid, rank, origin["rank"]) for docid, rank, _, origin in got] == [
        ("d3", 1, 3), ("d4", 2, 5), ("d2", 3, 4), ("d1", 4, 1), ("d5", 5, 2),
    ]


def test_ragged_whitespace_crlf_bom_trailing_blank_lines_exponents_and_negative_scores_are_accepted(coll, tmp_path):
    text = "\ufeff301\tQ0\td1\t1\t1.5e2\ttag\r\n301   Q0  d2 2   -3.25E-1 tag \r\n  301 Q0 d3 3 -7 tag\r\n\r\n  \r\n"
    path = write(tmp_path, text)
    run_import(path, "--collection", "web")
    got = ranking(Run.objects.get(name="tag"), "301")
    assert [(docid, score) for docid, _, score, _ in got] == [("d1", 150.0), ("d2", -0.325), ("d3", -7.0)]


def test_gzip_run_file_is_read(coll, tmp_path):
    path = write(tmp_path, gzip.compress(b"301 Q0 d1 1 1 gz\n"), name="run.txt.gz")
    run_import(path, "--collection", "web")
    assert Run.objects.get(name="gz").entries.count() == 1


def test_name_option_overrides_the_tag(coll, tmp_path):
    path = write(tmp_path, "301 Q0 d1 1 1 tag\n")
    run_import(path, "--collection", "web", "--name", "my-run")
    assert list(Run.objects.values_list("name", flat=True)) == ["my-run"]


def test_mixed_tags_are_rejected_naming_the_line(coll, tmp_path):
    path = write(tmp_path, "301 Q0 d1 1 1 NR\n301 Q0 d2 2 0.8 R\n301 Q0 d3 3 0.7 NR\n")
    message = rejected(path, "--collection", "web")
    assert f"{path}:2: tag: run tag 'R' differs from 'NR' (line 1)" in message


def test_mixed_tags_are_accepted_with_a_name_and_kept_per_entry(coll, tmp_path):
    path = write(tmp_path, "301 Q0 d1 1 1 NR\n301 Q0 d2 2 0.8 R\n")
    run_import(path, "--collection", "web", "--name", "r1")
    run = Run.objects.get(name="r1")
    assert [origin for *_, origin in ranking(run, "301")] == [{"rank": 1, "tag": "NR"}, {"rank": 2, "tag": "R"}]
    assert "NR, R" in run.description


def test_create_missing_creates_collection_adhoc_topics_and_documents_without_text(tmp_path):
    path = write(tmp_path, "q1 Q0 docA 1 2 sys\nq1 Q0 docB 2 1 sys\nq2 Q0 docA 1 5 sys\n")
    out = run_import(path, "--collection", "fresh", "--create-missing")
    coll = Collection.objects.get(name="fresh")
    assert sorted(Topic.objects.filter(collection=coll).values_list("external_id", "kind")) == [
        ("q1", Topic.Kind.ADHOC), ("q2", Topic.Kind.ADHOC),
    ]
    assert sorted(Passage.objects.filter(collection=coll).values_list("external_id", "text")) == [
        ("docA", ""), ("docB", ""),
    ]
    assert Run.objects.get(name="sys").entries.count() == 3
    assert "created the collection, 2 topics, 2 documents" in out


def test_create_missing_adds_only_the_unknown_ones_to_an_existing_collection(coll, tmp_path):
    path = write(tmp_path, "301 Q0 d1 1 2 sys\n999 Q0 new-doc 1 1 sys\n")
    run_import(path, "--collection", "web", "--create-missing")
    assert Topic.objects.filter(collection=coll).count() == 3
    assert Passage.objects.get(collection=coll, external_id="new-doc").text == ""


@pytest.mark.parametrize(
    "text, expected",
    [
        ("301 Q0 d1 1 1 r\n301 Q0 d2 2 r\n", ":2: expected 6 columns (qid Q0 docid rank score tag), got 5"),
        ("301 Q0 d1 1 1 r extra\n", ":1: expected 6 columns (qid Q0 docid rank score tag), got 7"),
        ("301 Q0 d1 one 1 r\n", ":1: rank: 'one' is not an integer"),
        ("301 Q0 d1 1.5 1 r\n", ":1: rank: '1.5' is not an integer"),
        ("301 Q0 d1 1 1 r\n301 Q0 d2 2 abc r\n", ":2: score: 'abc' is not a number"),
        ("301 Q0 d1 1 nan r\n", ":1: score: 'nan' is not a finite number"),
        ("301 Q0 d1 1 -inf r\n", ":1: score: '-inf' is not a finite number"),
        ("301 Q0 d1 1 1e999 r\n", ":1: score: '1e999' is out of range"),
        ("301 Q0 d1 1 1 r\n301 Q0 d1 2 0.5 r\n", ":2: docid: 'd1' appears twice for topic '301' (first on line 1)"),
        ("301 Q0 d1 1 1 r\n777 Q0 d1 1 1 r\n", ":2: qid: unknown topic '777' in collection 'web'"),
        ("301 Q0 d1 1 1 r\n301 Q0 zz 2 0.5 r\n", ":2: docid: unknown document 'zz' in collection 'web'"),
        ("", ": the file is empty"),
        ("\n  \n", ": the file is empty"),
        (b"\x00\x01\x02binary", ":1: not a text file: NUL byte at offset 0"),
        (b"301 Q0 d1 1 1 r\n\xff\xfe\x80", ":2: not UTF-8 text"),
    ],
    ids=[
        "too-few-columns", "too-many-columns", "rank-word", "rank-float", "score-word", "score-nan", "score-inf",
        "score-overflow", "duplicate-docid", "unknown-topic", "unknown-document", "empty", "blank", "nul", "not-utf8",
    ],
)
def test_bad_run_files_are_rejected_naming_file_and_line_and_nothing_is_written(coll, tmp_path, text, expected):
    path = write(tmp_path, text)
    message = rejected(path, "--collection", "web")
    assert message.startswith("nothing was imported:")
    assert f"{path}{expected}" in message


def test_every_problem_is_reported_at_once(coll, tmp_path):
    path = write(tmp_path, "301 Q0 d1 x 1 r\n301 Q0 d2 2 y r\n301 Q0 d3\n")
    message = rejected(path, "--collection", "web")
    assert f"{path}:1: rank:" in message and f"{path}:2: score:" in message and f"{path}:3: expected 6" in message


@pytest.mark.parametrize("line,expected", [
    ("301 Q0 d\u200b9 1 2.0 r\n", "run.txt:1: docid: 'd\\u200b9' is not a document id: character 2 is U+200B zero width"),
    ("3\u202e03 Q0 d9 1 2.0 r\n", "run.txt:1: qid: '3\\u202e03' is not a topic id: character 2 is U+202E"),
    ("301 Q0 d9 1 2.0 \uff52\n", "run name 'ｒ': character 1 is U+FF52 fullwidth latin small letter r, which looks"),
])
def test_ids_made_by_create_missing_and_run_names_are_checked_for_characters_a_reader_cannot_tell(coll, tmp_path, line,
                                                                                                  expected):
    assert expected in rejected(write(tmp_path, line), "--collection", "web", "--create-missing")


def test_run_name_already_in_the_collection_is_rejected(coll, tmp_path):
    factories.run(coll, name="bm25")
    path = write(tmp_path, "301 Q0 d1 1 1 bm25\n")
    message = rejected(path, "--collection", "web")
    assert "name: collection 'web' already has a run named 'bm25'" in message
    run_import(path, "--collection", "web", "--name", "bm25-again")
    assert Run.objects.filter(name="bm25-again").exists()


def test_missing_collection_is_rejected_without_create_missing(tmp_path):
    path = write(tmp_path, "301 Q0 d1 1 1 r\n")
    message = rejected(path, "--collection", "nowhere")
    assert f"{path}: collection: no collection named 'nowhere'" in message


def test_missing_file_is_rejected(tmp_path):
    message = rejected(tmp_path / "absent.run", "--collection", "web")
    assert "absent.run: cannot read" in message
