"""Hybrid judging under a budget: people judge a share of the pool, a calibrated machine judge labels the rest.

Pure numpy, no database (issue 41). Everything works on a `Flat` pool: every topic's depth-k candidates one after
another (each topic's in depth order), each run's ranking as candidate indices, and the machine's raw score of each
candidate. Two ways to spend a budget of human labels:

- `lara`: LARA (Takehi, Voorhees, Sakai and Soboroff, SIGIR 2025) as this module implements it: one logistic
  calibration of the machine's output (its log-odds, or its grade) fitted on every human label so far, refitted
  after each batch; people judge the candidates whose calibrated probability is nearest 0.5; at the budget every
  unjudged candidate is relevant where its calibrated probability is at least 0.5.
- `hybrid`: a share of the budget (RANDOM_SHARE) is a random sample, stratified by topic, judged first (it sets the
  calibration's level for the pool at large and gives the intervals their residuals); the rest goes in BATCHES to
  the candidates with the largest p(1 − p) × influence, p the calibrated probability and the influence the variance
  over runs of the candidate's gradient in each run's AP (`ap_gradients`: how far its label moves one run against
  another). The calibration is a logistic regression on the machine's output and the runs' evidence (share of runs
  that brought the candidate, its RRF, its best rank, and each run's log-rank value, so it learns which runs'
  documents are relevant more often), with a per-topic intercept (shrunk to the global one) where a topic has
  TOPIC_MIN_LABELS labels, then Platt-rescaled on the random sample alone. At the budget each topic's unjudged
  candidates are filled with calibrated labels: its ⌊Σp + ½⌋ most probable are relevant (the number it is expected
  to have left; thresholding at 0.5 leaves out most of the many unsure ones).

`plan` is the hybrid served live, one request at a time (assessments.services.hybrid_pool reads a stored pool and a
campaign's labels for it): from the human labels so far it gives the batch people should judge now, the random sample
first, the calibration refitted on every label, nothing once the budget (`parse_budget`: a share or a count) is spent.

`intervals` gives each run's MAP and nDCG@10 at the budget with a 95% interval: the unjudged candidates' labels are
drawn many times from their calibrated probabilities, with a per-topic offset (the calibration's posterior spread),
a per-stratum shift (the random sample's mean residual in that stratum of probability, with its standard error) and
the Platt rescaling refitted on a bootstrap of the random sample; the runs are scored on each draw, and the 2.5 and
97.5 percentiles about the mean, widened by WIDEN, are the interval.
"""

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

RANDOM_SHARE = 0.1  # of the hybrid's budget, a random sample judged first
BATCHES = 20  # the budget's selections come in this many batches (one refit before each)
SAMPLE_RIDGE = 1.0  # Platt scaling on the random sample: its penalty towards no change
SAMPLE_MIN = 20  # sampled labels needed before the sample recalibrates
RIDGE = 1.0  # L2 penalty of the calibration's weights (features standardised; intercept free)
TOPIC_MIN_LABELS = 10  # a topic gets its own intercept from this many human labels on
TOPIC_RIDGE = 4.0  # the per-topic intercept's L2 penalty (its shrinkage towards the global calibration)
SELECT = "influence"  # the hybrid's selection score: p(1 − p) × the candidate's influence on the runs' order
SELECTIONS = ("influence", "pairs", "weight", "uncertainty")
DRAWS = 300  # Monte Carlo draws for the intervals
STRATA = (0.0, 0.05, 0.15, 0.3, 0.5, 0.7, 1.0001)  # calibrated probability strata for the residual shifts
WIDEN = 1.5  # the intervals' half-widths are multiplied by this
Z = 1.959964


class HybridError(ValueError):
    """A budget, share or input the hybrid judging cannot use."""


@dataclass
class Flat:
    """Every topic's depth-k pool, one after another, with each run's ranking as candidate indices."""

    topics: list
    runs: list
    keys: list  # (topic, doc) of each candidate
    topic_of: np.ndarray  # topic index of each candidate
    ranks: np.ndarray  # candidates × runs: rank within the depth (from 1), 0 when the run did not bring it
    ranked: np.ndarray  # runs × topics × L: each run's ranking as candidate indices, len(keys) (a dummy) elsewhere
    machine: np.ndarray  # the machine's raw score of each candidate, NaN when it gave none
    index: dict = field(repr=False, default_factory=dict)

    def __len__(self):
        return len(self.keys)

    @property
    def starts(self) -> np.ndarray:
        return np.searchsorted(self.topic_of, np.arange(len(self.topics) + 1))


