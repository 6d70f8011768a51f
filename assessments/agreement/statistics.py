"""Agreement figures of a Ratings matrix: Krippendorff's α, Fleiss' κ, pairwise Cohen's κ, all/none agree.

Conventions (each figure says how many units and assessors are behind it):
- A unit counts when at least two assessors labelled it ("pairable"); `units` is their number and
  `assessors` the number of assessors with a label on one of them. Units labelled once say nothing
  about agreement (Krippendorff's α leaves them out too).
- Krippendorff's α: the `krippendorff` package on the pairable units' value counts; nominal and
  ordinal on the labels' ranks in scale order, interval and ratio on the labels' values. The package
  holds a units × labels × labels array: past DENSE_CELLS the labels nobody gave are left out (they
  change no term of α), and where that is still too many (the facet layer's labels are sets of facets:
  thousands on a large campaign) `alpha_in_blocks` computes the same 1 - Σ o·d / Σ e·d with the
  package's distance metric from the coincidences each unit makes between its own few labels (the same
  figure to rounding). Value counts are kept per unit (UnitCounts), never as units × labels.
- Fleiss' κ (statsmodels' arithmetic) needs the same number of raters per unit: it is computed on the units
  labelled by the most common number of assessors (ties: the larger number); `fleiss_units` and
  `fleiss_raters` say which.
- all_agree: share of pairable units where every assessor gave the same label; none_agree: share
  where all assessors gave different labels (seed 001 Table 4). With two assessors none_agree is
  1 - all_agree.
- Pairs: Cohen's κ (statsmodels' cohens_kappa arithmetic) on the pair's contingency table over the units both
  labelled, and for ordinal, interval and ratio also the linearly weighted κ (distances of ranks for
  ordinal, of values for interval and ratio); the table is the confusion matrix (rows: a's labels,
  columns: b's, over the whole label domain (past FULL_DOMAIN_LABELS labels, those the pair used), or folded to
  the most frequent labels when asked).
- A figure that cannot be computed (one label only, one assessor, no overlap) is None, and
  `reasons[figure]` says why; no NaN ever comes out.
"""

import math
from dataclasses import dataclass
from itertools import combinations

import krippendorff
import numpy as np

from assessments.agreement.ratings import Ratings

NOTES = [
    "units: units labelled by two assessors or more (the ones agreement is about); assessors: those with a label "
    "on one of them.",
    "Fleiss' κ: the units labelled by the most common number of assessors (fleiss_units, fleiss_raters).",
    "none agree: the share of units where every assessor gave a different label.",
    "Weighted κ: linear weights, on ranks (ordinal) or values (interval, ratio).",
]
DENSE_CELLS = 1 << 16  # units × labels² up to which krippendorff.alpha gets the value counts itself
BLOCK_ROWS = 256  # labels per block of expected coincidences in alpha_in_blocks


@dataclass
class UnitCounts:
    """How many assessors gave each label to each unit, a unit's few labels at a time (not units × labels).

    labels[u, k]: the k-th distinct label (code) of unit u, -1 past its last; counts[u, k]: how many gave it.
    """

    labels: np.ndarray
    counts: np.ndarray
    label_count: int

    def __len__(self):
        return len(self.labels)

    def per_unit(self) -> np.ndarray:
        return self.counts.sum(axis=1)

    def totals(self, rows=slice(None)) -> np.ndarray:
        """How often each label was given (over the units `rows`), every label of the domain."""
        given = self.counts[rows] > 0
        return np.bincount(self.labels[rows][given], weights=self.counts[rows][given], minlength=self.label_count)

    def dense(self, columns=None) -> np.ndarray:
        """units × labels (or × `columns`, the label codes kept, in order): the package's value counts."""
        columns = np.arange(self.label_count) if columns is None else columns
        position = np.full(self.label_count, -1)
        position[columns] = np.arange(len(columns))
        out = np.zeros((len(self), len(columns)), dtype=np.int64)
        units, slots = np.nonzero(self.counts)
        out[units, position[self.labels[units, slots]]] = self.counts[units, slots]
        return out


def value_counts(codes, label_count) -> UnitCounts:
    """Each unit's labels and how many assessors gave each (codes: assessors × units, NaN for none)."""
    ordered = np.sort(codes, axis=0)  # NaN last
    given = ~np.isnan(ordered)
    first = given.copy()
    first[1:] &= ordered[1:] != ordered[:-1]
    slot = np.cumsum(first, axis=0) - 1
    width = max(int(first.sum(axis=0).max(initial=0)), 1)
    unit = np.broadcast_to(np.arange(codes.shape[1]), codes.shape)
    labels = np.full((codes.shape[1], width), -1, dtype=np.int64)
    counts = np.zeros((codes.shape[1], width), dtype=np.int64)
    labels[unit[first], slot[first]] = ordered[first].astype(np.int64)
    np.add.at(counts, (unit[given], slot[given]), 1)
    return UnitCounts(labels, counts, label_count)


