"""Judging simulated with qrels as the assessor: how fast each judging order finds the relevant documents.

Pure functions and numpy, no database (manage.py simulate_judging reads the files or stored runs and
calls simulate()). Each topic of the qrels that some run retrieved gets its depth-k pool
(ordering.TopicPool); each order (assessments.ordering, the code the live queue uses)
judges it, the qrels answering (a candidate the qrels do not grade counts as not relevant).

- judgements_to_recall[p]: per topic the judgements needed to find ⌈p × R⌉ of the R relevant
  documents (grade ≥ min_rel) of its pool, summed over the topics (a topic with none needs 0).
- tau_at_budget[b]: each topic judged to ⌈b × its candidates⌉ in the order, the runs are scored
  (AP, nDCG@10; unjudged = not relevant; every topic counts, 0 where a run has nothing) and
  ranked; Kendall's τ-b against the ranking with the whole pool judged.
- curve: relevant found, summed over topics, after n judgements a topic (n = 0 … the largest pool).

A prior (optional: {topic: {doc: score}}, e.g. a machine annotator's probabilities; never read from the qrels) seeds
the orders that take one, as the live queue's do: `active` starts from the prior's ranking and has its log-odds as a
feature; `machine` judges by the prior alone. A topic whose candidates have no prior score at all falls back (active
from fusion, machine in depth order) and is named in the notes.

Once an order has found every relevant candidate of a topic and passed the largest budget, the rest
of that topic is taken in depth order: nothing measured can change any more, and the simulation
stays fast (a TREC-scale input, 100 topics × 20 runs at depth 100, in well under a minute).
"""

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from assessments.ordering import ORDERS, OrderError, TopicPool, make_order, single_threaded

RECALLS = (0.5, 0.8, 0.9, 0.95)
BUDGETS = (0.1, 0.2, 0.3, 0.5)
TAU_MEASURES = ("AP", "nDCG@10")


def no_progress(iterable=None, **kwargs):
    return iterable


@dataclass
class OrderResult:
    """What one order achieved over every topic."""

    name: str
    judgements_to_recall: dict  # {p: judgements}
    tau_at_budget: dict  # {measure: {b: τ}}
    curve: np.ndarray  # relevant found (all topics) after n judgements a topic, n = 0 … max pool size
    seconds: float
    sequences: dict = field(repr=False, default_factory=dict)  # {topic: [candidate index…]} in judging order


@dataclass
class Simulation:
    topics: int
    candidates: int
    relevant: int
    runs: list
    depth: int
    min_rel: int
    orders: dict  # {name: OrderResult}
    scores: dict = field(default_factory=dict)  # {measure: {run: score with the whole pool judged}}
    prior: dict | None = None  # with a prior: {"topics": with a score, "fallback": [topics without], "unscored": n}
    notes: list = field(default_factory=list)  # what the reader should know (a topic without prior scores…)

    def as_json(self, tau_measure: str = "AP") -> dict:
        """The shape `simulate_judging --format json` prints."""
        shape = {
            "pool": {"topics": self.topics, "candidates": self.candidates, "relevant": self.relevant},
            "orders": {
                name: {
                    "judgements_to_recall": {str(p): int(n) for p, n in result.judgements_to_recall.items()},
                    "tau_at_budget": {str(b): _round(t) for b, t in result.tau_at_budget[tau_measure].items()},
                }
                for name, result in self.orders.items()
            },
        }
        if self.prior is not None:
            shape["prior"] = self.prior
        if self.notes:
            shape["notes"] = list(self.notes)
        return shape


def _round(value):
    return None if value is None or math.isnan(value) else round(float(value), 4)