def flatten(pools: Mapping, runs: Mapping, machine: Mapping | None = None, max_rank: int = 1000) -> Flat:
    """A Flat of {topic: pool} (pools with `keys` in depth order and `ranks`, as ordering.TopicPool), the runs
    ({name: {topic: [doc…]}}, read to max_rank) and machine scores ({topic: {doc: score}})."""
    topics = list(pools)
    names = list(runs)
    keys, topic_of, rank_rows, scores = [], [], [], []
    for t, topic in enumerate(topics):
        pool = pools[topic]
        keys.extend((topic, key) for key in pool.keys)
        topic_of.extend([t] * len(pool.keys))
        rank_rows.append(np.asarray(pool.ranks, dtype=np.int32).reshape(len(pool.keys), len(names)))
        given = (machine or {}).get(topic, {})
        scores.extend(float(given.get(key, np.nan)) for key in pool.keys)
    n = len(keys)
    index = {key: i for i, key in enumerate(keys)}
    length = max((min(len(runs[r].get(topic, [])), max_rank) for r in names for topic in topics), default=1) or 1
    ranked = np.full((len(names), len(topics), length), n, dtype=np.int64)
    for r, name in enumerate(names):
        for t, topic in enumerate(topics):
            ranking = runs[name].get(topic, [])[:max_rank]
            ranked[r, t, : len(ranking)] = [index.get((topic, doc), n) for doc in ranking]
    return Flat(topics, names, keys, np.asarray(topic_of, dtype=np.int64),
                np.vstack(rank_rows) if rank_rows else np.zeros((0, len(names)), dtype=np.int32),
                ranked, np.asarray(scores, dtype=np.float64), index)


# --- scoring ------------------------------------------------------------------------------------------------


def run_scores(flat: Flat, labels) -> dict:
    """{"AP": mean AP of each run, "nDCG@10": mean binary nDCG@10} with `labels` (0/1 per candidate) as the truth;
    candidates outside the pool are not relevant, every topic counts (0 where it has no relevant candidate)."""
    y = np.append(np.asarray(labels, dtype=np.float64), 0.0)
    hits = y[flat.ranked]  # runs × topics × L
    relevant = np.bincount(flat.topic_of, weights=y[:-1], minlength=len(flat.topics))
    precision = np.cumsum(hits, axis=2) / np.arange(1, hits.shape[2] + 1)
    ap = (hits * precision).sum(axis=2) / np.maximum(relevant, 1)
    top = min(10, hits.shape[2])
    discount = 1.0 / np.log2(np.arange(2, top + 2))
    ideal = np.concatenate([[0.0], np.cumsum(discount)])[np.minimum(relevant, top).astype(int)]
    ndcg = (hits[:, :, :top] * discount).sum(axis=2) / np.where(ideal > 0, ideal, 1)
    return {"AP": ap.mean(axis=1), "nDCG@10": ndcg.mean(axis=1)}


