"""Pool reusability: leave-one-run-out (Zobel, SIGIR 1998), the test of whether a pool's qrels can score a run that
did not contribute to it.

For each run r: the documents of the depth-k pool that only r brought (judged ones: its unique contribution) are
taken out of the qrels, as if r had not been pooled; every run is scored again with those qrels, and r's score and
rank are compared with its score and rank on the full qrels. A reusable pool changes little: a run's MAP drops by a
few per cent and its rank stays. Pure functions over {run: {topic: [doc, …]}} and {topic: {doc: grade}}, so files,
stored runs and a campaign's labels all go through the same code (evaluate_runs --leave-one-out, the console's
results page, the dashboard).
"""

import math
from dataclasses import dataclass

from assessments.evaluation.measures import aggregate, evaluate, parse_measure

DEFAULT_MEASURE = "AP"


@dataclass(frozen=True)
class LeftOut:
    """One run's figures with and without the documents only it contributed."""

    run: str
    score: float
    rank: int
    score_without: float
    rank_without: int
    unique: int  # judged documents only this run brought to the pool
    unique_relevant: int

    @property
    def change(self) -> float | None:
        """Relative change of the score, (without − with) / with; None when the score is 0."""
        return (self.score_without - self.score) / self.score if self.score else None


@dataclass(frozen=True)
class Reusability:
    measure: str
    depth: int
    rows: list  # LeftOut, best run (full qrels) first
    pooled: str = ""  # what "the pool" is, as the text says it: "the depth-20 pool" unless the caller knows better

    @property
    def pool_words(self) -> str:
        return self.pooled or f"the depth-{self.depth} pool"

    @property
    def mean_change(self) -> float | None:
        changes = [r.change for r in self.rows if r.change is not None]
        return math.fsum(changes) / len(changes) if changes else None

    @property
    def largest_drop(self) -> LeftOut | None:
        scored = [r for r in self.rows if r.change is not None]
        return min(scored, key=lambda r: r.change) if scored else None

    @property
    def largest_rank_change(self) -> int:
        return max((abs(r.rank_without - r.rank) for r in self.rows), default=0)

    def as_dict(self) -> dict:
        return {"measure": self.measure, "depth": self.depth, "pool": self.pool_words, "mean_change": self.mean_change,
                "largest_rank_change": self.largest_rank_change,
                "runs": [{"run": r.run, "score": r.score, "rank": r.rank, "score_without": r.score_without,
                          "rank_without": r.rank_without, "change": r.change, "unique": r.unique,
                          "unique_relevant": r.unique_relevant} for r in self.rows]}

    def lines(self) -> list[str]:
        out = [f"Pool reusability, leave-one-run-out (Zobel): each run's {self.measure} and rank with the full qrels "
               f"and without the judged documents only it brought to {self.pool_words}"]
        width = max([len(r.run) for r in self.rows] + [3])
        out.append(f"{'run':<{width}}  {self.measure:>8} {'rank':>4}  {'without':>8} {'rank':>4}  {'change':>7}  "
                   f"{'unique':>6} {'relevant':>8}")
        for r in self.rows:
            change = "–" if r.change is None else f"{r.change:+.1%}"
            out.append(f"{r.run:<{width}}  {r.score:>8.4f} {r.rank:>4}  {r.score_without:>8.4f} {r.rank_without:>4}  "
                       f"{change:>7}  {r.unique:>6} {r.unique_relevant:>8}")
        mean = self.mean_change
        out.append(f"mean change {'–' if mean is None else f'{mean:+.1%}'}; largest rank change "
                   f"{self.largest_rank_change}")
        return out


def _ranks(scores: dict) -> dict:
    """{run: rank from 1}, best score first, ties by name."""
    return {run: n for n, run in enumerate(sorted(scores, key=lambda r: (-scores[r], r)), start=1)}


def _scores(rankings: dict, qrels: dict, measure) -> dict:
    return {run: aggregate(evaluate(qrels, ranking, [measure]), [measure]).get(measure, 0.0)
            for run, ranking in rankings.items()}


def leave_one_run_out(rankings: dict, qrels: dict, depth: int, measure: str = DEFAULT_MEASURE, *,
                      contributors: dict | None = None, pooled: str = "") -> Reusability:
    """Each run of `rankings` scored ({topic: [doc…]} best first) against `qrels` with and without the judged
    documents only it contributed to the depth-`depth` pool of these runs; relevant means the measure's own
    threshold (e.g. AP(rel=2)). `contributors` {(topic, doc): {runs that brought it}} is the pool as it was built
    (a fused or cut pool is not the runs' depth-k union), then `pooled` says what it is."""
    if depth < 1:
        raise ValueError("depth: at least 1")
    parsed = parse_measure(measure)
    if contributors is None:
        contributors = {}  # (topic, doc) -> set of runs that pooled it
        for run, ranking in rankings.items():
            for topic, docs in ranking.items():
                for doc in docs[:depth]:
                    contributors.setdefault((topic, doc), set()).add(run)
    full = _scores(rankings, qrels, parsed)
    full_rank = _ranks(full)
    rows = []
    for run in rankings:
        unique = {(t, d) for (t, d), who in contributors.items() if who == {run} and d in qrels.get(t, {})}
        reduced = {t: {d: g for d, g in judged.items() if (t, d) not in unique} for t, judged in qrels.items()}
        scores = _scores(rankings, reduced, parsed)
        rows.append(LeftOut(run, full[run], full_rank[run], scores[run], _ranks(scores)[run], len(unique),
                            sum(1 for t, d in unique if qrels[t][d] >= parsed.rel)))
    rows.sort(key=lambda r: r.rank)
    return Reusability(str(parsed), depth, rows, pooled)
