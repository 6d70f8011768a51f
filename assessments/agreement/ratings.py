"""A units × assessors matrix of labels, missing cells allowed: what every agreement figure is computed from.

Labels are stored as codes: `codes[a, u]` is the index in `labels` of the label assessor `a` gave
unit `u`, NaN where the assessor gave none. `labels` is the value domain in scale order (ordinal,
interval and ratio) or sorted (nominal). Pure numpy; knows no campaigns and no database.
"""

from dataclasses import dataclass

import numpy as np

LEVELS = ("nominal", "ordinal", "interval", "ratio")


class AgreementInputError(ValueError):
    """Labels that make no matrix (an unknown level, a label outside the scale…); the message says which."""


@dataclass
class Ratings:
    """Labels of units by assessors at one level of measurement.

    codes: float array (assessors × units), the label's index in `labels`, NaN for no label.
    unit_groups: optional int array (units), e.g. each unit's topic, for per-group figures.
    unit_keys: optional array (units) of the units' ids, when they were given as integers.
    """

    level: str
    labels: list
    assessors: list
    codes: np.ndarray
    unit_groups: np.ndarray | None = None
    unit_keys: np.ndarray | None = None

    @property
    def unit_count(self) -> int:
        return self.codes.shape[1]

    def numeric_labels(self) -> np.ndarray:
        """The labels as numbers (interval and ratio levels need them)."""
        return np.asarray(self.labels, dtype=float)

    def subset(self, units) -> "Ratings":
        """The same assessors and labels on some units (a boolean mask or indexes)."""
        groups = self.unit_groups[units] if self.unit_groups is not None else None
        keys = self.unit_keys[units] if self.unit_keys is not None else None
        return Ratings(self.level, self.labels, self.assessors, self.codes[:, units], groups, keys)


def check_level(level):
    """AgreementInputError unless `level` is a level of measurement."""
    if level not in LEVELS:
        raise AgreementInputError(f"level: {level!r} is not one of {', '.join(LEVELS)}")


def label_order(labels) -> list:
    """Distinct labels sorted: numbers by value, anything else by its text."""
    distinct = set(labels)
    if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in distinct):
        return sorted(distinct)
    return sorted(distinct, key=str)


def ratings_from_triples(triples, level, *, scale=None, group_of=None) -> Ratings:
    """Ratings from (unit, assessor, label) triples; a later triple for the same cell replaces an earlier one.

    scale: the labels in scale order (ordinal); a label outside it is an AgreementInputError. Without a
    scale the labels are sorted (label_order). For interval and ratio every label must be a number.
    group_of: a function unit -> int group id (e.g. the unit's topic id) for per-group figures.
    Assessors are sorted by name.
    """
    check_level(level)
    units, assessors, cells = {}, {}, {}
    for unit, assessor, label in triples:
        u = units.setdefault(unit, len(units))
        a = assessors.setdefault(assessor, len(assessors))
        cells[a, u] = label
    labels = list(scale) if scale is not None else label_order(cells.values())
    code_of = {label: code for code, label in enumerate(labels)}
    unknown = [label for label in set(cells.values()) if label not in code_of]
    if unknown:
        raise AgreementInputError(f"label: {sorted(map(str, unknown))[0]!r} is not on the scale {labels}")
    if level in ("interval", "ratio"):
        bad = [label for label in labels if not _is_number(label)]
        if bad:
            raise AgreementInputError(f"label: {bad[0]!r} is not a number ({level} labels are numbers)")
    names = sorted(assessors, key=str)
    row_of = np.empty(len(names), dtype=np.int64)
    row_of[[assessors[name] for name in names]] = np.arange(len(names))  # first-seen index -> sorted row
    codes = np.full((len(assessors), len(units)), np.nan)
    if cells:
        index = np.array(list(cells), dtype=np.int64)
        codes[row_of[index[:, 0]], index[:, 1]] = [code_of[label] for label in cells.values()]
    groups = np.array([group_of(unit) for unit in units], dtype=np.int64) if group_of else None
    return Ratings(level, labels, names, codes, groups)


def ratings_from_arrays(unit_ids, assessor_ids, values, level, *, scale=None, assessor_names=None,
                        unit_groups=None) -> Ratings:
    """Ratings from parallel integer arrays (one entry per label), without a Python loop per label.

    unit_ids and assessor_ids are any integers (made dense here); values are numeric labels, on `scale`
    when given (else the sorted distinct values). A later entry for the same (unit, assessor) replaces an
    earlier one.
    assessor_names: {assessor id: name}; unit_groups: a function from the sorted distinct unit ids (an
    array) to their groups (an int array), or None.
    """
    check_level(level)
    unit_ids, assessor_ids, values = (np.asarray(x) for x in (unit_ids, assessor_ids, values))
    unit_keys, unit_index = _dense(unit_ids)
    assessor_keys, assessor_index = _dense(assessor_ids)
    labels = np.asarray(scale if scale is not None else np.unique(values))
    codes_of_values = np.searchsorted(labels, values)
    outside = (codes_of_values >= len(labels)) | (labels[np.minimum(codes_of_values, len(labels) - 1)] != values)
    if len(values) and outside.any():
        raise AgreementInputError(f"label: {values[outside][0]!r} is not on the scale {labels.tolist()}")
    codes = np.full((len(assessor_keys), len(unit_keys)), np.nan)
    cells = assessor_index * len(unit_keys) + unit_index
    last = np.full(codes.size, -1, dtype=np.int64)
    np.maximum.at(last, cells, np.arange(len(cells)))  # the last entry of each cell
    keep = last[last >= 0]
    codes.flat[cells[keep]] = codes_of_values[keep]
    names = [assessor_names.get(int(a), str(a)) if assessor_names else str(a) for a in assessor_keys.tolist()]
    groups = unit_groups(unit_keys) if unit_groups is not None else None
    return Ratings(level, labels.tolist(), names, codes, groups, unit_keys)


def _dense(ids):
    """(sorted distinct ids, each id's index in them), as np.unique(ids, return_inverse=True) gives them.

    Ids within a narrow range (assessor ids, say) are counted instead of sorted.
    """
    ids = np.asarray(ids).ravel()
    if not len(ids) or ids.dtype.kind not in "iu":
        return np.unique(ids, return_inverse=True)
    low, high = int(ids.min()), int(ids.max())
    if high - low > 4 * len(ids) + 1024:
        return np.unique(ids, return_inverse=True)
    present = np.zeros(high - low + 1, dtype=bool)
    offsets = ids - low
    present[offsets] = True
    position = np.cumsum(present) - 1
    return np.flatnonzero(present).astype(ids.dtype) + low, position[offsets]


def _is_number(label) -> bool:
    if isinstance(label, bool):
        return False
    if isinstance(label, (int, float)):
        return True
    try:
        float(label)
    except (TypeError, ValueError):
        return False
    return True