def kendall_tau(x, y) -> float:
    """Kendall's τ-b of two score vectors (NaN when either is constant)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    i, j = np.triu_indices(len(x), k=1)
    dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    nx, ny = float((dx != 0).sum()), float((dy != 0).sum())
    return float((dx * dy).sum()) / math.sqrt(nx * ny) if nx and ny else float("nan")


# --- calibration --------------------------------------------------------------------------------------------


def machine_scale(scores) -> tuple[np.ndarray, np.ndarray]:
    """(feature, uncalibrated probability) of raw machine scores: probabilities (all in 0..1) give their log-odds,
    grades (anything else, e.g. UMBRELA's 0-3) the grade itself and grade / highest grade; a missing score the
    median's."""
    s = np.asarray(scores, dtype=np.float64)
    given = s[~np.isnan(s)]
    if not len(given):
        return np.zeros(len(s)), np.full(len(s), 0.5)
    s = np.where(np.isnan(s), np.median(given), s)
    if given.min() >= 0 and given.max() <= 1:
        p = np.clip(s, 0.005, 0.995)
        return np.log(p / (1 - p)), p
    top = max(given.max(), 1e-9)
    return s, np.clip(s / top, 0.0, 1.0)


def evidence(flat: Flat) -> np.ndarray:
    """The runs' evidence of each candidate: share of runs that brought it, log of its RRF (k = 60), log best rank, and
    each run's 1 − ln(rank) / ln(deepest + 1) (0 where the run did not bring it: the active order's rank features,
    so the calibration learns which runs' documents are relevant more often)."""
    ranks = flat.ranks.astype(np.float64)
    present = ranks > 0
    share = present.mean(axis=1) if ranks.shape[1] else np.zeros(len(ranks))
    rrf = np.where(present, 1.0 / (60.0 + ranks), 0.0).sum(axis=1)
    best = np.where(present, ranks, np.inf).min(axis=1) if ranks.shape[1] else np.ones(len(ranks))
    deepest = max(int(ranks.max()) if ranks.size else 1, 1)
    per_run = np.where(present, 1.0 - np.log(np.maximum(ranks, 1)) / math.log(deepest + 1), 0.0)
    return np.column_stack([share, np.log(rrf + 1e-6), np.log(np.where(np.isfinite(best), best, 1e4)), per_run])


def standardise(X) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def fit_logistic(X, y, ridge: float = RIDGE, iterations: int = 50) -> np.ndarray:
    """Weights (intercept first) of an L2-penalised logistic regression of y on X (the intercept not penalised),
    by Newton's method."""
    X1 = np.column_stack([np.ones(len(X)), X])
    y = np.asarray(y, dtype=np.float64)
    w = np.zeros(X1.shape[1])
    if len(y):
        mean = min(max(y.mean(), 1e-3), 1 - 1e-3)
        w[0] = math.log(mean / (1 - mean))
    penalty = np.full(X1.shape[1], ridge)
    penalty[0] = 1e-6
    def loss(weights):
        z = X1 @ weights
        return float((np.logaddexp(0.0, z) - y * z).sum() + 0.5 * (penalty * weights * weights).sum())

    current = loss(w)
    for _ in range(iterations):
        p = _sigmoid(X1 @ w)
        gradient = X1.T @ (p - y) + penalty * w
        hessian = (X1 * (p * (1 - p))[:, None]).T @ X1 + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        size = 1.0
        while size > 1e-6:  # halve the step until the loss goes down (Newton alone can overshoot)
            trial = w - size * step
            value = loss(trial)
            if value <= current:
                break
            size /= 2
        else:
            break
        w, current = trial, value
        if np.abs(size * step).max() < 1e-8:
            break
    return w


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-np.clip(z, -35, 35)))


@dataclass
class Calibration:
    """A fitted calibration: global weights, and a per-topic intercept offset with its posterior spread."""

    weights: np.ndarray
    offsets: np.ndarray  # per topic (0 where the topic has too few labels)
    spread: np.ndarray  # per topic: the offset's posterior standard deviation (the prior's where unfitted)

    platt: tuple = (0.0, 1.0)  # (a, b): σ(a + b·z) recalibrates the model's z on the random sample (hybrid)

    def raw_logits(self, X, topic_of) -> np.ndarray:
        """The model's logits before the sample's recalibration."""
        return self.weights[0] + X @ self.weights[1:] + self.offsets[topic_of]

    def logits(self, X, topic_of) -> np.ndarray:
        return self.platt[0] + self.platt[1] * self.raw_logits(X, topic_of)

    def probabilities(self, X, topic_of) -> np.ndarray:
        return _sigmoid(self.logits(X, topic_of))


def calibrate(X, topic_of, judged, y, topics: int, *, per_topic: bool = True, ridge: float = RIDGE,
              topic_min: int = TOPIC_MIN_LABELS, topic_ridge: float = TOPIC_RIDGE) -> Calibration:
    """Fit the calibration on the labelled candidates (`judged` indices, `y` their 0/1 labels): a global logistic
    regression on X, then, per_topic, an intercept offset for each topic with at least topic_min labels (Newton on
    the offset alone, penalised by topic_ridge, so a topic's few labels move it little)."""
    judged = np.asarray(judged, dtype=np.int64)
    y = np.asarray(y, dtype=np.float64)
    weights = fit_logistic(X[judged], y, ridge)
    offsets = np.zeros(topics)
    spread = np.full(topics, 1.0 / math.sqrt(topic_ridge))
    if per_topic and len(judged):
        base = weights[0] + X[judged] @ weights[1:]
        t = topic_of[judged]
        counts = np.bincount(t, minlength=topics)
        fitted = counts >= topic_min
        for _ in range(25):
            p = _sigmoid(base + offsets[t])
            gradient = np.bincount(t, weights=p - y, minlength=topics) + topic_ridge * offsets
            curvature = np.bincount(t, weights=p * (1 - p), minlength=topics) + topic_ridge
            step = np.where(fitted, gradient / curvature, 0.0)
            offsets -= step
            if np.abs(step).max() < 1e-8:
                break
        p = _sigmoid(base + offsets[t])
        curvature = np.bincount(t, weights=p * (1 - p), minlength=topics) + topic_ridge
        spread = np.where(fitted, 1.0 / np.sqrt(curvature), spread)
    return Calibration(weights, offsets, spread)


