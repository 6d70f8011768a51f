"""Relevance thresholds are explicit (--min-rel, trec_eval's -l) and pool recall is named: micro and macro."""

import io

import ir_measures
import pytest
from django.core.management import call_command

from assessments.evaluation.sources import pool_recall, recall_of
from assessments.models import QrelSet, Topic
from assessments.services.pooling import assemble_pool
from tests import factories

TREC_EVAL = factories.DATA / "trec_eval"


def run_command(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def values_of(text):
    return {tuple(line.split("\t")[:3]): float(line.split("\t")[3]) for line in text.splitlines() if line}


def test_micro_weighs_relevant_documents_alike_and_macro_weighs_topics_alike():
    qrels = {"1": {"a": 1, "b": 2, "c": 1, "x": 0}, "2": {"d": 1}, "3": {"e": 0}}
    candidates = {"1": {"a", "b", "c", "x"}, "2": {"z"}, "3": {"e"}}

    recall = recall_of(candidates, qrels, ["1", "2", "3"])

    assert (recall.found, recall.relevant, recall.topics) == (3, 4, 2)  # topic 3 has nothing relevant: left out
    assert recall.micro == pytest.approx(3 / 4) and recall.macro == pytest.approx((1 + 0) / 2)
    strict = recall_of(candidates, qrels, ["1", "2", "3"], rel=2)  # only b is relevant at grade ≥ 2
    assert (strict.found, strict.relevant, strict.micro, strict.macro) == (1, 1, 1.0, 1.0)


@pytest.mark.django_db
def test_a_pool_report_names_micro_and_macro_recall_at_the_threshold_given():
    coll = factories.collection("c")
    t1, t2 = (factories.topic(coll, n, kind=Topic.Kind.ADHOC) for n in ("1", "2"))
    a, b, c, d, e = (factories.passage(coll, x) for x in "abcde")
    run = factories.run(coll, "r", {t1: [a, b, c], t2: [d]})
    pool = factories.pool(coll, [t1, t2], [run], name="p", depth=2)
    assemble_pool(pool.pk)  # pools a, b and d
    qrels = QrelSet.objects.create(name="c-qrels", collection=coll)
    for topic, passage, grade in ((t1, a, 2), (t1, b, 1), (t1, c, 1), (t2, d, 0), (t2, e, 1)):
        qrels.qrels.create(topic=topic, passage=passage, grade=grade)

    out, err = run_command("evaluate_runs", "--pool", "p", "--measures", "P@2")
    values = values_of(out)
    assert values[("pool:p", "PoolRecall(micro)", "all")] == pytest.approx(2 / 4)  # a, b of a, b, c, e
    assert values[("pool:p", "PoolRecall(macro)", "all")] == pytest.approx((2 / 3 + 0) / 2, abs=5e-5)
    assert "micro over all 4 of them (2 pooled), macro the mean over the 2 topics with any" in err

    out, err = run_command("evaluate_runs", "--pool", "p", "--measures", "P@2", "--min-rel", "2")
    values = values_of(out)
    assert values[("pool:p", "PoolRecall(micro,rel=2)", "all")] == 1.0  # a only
    assert values[("r", "P(rel=2)@2", "all")] == pytest.approx((1 / 2 + 0) / 2)
    assert "(grade ≥ 2)" in err
    assert pool_recall(pool, {"1": {"a": 2, "b": 1, "c": 1}, "2": {"d": 0, "e": 1}}).micro == pytest.approx(2 / 4)


def test_min_rel_on_files_agrees_with_ir_measures_rel_and_leaves_ndcg_gains_alone():
    qrels, run = TREC_EVAL / "qrels.rel_level", TREC_EVAL / "results.test"
    names = ["AP", "P@10", "R@100", "RR", "Rprec", "nDCG@10"]

    out, _ = run_command("evaluate_runs", "--qrels", str(qrels), "--run", str(run), "--measures", *names,
                         "--min-rel", "2")

    ours = {measure: value for (_, measure, topic), value in values_of(out).items() if topic == "all"}
    assert set(ours) == {"AP(rel=2)", "P(rel=2)@10", "R(rel=2)@100", "RR(rel=2)", "Rprec(rel=2)", "nDCG@10"}
    theirs = ir_measures.calc_aggregate(
        [ir_measures.parse_measure(m) for m in ("AP(rel=2)", "P(rel=2)@10", "R(rel=2)@100", "RR(rel=2)",
                                                "Rprec(rel=2)", "nDCG@10")],
        ir_measures.read_trec_qrels(str(qrels)), ir_measures.read_trec_run(str(run)),
    )
    for measure, value in theirs.items():
        assert ours[str(measure)] == pytest.approx(value, abs=5e-5), measure
    default, _ = run_command("evaluate_runs", "--qrels", str(qrels), "--run", str(run), "--measures", "P@10")
    assert "P@10" in default and values_of(default)[("STANDARD", "P@10", "all")] != ours["P(rel=2)@10"]
