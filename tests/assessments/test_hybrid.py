"""assessments.services.hybrid: calibration, LARA, the hybrid selection, the fill and the intervals (issue 41)."""

import numpy as np
import pytest

from assessments.services import hybrid
from assessments.services.simulation import RunScorer, topic_pools


def synthetic(seed=0, topics=12, runs=6, docs=120, depth=30, calibrated=False):
    """(qrels, runs, machine, flat): runs of varied quality over hidden relevance; the machine's p is the true
    probability of relevance when `calibrated`, else a noisy over-confident score."""
    rng = np.random.default_rng(seed)
    qrels, rankings, machine = {}, {f"r{r}": {} for r in range(runs)}, {}
    quality = np.linspace(0.5, 2.0, runs)
    for t in range(topics):
        topic = f"t{t}"
        z = rng.normal(-2.0, 1.5, docs)
        p = 1 / (1 + np.exp(-z))
        rel = rng.random(docs) < p
        ids = [f"{topic}-d{i}" for i in range(docs)]
        qrels[topic] = {ids[i]: int(rel[i]) for i in range(docs)}
        for r in range(runs):
            score = quality[r] * rel + rng.normal(0, 1, docs)
            rankings[f"r{r}"][topic] = [ids[i] for i in np.argsort(-score)[:depth]]
        shown = p if calibrated else 1 / (1 + np.exp(-(2 * z + 1 + rng.normal(0, 1, docs))))
        machine[topic] = dict(zip(ids, shown))
    pools = topic_pools(qrels, rankings, depth)
    return qrels, rankings, machine, hybrid.flatten(pools, rankings, machine)


def assessor_of(flat, qrels):
    grades = np.array([qrels[t].get(d, 0) for t, d in flat.keys], dtype=float)
    return grades, (lambda indices: grades[indices])


def test_calibration_recovers_a_known_logistic_mapping():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20_000, 2))
    y = rng.random(20_000) < 1 / (1 + np.exp(-(-1.0 + 2.0 * X[:, 0] - 0.5 * X[:, 1])))
    w = hybrid.fit_logistic(X, y, ridge=1e-6)
    assert w == pytest.approx([-1.0, 2.0, -0.5], abs=0.1)


def test_the_newton_fit_does_not_diverge_on_separable_labels():
    X = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    w = hybrid.fit_logistic(X, [0, 0, 1, 1])
    assert np.isfinite(w).all() and w[1] > 0
    assert hybrid.fit_logistic(X, [0, 0, 1, 1], ridge=1.0)[1] < 10


def test_a_topic_gets_its_own_intercept_only_with_enough_labels():
    rng = np.random.default_rng(2)
    topic_of = np.repeat([0, 1, 2], [400, 400, hybrid.TOPIC_MIN_LABELS - 1])
    X = rng.normal(size=(len(topic_of), 1))
    shift = np.array([1.5, -1.5, 3.0])[topic_of]
    y = rng.random(len(topic_of)) < 1 / (1 + np.exp(-(X[:, 0] + shift)))
    calibration = hybrid.calibrate(X, topic_of, np.arange(len(topic_of)), y, 3)
    assert calibration.offsets[0] > 0.8 and calibration.offsets[1] < -0.8
    assert calibration.offsets[2] == 0
    assert calibration.spread[0] < calibration.spread[2]


@pytest.mark.parametrize("method", ["hybrid", "lara"])
@pytest.mark.parametrize("share", [0.05, 0.1, 0.37])
def test_the_budget_is_spent_exactly_once_per_candidate(method, share):
    qrels, _, _, flat = synthetic()
    _, assessor = assessor_of(flat, qrels)
    asked = []
    judged = hybrid.judge(flat, lambda i: (asked.extend(i.tolist()), assessor(i))[1], share, method)
    expected = int(np.floor(share * len(flat) + 0.5))
    assert len(judged.order) == expected == len(asked) == len(set(asked))
    assert judged.judged.sum() == expected


def test_a_share_outside_0_to_1_is_refused():
    _, _, _, flat = synthetic(topics=2)
    with pytest.raises(hybrid.HybridError, match="share"):
        hybrid.budget_of(flat, 1.5)
    with pytest.raises(hybrid.HybridError, match="method"):
        hybrid.judge(flat, lambda i: np.zeros(len(i)), 0.1, "oracle")


def test_lara_first_judges_the_candidates_the_machine_is_least_sure_of():
    qrels, _, _, flat = synthetic(seed=3)
    _, assessor = assessor_of(flat, qrels)
    judged = hybrid.judge(flat, assessor, 0.05, "lara", batches=1)
    _, p0 = hybrid.machine_scale(flat.machine)
    k = len(judged.order)
    distance = np.abs(p0 - 0.5)
    assert set(judged.order) == set(np.argsort(distance, kind="stable")[:k]) or \
        distance[judged.order].max() <= np.sort(distance)[k - 1] + 1e-12


