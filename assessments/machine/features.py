"""The relevance model's inputs for (topic, passage) pairs, read from the database and the retrieval indexes: the
runs of the given pools that brought each candidate (rank and score), BM25 of the topic's text against it (the
collection's BM25 index), and the cosine of the bundled encoder's embeddings (the dense index's stored vectors:
each passage encoded once). The features themselves are assessments.machine.model's, one home for the annotator
and the active order.
"""

from dataclasses import dataclass

import numpy as np

from assessments.machine import model as relevance
from assessments.machine.examples import query_text
from django.db.models import Count

from assessments.models import CandidateSource, PoolCandidate, Topic


@dataclass
class PairFeatures:
    """What is known of each pair: the runs' ranks and scores (columns `runs`), its topic, and (with text) BM25,
    the cosine, the passage's stored embedding and how many of the pools' topics hold it."""

    pairs: list
    runs: list
    ranks: np.ndarray
    scores: np.ndarray
    groups: np.ndarray
    bm25: np.ndarray | None = None
    cosine: np.ndarray | None = None
    vectors: np.ndarray | None = None
    popularity: np.ndarray | None = None
    queries: dict | None = None  # {topic id: its query's embedding}, with text

    def matrix(self, names=None) -> np.ndarray:
        """Every label-free feature of the model (model.feature_names(runs) names the columns), or the columns
        `names` (a saved model's: one trained before later features were added reads its own)."""
        if getattr(self, "_matrix", None) is None:
            self._matrix = relevance.candidate_features(self.ranks, self.scores, self.bm25, self.cosine, self.groups,
                                                        self.vectors, self.popularity)
        if names is None:
            return self._matrix
        at = {name: i for i, name in enumerate(relevance.feature_names(self.runs))}
        missing = [name for name in names if name not in at]
        if missing:
            raise relevance.ModelInvalid(f"features: this version has no feature {', '.join(missing)}; train again")
        return self._matrix[:, [at[name] for name in names]]

    def context(self) -> relevance.TextContext:
        """Each row's topic, passage and embedding, and the topics' query embeddings: the neighbour features'."""
        return relevance.TextContext(self.groups, np.array([p for _, p in self.pairs], dtype=np.int64), self.vectors,
                                     self.queries)

    def fusion(self) -> np.ndarray:
        """Reciprocal-rank fusion of the pools' runs: the zero-shot baseline."""
        return relevance.fusion(self.ranks)

    def subset(self, pairs) -> "PairFeatures":
        """The rows of `pairs` (their feature matrix keeps the per-topic values computed over every row)."""
        at = {pair: i for i, pair in enumerate(self.pairs)}
        rows = np.array([at[pair] for pair in pairs], dtype=np.int64)
        out = PairFeatures(list(pairs), self.runs, self.ranks[rows], self.scores[rows], self.groups[rows],
                           queries=self.queries)
        if self.vectors is not None:
            out.vectors = self.vectors[rows]
        out._matrix = self.matrix()[rows]
        return out


def run_columns(pairs, pool_ids, runs=None) -> tuple:
    """(run names, ranks, scores) of each pair in the pools' candidate sources: the best rank a run gave it over
    the pools (0 when absent) and that rank's score (NaN when absent or unscored). `runs` fixes the columns
    (a trained model's); by default every run that brought one of the pairs, by name."""
    index = {pair: i for i, pair in enumerate(pairs)}
    topics = {t for t, _ in pairs}
    rows = (CandidateSource.objects.filter(candidate__pool_id__in=list(pool_ids), candidate__topic_id__in=topics)
            .order_by().values_list("candidate__topic_id", "candidate__passage_id", "run__name", "rank", "score"))
    found = [(index[(t, p)], name, rank, score) for t, p, name, rank, score in rows.iterator(chunk_size=20_000)
             if (t, p) in index]
    names = list(runs) if runs is not None else sorted({name for _, name, _, _ in found})
    column = {name: c for c, name in enumerate(names)}
    ranks = np.zeros((len(pairs), len(names)), dtype=np.int64)
    scores = np.full((len(pairs), len(names)), np.nan)
    for i, name, rank, score in found:
        c = column.get(name)
        if c is None or rank < 1:
            continue
        if not ranks[i, c] or rank < ranks[i, c]:
            ranks[i, c] = rank
            scores[i, c] = np.nan if score is None else score
    return names, ranks, scores


