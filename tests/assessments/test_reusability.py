"""Leave-one-run-out (Zobel's pool reusability test), checked by hand on the small pooling runs in data/pooling and
on two runs made to show a unique relevant document."""

import pytest

from assessments.evaluation.reusability import leave_one_run_out
from assessments.evaluation.sources import read_qrels_file, read_run_file
from tests.factories import DATA

POOLING = DATA / "pooling"


@pytest.fixture
def pooling():
    runs = dict(read_run_file(POOLING / f"r{n}.run") for n in range(1, 5))
    return runs, read_qrels_file(POOLING / "qrel1.txt")


def test_on_the_pooling_runs_only_r4_brings_judged_documents_of_its_own_and_none_is_relevant(pooling):
    runs, qrels = pooling
    names = {read_run_file(POOLING / f"r{n}.run")[0]: f"r{n}" for n in range(1, 5)}
    result = leave_one_run_out(runs, qrels, depth=3)
    by = {names[r.run]: r for r in result.rows}
    # MAP by hand over the qrels' three topics: topic 1 AP 0.25 (doc1_2 at 2 of 2 relevant); topic 2 AP
    # (1 + 2/3) / 3 for the runs that rank it (r2 ranks topic 3 instead); topic 3's one relevant, doc3_9, is
    # retrieved by none.
    assert by["r1"].score == pytest.approx((0.25 + 5 / 9) / 3)
    assert by["r2"].score == pytest.approx(0.25 / 3)
    # r4's doc3_1-3 are judged (0) and pooled by it alone; r2's topic-3 documents are not judged in topic 3.
    assert [(k, by[k].unique, by[k].unique_relevant) for k in sorted(by)] == [
        ("r1", 0, 0), ("r2", 0, 0), ("r3", 0, 0), ("r4", 3, 0)]
    assert all(r.score_without == r.score and r.rank_without == r.rank for r in result.rows)
    assert result.mean_change == 0 and result.largest_rank_change == 0


def test_a_run_whose_relevant_document_only_it_found_loses_score_and_rank_without_it():
    runs = {"A": {"t": ["a", "x"]}, "B": {"t": ["b", "x"]}}
    qrels = {"t": {"a": 1, "b": 1, "x": 0}}
    result = leave_one_run_out(runs, qrels, depth=2)
    a = next(r for r in result.rows if r.run == "A")
    # full: A and B each find one of two relevant at rank 1 (AP 0.5; A first on the name). Without a: A finds
    # nothing of the one relevant left (0), B finds it at rank 1 (1.0).
    assert (a.score, a.rank, a.score_without, a.rank_without, a.unique, a.unique_relevant) == (0.5, 1, 0.0, 2, 1, 1)
    assert a.change == -1.0 and result.largest_rank_change == 1
    assert "A" in "\n".join(result.lines()) and result.as_dict()["runs"][0]["run"] == "A"


def test_the_depth_decides_what_a_run_contributed():
    runs = {"A": {"t": ["x", "a"]}, "B": {"t": ["x", "b"]}}
    qrels = {"t": {"a": 1, "b": 1, "x": 0}}
    shallow = {r.run: r.unique for r in leave_one_run_out(runs, qrels, depth=1).rows}
    deep = {r.run: r.unique for r in leave_one_run_out(runs, qrels, depth=2).rows}
    assert shallow == {"A": 0, "B": 0} and deep == {"A": 1, "B": 1}
    with pytest.raises(ValueError):
        leave_one_run_out(runs, qrels, depth=0)


def test_evaluate_runs_prints_the_leave_one_out_table_and_its_json():
    import io
    import json

    from django.core.management import call_command

    files = [str(POOLING / f"r{n}.run") for n in range(1, 5)]
    out = io.StringIO()
    call_command("evaluate_runs", "--qrels", str(POOLING / "qrel1.txt"), "--run", *files, "--measures", "AP",
                 "--leave-one-out", "3", stdout=out, stderr=io.StringIO())
    text = out.getvalue()
    assert "leave-one-run-out" in text and "depth-3 pool" in text
    assert [line.split()[0] for line in text.splitlines() if line[:2] in ("r1", "r2", "r3", "r4") and "AP" not in line] \
        == ["r1", "r3", "r4", "r2"]
    out = io.StringIO()
    call_command("evaluate_runs", "--qrels", str(POOLING / "qrel1.txt"), "--run", *files, "--measures", "AP",
                 "--leave-one-out", "--format", "json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["reusability"]["depth"] == 100 and len(data["reusability"]["runs"]) == 4
    assert {r["run"]: r["unique"] for r in data["reusability"]["runs"]}["r4"] == 3
