"""Binary classification figures against human labels, in numpy: precision, recall, F1, ROC AUC and Cohen's κ.

A figure that cannot be computed (no predicted positive for precision, one class only for AUC, one label
throughout for κ) is None, never NaN, with the reason in `reasons`.
"""

import math

import numpy as np

FIGURES = ("precision", "recall", "f1", "auc", "kappa")


def binary_figures(truth, scores, threshold: float = 0.5) -> dict:
    """Figures of probabilities `scores` against 0/1 `truth`; a score ≥ threshold predicts relevant."""
    truth = np.asarray(truth, dtype=int)
    scores = np.asarray(scores, dtype=float)
    predicted = (scores >= threshold).astype(int)
    tp = int(np.sum((predicted == 1) & (truth == 1)))
    fp = int(np.sum((predicted == 1) & (truth == 0)))
    fn = int(np.sum((predicted == 0) & (truth == 1)))
    tn = int(np.sum((predicted == 0) & (truth == 0)))
    reasons = {}
    precision = tp / (tp + fp) if tp + fp else None
    if precision is None:
        reasons["precision"] = "nothing predicted relevant"
    recall = tp / (tp + fn) if tp + fn else None
    if recall is None:
        reasons["recall"] = "nothing relevant"
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None
    if f1 is None:
        reasons["f1"] = "nothing relevant, nothing predicted relevant"
    auc = roc_auc(truth, scores)
    if auc is None:
        reasons["auc"] = "one class only"
    kappa, why = cohen_kappa(truth, predicted)
    if kappa is None:
        reasons["kappa"] = why
    return {"precision": precision, "recall": recall, "f1": f1, "auc": auc, "kappa": kappa,
            "examples": int(len(truth)), "positives": int(truth.sum()), "confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
            "reasons": reasons}


def roc_auc(truth, scores) -> float | None:
    """Area under the ROC curve: the chance a random positive scores above a random negative (ties count half)."""
    truth = np.asarray(truth, dtype=int)
    scores = np.asarray(scores, dtype=float)
    positives, negatives = int(truth.sum()), int(len(truth) - truth.sum())
    if not positives or not negatives:
        return None
    ranks = _average_ranks(scores)
    return float((ranks[truth == 1].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def _average_ranks(values):
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), dtype=float)
    sorted_values = values[order]
    start = 0
    for end in range(1, len(values) + 1):
        if end == len(values) or sorted_values[end] != sorted_values[start]:
            ranks[order[start:end]] = (start + end + 1) / 2  # 1-based average rank of the tie
            start = end
    return ranks


def cohen_kappa(a, b, labels=None) -> tuple:
    """(κ, reason) of two label sequences of the same items; (None, why) when undefined."""
    a, b = list(a), list(b)
    if not a:
        return None, "no item labelled by both"
    labels = sorted(set(a) | set(b)) if labels is None else list(labels)
    index = {label: i for i, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for x, y in zip(a, b):
        table[index[x], index[y]] += 1
    n = table.sum()
    observed = np.trace(table) / n
    expected = float((table.sum(axis=1) * table.sum(axis=0)).sum() / n**2)
    if math.isclose(expected, 1.0):
        return None, "one and the same label throughout: κ is undefined"
    return float((observed - expected) / (1 - expected)), None


def mean_figures(folds) -> dict:
    """The mean of each figure over the folds that have it (None where no fold has it)."""
    out = {}
    for name in FIGURES:
        values = [f[name] for f in folds if f.get(name) is not None]
        out[name] = float(np.mean(values)) if values else None
    return out
