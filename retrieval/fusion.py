"""Fusion of several rankings of one query: RRF, CombSUM and CombMNZ, with score normalisation.

A ranking is a list of (passage id, score) pairs, best first. Every function returns a new
ranking, best first, ties broken by passage id (ascending) so that fusing the same inputs
always gives the same order. Pure Python: no Django, no models.
"""

import math
from collections import defaultdict
from collections.abc import Hashable, Sequence

Ranking = Sequence[tuple[Hashable, float]]

NORMALISATIONS = ("minmax", "zscore", "none")
METHODS = ("rrf", "combsum", "combmnz")
RRF_K = 60


def ordered(scores: dict) -> list[tuple]:
    """(id, score) pairs sorted by score, highest first, ties by id."""
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def normalise(ranking: Ranking, method: str = "minmax") -> list[tuple]:
    """Scores mapped to a common scale: min-max to [0, 1] (all equal → 1), z-score (all equal → 0), or none."""
    if method not in NORMALISATIONS:
        raise ValueError(f"unknown normalisation {method!r}; use one of {', '.join(NORMALISATIONS)}")
    items = [(pid, float(score)) for pid, score in ranking]
    if method == "none" or not items:
        return items
    values = [score for _, score in items]
    if method == "minmax":
        low, high = min(values), max(values)
        if high == low:
            return [(pid, 1.0) for pid, _ in items]
        return [(pid, (score - low) / (high - low)) for pid, score in items]
    mean = math.fsum(values) / len(values)
    spread = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))
    if spread == 0:
        return [(pid, 0.0) for pid, _ in items]
    return [(pid, (score - mean) / spread) for pid, score in items]


def rrf(rankings: Sequence[Ranking], k: int = RRF_K, depth: int | None = None) -> list[tuple]:
    """Reciprocal rank fusion (Cormack et al. 2009): score = Σ 1 / (k + rank), ranks from 1; scores are ignored."""
    if k < 0:
        raise ValueError("the RRF constant k must not be negative")
    fused = defaultdict(float)
    for ranking in rankings:
        for rank, (pid, _) in enumerate(ranking[:depth] if depth else ranking, start=1):
            fused[pid] += 1.0 / (k + rank)
    return ordered(fused)


def combsum(rankings: Sequence[Ranking], normalisation: str = "minmax", depth: int | None = None) -> list[tuple]:
    """CombSUM (Fox & Shaw 1994): the sum of a passage's normalised scores over the rankings that have it."""
    return _combine(rankings, normalisation, depth, mnz=False)


def combmnz(rankings: Sequence[Ranking], normalisation: str = "minmax", depth: int | None = None) -> list[tuple]:
    """CombMNZ: CombSUM times the number of rankings that have the passage."""
    return _combine(rankings, normalisation, depth, mnz=True)


def fuse(rankings: Sequence[Ranking], method: str = "rrf", *, k: int = RRF_K, normalisation: str = "minmax",
         depth: int | None = None) -> list[tuple]:
    """Fuse by name: `rrf`, `combsum` or `combmnz`."""
    if method == "rrf":
        return rrf(rankings, k=k, depth=depth)
    if method == "combsum":
        return combsum(rankings, normalisation, depth)
    if method == "combmnz":
        return combmnz(rankings, normalisation, depth)
    raise ValueError(f"unknown fusion {method!r}; use one of {', '.join(METHODS)}")


def _combine(rankings, normalisation, depth, mnz):
    total, hits = defaultdict(float), defaultdict(int)
    for ranking in rankings:
        for pid, score in normalise(ranking[:depth] if depth else ranking, normalisation):
            total[pid] += score
            hits[pid] += 1
    if mnz:
        return ordered({pid: score * hits[pid] for pid, score in total.items()})
    return ordered(dict(total))
