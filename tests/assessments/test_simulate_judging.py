"""manage.py simulate_judging: judging orders replayed with qrels as the assessor, checked by hand on data/pooling."""

import gzip
import io
import json
import random
import shutil
from xml.etree import ElementTree

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from scipy.stats import kendalltau

from assessments.evaluation import parse_measure
from assessments.evaluation.measures import aggregate, evaluate
from assessments.evaluation.sources import read_qrels_file, read_run_file
from assessments.models import QrelSet, Topic
from assessments.ordering import ORDERS
from assessments.services.simulation import RunScorer, kendall_tau, simulate, topic_pools
from tests import factories

POOLING = factories.DATA / "pooling"
TREC_EVAL = factories.DATA / "trec_eval"
RUNS = sorted(str(p) for p in POOLING.glob("r*.run"))


def simulate_judging(*args):
    out = io.StringIO()
    call_command("simulate_judging", *map(str, args), "--no-progress", stdout=out)
    return out.getvalue()


def pooling_runs():
    return {path.split("/")[-1][:-4]: read_run_file(path)[1] for path in RUNS}


def test_the_json_has_exactly_the_documented_shape_and_the_hand_counted_figures():
    result = json.loads(simulate_judging("--qrels", POOLING / "qrel1.txt", "--runs", *RUNS, "--depth", "10",
                                         "--format", "json"))

    # Topic 1 pools doc1_1..3 (doc1_2 relevant; doc1_7 is relevant but pooled by no run), topic 2 doc2_1, doc2_3,
    # doc2_2 (doc2_1 and doc2_2 relevant), topic 3 six documents, none relevant (doc3_9 is not pooled).
    assert result["pool"] == {"topics": 3, "candidates": 12, "relevant": 3}
    assert list(result["orders"]) == ["depth", "mtf", "maxmean", "active", "hedge", "active-deep"]
    for order in result["orders"].values():
        assert set(order) == {"judgements_to_recall", "tau_at_budget"}
        # 50%: ⌈0.5⌉ = 1 of topic 1 (2nd judged) + ⌈1.0⌉ = 1 of topic 2 (1st) = 3; 80…95%: 2 + 3 = 5.
        assert order["judgements_to_recall"] == {"0.5": 3, "0.8": 5, "0.9": 5, "0.95": 5}
        assert list(order["tau_at_budget"]) == ["0.1", "0.2", "0.3", "0.5"]
        # Every run puts doc2_1 first and r2 (no topic 2) last, so one judgement a topic already ranks them alike.
        assert order["tau_at_budget"] == {"0.1": 1.0, "0.2": 1.0, "0.3": 1.0, "0.5": 1.0}


# Topic 3 graded by hand: r2 brings doc2_1, doc2_3, doc2_2 and r4 doc3_1, doc3_2, doc3_3 (see test_ordering).
GRADES = {"doc2_1": 0, "doc2_3": 0, "doc2_2": 1, "doc3_1": 1, "doc3_2": 0, "doc3_3": 1}


def test_each_order_needs_the_judgements_worked_out_by_hand_on_topic_3():
    result = simulate({"3": GRADES}, pooling_runs(), depth=10)

    # depth: doc2_1, doc3_1+, doc2_3, doc3_2, doc2_2+, doc3_3+   → 2nd relevant at 5, 3rd at 6
    # mtf:   doc2_1, doc3_1+, doc3_2, doc2_3, doc3_3+, doc2_2+   → 5, 6
    # maxmean: doc2_1, doc3_1+, doc3_2, doc3_3+, doc2_3, doc2_2+ → 4, 6
    # ⌈0.5 × 3⌉ = 2, ⌈0.8 × 3⌉ = ⌈0.9 × 3⌉ = ⌈0.95 × 3⌉ = 3
    assert result.orders["depth"].judgements_to_recall == {0.5: 5, 0.8: 6, 0.9: 6, 0.95: 6}
    assert result.orders["mtf"].judgements_to_recall == {0.5: 5, 0.8: 6, 0.9: 6, 0.95: 6}
    assert result.orders["maxmean"].judgements_to_recall == {0.5: 4, 0.8: 6, 0.9: 6, 0.95: 6}
    # active: fusion first (doc2_1 misses), then doc3_1 hits, then it prefers r4 (doc3_2) over depth's doc2_3.
    pool = topic_pools({"3": GRADES}, pooling_runs(), 10)["3"]
    assert [pool.keys[i] for i in result.orders["active"].sequences["3"][:3]] == ["doc2_1", "doc3_1", "doc3_2"]
    # The curve: relevant found after n judgements (n = 0…6), e.g. depth's 0, 0, 1, 1, 1, 2, 3.
    assert result.orders["depth"].curve.tolist() == [0, 0, 1, 1, 1, 2, 3]
    assert result.orders["maxmean"].curve.tolist() == [0, 0, 1, 1, 2, 2, 3]


