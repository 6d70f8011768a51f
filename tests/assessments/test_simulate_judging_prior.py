"""simulate_judging --prior: the active order seeded with a prior score per (topic, document), and the machine order by
the prior alone, replayed with qrels as the assessor (issue 28, item 4)."""

import gzip
import importlib.util
import io
import json
import math

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from assessments.evaluation.sources import read_prior_file
from assessments.models import MachineLabel, MachineLabelSource, Topic
from assessments.ordering import OrderError
from assessments.services.simulation import simulate, topic_pools
from retrieval.models import Passage
from tests import factories

POOLING = factories.DATA / "pooling"
RUNS = sorted(str(p) for p in POOLING.glob("r*.run"))
ROOT = factories.DATA.parent


def simulate_judging(*args):
    out = io.StringIO()
    call_command("simulate_judging", *map(str, args), "--no-progress", stdout=out)
    return out.getvalue()


def write_prior(path, scores):
    """A run-format prior: {(topic, doc): score} as `topic Q0 doc rank score prior` lines."""
    lines = [f"{t} Q0 {d} {rank} {s} prior" for rank, ((t, d), s) in enumerate(scores.items(), start=1)]
    path.write_text("\n".join(lines) + "\n")
    return path


# The pools of data/pooling at depth 10 (see test_simulate_judging): topic 1 doc1_1..3 (doc1_2 relevant), topic 2
# doc2_1, doc2_3, doc2_2 (doc2_1 and doc2_2 relevant), topic 3 six documents, none relevant.
PERFECT = {("1", "doc1_2"): 0.9, ("1", "doc1_1"): 0.2, ("1", "doc1_3"): 0.1,
           ("2", "doc2_2"): 0.8, ("2", "doc2_1"): 0.7, ("2", "doc2_3"): 0.1}


def test_a_prior_file_is_read_per_topic_and_document_plain_or_gzipped(tmp_path):
    plain = write_prior(tmp_path / "prior.run", PERFECT)
    packed = tmp_path / "prior.run.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))

    assert read_prior_file(plain) == {"1": {"doc1_2": 0.9, "doc1_1": 0.2, "doc1_3": 0.1},
                                      "2": {"doc2_2": 0.8, "doc2_1": 0.7, "doc2_3": 0.1}}
    assert read_prior_file(packed) == read_prior_file(plain)
    figures = [json.loads(simulate_judging("--qrels", POOLING / "qrel1.txt", "--runs", *RUNS, "--depth", "10",
                                           "--prior", path, "--format", "json")) for path in (plain, packed)]
    assert figures[0] == figures[1]


def test_a_prior_puts_the_relevant_first_and_machine_is_replayed_with_it(tmp_path):
    prior = write_prior(tmp_path / "prior.run", PERFECT)

    result = json.loads(simulate_judging("--qrels", POOLING / "qrel1.txt", "--runs", *RUNS, "--depth", "10",
                                         "--prior", prior, "--format", "json"))

    assert list(result["orders"]) == ["depth", "mtf", "maxmean", "active", "hedge", "active-deep", "machine"]
    # Without a prior every order needs 5 for 90% (test_simulate_judging); with it, the relevant come first: 1 + 2.
    assert result["orders"]["machine"]["judgements_to_recall"]["0.9"] == 3
    assert result["orders"]["active"]["judgements_to_recall"]["0.9"] == 3
    assert result["orders"]["depth"]["judgements_to_recall"]["0.9"] == 5
    # Topic 3 has no prior score: it falls back, and the output says so.
    assert result["prior"] == {"topics": 2, "fallback": ["3"], "unscored": 0}
    assert any("no prior score for any candidate of 1 topic(s) (3)" in note for note in result["notes"])
    text = simulate_judging("--qrels", POOLING / "qrel1.txt", "--runs", *RUNS, "--depth", "10", "--prior", prior)
    assert "Prior: scores for 2 of 3 topics" in text and "Note: no prior score for any candidate" in text


def test_a_bad_prior_file_is_refused_naming_the_file_and_line(tmp_path):
    bad = write_prior(tmp_path / "bad.run", PERFECT)
    with open(bad, "a") as handle:
        handle.write("3 Q0 doc3_1 7 high prior\n")
    with pytest.raises(CommandError) as excinfo:
        simulate_judging("--qrels", POOLING / "qrel1.txt", "--runs", *RUNS, "--prior", bad)
    assert f"{bad}:7: score:" in str(excinfo.value)

    empty = tmp_path / "empty.run"
    empty.write_text("")
    with pytest.raises(CommandError, match="empty.run: the file is empty"):
        simulate_judging("--qrels", POOLING / "qrel1.txt", "--runs", *RUNS, "--prior", empty)


