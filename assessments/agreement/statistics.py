"""Agreement figures of a Ratings matrix: Krippendorff's α, Fleiss' κ, pairwise Cohen's κ, all/none agree.

Conventions (each figure says how many units and assessors are behind it):
- A unit counts when at least two assessors labelled it ("pairable"); `units` is their number and
  `assessors` the number of assessors with a label on one of them. Units labelled once say nothing
  about agreement (Krippendorff's α leaves them out too).
- Krippendorff's α: the `krippendorff` package on the pairable units' value counts; nominal and
  ordinal on the labels' ranks in scale order, interval and ratio on the labels' values.
- Fleiss' κ (statsmodels) needs the same number of raters per unit: it is computed on the units
  labelled by the most common number of assessors (ties: the larger number); `fleiss_units` and
  `fleiss_raters` say which.
- all_agree: share of pairable units where every assessor gave the same label; none_agree: share
  where all assessors gave different labels (seed 001 Table 4). With two assessors none_agree is
  1 - all_agree.
- Pairs: Cohen's κ (statsmodels cohens_kappa) on the pair's contingency table over the units both
  labelled, and for ordinal, interval and ratio also the linearly weighted κ (distances of ranks for
  ordinal, of values for interval and ratio); the table is the confusion matrix (rows: a's labels,
  columns: b's, over the whole label domain).
- A figure that cannot be computed (one label only, one assessor, no overlap) is None, and
  `reasons[figure]` says why; no NaN ever comes out.
"""

import math
from itertools import combinations

import krippendorff
import numpy as np
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa

from assessments.agreement.ratings import Ratings

NOTES = [
    "units: units labelled by two assessors or more (the ones agreement is about); assessors: those with a label "
    "on one of them.",
    "Fleiss' κ: the units labelled by the most common number of assessors (fleiss_units, fleiss_raters).",
    "none_agree: every assessor gave a different label (seed 001 Table 4).",
    "Weighted κ: linear weights, on ranks (ordinal) or values (interval, ratio).",
]


def value_counts(codes, label_count) -> np.ndarray:
    """units × labels: how many assessors gave each label to each unit."""
    assessor_idx, unit_idx = np.nonzero(~np.isnan(codes))
    flat = unit_idx * label_count + codes[assessor_idx, unit_idx].astype(np.int64)
    return np.bincount(flat, minlength=codes.shape[1] * label_count).reshape(codes.shape[1], label_count)


def krippendorff_alpha(counts, ratings: Ratings):
    """(α, reason): α of the pairable units' value counts, or (None, why not)."""
    if not len(counts):
        return None, "no unit was labelled by two assessors"
    used = np.flatnonzero(counts.sum(axis=0))
    if len(used) < 2:
        return None, f"every label is {ratings.labels[used[0]]!r}: α is undefined with one category"
    if ratings.level in ("interval", "ratio"):
        domain = ratings.numeric_labels()
    else:
        domain = np.arange(len(ratings.labels))
    value = krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement=ratings.level)
    return _finite(value, "α is undefined for these labels")


def fleiss(counts):
    """(κ, reason, units, raters): Fleiss' κ over the units labelled by the most common number of assessors."""
    if not len(counts):
        return None, "no unit was labelled by two assessors", 0, 0
    per_unit = counts.sum(axis=1)
    frequency = np.bincount(per_unit)
    raters = len(frequency) - 1 - int(np.argmax(frequency[::-1]))  # the most common number; ties: the larger
    table = counts[per_unit == raters]
    if np.count_nonzero(table.sum(axis=0)) < 2:
        return None, "one label only: κ is undefined", len(table), raters
    value, reason = _finite(fleiss_kappa(table, method="fleiss"), "κ is undefined for these labels")
    return value, reason, len(table), raters


def cohen(table, weights=None):
    """(κ, reason) of a square contingency table; linearly weighted by `weights` (label positions) when given."""
    n = table.sum()
    if n == 0:
        return None, "no unit labelled by both"
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / n
    if weights is None and math.isclose(np.trace(expected), n):
        return None, "both gave one and the same label throughout: κ is undefined"
    if weights is not None:
        distance = np.abs(np.subtract.outer(weights, weights))
        if (distance * expected).sum() == 0:
            return None, "both gave one and the same label throughout: κ is undefined"
        value = cohens_kappa(table, weights=np.asarray(weights, float), wt="linear", return_results=False)
        return _finite(value, "κ is undefined")
    return _finite(cohens_kappa(table, return_results=False), "κ is undefined")


def agree_shares(counts):
    """(all agree, none agree) as shares of the pairable units, or (None, None) when there are none."""
    if not len(counts):
        return None, None
    per_unit = counts.sum(axis=1)
    top = counts.max(axis=1)
    return float(np.mean(top == per_unit)), float(np.mean(top == 1))


def figures(ratings: Ratings, *, pairs=True) -> dict:
    """Every figure of the module docstring for one matrix, JSON-ready; `pairs` adds the per-pair figures."""
    labelled = ~np.isnan(ratings.codes)
    pairable = labelled.sum(axis=0) >= 2
    counts = value_counts(ratings.codes[:, pairable], len(ratings.labels))
    reasons = {}
    alpha, reasons["alpha"] = krippendorff_alpha(counts, ratings)
    kappa, reasons["fleiss_kappa"], fleiss_units, fleiss_raters = fleiss(counts)
    all_agree, none_agree = agree_shares(counts)
    if all_agree is None:
        reasons["all_agree"] = reasons["none_agree"] = "no unit was labelled by two assessors"
    result = {
        "units": int(pairable.sum()),
        "assessors": int(labelled[:, pairable].any(axis=1).sum()),
        "alpha": alpha,
        "fleiss_kappa": kappa,
        "fleiss_units": fleiss_units,
        "fleiss_raters": fleiss_raters,
        "all_agree": all_agree,
        "none_agree": none_agree,
        "reasons": {figure: reason for figure, reason in reasons.items() if reason},
    }
    if pairs:
        result["pairs"] = pair_figures(ratings)
    return result


def pair_figures(ratings: Ratings) -> list:
    """Cohen's κ (weighted too, unless nominal) and the confusion matrix of every pair of assessors."""
    count = len(ratings.labels)
    weights = None
    if ratings.level == "ordinal":
        weights = np.arange(count, dtype=float)
    elif ratings.level in ("interval", "ratio"):
        weights = ratings.numeric_labels()
    out = []
    for i, j in combinations(range(len(ratings.assessors)), 2):
        a, b = ratings.codes[i], ratings.codes[j]
        both = ~np.isnan(a) & ~np.isnan(b)
        flat = a[both].astype(np.int64) * count + b[both].astype(np.int64)
        table = np.bincount(flat, minlength=count * count).reshape(count, count)
        reasons = {}
        kappa, reasons["cohen_kappa"] = cohen(table)
        if weights is None:
            weighted, reasons["weighted_kappa"] = None, "nominal labels have no distance"
        else:
            weighted, reasons["weighted_kappa"] = cohen(table, weights)
        out.append({
            "a": ratings.assessors[i],
            "b": ratings.assessors[j],
            "units": int(both.sum()),
            "cohen_kappa": kappa,
            "weighted_kappa": weighted,
            "confusion": {"labels": list(ratings.labels), "matrix": table.tolist()},
            "reasons": {figure: reason for figure, reason in reasons.items() if reason},
        })
    return out


def _finite(value, reason):
    value = float(value)
    return (value, None) if math.isfinite(value) else (None, reason)