def krippendorff_alpha(counts: UnitCounts, ratings: Ratings, *, dense_cells=None):
    """(α, reason): α of the pairable units' value counts, or (None, why not).

    krippendorff.alpha itself when units × labels² stays within `dense_cells` (DENSE_CELLS), the labels
    nobody gave left out first when it does not; alpha_in_blocks when it still does not (module docstring).
    """
    if not len(counts):
        return None, "no unit was labelled by two assessors"
    used = np.flatnonzero(counts.totals())
    if len(used) < 2:
        return None, f"every label is {ratings.labels[used[0]]!r}: α is undefined with one category"
    if ratings.level in ("interval", "ratio"):
        domain = ratings.numeric_labels()
    else:
        domain = np.arange(len(ratings.labels))
    dense_cells = DENSE_CELLS if dense_cells is None else dense_cells
    if len(counts) * counts.label_count ** 2 <= dense_cells:
        value = krippendorff.alpha(value_counts=counts.dense(), value_domain=domain,
                                   level_of_measurement=ratings.level)
    elif len(counts) * len(used) ** 2 <= dense_cells:  # a label nobody gave adds nothing to any term
        value = krippendorff.alpha(value_counts=counts.dense(used), value_domain=domain[used],
                                   level_of_measurement=ratings.level)
    else:
        value = alpha_in_blocks(counts, domain, ratings.level)
    return _finite(value, "α is undefined for these labels")


def alpha_in_blocks(counts: UnitCounts, domain, level, *, rows=BLOCK_ROWS) -> float:
    """krippendorff.alpha(value_counts=counts.dense(), value_domain=domain, level_of_measurement=level),
    without its units × labels × labels array.

    The coincidences o: each unit adds c·cᵀ - diag(c), over its number of labels less one, between the few
    labels it has, summed per label pair. The expected coincidences e and the distances d (the package's
    metric) are taken `rows` labels at a time; α = 1 - Σ o·d / Σ e·d.
    """
    metric = _package_metric(level)
    label_count = counts.label_count
    width = counts.labels.shape[1]
    unit_counts = counts.counts.astype(float)
    pair = unit_counts[:, :, None] * unit_counts[:, None, :]
    pair[:, np.arange(width), np.arange(width)] -= unit_counts
    pair /= (np.maximum(counts.per_unit(), 2) - 1)[:, None, None]
    present = (counts.counts[:, :, None] > 0) & (counts.counts[:, None, :] > 0)
    keys = (counts.labels[:, :, None] * label_count + counts.labels[:, None, :])[present]
    keys, where = np.unique(keys, return_inverse=True)
    o = np.bincount(where.ravel(), weights=pair[present])
    first, second = keys // label_count, keys % label_count
    n_v = np.bincount(second, weights=o, minlength=label_count)
    observed = (o * metric(domain[first], domain[second], first, second, n_v)).sum()
    expected, total = 0.0, n_v.sum()
    index = np.arange(label_count)
    for start in range(0, label_count, rows):
        block = index[start:start + rows]
        e = np.outer(n_v[block], n_v)
        e[np.arange(len(block)), block] -= n_v[block]
        d = metric(domain[block, None], domain[None, :], block[:, None], index[None, :], n_v)
        expected += (e / (total - 1) * d).sum()
    return 1 - observed / expected


def _package_metric(level):
    """The krippendorff package's distance metric of a level of measurement (the one alpha uses)."""
    from krippendorff import krippendorff as package

    return package._distance_metric(level)


def fleiss(counts: UnitCounts):
    """(κ, reason, units, raters): Fleiss' κ over the units labelled by the most common number of assessors.

    The arithmetic of statsmodels' fleiss_kappa(table, method="fleiss"), in its order, on the units' own
    labels instead of a units × labels table.
    """
    if not len(counts):
        return None, "no unit was labelled by two assessors", 0, 0
    per_unit = counts.per_unit()
    frequency = np.bincount(per_unit)
    raters = len(frequency) - 1 - int(np.argmax(frequency[::-1]))  # the most common number; ties: the larger
    rows = per_unit == raters
    table_units = int(rows.sum())
    column_sums = counts.totals(rows)
    if np.count_nonzero(column_sums) < 2:
        return None, "one label only: κ is undefined", table_units, raters
    mine = counts.counts[rows].astype(float)
    n_total, n_rat = mine.sum(), float(raters)
    p_cat = column_sums / n_total
    p_rat = ((mine * mine).sum(1) - n_rat) / (n_rat * (n_rat - 1.0))
    p_mean_exp = (p_cat * p_cat).sum()
    value = (p_rat.mean() - p_mean_exp) / (1 - p_mean_exp)
    value, reason = _finite(value, "κ is undefined for these labels")
    return value, reason, table_units, raters


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
        return _finite(_cohens_kappa(table, np.asarray(weights, float)), "κ is undefined")
    return _finite(_cohens_kappa(table), "κ is undefined")


