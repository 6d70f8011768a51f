"""manage.py import_qrels: TREC qrels files, checked whole; checked against trec_eval's and trectools' test files."""

import io
import shutil

import pytest
from django.core.management import CommandError, call_command

from assessments.models import QrelSet, Run, RunEntry, Topic
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


def write(tmp_path, text, name="qrels.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def qrels_import(path, *args):
    out = io.StringIO()
    call_command("import_qrels", str(path), *args, "--no-progress", stdout=out)
    return out.getvalue()


def run_import(path, *args):
    call_command("import_trec_run", str(path), *args, "--no-progress", stdout=io.StringIO())


def rejected(path, *args):
    before = db_snapshot()
    with pytest.raises(CommandError) as exc:
        qrels_import(path, *args)
    assert db_snapshot() == before
    return str(exc.value)


def grades(qrel_set):
    return sorted(qrel_set.qrels.values_list("topic__external_id", "passage__external_id", "subtopic", "grade"))


def test_qrels_are_stored_in_a_set_named_after_the_file(coll, tmp_path):
    path = write(tmp_path, "301 0 d1 2\n301\t0\td2\t0\n302   0  d3   1  \n", name="My Qrels.2024.txt")
    out = qrels_import(path, "--collection", "web")
    qrel_set = QrelSet.objects.get()
    assert qrel_set.name == "my-qrels2024" and qrel_set.collection == coll and qrel_set.source_file == str(path)
    assert grades(qrel_set) == [("301", "d1", "", 2), ("301", "d2", "", 0), ("302", "d3", "", 1)]
    assert out.strip() == "Imported qrel set 'my-qrels2024' into collection 'web': 3 qrels for 2 topics."


def test_name_option_names_the_set(coll, tmp_path):
    qrels_import(write(tmp_path, "301 0 d1 1\n"), "--collection", "web", "--name", "official")
    assert QrelSet.objects.get().name == "official"


def test_iteration_column_other_than_0_or_q0_is_kept_as_subtopic(coll, tmp_path):
    path = write(tmp_path, "301 0 d1 1\n301 Q0 d2 1\n301 3 d1 2\n301 4 d1 0\n")
    qrels_import(path, "--collection", "web")
    assert grades(QrelSet.objects.get()) == [
        ("301", "d1", "", 1), ("301", "d1", "3", 2), ("301", "d1", "4", 0), ("301", "d2", "", 1),
    ]


def test_negative_grades_and_crlf_and_bom_are_accepted(coll, tmp_path):
    qrels_import(write(tmp_path, "\ufeff301 0 d1 -2\r\n301 0 d2 +1\r\n\r\n"), "--collection", "web")
    assert grades(QrelSet.objects.get()) == [("301", "d1", "", -2), ("301", "d2", "", 1)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("301 0 d1 1\n301 0 d2\n", ":2: expected 4 columns (topic iteration docid grade), got 3"),
        ("301 0 d1 1 extra\n", ":1: expected 4 columns (topic iteration docid grade), got 5"),
        ("301 0 d1 high\n", ":1: grade: 'high' is not an integer"),
        ("301 0 d1 0.5\n", ":1: grade: '0.5' is not an integer"),
        ("301 0 d1 99999999999\n", ":1: grade: '99999999999' is out of range"),
        ("301 0 d1 1\n301 0 d1 2\n", ":2: docid: 'd1' is graded twice for topic '301' (first on line 1)"),
        ("301 0 d1 1\n301 Q0 d1 1\n", ":2: docid: 'd1' is graded twice for topic '301' (first on line 1)"),
        ("301 0 d1 1\n555 0 d1 1\n", ":2: topic: unknown topic '555' in collection 'web'"),
        ("301 0 d1 1\n301 0 nope 1\n", ":2: docid: unknown document 'nope' in collection 'web'"),
        ("", ": the file is empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", ":3: not a text file: NUL byte at offset 8"),
        (b"301 0 d1 1\n\xc3\x28", ":2: not UTF-8 text"),
    ],
    ids=[
        "too-few-columns", "too-many-columns", "grade-word", "grade-float", "grade-huge", "duplicate",
        "duplicate-q0", "unknown-topic", "unknown-document", "empty", "binary", "not-utf8",
    ],
)
def test_bad_qrels_files_are_rejected_naming_file_and_line_and_nothing_is_written(coll, tmp_path, text, expected):
    path = write(tmp_path, text)
    message = rejected(path, "--collection", "web")
    assert f"{path}{expected}" in message


def test_qrel_set_name_already_taken_is_rejected(coll, tmp_path):
    path = write(tmp_path, "301 0 d1 1\n")
    qrels_import(path, "--collection", "web")
    message = rejected(path, "--collection", "web")
    assert f"{path}: name: a qrel set named 'qrels' already exists" in message


def test_name_that_is_not_a_slug_is_rejected(coll, tmp_path):
    message = rejected(write(tmp_path, "301 0 d1 1\n"), "--collection", "web", "--name", "my qrels")
    assert "name: 'my qrels' is not a valid qrel set name" in message


def test_missing_collection_is_rejected_without_create_missing(tmp_path):
    message = rejected(write(tmp_path, "301 0 d1 1\n"), "--collection", "nowhere")
    assert "collection: no collection named 'nowhere'" in message


