"""THE relevance model of a (topic, candidate) pair: its features and the classifier, for both callers: the
auto-annotator (assessments.machine.annotator: trained across topics on human labels, cross-validated by topic)
and the active judging order (assessments.ordering: the rank features, and a trained annotator's
probabilities as its prior).

Pure numpy, and scikit-learn imported where a model is fitted (no Django): the web process imports the orders.

Features of a candidate, given the runs that brought it (`ranks[i, r]`: run r's rank of candidate i from 1, 0
when it did not bring it):
- rank_features: per run 1 − ln(rank) / ln(deepest + 1) (0 when absent), the share of runs that brought it, and
  reciprocal-rank fusion (k = 60, times k);
- score_features: per run its score min-max normalised over the run's candidates of the same topic (0 when absent);
- text_features: BM25 of the topic's text against the candidate, and the cosine of the bundled encoder's
  embeddings of both, each raw and relative to the topic's best candidate;
- feedback_features (pseudo-relevance feedback, needs every candidate of the topic): the cosine of the candidate's
  embedding with the centroid of the topic's FEEDBACK_DEPTH best candidates by BM25 and cosine together, raw and
  relative to the topic's best; and how many topics of the pools hold the passage (log 1 + count);
- cluster_features (the cluster hypothesis, needs every candidate of the topic): the mean of that same BM25 and
  cosine score over the candidate's CLUSTER_NEIGHBOURS most similar candidates of its topic (embeddings), and the
  share of the topic's candidates that every run brought (where runs agree a topic tends to hold more relevant);
- neighbour features (learnt from the training labels, NeighbourTopics; only a model fitted with a TextContext has
  them): among the NEIGHBOUR_TOPICS labelled topics whose query embeddings are nearest the candidate's topic's
  (never its own topic), the best query similarity of one that judged this passage relevant, and the cosine of the
  candidate with the centroids of their relevant passages (best, and the mean weighted by query similarity).
The choices (C = 0.1, depths 3, 2 and 10, which features) were made on Cranfield's odd topics only. A run-blind
model (run_blind_names) reads none of the runs' columns: the annotator whose labels fill qrels that rank those runs.

The model (RelevanceModel): standardised features and an L2 logistic regression (scikit-learn), whose probabilities
are calibrated by its own loss; the threshold that turns one into a label is chosen on the training labels (the
best Cohen's κ in an inner cross-validation by topic), never on the labels it is measured on.
"""

import hashlib
import io
import math
from dataclasses import dataclass, field

import numpy as np

RRF_K = 60
FEEDBACK_DEPTH = 3
CLUSTER_NEIGHBOURS = 2
NEIGHBOUR_TOPICS = 10
SIMILARITY_BLOCK = 2048  # rows of a topic's candidate-by-candidate similarities held at once
MIN_LABELS = 20  # fewer human labels than this train nothing (examples.TrainingSet.check): a model of noise
KINDS = ("logistic", "boosting")


class ModelInvalid(ValueError):
    """Labels a model cannot learn from; the message says why."""


# --- features --------------------------------------------------------------------------------------------


def rank_features(ranks: np.ndarray) -> np.ndarray:
    """Per candidate: 1 − ln(rank) / ln(deepest + 1) for each run (0 when absent), the share of runs, and RRF × k."""
    ranks = np.asarray(ranks)
    present = ranks > 0
    deepest = max(int(ranks.max()) if ranks.size else 1, 1)
    discount = np.where(present, 1.0 - np.log(np.maximum(ranks, 1)) / np.log(deepest + 1.0), 0.0)
    share = present.mean(axis=1, keepdims=True) if ranks.shape[1] else np.zeros((len(ranks), 1))
    return np.hstack([discount, share, fusion(ranks)[:, None] * RRF_K])


