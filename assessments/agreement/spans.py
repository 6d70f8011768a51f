"""Agreement on marked spans (plot labelling: which characters of the query describe the plot).

Spans are not categories, so there is no α: two assessors' marks of one unit are compared by the
character-level Jaccard index, |A ∩ B| / |A ∪ B| of the sets of character offsets they cover
(overlapping spans of one assessor count once). Two empty marks agree fully (1.0). The figure is
the mean over every unit and every pair of assessors who both marked it.
"""

from itertools import combinations


def covered(spans) -> list[tuple[int, int]]:
    """The characters [start, end) spans cover, as sorted disjoint intervals (overlapping or touching spans merged):
    memory in the number of spans, not in their length (an evidence span may be a whole document)."""
    merged = []
    for start, end in sorted((int(s), int(e)) for s, e in spans if int(e) > int(s)):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _length(intervals) -> int:
    return sum(end - start for start, end in intervals)


def _overlap(a, b) -> int:
    """Characters two lists of sorted disjoint intervals share."""
    i = j = shared = 0
    while i < len(a) and j < len(b):
        shared += max(0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return shared


def jaccard(a, b) -> float:
    """|a ∩ b| / |a ∪ b| of two covered() interval lists, in characters; 1.0 when both are empty."""
    shared = _overlap(a, b)
    union = _length(a) + _length(b) - shared
    return shared / union if union else 1.0


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