def test_the_machine_order_needs_a_prior(db):
    with pytest.raises(CommandError, match="--orders: machine judges by a prior score: give --prior"):
        simulate_judging("--qrels", POOLING / "qrel1.txt", "--runs", *RUNS, "--orders", "machine")
    with pytest.raises(OrderError, match="needs a prior"):
        simulate({"1": {}}, {"r": {"1": ["a"]}}, orders=["machine"])
    with pytest.raises(CommandError, match="--prior: 'nope' is neither a file nor a stored machine label source"):
        simulate_judging("--qrels", POOLING / "qrel1.txt", "--runs", *RUNS, "--prior", "nope")


@pytest.mark.django_db
def test_a_stored_source_is_a_prior_by_id_or_name_without_the_pairs_it_was_trained_on(tmp_path):
    call_command("import_qrels", str(POOLING / "qrel1.txt"), "--collection", "pooling", "--name", "pooling-qrels",
                 "--create-missing", "--no-progress", stdout=io.StringIO())
    topics = {t.external_id: t for t in Topic.objects.all()}
    passages = {p.external_id: p for p in Passage.objects.all()}
    source = MachineLabelSource.objects.create(name="annotator", kind="classifier", model="features", grades=[0, 1],
                                               status="ready", collection=topics["1"].collection)
    for (t, d), score in PERFECT.items():
        MachineLabel.objects.create(source=source, topic=topics[t], passage=passages[d], grade=int(score > 0.5),
                                    score=score)
    # A pair the source was trained on: its score learnt the human label, so it must not reach the prior.
    MachineLabel.objects.create(source=source, topic=topics["3"], passage=passages["doc3_1"], grade=1, score=0.99,
                                in_training=True)

    by_id = json.loads(simulate_judging("--qrels", "pooling-qrels", "--runs", *RUNS, "--depth", "10",
                                        "--prior", source.pk, "--format", "json"))
    by_name = json.loads(simulate_judging("--qrels", "pooling-qrels", "--runs", *RUNS, "--depth", "10",
                                          "--prior", "annotator", "--format", "json"))
    from_file = json.loads(simulate_judging("--qrels", "pooling-qrels", "--runs", *RUNS, "--depth", "10",
                                            "--prior", write_prior(tmp_path / "p.run", PERFECT), "--format", "json"))

    assert by_id["orders"] == by_name["orders"] == from_file["orders"]
    assert by_id["prior"]["fallback"] == ["3"]  # the trained-on pair is left out: topic 3 has no score
    assert any("1 scores of source" in note and "left out" in note for note in by_id["notes"])

    MachineLabelSource.objects.create(name="annotator", kind="classifier", model="features", grades=[0, 1],
                                      status="ready", collection=source.collection)
    with pytest.raises(CommandError, match="several machine label sources are named 'annotator': give its id"):
        simulate_judging("--qrels", "pooling-qrels", "--runs", *RUNS, "--prior", "annotator")


def synthetic(topics=6, runs=5, universe=400, depth=40, seed=3):
    """qrels and runs of `topics` topics: each run ranks a hidden relevance plus noise (about 8% relevant)."""
    rng = np.random.default_rng(seed)
    qrels, rankings = {}, {f"run{r}": {} for r in range(runs)}
    for t in range(1, topics + 1):
        hidden = rng.normal(size=universe)
        qrels[str(t)] = {f"d{i}": int(h > 1.4) for i, h in enumerate(hidden)}
        for r in range(runs):
            order = np.argsort(-(hidden + 1.5 * rng.normal(size=universe)))
            rankings[f"run{r}"][str(t)] = [f"d{i}" for i in order[:depth]]
    return qrels, rankings


def minimal(result, p):
    """The fewest judgements that can reach p: ⌈p × R⌉ per topic, every one relevant."""
    return sum(math.ceil(p * sum(result_grades) - 1e-9) for result_grades in result)