def recalibrate(logits, sample, y, strength: float = SAMPLE_RIDGE) -> tuple[float, float]:
    """(a, b) so that σ(a + b·logit) fits the random sample's labels: Platt scaling on the sample only, penalised
    towards (0, 1) by `strength`. The calibration learns from every label, most of them picked where the runs' order
    is decided; the sample alone says how often the rest of the pool is relevant."""
    u = np.asarray(logits, dtype=np.float64)[sample]
    y = np.asarray(y, dtype=np.float64)
    a, b = 0.0, 1.0
    for _ in range(50):
        p = _sigmoid(a + b * u)
        gradient = np.array([(p - y).sum() + strength * a, ((p - y) * u).sum() + strength * (b - 1)])
        v = p * (1 - p)
        hessian = np.array([[v.sum() + strength, (v * u).sum()], [(v * u).sum(), (v * u * u).sum() + strength]])
        step = np.linalg.solve(hessian, gradient)
        a, b = a - step[0], b - step[1]
        if np.abs(step).max() < 1e-9:
            break
    return float(a), float(b)


# --- judging under a budget ---------------------------------------------------------------------------------


@dataclass
class Judged:
    """What one method did: the human labels it bought, in order, and its calibrated probabilities at the end."""

    method: str
    order: np.ndarray  # candidate indices people judged, in judging order
    grades: np.ndarray  # their grades (from the assessor)
    labels: np.ndarray  # their 0/1 labels (grade ≥ min_rel)
    probabilities: np.ndarray  # calibrated probability of every candidate with every label bought
    sample: np.ndarray  # bool per candidate: in the hybrid's random sample
    calibration: Calibration
    platt_ridge: float | None = None  # the sample's recalibration penalty (None: not recalibrated)
    features: np.ndarray = field(repr=False, default=None)

    @property
    def judged(self) -> np.ndarray:
        mask = np.zeros(len(self.probabilities), dtype=bool)
        mask[self.order] = True
        return mask


def budget_of(flat: Flat, share: float) -> int:
    """The number of human labels a share of the whole pool buys (rounded half up, at most the pool)."""
    if not 0 <= share <= 1 or share != share:
        raise HybridError(f"a budget is a share of the pool from 0 to 1, not {share!r}")
    return min(len(flat), int(math.floor(share * len(flat) + 0.5)))


