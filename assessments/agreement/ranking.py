"""System-ranking stability: do two assessors' qrels rank the runs the same way?

For every pair of assessors, the runs are scored by a measure (assessments.evaluation) with each
assessor's own qrels over the topics both assessors judged (a topic a run lacks scores 0, as in
trec_eval -c), each run's score is the mean over those topics, and Kendall's τ (scipy, τ-b:
ties allowed) compares the two rankings. Pure: qrels and runs in, figures out.
"""

import math
from itertools import combinations

from scipy.stats import kendalltau

from assessments.evaluation import aggregate, evaluate


def ranking_stability(qrels_by_assessor: dict, runs: dict, measure) -> dict:
    """Kendall's τ per assessor pair.

    qrels_by_assessor: {assessor: {topic: {doc: grade}}}; runs: {run name: {topic: [doc, …] best first}};
    measure: an assessments.evaluation Measure. Returns {"measure", "runs", "pairs": [{"a", "b", "topics",
    "runs", "tau", "p_value", "reasons"}], "reasons"}; τ is None (with a reason) when it cannot be computed.
    """
    result = {"measure": str(measure), "runs": len(runs), "pairs": [], "reasons": {}}
    if len(runs) < 2:
        result["reasons"]["tau"] = f"{len(runs)} run{'s' if len(runs) != 1 else ''}: a ranking needs two"
    for a, b in combinations(sorted(qrels_by_assessor, key=str), 2):
        qa, qb = qrels_by_assessor[a], qrels_by_assessor[b]
        topics = sorted(set(qa) & set(qb), key=str)
        pair = {"a": a, "b": b, "topics": len(topics), "runs": len(runs), "tau": None, "p_value": None, "reasons": {}}
        result["pairs"].append(pair)
        if not topics:
            pair["reasons"]["tau"] = "no topic judged by both"
            continue
        if len(runs) < 2:
            pair["reasons"]["tau"] = result["reasons"]["tau"]
            continue
        scores_a = [_score({t: qa[t] for t in topics}, run, measure) for run in runs.values()]
        scores_b = [_score({t: qb[t] for t in topics}, run, measure) for run in runs.values()]
        tau, p_value = kendalltau(scores_a, scores_b)
        if math.isfinite(tau):
            pair["tau"], pair["p_value"] = float(tau), float(p_value) if math.isfinite(p_value) else None
        else:
            pair["reasons"]["tau"] = "every run scores the same with one assessor's qrels: τ is undefined"
    return result


def _score(qrels, run, measure) -> float:
    return aggregate(evaluate(qrels, run, [measure]), [measure]).get(measure, 0.0)