def trec_eval_measures(run, qrel_set):
    """A few trec_eval measures over the topics of `run`, from the stored ranks (relevant: grade >= 1)."""
    relevant = {}
    for qid, docid, grade in qrel_set.qrels.values_list("topic__external_id", "passage__external_id", "grade"):
        if grade >= 1:
            relevant.setdefault(qid, set()).add(docid)
    ranked = {}
    for qid, docid, rank in RunEntry.objects.filter(run=run).order_by("topic", "rank").values_list(
        "topic__external_id", "passage__external_id", "rank"
    ):
        assert rank == len(ranked.setdefault(qid, [])) + 1
        ranked[qid].append(docid)
    per_topic = []
    for qid, docs in ranked.items():
        rel = relevant.get(qid, set())
        hits = [docid in rel for docid in docs]
        found = [i for i, hit in enumerate(hits, start=1) if hit]
        per_topic.append(
            {
                "num_rel": len(rel),
                "num_rel_ret": len(found),
                "map": sum(n / rank for n, rank in enumerate(found, start=1)) / len(rel),
                "recip_rank": 1 / found[0] if found else 0.0,
                "Rprec": sum(hits[: len(rel)]) / len(rel),
                **{f"P_{k}": sum(hits[:k]) / k for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
            }
        )
    totals = {"num_q": len(per_topic), "num_ret": sum(len(d) for d in ranked.values())}
    for key in per_topic[0]:
        values = [t[key] for t in per_topic]
        totals[key] = sum(values) if key.startswith("num_") else sum(values) / len(values)
    return totals


def test_trec_eval_test_files_import_and_reproduce_trec_eval_golden_output(data_dir, tmp_path):
    qrels_path = data_dir / "trec_eval" / "qrels.test"
    qrels_out = qrels_import(qrels_path, "--collection", "trec-test", "--create-missing")
    qrel_set = QrelSet.objects.get(name="qrels")
    raw_lines = [line.split() for line in qrels_path.read_text().splitlines() if line.strip()]
    assert qrel_set.qrels.count() == len(raw_lines) == 3681
    assert qrel_set.qrels.values("topic").distinct().count() == len({cols[0] for cols in raw_lines})
    assert "created the collection" in qrels_out

    run_path = data_dir / "trec_eval" / "results.test"
    run_import(run_path, "--collection", "trec-test", "--create-missing")
    run = Run.objects.get(name="STANDARD")
    run_lines = [line.split() for line in run_path.read_text().splitlines() if line.strip()]
    assert run.entries.count() == len(run_lines) == 1500
    entry = run.entries.get(topic__external_id=run_lines[0][0], passage__external_id=run_lines[0][2])
    assert entry.origin == {"rank": int(run_lines[0][3])} and entry.score == float(run_lines[0][4])

    golden = {}
    for line in (data_dir / "trec_eval" / "out.test").read_text().splitlines():
        measure, _, value = line.split()
        golden[measure] = value
    ours = trec_eval_measures(run, qrel_set)
    checked = 0
    for measure, value in ours.items():
        if measure in golden:
            expected = golden[measure]
            assert (f"{value:.4f}" if "." in expected else str(value)) == expected, measure
            checked += 1
    assert checked >= 14  # num_q, num_ret, num_rel, num_rel_ret, map, Rprec, recip_rank, P_5 … P_1000


def test_trectools_pooling_files_import_with_create_missing_and_run_names(data_dir, tmp_path):
    pooling = data_dir / "pooling"
    qrels_import(pooling / "qrel1.txt", "--collection", "trectools", "--create-missing")
    coll = Collection.objects.get(name="trectools")
    qrel_set = QrelSet.objects.get(name="qrel1")
    assert qrel_set.qrels.count() == 30
    assert Topic.objects.filter(collection=coll).count() == 3
    assert Passage.objects.filter(collection=coll).count() == 30
    # The trectools runs put R/NR in the tag column, so they need --name.
    for n in range(1, 5):
        run_import(pooling / f"r{n}.run", "--collection", "trectools", "--create-missing", "--name", f"r{n}")
    counts = {run.name: (run.entries.count(), run.entries.values("topic").distinct().count())
              for run in Run.objects.filter(collection=coll)}
    assert counts == {"r1": (6, 2), "r2": (6, 2), "r3": (6, 2), "r4": (9, 3)}
    assert Passage.objects.filter(collection=coll).count() == 30  # every run document is in the qrels
    relevant = set(qrel_set.qrels.filter(grade__gte=1).values_list("topic__external_id", "passage__external_id"))
    top = RunEntry.objects.filter(run__name="r4").order_by("topic__external_id", "rank")
    hits = [(e.topic.external_id, e.passage.external_id) in relevant for e in top]
    # r4: topic 1 doc1_2 relevant; topic 2 doc2_1, doc2_2 relevant; topic 3 none of doc3_1..3 (only doc3_9 is).
    assert hits == [False, True, False, True, False, True, False, False, False]


def test_ragged_qrels_file_with_trailing_tabs_imports(data_dir, tmp_path, coll):
    # qrel1.txt has trailing tabs and a line separated by spaces; copy it so the set gets another name.
    path = tmp_path / "ragged.txt"
    shutil.copy(data_dir / "pooling" / "qrel1.txt", path)
    qrels_import(path, "--collection", "web", "--create-missing")
    assert QrelSet.objects.get(name="ragged").qrels.filter(topic__external_id="3", grade=1).count() == 1