def load_features(path) -> tuple[dict, dict]:
    """({doc: vector}, {topic: seed vector}) from a .npz holding `ids` and `vectors` (one row per id), and
    optionally `topics` and `topic_vectors` (each topic's text encoded like the documents)."""
    with np.load(path, allow_pickle=False) as data:
        missing = [name for name in ("ids", "vectors") if name not in data.files]
        if missing:
            raise ValueError(f"{path}: no array {', '.join(missing)} (expected ids, vectors[, topics, topic_vectors])")
        ids, vectors = [str(x) for x in data["ids"]], np.asarray(data["vectors"], dtype=np.float64)
        if vectors.ndim != 2 or len(vectors) != len(ids):
            raise ValueError(f"{path}: vectors must have one row per id ({len(ids)}), not shape {vectors.shape}")
        seeds = {}
        if "topics" in data.files:
            topics = [str(x) for x in data["topics"]]
            topic_vectors = np.asarray(data["topic_vectors"], dtype=np.float64)
            if topic_vectors.shape != (len(topics), vectors.shape[1]):
                raise ValueError(f"{path}: topic_vectors must be {len(topics)} × {vectors.shape[1]}")
            seeds = dict(zip(topics, topic_vectors))
    return dict(zip(ids, vectors)), seeds


def topic_pools(qrels: Mapping, runs: Mapping, depth: int, features: Mapping | None = None,
                seeds: Mapping | None = None, prior: Mapping | None = None) -> dict:
    """{topic: TopicPool} for the qrels' topics that some run retrieved, in the qrels' topic order.

    prior: {topic: {doc: score}}; a pool none of whose candidates has a score gets none (pool.prior is None).
    """
    pools = {}
    for topic in qrels:
        rankings = {name: ranking.get(topic, []) for name, ranking in runs.items()}
        if any(rankings.values()):
            pool = TopicPool.from_rankings(
                rankings, depth, features=features, seed=None if seeds is None else seeds.get(topic),
                prior=None if prior is None else prior.get(topic, {}),
            )
            if pool.prior is not None and np.isnan(pool.prior).all():
                pool.prior = None
            pools[topic] = pool
    return pools


def prior_notes(pools: Mapping) -> tuple[dict, list]:
    """What a prior covered: ({"topics", "fallback", "unscored"}, notes) for pools built with one (topic_pools)."""
    fallback = [topic for topic, pool in pools.items() if pool.prior is None]
    unscored = sum(int(np.isnan(pool.prior).sum()) for pool in pools.values() if pool.prior is not None)
    notes = []
    if fallback:
        shown = ", ".join(map(str, fallback[:10])) + (f" and {len(fallback) - 10} more" if len(fallback) > 10 else "")
        notes.append(f"no prior score for any candidate of {len(fallback)} topic(s) ({shown}): there active starts "
                     "from fusion and machine follows depth order")
    if unscored:
        notes.append(f"{unscored:,} candidates of topics with a prior have no score: active gives them the median "
                     "score, machine judges them after the scored ones, in depth order")
    return {"topics": len(pools) - len(fallback), "fallback": fallback, "unscored": unscored}, notes


def judge_order(pool: TopicPool, grades: Mapping, order: str, min_rel: int, until: int) -> list[int]:
    """Every candidate of the pool in the order's judging sequence, with `grades` ({doc: grade}) answering.

    After `until` judgements and once every relevant candidate is found, the rest follow in depth order.
    """
    relevant_left = sum(1 for key in pool.keys if grades.get(key, 0) >= min_rel)
    if order == "machine" and pool.prior is None:  # no score at all: the machine order's rule for unscored ones
        order = "depth"
    judge = make_order(order, pool, min_rel)
    sequence = []
    while True:
        if relevant_left == 0 and len(sequence) >= until:
            sequence.extend(i for i in range(len(pool)) if not judge.judged[i])
            return sequence
        i = judge.next()
        if i is None:
            return sequence
        grade = grades.get(pool.keys[i], 0)
        judge.record(i, grade)
        sequence.append(i)
        relevant_left -= grade >= min_rel