def _cohens_kappa(table, weights=None) -> float:
    """statsmodels' cohens_kappa(table, weights=weights, wt="linear", return_results=False), in its order (the tests
    check it against statsmodels, which the suite alone installs): simple κ from the diagonal, or linearly weighted
    κ with distance |w_i - w_j| / (w_last - w_first) between label positions."""
    table = np.asarray(table, float)
    nobs = table.sum()
    prob_exp = (table.sum(0) / nobs) * (table.sum(1) / nobs)[:, None]
    if weights is None:
        agree_exp = np.diag(prob_exp).sum()
        return (np.diag(table).sum() / nobs - agree_exp) / (1 - agree_exp)
    distance = np.abs(weights[:, None] - weights) / (weights[-1] - weights[0])
    return 1 - (distance * table).sum() / nobs / (distance * prob_exp).sum()


def cohen_of_codes(a, b, label_count):
    """(κ, reason): cohen() of the table of a's against b's codes (two int arrays, one entry per unit both
    labelled), from the table's diagonal and margins only: the figures statsmodels' cohens_kappa computes,
    in the same order, without its labels × labels arrays (thousands of labels in the facet layer)."""
    n = len(a)
    if n == 0:
        return None, "no unit labelled by both"
    rows, cols = np.bincount(a, minlength=label_count), np.bincount(b, minlength=label_count)
    if math.isclose((rows * cols / n).sum(), n):
        return None, "both gave one and the same label throughout: κ is undefined"
    agree_exp = (cols / float(n) * (rows / float(n))).sum()
    return _finite((np.count_nonzero(a == b) / float(n) - agree_exp) / (1 - agree_exp), "κ is undefined")


def kept_labels(totals, most) -> np.ndarray:
    """The indexes of the `most` - 1 labels with the largest totals (ties: the first), in label order: the
    labels a confusion matrix of at most `most` labels keeps, the rest summed as one "(other)"."""
    return np.sort(np.argsort(-np.asarray(totals), kind="stable")[: most - 1])


def agree_shares(counts: UnitCounts):
    """(all agree, none agree) as shares of the pairable units, or (None, None) when there are none."""
    if not len(counts):
        return None, None
    per_unit = counts.per_unit()
    top = counts.counts.max(axis=1)
    return float(np.mean(top == per_unit)), float(np.mean(top == 1))


def figures(ratings: Ratings, *, pairs=True, most=None) -> dict:
    """Every figure of the module docstring for one matrix, JSON-ready; `pairs` adds the per-pair figures
    (their confusion matrices folded to `most` labels, see pair_figures)."""
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
        result["pairs"] = pair_figures(ratings, most=most)
    return result


def pair_figures(ratings: Ratings, *, most=None) -> list:
    """Cohen's κ (weighted too, unless nominal) and the confusion matrix of every pair of assessors.

    most: a confusion matrix over more labels keeps the `most` - 1 most frequent (kept_labels) and sums
    the rest into a last label "(other)"; None: every label.
    """
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
        codes_a, codes_b = a[both].astype(np.int64), b[both].astype(np.int64)
        reasons = {}
        if weights is None:
            kappa, reasons["cohen_kappa"] = cohen_of_codes(codes_a, codes_b, count)
            weighted, reasons["weighted_kappa"] = None, "nominal labels have no distance"
        else:  # a scale: a few labels
            table = _table(codes_a, codes_b, count)
            kappa, reasons["cohen_kappa"] = cohen(table)
            weighted, reasons["weighted_kappa"] = cohen(table, weights)
        out.append({
            "a": ratings.assessors[i],
            "b": ratings.assessors[j],
            "units": int(both.sum()),
            "cohen_kappa": kappa,
            "weighted_kappa": weighted,
            "confusion": _confusion(ratings.labels, codes_a, codes_b, most),
            "reasons": {figure: reason for figure, reason in reasons.items() if reason},
        })
    return out


def _table(codes_a, codes_b, count):
    return np.bincount(codes_a * count + codes_b, minlength=count * count).reshape(count, count)


# Past this many labels (a facet layer's grow with the campaign: 1,825 in a 90-topic round) an unfolded confusion
# matrix keeps only the labels the pair used: the others' rows and columns are zeros, and all of them would be
# labels² numbers a pair.
FULL_DOMAIN_LABELS = 32


def _confusion(labels, codes_a, codes_b, most):
    count = len(labels)
    if most is None and count > FULL_DOMAIN_LABELS:
        used = np.unique(np.concatenate([codes_a, codes_b]))
        slot = np.zeros(count, dtype=np.int64)
        slot[used] = np.arange(len(used))
        return {"labels": [labels[k] for k in used.tolist()],
                "matrix": _table(slot[codes_a], slot[codes_b], len(used)).tolist()}
    if most is None or count <= most:
        return {"labels": list(labels), "matrix": _table(codes_a, codes_b, count).tolist()}
    keep = kept_labels(np.bincount(codes_a, minlength=count) + np.bincount(codes_b, minlength=count), most)
    slot = np.full(count, most - 1)
    slot[keep] = np.arange(most - 1)
    return {"labels": [labels[k] for k in keep.tolist()] + ["(other)"],
            "matrix": _table(slot[codes_a], slot[codes_b], most).tolist()}


def _finite(value, reason):
    value = float(value)
    return (value, None) if math.isfinite(value) else (None, reason)
