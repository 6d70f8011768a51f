"""manage.py evaluate_runs and export_run: trec_eval's figures, ir_measures' agreement, stored runs, pools, N-RODCG."""

import io
import json
import math

import ir_measures
import pytest
from django.core.management import CommandError, call_command

from assessments.evaluation import nrodcg, parse_measure
from assessments.models import PoolCandidate, QrelSet, Run, Topic
from retrieval.models import Book, Passage
from tests import factories

TREC_EVAL = factories.DATA / "trec_eval"
POOLING = factories.DATA / "pooling"
# measures we offer, in our notation, with trec_eval's name in out.test.a
GOLDEN = {
    "AP": "map", "Rprec": "Rprec", "RR": "recip_rank", "nDCG": "ndcg", "NumRet": "num_ret", "NumRel": "num_rel",
    "NumRelRet": "num_rel_ret",
    **{f"P@{k}": f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
    **{f"R@{k}": f"recall_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
    **{f"nDCG@{k}": f"ndcg_cut_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
    **{f"AP@{k}": f"map_cut_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
    **{f"Success@{k}": f"success_{k}" for k in (1, 5, 10)},
}
AGREEMENT = ["AP", "AP@10", "nDCG", "nDCG@10", "nDCG@20", "P@5", "P@10", "R@10", "R@100", "RR", "RR@10", "Rprec",
             "Success@5", "Judged@10", "P(rel=2)@5", "AP(rel=2)", "NumRet", "NumRel"]


def run_command(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def lines_of(text):
    """{(run, measure, topic): value} of `run measure topic value` lines."""
    return {tuple(line.split("\t")[:3]): line.split("\t")[3] for line in text.splitlines() if line}


def ir_measures_values(qrels_path, run_path, names):
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    parsed = {name: ir_measures.parse_measure(name) for name in names}
    values = ir_measures.calc_aggregate(parsed.values(), qrels, run)
    return {name: values[measure] for name, measure in parsed.items()}


def test_it_reproduces_trec_evals_golden_figures_for_every_measure_it_offers():
    golden = {}
    for line in (TREC_EVAL / "out.test.a").read_text().splitlines():
        measure, topic, value = line.split()
        golden[(measure, topic)] = value
    out, _ = run_command(
        "evaluate_runs", "--qrels", str(TREC_EVAL / "qrels.test"), "--run", str(TREC_EVAL / "results.test"),
        "--measures", *GOLDEN,
    )
    ours = lines_of(out)
    assert len(ours) == len(GOLDEN)
    for measure, trec_name in GOLDEN.items():
        assert ours[("STANDARD", measure, "all")] == golden[(trec_name, "all")], measure


@pytest.mark.parametrize(
    "qrels, run",
    [(TREC_EVAL / "qrels.test", TREC_EVAL / "results.test"), (TREC_EVAL / "qrels.rel_level", TREC_EVAL / "results.test")]
    + [(POOLING / "qrel1.txt", POOLING / f"r{n}.run") for n in (1, 2, 3, 4)],
)
def test_it_agrees_with_ir_measures_to_four_decimals(qrels, run):
    out, _ = run_command("evaluate_runs", "--qrels", str(qrels), "--run", str(run), "--format", "json",
                         "--measures", *AGREEMENT)
    ours = next(iter(json.loads(out)["runs"].values()))["all"]
    theirs = ir_measures_values(qrels, run, [m for m in AGREEMENT])
    for name in AGREEMENT:
        assert round(ours[str(parse_measure(name))], 4) == round(theirs[name], 4), name


def test_per_topic_lines_come_before_the_mean_like_trec_eval_q():
    out, _ = run_command(
        "evaluate_runs", "--qrels", str(TREC_EVAL / "qrels.test"), "--run", str(TREC_EVAL / "results.test"),
        "--measures", "P@5", "--per-topic",
    )
    rows = [line.split("\t") for line in out.splitlines()]
    assert [row[2] for row in rows] == ["301", "302", "303", "all"]
    assert {row[0] for row in rows} == {"STANDARD"} and {row[1] for row in rows} == {"P@5"}
    assert rows[-1][3] == "0.2667" == f"{sum(float(row[3]) for row in rows[:3]) / 3:.4f}"


def test_measures_and_inputs_that_make_no_sense_are_refused():
    with pytest.raises(CommandError, match="unknown measure 'MAPX'"):
        run_command("evaluate_runs", "--qrels", "q", "--run", "r", "--measures", "MAPX")
    with pytest.raises(CommandError, match="P needs a cutoff"):
        run_command("evaluate_runs", "--qrels", "q", "--run", "r", "--measures", "P")
    with pytest.raises(CommandError, match="cannot read"):
        run_command("evaluate_runs", "--qrels", "/no/such/qrels", "--run", str(TREC_EVAL / "results.test"))
    with pytest.raises(CommandError, match="needs the books"):
        run_command("evaluate_runs", "--qrels", str(TREC_EVAL / "qrels.test"), "--run", str(TREC_EVAL / "results.test"),
                    "--measures", "N-RODCG@10")


@pytest.mark.django_db
def test_stored_runs_score_as_their_files_do_and_export_run_round_trips(tmp_path):
    run_command("import_qrels", str(TREC_EVAL / "qrels.test"), "--collection", "te", "--create-missing")
    run_command("import_trec_run", str(TREC_EVAL / "results.test"), "--collection", "te", "--create-missing")
    stored, _ = run_command("evaluate_runs", "--runs", "STANDARD", "--measures", *AGREEMENT, "--format", "json")
    files, _ = run_command("evaluate_runs", "--qrels", str(TREC_EVAL / "qrels.test"), "--run",
                           str(TREC_EVAL / "results.test"), "--measures", *AGREEMENT, "--format", "json")
    assert json.loads(stored)["runs"]["STANDARD"]["all"] == json.loads(files)["runs"]["STANDARD"]["all"]

    run_command("export_run", "STANDARD", "--out", str(tmp_path / "out.run"))
    lines = (tmp_path / "out.run").read_text().splitlines()
    assert len(lines) == 1500 and lines[0].split()[1] == "Q0" and lines[0].split()[-1] == "STANDARD"
    again, _ = run_command("evaluate_runs", "--qrels", str(TREC_EVAL / "qrels.test"), "--run", str(tmp_path / "out.run"),
                           "--measures", *AGREEMENT, "--format", "json")
    assert json.loads(again)["runs"]["STANDARD"]["all"] == json.loads(files)["runs"]["STANDARD"]["all"]
    theirs = ir_measures_values(TREC_EVAL / "qrels.test", tmp_path / "out.run", ["AP", "nDCG@10"])
    assert round(json.loads(stored)["runs"]["STANDARD"]["all"]["AP"], 4) == round(theirs["AP"], 4)


@pytest.mark.django_db
def test_export_run_keeps_the_order_of_runs_without_scores(tmp_path):
    coll = factories.collection()
    topic = factories.topic(coll, "t1")
    passages = [factories.passage(coll, f"p{i}") for i in range(3)]
    run = factories.run(coll, "article", {topic: passages})
    run.entries.update(score=None)
    out, _ = run_command("export_run", "article", "--out", "-")
    assert out.splitlines() == ["t1 Q0 p0 1 3.0 article", "t1 Q0 p1 2 2.0 article", "t1 Q0 p2 3 1.0 article"]
    with pytest.raises(CommandError, match="no run named 'nope'"):
        run_command("export_run", "nope", "--out", "-")
    for bad in (tmp_path / "no-such-folder" / "article.run", tmp_path):  # was a traceback (FileNotFoundError...)
        with pytest.raises(CommandError, match=f"nothing was exported: cannot write '{bad}'"):
            run_command("export_run", "article", "--out", str(bad))


@pytest.mark.django_db
def test_a_pool_evaluation_reports_how_much_of_each_runs_top_k_is_judged_and_pooled():
    coll = factories.collection("c")
    t1 = factories.topic(coll, "1", kind=Topic.Kind.ADHOC)
    a, b, c, d = (factories.passage(coll, x) for x in "abcd")
    r1, r2 = factories.run(coll, "r1", {t1: [a, b]}), factories.run(coll, "r2", {t1: [c, d]})
    pool = factories.pool(coll, [t1], [r1, r2], name="p", depth=2, per_topic=3)
    from assessments.services.pooling import assemble_pool

    assemble_pool(pool.pk)
    assert PoolCandidate.objects.filter(pool=pool).count() == 3  # a, c, then b (d is cut)
    qrels = QrelSet.objects.create(name="c-qrels", collection=coll)
    qrels.qrels.create(topic=t1, passage=a, grade=1)
    qrels.qrels.create(topic=t1, passage=c, grade=0)
    out, err = run_command("evaluate_runs", "--pool", "p", "--measures", "P@2")
    values = lines_of(out)
    assert values[("r1", "P@2", "all")] == "0.5000" and values[("r2", "P@2", "all")] == "0.0000"
    assert values[("r1", "Judged@2", "all")] == "0.5000" and values[("r2", "Judged@2", "all")] == "0.5000"
    assert values[("r1", "InPool@2", "all")] == "1.0000" and values[("r2", "InPool@2", "all")] == "0.5000"
    assert values[("pool:p", "PoolRecall(micro)", "all")] == "1.0000"  # the one relevant passage, a, is pooled
    assert values[("pool:p", "PoolRecall(macro)", "all")] == "1.0000"
    assert "qrels: c-qrels" in err


@pytest.fixture
def plot_run(db):
    coll = factories.collection("book")
    book = Book.objects.create(collection=coll, slug="b", title="A book", sentence_count=30)
    chunks = [
        Passage.objects.create(collection=coll, external_id=f"b:{i}", book=book, first_sentence=3 * i,
                               last_sentence=3 * i + 2, text=f"chunk {i}")
        for i in range(10)
    ]  # positions 1, 4, 7, … 28
    topic = Topic.objects.create(collection=coll, external_id="q1", kind=Topic.Kind.PLOT, book=book, text="who?")
    topic.ground_truth.set([chunks[2]])  # position 7
    factories.run(coll, "plots", {topic: [chunks[3], chunks[2], chunks[8]]})  # positions 10, 7, 25
    return coll


def test_n_rodcg_follows_seed_000_with_both_ideals(plot_run):
    out, err = run_command("evaluate_runs", "--runs", "plots", "--measures", "N-RODCG@3", "N-RODCG(ideal=retrieved)@3")
    gains = 1 / 4 + 1 / math.log2(3)  # d = 3 → 1/4 at rank 1, d = 0 → 1 at rank 2, d = 18 ≥ α → 0
    book_ideal = 1 + (1 / 4) / math.log2(3) + (1 / 4) / 2  # the best chunks of the book: 7, then 4 and 10
    retrieved_ideal = 1 + (1 / 4) / math.log2(3)
    values = lines_of(out)
    assert values[("plots", "N-RODCG@3", "all")] == f"{gains / book_ideal:.4f}"
    assert values[("plots", "N-RODCG(ideal=retrieved)@3", "all")] == f"{gains / retrieved_ideal:.4f}"
    assert "ideal=book: the best k chunks of the whole book" in err and "ideal=retrieved" in err


def test_a_book_without_a_qrel_set_is_scored_against_its_ground_truth(plot_run):
    out, err = run_command("evaluate_runs", "--runs", "plots", "--measures", "RR@3", "R@1", "P@3")
    values = lines_of(out)
    # ranks 10, 7, 25 by position: the ground-truth chunk (position 7) is second
    assert values[("plots", "RR@3", "all")] == "0.5000"
    assert values[("plots", "R@1", "all")] == "0.0000"
    assert values[("plots", "P@3", "all")] == f"{1 / 3:.4f}"
    assert "ground-truth chunks, grade 1" in err


def test_n_rodcg_is_zero_far_from_the_plot_and_one_on_it():
    measure = parse_measure("N-RODCG@2")
    assert nrodcg([25.0, 28.0], [7.0], [1.0, 4.0, 7.0, 25.0, 28.0], measure) == 0.0
    assert nrodcg([7.0, 4.0, 10.0], [7.0], [1.0, 4.0, 7.0, 10.0], parse_measure("N-RODCG@1")) == 1.0


@pytest.mark.django_db
def test_stored_runs_need_a_qrel_set_that_can_be_told(plot_run):
    coll = factories.collection("two")
    factories.run(coll, "x")
    QrelSet.objects.create(name="q1", collection=coll)
    QrelSet.objects.create(name="q2", collection=coll)
    with pytest.raises(CommandError, match="one of q1, q2"):
        run_command("evaluate_runs", "--runs", "x", "--measures", "AP")
    with pytest.raises(CommandError, match="has no runs nope"):
        run_command("evaluate_runs", "--runs", "x", "nope", "--measures", "AP")
    assert Run.objects.count() == 2