def test_a_perfect_prior_needs_about_the_fewest_judgements_possible():
    qrels, runs = synthetic()
    prior = {t: {d: float(g) + 0.01 * (hash(d) % 7) for d, g in grades.items()} for t, grades in qrels.items()}
    pools = topic_pools(qrels, runs, 40)
    relevant = [[qrels[t].get(k, 0) for k in pool.keys] for t, pool in pools.items()]

    result = simulate(qrels, runs, depth=40, orders=["depth", "active", "machine"], prior=prior, budgets=())

    for p in (0.5, 0.9, 0.95):
        fewest = minimal(relevant, p)
        assert result.orders["machine"].judgements_to_recall[p] == fewest
        assert result.orders["active"].judgements_to_recall[p] <= 1.1 * fewest
        assert result.orders["depth"].judgements_to_recall[p] > 1.5 * fewest


def test_an_adversarial_prior_still_finds_every_relevant_document():
    qrels, runs = synthetic()
    prior = {t: {d: 1.0 - g for d, g in grades.items()} for t, grades in qrels.items()}  # the relevant last

    result = simulate(qrels, runs, depth=40, orders=["active", "machine"], prior=prior, budgets=())
    pools = topic_pools(qrels, runs, 40)

    for name in ("active", "machine"):
        assert result.orders[name].curve[-1] == result.relevant  # everything is found in the end
        for topic, sequence in result.orders[name].sequences.items():
            assert sorted(sequence) == list(range(len(pools[topic])))
    # Machine judges every non-relevant candidate first; active learns that the prior points the wrong way.
    worst = result.orders["machine"].judgements_to_recall[0.9]
    assert worst == result.candidates - result.relevant + sum(
        math.ceil(0.9 * sum(qrels[t].get(k, 0) for k in pool.keys) - 1e-9) for t, pool in pools.items())
    assert result.orders["active"].judgements_to_recall[0.9] < 0.6 * worst


def test_the_pools_carry_the_prior_as_given_and_never_a_grade_of_the_qrels():
    qrels, runs = synthetic(topics=2)
    scored = {t: dict(list(qrels[t].items())[::2]) for t in qrels}  # half the documents have a score
    prior = {t: {d: 0.5 for d in docs} for t, docs in scored.items()}

    for topic, pool in topic_pools(qrels, runs, 40, prior=prior).items():
        for key, value in zip(pool.keys, pool.prior):
            assert value == 0.5 if key in prior[topic] else math.isnan(value)


def load_benchmark():
    spec = importlib.util.spec_from_file_location("bandit_orders", ROOT / "benchmarks" / "bandit_orders.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Sealed(dict):
    """Qrels of a held-out topic: reading a grade fails the test."""

    def get(self, *args):
        raise AssertionError("the held-out topic's qrels were read")

    __getitem__ = items = keys = values = __iter__ = get


def test_the_benchmarks_cross_topic_prior_never_reads_the_held_out_topics_qrels():
    qrels, runs = synthetic()
    held_out = {t: (grades if int(t) % 2 else Sealed()) for t, grades in qrels.items()}

    prior = load_benchmark().cross_topic_prior(held_out, runs, 40, ["1", "3", "5"], ["2", "4", "6"])

    assert list(prior) == ["2", "4", "6"]
    pools = topic_pools(qrels, runs, 40)
    for topic in prior:
        assert set(prior[topic]) == set(pools[topic].keys)
        scores = np.array([prior[topic][k] for k in pools[topic].keys])
        relevant = np.array([qrels[topic].get(k, 0) for k in pools[topic].keys], dtype=bool)
        assert 0 <= scores.min() and scores.max() <= 1
        assert scores[relevant].mean() > scores[~relevant].mean()  # the rank features transfer across topics


def test_the_benchmarks_table_sets_active_with_the_prior_beside_active_without_it(tmp_path):
    qrels, runs = synthetic()
    benchmark = load_benchmark()
    written = tmp_path / "prior.run"

    lines = benchmark.prior_table(qrels, runs, 40, "synthetic", written)

    assert "prior trained on 3 odd topics" in lines[0] and "measured on 3 even topics" in lines[0]
    assert [line.split()[0] for line in lines[2:7]] == list(benchmark.PRIOR_ORDERS)
    assert lines[7].startswith("   active with the prior / without at 90%: ")
    assert set(read_prior_file(written)) == {"2", "4", "6"}  # the file simulate_judging --prior replays
