"""Labels gathered elsewhere: a CSV of `item,assessor,label` (a header line, then one label per line).

Missing cells are allowed: an (item, assessor) pair without a line, or a line with an empty label,
is simply not labelled. Every problem is collected with its file, line and field before anything is
computed: a missing column, a line with the wrong number of fields, an empty item or assessor, a label
that is not a number where the level needs numbers (interval, ratio; ordinal without a scale), a
label outside the given scale, and the same (item, assessor) given two different labels. The same
pair given the same label twice is fine.
"""

import csv

from assessments.agreement.ratings import LEVELS, Ratings, ratings_from_triples
from assessments.agreement.statistics import NOTES, figures
from retrieval.ingest import Problems, read_text

COLUMNS = ("item", "assessor", "label")


def read_labels_csv(path, level, *, scale=None) -> Ratings:
    """Ratings of the CSV at `path` at `level`; ImportFailed (retrieval.ingest) listing every problem.

    scale: the labels in order, for ordinal labels that are not numbers (e.g. ["low", "mid", "high"]).
    Numeric labels are compared as numbers ("3" and "3.0" are the same label).
    """
    problems = Problems(path)
    if level not in LEVELS:
        problems.fail(f"{level!r} is not one of {', '.join(LEVELS)}", field="level")
    text = read_text(path)
    rows = csv.reader(text.splitlines())
    header = [name.strip().lower() for name in next(rows, [])]
    missing = [name for name in COLUMNS if name not in header]
    if missing:
        problems.fail(f"missing column {', '.join(missing)} (the header must name item, assessor, label)",
                      line=1, field=missing[0])
    where = {name: header.index(name) for name in COLUMNS}
    numeric = level in ("interval", "ratio") or (level == "ordinal" and scale is None)
    cells, triples = {}, []
    for line, fields in enumerate(rows, start=2):
        if not fields or not "".join(fields).strip():
            continue  # a blank line
        if len(fields) != len(header):
            problems.add(f"expected {len(header)} fields ({','.join(header)}), got {len(fields)}", line=line)
            continue
        item, assessor, label = (fields[where[name]].strip() for name in COLUMNS)
        if not item:
            problems.add("empty", line=line, field="item")
        if not assessor:
            problems.add("empty", line=line, field="assessor")
        if not label or not item or not assessor:
            continue  # an empty label is a missing cell
        value = _parse(label, numeric, scale, line, problems)
        if value is None:
            continue
        earlier = cells.setdefault((item, assessor), (value, line))
        if earlier[0] != value:
            problems.add(f"{assessor!r} gave item {item!r} the label {label!r} here and {earlier[0]!r} on line "
                         f"{earlier[1]}", line=line, field="label")
            continue
        if earlier[1] == line:
            triples.append((item, assessor, value))
    problems.raise_if_any()
    return ratings_from_triples(triples, level, scale=scale)


def csv_report(path, level, *, scale=None) -> dict:
    """The agreement figures of a labels CSV, in the shape of a campaign report with one layer, `labels`.

    {"input": path, "layers": [{"layer": "labels", "level": level, ...statistics.figures, "topics": []}],
     "ranking_stability": None, "notes": [...]}; ImportFailed for a bad file.
    """
    ratings = read_labels_csv(path, level, scale=scale)
    layer = {"layer": "labels", "level": level, **figures(ratings), "topics": []}
    return {"input": str(path), "layers": [layer], "ranking_stability": None, "notes": list(NOTES)}


def _parse(label, numeric, scale, line, problems):
    if scale is not None and label not in scale:
        problems.add(f"{label!r} is not on the scale {', '.join(scale)}", line=line, field="label")
        return None
    if not numeric:
        return label
    try:
        value = float(label)
    except ValueError:
        problems.add(f"{label!r} is not a number", line=line, field="label")
        return None
    if value != value or value in (float("inf"), float("-inf")):
        problems.add(f"{label!r} is not a finite number", line=line, field="label")
        return None
    return int(value) if value.is_integer() else value