def test_lara_then_judges_the_most_uncertain_under_the_calibration_refitted_on_the_first_labels():
    qrels, _, _, flat = synthetic(seed=4)
    grades, assessor = assessor_of(flat, qrels)
    judged = hybrid.judge(flat, assessor, 0.1, "lara", batches=2)
    half = len(judged.order) // 2
    first = judged.order[:half]
    X = hybrid._features(flat, "lara")
    calibration = hybrid.calibrate(X, flat.topic_of, first, grades[first] >= 1, len(flat.topics), per_topic=False)
    p = calibration.probabilities(X, flat.topic_of)
    distance = np.where(np.isin(np.arange(len(flat)), first), np.inf, np.abs(p - 0.5))
    second = judged.order[half:]
    assert distance[second].max() <= np.sort(distance)[len(second) - 1] + 1e-12


def test_the_fill_keeps_human_labels_and_gives_the_rest_their_calibrated_label():
    qrels, _, _, flat = synthetic(seed=5)
    grades, assessor = assessor_of(flat, qrels)
    judged = hybrid.judge(flat, assessor, 0.1, "hybrid")
    labels = hybrid.fill(flat, judged, "threshold")
    open_ = ~judged.judged
    assert (labels[open_] == (judged.probabilities[open_] >= 0.5)).all()
    assert (labels[judged.order] == (grades[judged.order] >= 1)).all()
    expected = hybrid.fill(flat, judged)  # the hybrid's own: each topic's expected number of relevant
    assert (expected[judged.order] == (grades[judged.order] >= 1)).all()
    for t in range(len(flat.topics)):
        rows = np.flatnonzero((flat.topic_of == t) & open_)
        assert expected[rows].sum() == int(np.floor(judged.probabilities[rows].sum() + 0.5))


def test_run_scores_match_the_simulators_scorer():
    qrels, runs, _, flat = synthetic(seed=6)
    grades, _ = assessor_of(flat, qrels)
    pools = topic_pools(qrels, runs, 30)
    expected = RunScorer(pools, qrels, runs, 1).scores({t: np.ones(len(p), dtype=bool) for t, p in pools.items()})
    got = hybrid.run_scores(flat, grades >= 1)
    assert got["AP"] == pytest.approx(expected["AP"], abs=1e-12)
    assert got["nDCG@10"] == pytest.approx(expected["nDCG@10"], abs=1e-12)  # binary grades: the same gains


def test_ap_gradients_match_finite_differences():
    _, _, _, flat = synthetic(seed=7, topics=3, runs=3, docs=40, depth=10)
    q = np.random.default_rng(0).uniform(0.05, 0.95, len(flat))
    gradient = hybrid.ap_gradients(flat, q)
    for i in (0, 5, len(flat) - 1):
        step = np.zeros(len(flat))
        step[i] = 1e-6
        up, down = hybrid.run_scores(flat, q + step)["AP"], hybrid.run_scores(flat, q - step)["AP"]
        # run_scores averages over topics; the gradient is per topic
        assert gradient[:, i] / len(flat.topics) == pytest.approx((up - down) / 2e-6, rel=1e-4, abs=1e-9)


def test_an_interval_widened_past_the_measures_range_ends_at_0_and_1():
    """Few labels, wide draws: widened 1.5x, MAP's and nDCG@10's intervals reached past 1 (and, on a page, below 0)."""
    qrels, _, _, flat = synthetic(seed=5, topics=3, docs=30, depth=10)
    grades, assessor = assessor_of(flat, qrels)
    iv = hybrid.intervals(flat, hybrid.judge(flat, assessor, 0.1, "hybrid", seed=0), draws=100, seed=0)
    for measure in ("AP", "nDCG@10"):
        assert (iv.low[measure] >= 0).all() and (iv.high[measure] <= 1).all()
        assert (iv.low[measure] <= iv.estimate[measure]).all() and (iv.estimate[measure] <= iv.high[measure]).all()
    assert max(iv.high["AP"].max(), iv.high["nDCG@10"].max()) == 1.0  # cut, not narrowed elsewhere


def test_the_hybrid_intervals_hold_the_whole_pool_map_at_about_the_nominal_rate():
    held, total, widths = 0, 0, []
    for seed in range(4):
        qrels, _, _, flat = synthetic(seed=10 + seed, topics=40, docs=200, calibrated=True)
        grades, assessor = assessor_of(flat, qrels)
        whole = hybrid.run_scores(flat, grades >= 1)["AP"]
        judged = hybrid.judge(flat, assessor, 0.1, "hybrid", seed=seed)
        iv = hybrid.intervals(flat, judged, draws=100, seed=seed)
        held += int(((iv.low["AP"] <= whole) & (whole <= iv.high["AP"])).sum())
        total += len(whole)
        widths.append(float((iv.high["AP"] - iv.low["AP"]).mean()))
        assert (iv.low["AP"] <= iv.estimate["AP"]).all() and (iv.estimate["AP"] <= iv.high["AP"]).all()
    assert held / total >= 0.9  # 95% intervals, widened: 24 of 24 when written
    assert max(widths) < 0.2  # an interval, not the whole range of MAP (0.12-0.15 when written, MAPs near 0.35)