def pair_features(pairs, pool_ids, collection, *, runs=None, text=True) -> PairFeatures:
    """The features of (topic id, passage id) pairs over the pools' runs; with `text` also BM25, the cosine, the
    stored embeddings and popularity (the indexes are built here first when they are missing). The per-topic
    features are computed over every candidate of the pairs' topics in the pools (and the pairs), so a pair's
    features are the same whichever other pairs are asked with it."""
    pairs = [(int(t), int(p)) for t, p in pairs]
    if not text:
        names, ranks, scores = run_columns(pairs, pool_ids, runs)
        return PairFeatures(pairs, names, ranks, scores, np.array([t for t, _ in pairs], dtype=np.int64))
    context = sorted(set(PoolCandidate.objects.filter(pool_id__in=list(pool_ids), topic_id__in={t for t, _ in pairs})
                         .values_list("topic_id", "passage_id")) | set(pairs))
    names, ranks, scores = run_columns(context, pool_ids, runs)
    groups = np.array([t for t, _ in context], dtype=np.int64)
    whole = PairFeatures(context, names, ranks, scores, groups)
    from retrieval.services import scoring

    passages = sorted({p for _, p in context})
    stored = scoring.passage_vectors(collection, passages)
    at = {p: i for i, p in enumerate(passages)}
    whole.vectors = stored[[at[p] for _, p in context]]
    topic_ids = sorted({t for t, _ in context})
    texts = {t.pk: query_text(t) for t in Topic.objects.filter(pk__in=topic_ids).prefetch_related("facets")}
    encoded = scoring.query_vectors(collection, [texts[t] for t in topic_ids], stored.shape[1])
    whole.queries = {t: encoded[i] for i, t in enumerate(topic_ids)}
    whole.cosine = np.einsum("ij,ij->i", whole.vectors, np.array([whole.queries[t] for t, _ in context]))
    whole.bm25 = lexical_scores(context, collection, texts)
    counts = dict(PoolCandidate.objects.filter(pool_id__in=list(pool_ids), passage_id__in=passages).order_by()
                  .values("passage_id").annotate(n=Count("topic_id", distinct=True)).values_list("passage_id", "n"))
    whole.popularity = np.array([counts.get(p, 0) for _, p in context], dtype=np.float64)
    return whole.subset(pairs)


def lexical_scores(pairs, collection, texts: dict) -> np.ndarray:
    """BM25 of each pair: the topic's text (`texts`: {topic id: query text}) against the passage."""
    from retrieval.services import scoring

    by_topic = {}
    for i, (t, p) in enumerate(pairs):
        by_topic.setdefault(t, []).append(i)
    out = np.zeros(len(pairs))
    items = [(texts[t], [pairs[i][1] for i in rows]) for t, rows in by_topic.items()]
    for rows, scores in zip(by_topic.values(), scoring.bm25_scores(collection, items)):
        out[rows] = scores
    return out


def text_scores(pairs, collection) -> tuple:
    """(BM25, cosine) of each pair: the topic's text against the passage."""
    from retrieval.services import scoring

    by_topic = {}
    for i, (t, p) in enumerate(pairs):
        by_topic.setdefault(t, []).append(i)
    topics = {t.pk: query_text(t) for t in Topic.objects.filter(pk__in=by_topic).prefetch_related("facets")}
    items = [(topics[t], [pairs[i][1] for i in rows]) for t, rows in by_topic.items()]
    bm25, cosine = np.zeros(len(pairs)), np.zeros(len(pairs))
    for (t, rows), lexical, dense in zip(by_topic.items(), scoring.bm25_scores(collection, items),
                                         scoring.dense_scores(collection, items)):
        bm25[rows] = lexical
        cosine[rows] = dense
    return bm25, cosine
