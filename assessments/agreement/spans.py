"""Agreement on marked spans (plot labelling: which characters of the query describe the plot).

Spans are not categories, so there is no α: two assessors' marks of one unit are compared by the
character-level Jaccard index, |A ∩ B| / |A ∪ B| of the sets of character offsets they cover
(overlapping spans of one assessor count once). Two empty marks agree fully (1.0). The figure is
the mean over every unit and every pair of assessors who both marked it.
"""

from itertools import combinations


def covered(spans) -> set:
    """Character offsets covered by [start, end) spans."""
    return {offset for start, end in spans for offset in range(start, end)}


def jaccard(a: set, b: set) -> float:
    """|a ∩ b| / |a ∪ b|; 1.0 when both are empty."""
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def span_figures(marks: dict) -> dict:
    """Mean pairwise Jaccard of {unit: {assessor: spans}}: overall and per assessor pair.

    Returns {"units", "assessors", "span_jaccard", "pairs": [{"a", "b", "units", "span_jaccard"}], "reasons"}
    with `units` the units marked by two assessors or more; None and a reason when there are none.
    """
    total, count, pair_sums, units, assessors = 0.0, 0, {}, 0, set()
    for by_assessor in marks.values():
        if len(by_assessor) < 2:
            continue
        units += 1
        sets = {assessor: covered(spans) for assessor, spans in by_assessor.items()}
        assessors.update(sets)
        for a, b in combinations(sorted(sets, key=str), 2):
            value = jaccard(sets[a], sets[b])
            total, count = total + value, count + 1
            pair = pair_sums.setdefault((a, b), [0.0, 0])
            pair[0] += value
            pair[1] += 1
    pairs = [
        {"a": a, "b": b, "units": n, "span_jaccard": value / n}
        for (a, b), (value, n) in sorted(pair_sums.items(), key=lambda item: tuple(map(str, item[0])))
    ]
    result = {"units": units, "assessors": len(assessors), "span_jaccard": total / count if count else None,
              "pairs": pairs, "reasons": {}}
    if not count:
        result["reasons"]["span_jaccard"] = "no unit was marked by two assessors"
    return result