def parse_budget(value) -> float | int:
    """A campaign's hybrid budget, checked: a share of the pool (a number above 0 and below 1, e.g. 0.1, or a
    percentage below 100%, "10%") is a float, a count of human labels (a whole number, 1 or more, e.g. 500) an int.
    Text as a form sends it is read too. HybridError says what is wrong."""
    said = "a share of the pool above 0 and below 1 (e.g. 0.1, or 10%) or a whole number of judgements (e.g. 500)"
    if isinstance(value, str):
        text = value.strip()
        try:
            if text.endswith("%"):
                share = float(text[:-1]) / 100
                if not 0 < share < 1:
                    raise ValueError
                return share
            value = int(text) if text.isdigit() else float(text)
        except ValueError:
            raise HybridError(f"{value[:50]!r} is not {said}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise HybridError(f"{value!r} is not {said}")
    if isinstance(value, float) and value >= 1 and value.is_integer():
        value = int(value)
    if isinstance(value, int) and value >= 1:
        return value
    if isinstance(value, float) and 0 < value < 1:
        return value
    raise HybridError(f"{value!r} is not {said}")


def budget_count(size: int, budget: float | int) -> int:
    """The human labels a budget (parse_budget's) buys in a pool of `size` candidates: a share rounded half up, a
    count as it is; at most the pool."""
    wanted = budget if isinstance(budget, int) else int(math.floor(budget * size + 0.5))
    return max(0, min(size, wanted))


def _features(flat: Flat, method: str) -> np.ndarray:
    m, _ = machine_scale(flat.machine)
    if method == "lara":
        return standardise(m[:, None])
    return standardise(np.column_stack([m, evidence(flat)]))


def ap_gradients(flat: Flat, q) -> np.ndarray:
    """runs × candidates: how much each run's AP on the candidate's topic moves per unit of the candidate's label,
    at soft labels q (a probability per candidate): (∂S/∂q)/R − AP/R with S = Σₖ qₖ·Cₖ/k, Cₖ the labels down to
    rank k and R the topic's Σq."""
    n = len(flat)
    y = np.append(np.asarray(q, dtype=np.float64), 0.0)
    h = y[flat.ranked]  # runs × topics × L
    relevant = np.maximum(np.bincount(flat.topic_of, weights=y[:-1], minlength=len(flat.topics)), 1e-3)
    k = np.arange(1, h.shape[2] + 1)
    cumulative = np.cumsum(h, axis=2)
    ap = (h * cumulative / k).sum(axis=2) / relevant  # runs × topics
    tail = np.cumsum((h / k)[:, :, ::-1], axis=2)[:, :, ::-1]  # Σ_{j ≥ k} h_j / j
    by_position = (cumulative / k + tail) / relevant[None, :, None]
    gradient = np.zeros((len(flat.runs), n + 1))
    rows = np.repeat(np.arange(len(flat.runs)), flat.ranked.shape[1] * flat.ranked.shape[2])
    np.add.at(gradient, (rows, flat.ranked.ravel()), by_position.ravel())
    gradient = gradient[:, :n] - (ap / relevant)[:, flat.topic_of]
    return gradient


def influence(flat: Flat, q) -> np.ndarray:
    """Each candidate's influence on the runs' order: the spread over runs of their AP gradients (their variance)."""
    return ap_gradients(flat, q).var(axis=0)


def pair_influence(flat: Flat, q, closeness: float = 0.01) -> np.ndarray:
    """Each candidate's influence on the order of the pairs of runs whose MAPs (at soft labels q) are close:
    Σ over pairs (r, s) of (G_r − G_s)² / (|MAP_r − MAP_s| + closeness)², G the AP gradients."""
    gradient = ap_gradients(flat, q) / max(len(flat.topics), 1)
    maps = run_scores(flat, q)["AP"]
    total = np.zeros(len(flat))
    for r in range(len(flat.runs)):
        for s in range(r + 1, len(flat.runs)):
            total += (gradient[r] - gradient[s]) ** 2 / (abs(maps[r] - maps[s]) + closeness) ** 2
    return total


def ap_weight(flat: Flat) -> np.ndarray:
    """A candidate's weight in the runs' average precision: Σ over runs of 1/rank (0 where a run did not bring it)."""
    ranks = flat.ranks.astype(np.float64)
    return np.where(ranks > 0, 1.0 / np.maximum(ranks, 1), 0.0).sum(axis=1)


def judge(flat: Flat, assessor: Callable, share: float, method: str = "hybrid", *, min_rel: int = 1,
          seed: int = 0, batches: int = BATCHES, random_share: float = RANDOM_SHARE,
          select: str = SELECT, platt: float | None = SAMPLE_RIDGE) -> Judged:
    """Spend ⌊share × pool + ½⌋ human labels with `method` (hybrid or lara); `assessor(indices)` gives the grades of
    those candidates (the qrels in a simulation). Exactly the budget is judged."""
    if method not in ("hybrid", "lara"):
        raise HybridError(f"unknown method {method!r}; use hybrid or lara")
    if select not in SELECTIONS:
        raise HybridError(f"unknown selection {select!r}; use one of {', '.join(SELECTIONS)}")
    n = len(flat)
    budget = budget_of(flat, share)
    X = _features(flat, method)
    order: list = []
    grades = np.zeros(n)
    judged = np.zeros(n, dtype=bool)
    sample = np.zeros(n, dtype=bool)

    def buy(indices):
        indices = np.asarray(indices, dtype=np.int64)
        if not len(indices):
            return
        got = np.asarray(assessor(indices), dtype=np.float64)
        grades[indices] = got
        judged[indices] = True
        order.extend(indices.tolist())

    def fitted():
        return calibrated(flat, X, np.asarray(order, dtype=np.int64), grades, np.flatnonzero(sample), method,
                          min_rel, platt)

    if method == "hybrid" and budget:
        sample[random_sample(flat, budget, seed, random_share)] = True
        buy(np.flatnonzero(sample))
    weight = ap_weight(flat) if method == "hybrid" and select == "weight" else None
    calibration, probabilities = fitted()
    left = budget - len(order)
    steps = max(1, min(batches, left)) if left else 0
    for step in range(steps):
        if step:
            calibration, probabilities = fitted()
        size = (budget - len(order)) // (steps - step)
        if size <= 0:
            continue
        score = selection_scores(flat, probabilities, judged, grades >= min_rel, method, select, weight)
        pick = np.argpartition(-score, size - 1)[:size]
        pick = pick[np.lexsort((pick, -score[pick]))]
        buy(pick)
    if len(order):
        calibration, probabilities = fitted()
    order = np.asarray(order, dtype=np.int64)
    recalibrated = platt if method == "hybrid" and platt is not None and sample.sum() >= SAMPLE_MIN else None
    return Judged(method, order, grades[order], (grades[order] >= min_rel).astype(np.int8), probabilities, sample,
                  calibration, recalibrated, X)


def random_sample(flat: Flat, budget: int, seed: int = 0, random_share: float = RANDOM_SHARE) -> np.ndarray:
    """The hybrid's random sample of a budget: round(random_share × budget) candidates, stratified by topic."""
    return stratified_sample(flat.topic_of, int(round(random_share * budget)), np.random.default_rng(seed))


def calibrated(flat: Flat, X, labelled, grades, sampled, method: str = "hybrid", min_rel: int = 1,
               platt: float | None = SAMPLE_RIDGE) -> tuple[Calibration, np.ndarray]:
    """(calibration, calibrated probability of every candidate) from the human labels so far: `labelled` the judged
    candidates' indices, `grades` a grade per candidate (read where labelled), `sampled` the judged candidates of the
    random sample (the Platt rescaling's, once there are SAMPLE_MIN of them). Before any label: the machine's own."""
    topics = len(flat.topics)
    if not len(labelled):
        return (Calibration(np.zeros(X.shape[1] + 1), np.zeros(topics), np.full(topics, 1.0)),
                machine_scale(flat.machine)[1].copy())
    calibration = calibrate(X, flat.topic_of, labelled, grades[labelled] >= min_rel, topics,
                            per_topic=method == "hybrid")
    if platt is not None and len(sampled) >= SAMPLE_MIN:
        calibration.platt = recalibrate(calibration.logits(X, flat.topic_of), sampled, grades[sampled] >= min_rel,
                                        platt)
    return calibration, calibration.probabilities(X, flat.topic_of)


def selection_scores(flat: Flat, probabilities, judged, relevant, method: str = "hybrid", select: str = SELECT,
                     weight=None) -> np.ndarray:
    """Each candidate's claim to be judged next (−inf where judged): LARA's nearness to 0.5, or the hybrid's
    p(1 − p) × influence (`relevant`: the 0/1 human label, read where `judged`)."""
    if method == "lara" or select == "uncertainty":
        score = -np.abs(probabilities - 0.5)
    elif select in ("influence", "pairs"):
        q = probabilities.copy()
        q[judged] = relevant[judged]
        spread = influence(flat, q) if select == "influence" else pair_influence(flat, q)
        score = probabilities * (1 - probabilities) * spread
    else:
        expected = np.bincount(flat.topic_of, weights=probabilities, minlength=len(flat.topics))
        score = probabilities * (1 - probabilities) * weight / np.maximum(expected, 1.0)[flat.topic_of]
    return np.where(judged, -np.inf, score)


@dataclass
class Plan:
    """The live hybrid order at one moment: the human labels so far as a Judged (for the fill and the intervals), the
    budget, and the candidates people should judge now, best first."""

    judged: Judged
    budget: int  # human labels the budget buys
    sample: np.ndarray  # bool per candidate: the random sample (judged or not)
    batch: list  # candidate indices to judge now, best first: the sample's unjudged ones, then the batch's picks

    @property
    def spent(self) -> int:
        return len(self.judged.order)

    @property
    def left(self) -> int:
        return max(0, self.budget - self.spent)

    @property
    def sample_judged(self) -> int:
        return int(self.judged.sample.sum())


def plan(flat: Flat, grades: Mapping, budget: int, *, min_rel: int = 1, seed: int = 0, batches: int = BATCHES,
         random_share: float = RANDOM_SHARE, platt: float | None = SAMPLE_RIDGE) -> Plan:
    """The hybrid order served live (what `judge` does, one request at a time): `grades` {candidate index: grade} are
    the human labels so far, in the order first given; `budget` the human labels to spend. The random sample
    (`random_sample` of the budget, the same for the same pool, budget and seed) comes first; the calibration is
    refitted on every label so far; the batch is the sample's unjudged candidates, then the unjudged ones with the
    largest selection score, as many as a batch of `judge` (the budget after the sample over `batches`), never more
    than the budget left. Nothing is left to judge once the budget is spent."""
    n = len(flat)
    budget = max(0, min(int(budget), n))
    X = _features(flat, "hybrid")
    sample = np.zeros(n, dtype=bool)
    sample[random_sample(flat, budget, seed, random_share)] = True
    order = np.fromiter((int(i) for i in grades), dtype=np.int64, count=len(grades))
    given = np.zeros(n)
    given[order] = [grades[i] for i in order]
    judged = np.zeros(n, dtype=bool)
    judged[order] = True
    sampled = np.flatnonzero(sample & judged)
    calibration, probabilities = calibrated(flat, X, order, given, sampled, "hybrid", min_rel, platt)
    left = max(0, budget - len(order))
    waiting = [int(i) for i in np.flatnonzero(sample & ~judged)][:left]
    picks = min(left - len(waiting), max(1, math.ceil((budget - int(sample.sum())) / batches)))
    batch = list(waiting)
    if picks > 0 and (~judged).sum() > len(waiting):
        score = np.where(sample, -np.inf, selection_scores(flat, probabilities, judged, given >= min_rel))
        picks = min(picks, int(np.isfinite(score).sum()))
        if picks > 0:
            pick = np.argpartition(-score, picks - 1)[:picks]
            batch += [int(i) for i in pick[np.lexsort((pick, -score[pick]))]]
    labels = (given[order] >= min_rel).astype(np.int8)
    recalibrated = platt if platt is not None and len(sampled) >= SAMPLE_MIN else None
    state = Judged("hybrid", order, given[order], labels, probabilities, sample & judged, calibration, recalibrated, X)
    return Plan(state, budget, sample, batch)


def stratified_sample(topic_of, size: int, rng) -> np.ndarray:
    """`size` candidates drawn at random without replacement, each topic's share as near its share of the pool as
    whole numbers allow (largest remainders)."""
    n = len(topic_of)
    size = min(size, n)
    if size <= 0:
        return np.zeros(0, dtype=np.int64)
    counts = np.bincount(topic_of)
    quota = counts * size / n
    take = np.floor(quota).astype(int)
    extra = size - take.sum()
    if extra:
        take[np.argsort(-(quota - take), kind="stable")[:extra]] += 1
    starts = np.concatenate([[0], np.cumsum(counts)])
    chosen = [starts[t] + rng.choice(counts[t], take[t], replace=False) for t in range(len(counts)) if take[t]]
    return np.sort(np.concatenate(chosen)) if chosen else np.zeros(0, dtype=np.int64)


def fill(flat: Flat, judged: Judged, how: str | None = None) -> np.ndarray:
    """0/1 label of every candidate: the human label where bought, else the calibrated label. `how`: "threshold"
    (relevant at a calibrated probability ≥ 0.5, LARA's) or "expected" (per topic the ⌊Σp + ½⌋ most probable of the
    unjudged are relevant); default LARA's for lara, expected for hybrid."""
    how = how or ("threshold" if judged.method == "lara" else "expected")
    labels = np.zeros(len(flat), dtype=np.int8)
    open_ = ~judged.judged
    p = judged.probabilities
    if how == "threshold":
        labels[open_] = p[open_] >= 0.5
    elif how == "expected":
        starts = flat.starts
        for t in range(len(flat.topics)):
            rows = np.arange(starts[t], starts[t + 1])
            rows = rows[open_[rows]]
            k = int(math.floor(p[rows].sum() + 0.5))
            if k:
                best = rows[np.lexsort((rows, -p[rows]))][:k]
                labels[best] = 1
    else:
        raise HybridError(f"unknown fill {how!r}")
    labels[judged.order] = judged.labels
    return labels


def machine_labels(flat: Flat, min_rel: int = 1) -> np.ndarray:
    """The machine judge's own labels: relevant at probability ≥ 0.5, or at grade ≥ min_rel (grades); none given:
    not relevant."""
    s = flat.machine
    given = s[~np.isnan(s)]
    probabilities = len(given) and given.min() >= 0 and given.max() <= 1
    threshold = 0.5 if probabilities else min_rel
    return (np.nan_to_num(s, nan=-np.inf) >= threshold).astype(np.int8)


def depth_labels(flat: Flat, assessor: Callable, share: float, min_rel: int = 1) -> np.ndarray:
    """People in depth order: each topic's first ⌈share × its pool⌉ candidates judged, the rest not relevant."""
    starts = flat.starts
    rows = np.concatenate([np.arange(starts[t], starts[t] + math.ceil(share * (starts[t + 1] - starts[t]) - 1e-9))
                           for t in range(len(flat.topics))] or [np.zeros(0, dtype=np.int64)]).astype(np.int64)
    labels = np.zeros(len(flat), dtype=np.int8)
    labels[rows] = np.asarray(assessor(rows)) >= min_rel
    return labels


# --- intervals ----------------------------------------------------------------------------------------------


@dataclass
class Intervals:
    """Each run's estimate and 95% interval of MAP and nDCG@10 at the budget."""

    runs: list
    estimate: dict  # {measure: array per run}
    low: dict
    high: dict

    def rows(self, measure: str = "AP"):
        return zip(self.runs, self.estimate[measure], self.low[measure], self.high[measure])


def intervals(flat: Flat, judged: Judged, *, draws: int = DRAWS, seed: int = 0, widen: float = WIDEN,
              strata=STRATA) -> Intervals:
    """Each run's MAP and nDCG@10 with a 95% interval, from the human labels bought and the calibrated probabilities
    of the rest: draws of the unjudged labels, each with a per-topic logit offset (the calibration's posterior
    spread there) and, where the hybrid drew a random sample, a shift per stratum of probability by the sample's mean
    residual (y − p), drawn with its standard error (at least Agresti and Coull's for the sample's rate; 0.5/√1
    where the stratum holds no sampled candidate). The interval is the draws' 2.5 and 97.5 percentiles about their
    mean, each side's half-width multiplied by `widen`, cut to the measures' range [0, 1]."""
    rng = np.random.default_rng(seed)
    p = judged.probabilities
    open_ = ~judged.judged
    y_all = np.zeros(len(flat))
    y_all[judged.order] = judged.labels
    stratum = np.clip(np.searchsorted(np.asarray(strata), p, side="right") - 1, 0, len(strata) - 2)
    shift_mean, shift_se = np.zeros(len(strata) - 1), np.zeros(len(strata) - 1)
    if judged.sample.any():
        for h in range(len(strata) - 1):
            inside = judged.sample & (stratum == h)
            k = int(inside.sum())
            if k:
                residual = y_all[inside] - p[inside]
                rate = (y_all[inside].sum() + Z * Z / 2) / (k + Z * Z)
                variance = max(residual.var(ddof=1) if k > 1 else 0.0, rate * (1 - rate))
                shift_mean[h], shift_se[h] = residual.mean(), math.sqrt(variance / k)
            else:
                shift_se[h] = 0.5
    logit = np.log(np.clip(p, 1e-9, 1 - 1e-9) / np.clip(1 - p, 1e-9, 1))
    rows = np.flatnonzero(open_)
    t_rows, s_rows = flat.topic_of[rows], stratum[rows]
    values = {"AP": [], "nDCG@10": []}
    labels = y_all.copy()
    resample = judged.platt_ridge is not None and judged.features is not None
    if resample:
        raw = judged.calibration.raw_logits(judged.features, flat.topic_of)
        sampled = np.flatnonzero(judged.sample)
    for _ in range(draws):
        offset = rng.normal(0.0, judged.calibration.spread)[t_rows]
        shift = rng.normal(shift_mean, shift_se)[s_rows]
        z = logit[rows]
        if resample:  # the recalibration refitted on a bootstrap of the random sample: the level's uncertainty
            again = rng.choice(sampled, len(sampled), replace=True)
            a, b = recalibrate(raw, again, y_all[again], judged.platt_ridge)
            z = a + b * raw[rows]
        labels[rows] = rng.random(len(rows)) < np.clip(_sigmoid(z + offset) + shift, 0.0, 1.0)
        scores = run_scores(flat, labels)
        for measure in values:
            values[measure].append(scores[measure])
    estimate, low, high = {}, {}, {}
    for measure, drawn in values.items():
        drawn = np.array(drawn)
        centre = drawn.mean(axis=0)
        estimate[measure] = centre
        # Widened, an interval may pass the measure's range: it ends at 0 and 1, where MAP and nDCG end (a page
        # showed MAP -0.06-0.81); the score lies inside, so no interval holds it less often for it.
        low[measure] = np.maximum(0.0, centre - widen * (centre - np.quantile(drawn, 0.025, axis=0)))
        high[measure] = np.minimum(1.0, centre + widen * (np.quantile(drawn, 0.975, axis=0) - centre))
    return Intervals(list(flat.runs), estimate, low, high)

def ndcg_gradients(flat: Flat, q) -> np.ndarray:
    """runs × candidates: the change of each run's binary nDCG@10 on the candidate's topic per unit of its label, at
    soft labels q, the ideal DCG held fixed."""
    n = len(flat)
    y = np.append(np.asarray(q, dtype=np.float64), 0.0)
    relevant = np.bincount(flat.topic_of, weights=y[:-1], minlength=len(flat.topics))
    top = min(10, flat.ranked.shape[2])
    discount = 1.0 / np.log2(np.arange(2, top + 2))
    ideal = np.interp(np.minimum(relevant, top), np.arange(top + 1), np.concatenate([[0.0], np.cumsum(discount)]))
    by_position = np.broadcast_to(discount / np.maximum(ideal, 1e-9)[:, None], flat.ranked[:, :, :top].shape)
    gradient = np.zeros((len(flat.runs), n + 1))
    rows = np.repeat(np.arange(len(flat.runs)), flat.ranked.shape[1] * top)
    np.add.at(gradient, (rows, flat.ranked[:, :, :top].ravel()), by_position.ravel())
    return gradient[:, :n]