def kendall_tau(x, y) -> float:
    """Kendall's τ-b of two score vectors (NaN when either is constant)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    i, j = np.triu_indices(len(x), k=1)
    dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    concordant_minus_discordant = float((dx * dy).sum())
    nx, ny = float((dx != 0).sum()), float((dy != 0).sum())
    return concordant_minus_discordant / math.sqrt(nx * ny) if nx and ny else float("nan")


class RunScorer:
    """Scores every run (AP, nDCG@10, as assessments.evaluation.measures does) under partial judgements of the pools."""

    def __init__(self, pools: dict, qrels: Mapping, runs: Mapping, min_rel: int):
        self.topics = list(pools)
        self.runs = list(runs)
        self.min_rel = min_rel
        self.grades = {}  # topic: grade of each pool candidate (the qrels' grade, 0 when ungraded)
        self.ranked = {}  # (topic, run): (candidate index of each ranked document or -1, its grade)
        for topic, pool in pools.items():
            judged = qrels.get(topic, {})
            self.grades[topic] = np.array([judged.get(key, 0) for key in pool.keys], dtype=np.float64)
            for run in self.runs:
                ranking = runs[run].get(topic, [])
                at = np.array([pool.index.get(doc, -1) for doc in ranking], dtype=np.int64)
                self.ranked[topic, run] = at

    def scores(self, judged: dict) -> dict:
        """{measure: [score of each run]} when `judged[topic]` (bool per candidate) are the judgements made."""
        ap = np.zeros(len(self.runs))
        ndcg = np.zeros(len(self.runs))
        for topic in self.topics:
            grades = np.where(judged[topic], self.grades[topic], 0.0)
            relevant = grades >= self.min_rel
            num_rel = int(relevant.sum())
            positive = np.sort(grades[grades > 0])[::-1][:10]
            idcg = float((positive / np.log2(np.arange(2, len(positive) + 2))).sum())
            for r, run in enumerate(self.runs):
                at = self.ranked[topic, run]
                if not len(at):
                    continue
                inside = at >= 0
                got = np.where(inside, grades[np.where(inside, at, 0)], 0.0)
                if num_rel:
                    hits = got >= self.min_rel
                    if hits.any():
                        ranks = np.flatnonzero(hits) + 1
                        ap[r] += float((np.arange(1, len(ranks) + 1) / ranks).sum()) / num_rel
                if idcg:
                    top = np.maximum(got[:10], 0.0)
                    ndcg[r] += float((top / np.log2(np.arange(2, len(top) + 2))).sum()) / idcg
        n = max(len(self.topics), 1)
        return {"AP": ap / n, "nDCG@10": ndcg / n}


def simulate(qrels: Mapping, runs: Mapping, *, depth: int = 100, orders=ORDERS, min_rel: int = 1,
             features: Mapping | None = None, seeds: Mapping | None = None, prior: Mapping | None = None,
             recalls=RECALLS, budgets=BUDGETS, progress: Callable = no_progress) -> Simulation:
    """Replay every order over the depth-k pools of the runs with the qrels as the assessor.

    qrels: {topic: {doc: grade}}; runs: {name: {topic: [doc…] best first}}; features (optional):
    {doc: vector} for the active order (every pooled document needs one), and seeds {topic: vector}
    (the topic's text encoded like the documents, CAL's seed); prior (optional): {topic: {doc: score}} for
    `active` and `machine` (which needs it). The prior is taken as given: it must not come from these qrels.
    """
    with single_threaded():
        return _simulate(qrels, runs, depth, orders, min_rel, features, seeds, prior, recalls, budgets, progress)


def _simulate(qrels, runs, depth, orders, min_rel, features, seeds, prior, recalls, budgets, progress) -> Simulation:
    if "machine" in orders and prior is None:
        raise OrderError("the machine order needs a prior (a score per topic and document)")
    pools = topic_pools(qrels, runs, depth, features, seeds, prior)
    covered, notes = prior_notes(pools) if prior is not None else (None, [])
    grades = {topic: qrels.get(topic, {}) for topic in pools}
    relevant = {t: sum(1 for key in pool.keys if grades[t].get(key, 0) >= min_rel) for t, pool in pools.items()}
    largest = max((len(pool) for pool in pools.values()), default=0)
    scorer = RunScorer(pools, qrels, runs, min_rel)
    everything = scorer.scores({topic: np.ones(len(pool), dtype=bool) for topic, pool in pools.items()})
    results = {}
    for name in orders:
        started = time.perf_counter()
        sequences, curve = {}, np.zeros(largest + 1)
        to_recall = dict.fromkeys(recalls, 0)
        for topic in progress(list(pools), desc=f"order {name}", unit="topic"):
            pool = pools[topic]
            until = math.ceil(max(budgets, default=0) * len(pool))
            sequence = judge_order(pool, grades[topic], name, min_rel, until)
            sequences[topic] = sequence
            found = np.cumsum([grades[topic].get(pool.keys[i], 0) >= min_rel for i in sequence])
            curve[1 : len(found) + 1] += found
            curve[len(found) + 1 :] += relevant[topic]
            for p in recalls:
                need = math.ceil(p * relevant[topic] - 1e-9)
                if need:
                    to_recall[p] += int(np.searchsorted(found, need)) + 1
        taus = {measure: {} for measure in TAU_MEASURES}
        for b in budgets:
            judged = {}
            for topic, pool in pools.items():
                mask = np.zeros(len(pool), dtype=bool)
                mask[sequences[topic][: math.ceil(b * len(pool) - 1e-9)]] = True
                judged[topic] = mask
            at_budget = scorer.scores(judged)
            for measure in TAU_MEASURES:
                taus[measure][b] = kendall_tau(at_budget[measure], everything[measure])
        results[name] = OrderResult(name, to_recall, taus, curve, time.perf_counter() - started, sequences)
    return Simulation(
        topics=len(pools), candidates=sum(len(p) for p in pools.values()), relevant=sum(relevant.values()),
        runs=list(runs), depth=depth, min_rel=min_rel, orders=results,
        scores={m: dict(zip(scorer.runs, everything[m])) for m in TAU_MEASURES}, prior=covered, notes=notes,
    )


# --- judging under a budget with a machine judge (issue 41) ---------------------------------------------------

BUDGET_ORDERS = ("hybrid", "lara", "machine", "depth")  # what --budget replays: people and a machine judge together
BUDGET_SHARES = (0.05, 0.1)


@dataclass
class BudgetResult:
    """One order at one budget: τ against the whole pool judged, its final labels and (hybrid, lara) intervals."""

    order: str
    budget: float
    judged: int  # human labels bought
    tau: dict  # {measure: τ}
    labels: np.ndarray = field(repr=False)  # 0/1 per candidate (flat order)
    grades: np.ndarray = field(repr=False)  # the qrels' grade where people judged, the fill's 0/1 elsewhere
    intervals: object = None  # hybrid.Intervals
    coverage: dict = field(default_factory=dict)  # {measure: runs whose interval holds the whole-pool score}


@dataclass
class BudgetSimulation:
    flat: object = field(repr=False)
    relevant: int
    min_rel: int
    depth: int
    whole: dict  # {measure: score of each run with the whole pool judged}
    results: list  # [BudgetResult]
    kappa: float  # the machine's Cohen's κ with the qrels on the pool (relevant at p ≥ 0.5 or grade ≥ min_rel)
    machine_covered: int  # candidates with a machine score

    def get(self, order, budget) -> BudgetResult:
        return next(r for r in self.results if r.order == order and r.budget == budget)

    def as_json(self) -> dict:
        return {
            "pool": {"topics": len(self.flat.topics), "candidates": len(self.flat), "relevant": self.relevant},
            "machine": {"kappa": _round(self.kappa), "scored": self.machine_covered},
            "budget": {
                f"{r.order}@{r.budget:g}": {
                    "judged": r.judged, "tau": {m: _round(t) for m, t in r.tau.items()},
                    **({"coverage": r.coverage} if r.coverage else {}),
                }
                for r in self.results
            },
        }


def cohen_kappa(a, b) -> float:
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    if not len(a):
        return float("nan")
    observed = float((a == b).mean())
    expected = a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean())
    return (observed - expected) / (1 - expected) if expected < 1 else float("nan")


def simulate_budget(qrels: Mapping, runs: Mapping, machine: Mapping, *, depth: int = 100,
                    budgets=BUDGET_SHARES, orders=BUDGET_ORDERS, min_rel: int = 1, seed: int = 0,
                    draws: int = 300) -> BudgetSimulation:
    """Replay judging under a budget (a share of the whole pool, all topics together) with the qrels as the
    assessor and `machine` ({topic: {doc: score}}, a probability or a grade) as the machine judge: `hybrid` and
    `lara` (assessments.services.hybrid), `machine` (its labels alone) and `depth` (each topic's pool judged to the
    share in depth order, the rest not relevant). τ of the runs by MAP and nDCG@10 against the whole pool judged."""
    from assessments.services import hybrid

    unknown = [o for o in orders if o not in BUDGET_ORDERS]
    if unknown:
        raise OrderError(f"unknown budget order {unknown[0]!r}; use {', '.join(BUDGET_ORDERS)}")
    pools = topic_pools(qrels, runs, depth)
    flat = hybrid.flatten(pools, runs, machine)
    grades = np.array([qrels.get(t, {}).get(d, 0) for t, d in flat.keys], dtype=np.float64)
    truth = (grades >= min_rel).astype(np.int8)

    def assessor(indices):
        return grades[indices]

    whole = hybrid.run_scores(flat, truth)
    machine_own = hybrid.machine_labels(flat, min_rel)
    results = []
    for budget in budgets:
        for order in orders:
            interval, coverage, bought = None, {}, 0
            if order == "machine":
                labels = machine_own
                final = labels.astype(np.float64)
            elif order == "depth":
                labels = hybrid.depth_labels(flat, assessor, budget, min_rel)
                starts = flat.starts
                bought = sum(math.ceil(budget * (starts[t + 1] - starts[t]) - 1e-9) for t in range(len(flat.topics)))
                final = np.where(labels > 0, grades, 0.0)
            else:
                judged = hybrid.judge(flat, assessor, budget, order, min_rel=min_rel, seed=seed)
                labels = hybrid.fill(flat, judged)
                final = labels.astype(np.float64)
                final[judged.order] = judged.grades
                bought = len(judged.order)
                interval = hybrid.intervals(flat, judged, draws=draws, seed=seed)
                coverage = {m: int(((interval.low[m] <= whole[m]) & (whole[m] <= interval.high[m])).sum())
                            for m in TAU_MEASURES}
            scores = hybrid.run_scores(flat, labels)
            tau = {m: kendall_tau(scores[m], whole[m]) for m in TAU_MEASURES}
            results.append(BudgetResult(order, budget, bought, tau, labels, final, interval, coverage))
    return BudgetSimulation(flat, int(truth.sum()), min_rel, depth, whole, results,
                            cohen_kappa(machine_own, truth), int((~np.isnan(flat.machine)).sum()))


def write_budget_qrels(result: BudgetResult, flat, out) -> int:
    """Write an order's final labels as TREC qrels (`topic 0 doc grade`, every pooled candidate): the assessor's grade
    where people judged, the fill's 0/1 elsewhere. Returns the lines written."""
    with open(out, "w", encoding="utf-8") as handle:
        for (topic, doc), grade in zip(flat.keys, result.grades):
            handle.write(f"{topic} 0 {doc} {int(grade)}\n")
    return len(flat.keys)


def write_budget_intervals(result: BudgetResult, out, measure: str = "AP") -> int:
    """Write each run's estimate and 95% interval (`run estimate low high`, tab-separated, a header line)."""
    with open(out, "w", encoding="utf-8") as handle:
        handle.write("run\testimate\tlow\thigh\n")
        for run, estimate, low, high in result.intervals.rows(measure):
            handle.write(f"{run}\t{estimate:.4f}\t{low:.4f}\t{high:.4f}\n")
    return len(result.intervals.runs)