def fusion(ranks: np.ndarray) -> np.ndarray:
    """Reciprocal-rank fusion (k = 60) of each candidate's ranks: the zero-shot baseline every figure is read beside."""
    ranks = np.asarray(ranks)
    return np.where(ranks > 0, 1.0 / (RRF_K + ranks), 0.0).sum(axis=1)


def fusion_probability(ranks: np.ndarray) -> np.ndarray:
    """RRF as a score in [0, 1]: 1 when every run ranked the candidate first."""
    ranks = np.asarray(ranks)
    best = ranks.shape[1] / (RRF_K + 1) if ranks.shape[1] else 1.0
    return fusion(ranks) / best


def per_group(values: np.ndarray, groups: np.ndarray, how: str) -> np.ndarray:
    """Each value relative to its group (topic): `minmax` scaled to [0, 1] among the group's present (non-NaN)
    values, NaN → 0; `gap` minus the group's maximum."""
    values = np.asarray(values, dtype=np.float64)
    out = np.zeros(len(values))
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        v = values[rows]
        known = ~np.isnan(v)
        if not known.any():
            continue
        lo, hi = v[known].min(), v[known].max()
        if how == "minmax":
            out[rows] = np.where(known, (v - lo) / (hi - lo) if hi > lo else 1.0, 0.0)
        else:
            out[rows] = np.where(known, v - hi, 0.0)
    return out