def test_min_rel_decides_which_grades_are_relevant():
    runs = pooling_runs()
    qrels = {"1": {"doc1_1": 1, "doc1_2": 2, "doc1_3": 1}}
    assert simulate(qrels, runs, depth=10).relevant == 3
    strict = simulate(qrels, runs, depth=10, min_rel=2)
    assert strict.relevant == 1 and strict.orders["depth"].judgements_to_recall[0.5] == 2


def test_run_scores_under_partial_judgements_match_the_evaluation_module():
    """AP and nDCG@10 with only some pool documents judged equal assessments.evaluation on those judgements."""
    qrels = read_qrels_file(TREC_EVAL / "qrels.test")
    _, run = read_run_file(TREC_EVAL / "results.test")
    rng = random.Random(3)
    runs = {"as-is": run, "shuffled": {t: rng.sample(docs, len(docs)) for t, docs in run.items()},
            "reversed": {t: docs[::-1] for t, docs in run.items()}}
    pools = topic_pools(qrels, runs, 50)
    scorer = RunScorer(pools, qrels, runs, min_rel=1)
    judged = {t: np.array([rng.random() < 0.4 for _ in pool.keys]) for t, pool in pools.items()}

    ours = scorer.scores(judged)

    partial = {t: {k: qrels[t].get(k, 0) for k, seen in zip(pool.keys, judged[t]) if seen} for t, pool in pools.items()}
    measures = [parse_measure("AP"), parse_measure("nDCG@10")]
    for r, name in enumerate(runs):
        theirs = aggregate(evaluate(partial, runs[name], measures), measures)
        assert ours["AP"][r] == pytest.approx(theirs[measures[0]], abs=1e-12)
        assert ours["nDCG@10"][r] == pytest.approx(theirs[measures[1]], abs=1e-12)


def test_kendall_tau_is_tau_b_as_scipy_computes_it():
    rng = np.random.default_rng(5)
    for _ in range(20):
        x, y = rng.integers(0, 5, 12).astype(float), rng.integers(0, 5, 12).astype(float)  # many ties
        assert kendall_tau(x, y) == pytest.approx(kendalltau(x, y).statistic)


def test_text_output_names_each_figure_and_the_orders_asked_for():
    text = simulate_judging("--qrels", POOLING / "qrel1.txt", "--runs", *RUNS, "--depth", "10",
                            "--orders", "depth", "maxmean")

    assert text.startswith("Pool: 3 topics, 12 candidates, 3 relevant (grade ≥ 1) at depth 10 over 4 runs")
    assert "Judgements to find p of the relevant documents in the pool (per topic ⌈p × relevant⌉, summed):" in text
    assert "Kendall's τ of the runs by MAP" in text and "Kendall's τ of the runs by nDCG@10" in text
    table = [line.split() for line in text.splitlines() if line.startswith("  depth") or line.startswith("  maxmean")]
    assert table[0][:5] == ["depth", "3", "5", "5", "5"] and table[1][:5] == ["maxmean", "3", "5", "5", "5"]
    assert "mtf" not in text and "active" not in text.split("Time:")[0]


def test_gzipped_runs_are_read_and_the_plot_is_an_svg_with_a_line_per_order(tmp_path):
    runs = []
    for path in RUNS:
        target = tmp_path / (path.split("/")[-1] + ".gz")
        target.write_bytes(gzip.compress(open(path, "rb").read()))
        runs.append(target)
    plot = tmp_path / "orders.svg"

    out = simulate_judging("--qrels", POOLING / "qrel1.txt", "--runs", *runs, "--depth", "10", "--plot", plot,
                           "--format", "json")

    assert json.loads(out)["pool"]["candidates"] == 12
    svg = ElementTree.parse(plot).getroot()
    lines = svg.findall("{http://www.w3.org/2000/svg}polyline")
    assert [line.find("{http://www.w3.org/2000/svg}title").text for line in lines] == list(ORDERS)


def test_a_png_plot_needs_matplotlib(tmp_path):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        with pytest.raises(CommandError, match="a PNG needs matplotlib, which is not installed; write an .svg"):
            simulate_judging("--qrels", POOLING / "qrel1.txt", "--runs", *RUNS, "--plot", tmp_path / "p.png")
    else:  # pragma: no cover - not installed with the project
        simulate_judging("--qrels", POOLING / "qrel1.txt", "--runs", *RUNS, "--plot", tmp_path / "p.png")
        assert (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG")


def test_a_bad_run_file_is_refused_naming_the_file_line_and_field(tmp_path):
    bad = tmp_path / "bad.run"
    shutil.copy(RUNS[0], bad)
    with open(bad, "a") as handle:
        handle.write("1 Q0 doc1_9 4 abc NR\n")
    with pytest.raises(CommandError) as excinfo:
        simulate_judging("--qrels", POOLING / "qrel1.txt", "--runs", bad)
    assert f"{bad}:7: score:" in str(excinfo.value)


def test_a_name_that_is_neither_a_file_nor_stored_is_refused(db):
    with pytest.raises(CommandError, match="--runs: 'nope' is neither a file nor a stored run"):
        simulate_judging("--qrels", POOLING / "qrel1.txt", "--runs", "nope")
    with pytest.raises(CommandError, match="--qrels: 'nope' is neither a file nor a stored qrel set"):
        simulate_judging("--qrels", "nope", "--runs", *RUNS)


@pytest.mark.django_db
def test_stored_runs_and_qrel_sets_by_name_give_the_same_figures_as_their_files():
    call_command("import_qrels", str(POOLING / "qrel1.txt"), "--collection", "pooling", "--name", "pooling-qrels",
                 "--create-missing", "--no-progress", stdout=io.StringIO())
    names = []
    for path in RUNS:
        name = path.split("/")[-1][:-4]
        call_command("import_trec_run", path, "--collection", "pooling", "--name", name, "--create-missing",
                     "--no-progress", stdout=io.StringIO())
        names.append(name)
    assert QrelSet.objects.filter(name="pooling-qrels").exists() and Topic.objects.count() == 3

    stored = json.loads(simulate_judging("--qrels", "pooling-qrels", "--runs", *names, "--depth", "10",
                                         "--format", "json"))
    files = json.loads(simulate_judging("--qrels", POOLING / "qrel1.txt", "--runs", *RUNS, "--depth", "10",
                                        "--format", "json"))
    assert stored == files


def test_features_for_the_active_order_come_from_an_npz(tmp_path):
    runs = pooling_runs()
    docs = sorted({d for run in runs.values() for docs in run.values() for d in docs})
    rng = np.random.default_rng(1)
    path = tmp_path / "features.npz"
    np.savez(path, ids=np.array(docs), vectors=rng.normal(size=(len(docs), 8)),
             topics=np.array(["1", "2", "3"]), topic_vectors=rng.normal(size=(3, 8)))

    result = json.loads(simulate_judging("--qrels", POOLING / "qrel1.txt", "--runs", *RUNS, "--depth", "10",
                                         "--orders", "active", "--features", path, "--format", "json"))
    # Random vectors may reorder topics 1 and 2 (3 candidates each): between all relevant first (3) and last (6).
    assert 3 <= result["orders"]["active"]["judgements_to_recall"]["0.95"] <= 6

    np.savez(path, ids=np.array(docs[:3]), vectors=rng.normal(size=(3, 8)))
    with pytest.raises(CommandError, match="--features: no features for"):
        simulate_judging("--qrels", POOLING / "qrel1.txt", "--runs", *RUNS, "--features", path)