def score_features(scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Per run, its scores (NaN where it did not bring the candidate) min-max normalised within each topic."""
    scores = np.asarray(scores, dtype=np.float64)
    return np.column_stack([per_group(scores[:, r], groups, "minmax") for r in range(scores.shape[1])]) \
        if scores.shape[1] else np.zeros((len(scores), 0))


def text_features(bm25: np.ndarray, cosine: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """BM25 (log 1 + score) and cosine, each raw and as the gap to the topic's best candidate."""
    lexical = np.log1p(np.maximum(np.asarray(bm25, dtype=np.float64), 0.0))
    cosine = np.asarray(cosine, dtype=np.float64)
    return np.column_stack([lexical, per_group(lexical, groups, "gap"), per_group(lexical, groups, "minmax"),
                            cosine, per_group(cosine, groups, "gap")])


def text_base(bm25, cosine, groups) -> np.ndarray:
    """Min-max BM25 (log 1 + score) plus min-max cosine within each topic: the text's own zero-shot score."""
    lexical = np.log1p(np.maximum(np.asarray(bm25, dtype=np.float64), 0.0))
    return per_group(lexical, groups, "minmax") + per_group(np.asarray(cosine, dtype=np.float64), groups, "minmax")


def feedback_features(vectors, bm25, cosine, groups, popularity) -> np.ndarray:
    """Per candidate: cosine with the centroid of its topic's FEEDBACK_DEPTH best candidates (by text_base; rows of
    `vectors` are unit embeddings), that as the gap to the topic's best, and log(1 + popularity) (topics of the
    pools holding the passage)."""
    groups = np.asarray(groups)
    vectors = np.asarray(vectors, dtype=np.float64)
    base = text_base(bm25, cosine, groups)
    feedback = np.zeros(len(groups))
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        best = rows[np.lexsort((rows, -base[rows]))[:FEEDBACK_DEPTH]]
        feedback[rows] = vectors[rows] @ vectors[best].mean(axis=0)
    return np.column_stack([feedback, per_group(feedback, groups, "gap"),
                            np.log1p(np.asarray(popularity, dtype=np.float64))])


def cluster_features(vectors, bm25, cosine, groups, ranks) -> np.ndarray:
    """Per candidate: the mean text_base of its CLUSTER_NEIGHBOURS most similar candidates of the same topic (by
    the embeddings' cosine; 0 for a topic of one candidate), and its topic's share of candidates every run brought."""
    groups = np.asarray(groups)
    vectors = np.asarray(vectors, dtype=np.float64)
    base = text_base(bm25, cosine, groups)
    ranks = np.asarray(ranks)
    every = (ranks > 0).all(axis=1) if ranks.shape[1] else np.zeros(len(groups), bool)
    cluster, agreement = np.zeros(len(groups)), np.zeros(len(groups))
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        agreement[rows] = every[rows].mean()
        k = min(CLUSTER_NEIGHBOURS, len(rows) - 1)
        if k < 1:
            continue
        for start in range(0, len(rows), SIMILARITY_BLOCK):  # a block of rows at a time: memory block × topic
            block = rows[start:start + SIMILARITY_BLOCK]
            similar = vectors[block] @ vectors[rows].T
            similar[np.arange(len(block)), np.arange(start, start + len(block))] = -np.inf
            nearest = np.argsort(-similar, axis=1, kind="stable")[:, :k]
            cluster[block] = base[rows][nearest].mean(axis=1)
    return np.column_stack([cluster, agreement])


NEIGHBOUR_NAMES = ["neighbour_relevant", "neighbour_centroid", "neighbour_centroid_mean"]


def feature_names(runs, neighbours: bool = False) -> list:
    return ([f"rank:{r}" for r in runs] + ["share", "rrf"] + [f"score:{r}" for r in runs]
            + ["bm25", "bm25_gap", "bm25_minmax", "cosine", "cosine_gap", "feedback", "feedback_gap", "popularity",
               "cluster", "agreement"] + (NEIGHBOUR_NAMES if neighbours else []))


RUN_NAMES = ("share", "rrf")  # with each run's rank:R and score:R, the columns that tell the runs apart


def run_blind_names(runs) -> list:
    """feature_names(runs) without any column read from the runs: no run's rank or score, nor the share of runs
    that brought the candidate or their fusion. A model on these (`run_blind`) judges the text, the topic's other
    candidates and the labelled neighbour topics, never a run's own rank of the candidate: its labels cannot carry
    to every topic the runs that the human slice it learnt from happened to favour (docs/machine-assistance.md)."""
    return [name for name in feature_names(runs)
            if not name.startswith(("rank:", "score:")) and name not in RUN_NAMES]


def candidate_features(ranks, scores, bm25, cosine, groups, vectors, popularity) -> np.ndarray:
    """Every label-free feature of the model, one row per candidate (feature_names gives the columns); per-topic
    features need every candidate of each topic among the rows."""
    groups = np.asarray(groups)
    return np.hstack([rank_features(ranks), score_features(scores, groups), text_features(bm25, cosine, groups),
                      feedback_features(vectors, bm25, cosine, groups, popularity),
                      cluster_features(vectors, bm25, cosine, groups, ranks)])


@dataclass
class TextContext:
    """What the neighbour features read of each row: its topic, its passage and the passage's unit embedding, with
    each topic's query embedding (`queries`: {topic: vector})."""

    groups: np.ndarray
    passages: np.ndarray
    vectors: np.ndarray
    queries: dict

    def rows(self, rows) -> "TextContext":
        rows = np.asarray(rows, dtype=np.int64)
        return TextContext(np.asarray(self.groups)[rows], np.asarray(self.passages)[rows],
                           np.asarray(self.vectors)[rows], self.queries)


@dataclass
class NeighbourTopics:
    """The training labels as the model keeps them: each labelled topic with a relevant passage, its query
    embedding, its relevant passages and their embeddings' centroid."""

    topics: np.ndarray
    queries: np.ndarray
    relevant: list
    centroids: np.ndarray

    @classmethod
    def learn(cls, context: TextContext, labels) -> "NeighbourTopics":
        labels = np.asarray(labels, dtype=int)
        topics = sorted({int(t) for t, label in zip(context.groups, labels) if label})
        relevant, centroids = [], []
        for t in topics:
            rows = np.flatnonzero((np.asarray(context.groups) == t) & (labels == 1))
            relevant.append(sorted({int(p) for p in np.asarray(context.passages)[rows]}))
            centroids.append(np.asarray(context.vectors, dtype=np.float64)[rows].mean(axis=0))
        dim = np.asarray(context.vectors).shape[1]
        return cls(np.asarray(topics, dtype=np.int64),
                   np.array([context.queries[t] for t in topics], dtype=np.float64).reshape(len(topics), -1),
                   relevant, np.array(centroids, dtype=np.float64).reshape(len(topics), dim))

    def features(self, context: TextContext, k: int = NEIGHBOUR_TOPICS) -> np.ndarray:
        """Per row (NEIGHBOUR_NAMES): of the k labelled topics nearest its topic's query (its own topic left out),
        the best query similarity of one that judged the passage relevant (0 when none did), and the candidate's
        cosine with their centroids, best and weighted by query similarity."""
        groups, passages = np.asarray(context.groups), np.asarray(context.passages)
        vectors = np.asarray(context.vectors, dtype=np.float64)
        out = np.zeros((len(groups), len(NEIGHBOUR_NAMES)))
        sets = [set(r) for r in self.relevant]
        for g in np.unique(groups):
            rows = np.flatnonzero(groups == g)
            query = np.asarray(context.queries[int(g)], dtype=np.float64)
            similar = self.queries @ query if len(self.topics) else np.zeros(0)
            order = [o for o in np.argsort(-similar, kind="stable") if self.topics[o] != g][:k]
            if not order:
                continue
            weights = np.maximum(similar[order], 1e-6)
            for r in rows:
                found = [similar[o] for o in order if int(passages[r]) in sets[o]]
                out[r, 0] = max(found) if found else 0.0
            cosines = vectors[rows] @ self.centroids[order].T
            out[rows, 1] = cosines.max(axis=1)
            out[rows, 2] = cosines @ weights / weights.sum()
        return out

    def state(self) -> dict:
        return {"topics": self.topics, "queries": self.queries, "relevant": self.relevant, "centroids": self.centroids}


# --- folds -----------------------------------------------------------------------------------------------


def topic_folds(labels, groups, k: int, seed: int = 0) -> list:
    """k lists of row numbers, split BY TOPIC (`groups`): no topic is in two folds; the topics are dealt so that each
    fold's share of relevant labels is as even as can be (scikit-learn's StratifiedGroupKFold). ModelInvalid when
    there are fewer topics than folds."""
    from sklearn.model_selection import StratifiedGroupKFold

    labels, groups = np.asarray(labels), np.asarray(groups)
    topics = len(np.unique(groups))
    if topics < k:
        raise ModelInvalid(f"folds: {k} folds split by topic need at least {k} topics; the labels cover {topics}")
    splitter = StratifiedGroupKFold(n_splits=k, shuffle=True, random_state=seed)
    return [sorted(test.tolist()) for _, test in splitter.split(np.zeros(len(labels)), labels, groups)]


# --- the model -------------------------------------------------------------------------------------------


def best_threshold(truth, scores) -> float:
    """The score threshold with the highest Cohen's κ on these labels (ties: the lower threshold)."""
    truth = np.asarray(truth, dtype=int)
    scores = np.asarray(scores, dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    s, t = scores[order], truth[order]
    n, pos = len(t), t.sum()
    if n == 0 or pos in (0, n):
        return 0.5
    tp = np.cumsum(t)
    predicted = np.arange(1, n + 1)
    fp = predicted - tp
    fn, tn = pos - tp, n - pos - fp
    observed = (tp + tn) / n
    expected = (predicted * pos + (n - predicted) * (n - pos)) / n**2
    kappa = np.where(expected < 1, (observed - expected) / np.where(expected < 1, 1 - expected, 1), -1)
    last = np.r_[s[1:] != s[:-1], True]  # a threshold can only fall between distinct scores
    kappa = np.where(last, kappa, -np.inf)
    best = int(np.argmax(kappa))
    return float(s[best])


@dataclass
class RelevanceModel:
    """Standardised features and a calibrated classifier; `threshold` turns a probability into a label."""

    kind: str = "logistic"
    c: float = 0.1
    seed: int = 0
    threshold: float = 0.5
    estimator: object = field(default=None, repr=False)
    neighbours: NeighbourTopics | None = field(default=None, repr=False)

    def _make(self):
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        if self.kind == "logistic":
            from sklearn.linear_model import LogisticRegression

            return make_pipeline(StandardScaler(), LogisticRegression(C=self.c, max_iter=1000))
        if self.kind == "boosting":
            from sklearn.calibration import CalibratedClassifierCV
            from sklearn.ensemble import HistGradientBoostingClassifier

            boosting = HistGradientBoostingClassifier(max_iter=150, learning_rate=0.05, max_leaf_nodes=15,
                                                      l2_regularization=1.0, random_state=self.seed)
            return CalibratedClassifierCV(boosting, method="sigmoid", cv=3)
        raise ModelInvalid(f"model: unknown kind {self.kind!r}; use one of {', '.join(KINDS)}")

    def fit(self, x, labels, groups=None, *, tune_threshold: bool = True,
            context: TextContext | None = None) -> "RelevanceModel":
        """Fit on rows x with 0/1 labels; the threshold is the best κ over an inner 3-fold split by topic (`groups`)
        of these same training labels (0.5 when they are too few to split). With a `context` of the rows the model
        also learns NeighbourTopics from these labels and reads their features (each row's from other topics)."""
        x, labels = np.asarray(x, dtype=np.float64), np.asarray(labels, dtype=int)
        if labels.min() == labels.max():
            raise ModelInvalid("labels of one class only: a model needs both classes")
        self.neighbours = None
        if context is not None:
            self.neighbours = NeighbourTopics.learn(context, labels)
            x = np.hstack([x, self.neighbours.features(context)])
        self.estimator = self._make().fit(x, labels)
        self.threshold = 0.5
        if tune_threshold and groups is not None and len(np.unique(groups)) >= 3:
            try:
                inner = topic_folds(labels, groups, 3, self.seed)
            except ModelInvalid:
                inner = []
            scores = np.full(len(labels), np.nan)
            for test in inner:
                train = np.setdiff1d(np.arange(len(labels)), test)
                if labels[train].min() == labels[train].max():
                    scores[:] = np.nan
                    break
                scores[test] = self._make().fit(x[train], labels[train]).predict_proba(x[test])[:, 1]
            if not np.isnan(scores).any():
                self.threshold = best_threshold(labels, scores)
        return self

    def predict(self, x, context: TextContext | None = None) -> np.ndarray:
        """The probability of relevant of each row (a model with neighbours needs the rows' `context`)."""
        x = np.asarray(x, dtype=np.float64)
        if self.neighbours is not None:
            if context is None:
                raise ModelInvalid("this model reads the neighbour topics' features: give the rows' text context")
            x = np.hstack([x, self.neighbours.features(context)])
        return self.estimator.predict_proba(x)[:, 1]

    def dumps(self) -> tuple[bytes, str]:
        """The fitted model as bytes (joblib) and their SHA-256."""
        import joblib

        buffer = io.BytesIO()
        joblib.dump({"kind": self.kind, "c": self.c, "seed": self.seed, "threshold": self.threshold,
                     "estimator": self.estimator,
                     "neighbours": None if self.neighbours is None else self.neighbours.state()}, buffer)
        data = buffer.getvalue()
        return data, hashlib.sha256(data).hexdigest()

    @classmethod
    def loads(cls, data: bytes) -> "RelevanceModel":
        import joblib

        state = joblib.load(io.BytesIO(data))
        neighbours = state.pop("neighbours", None)  # absent from a model saved before neighbour features
        return cls(**state, neighbours=None if neighbours is None else NeighbourTopics(**neighbours))


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def mean_or_none(values):
    values = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return float(np.mean(values)) if values else None
