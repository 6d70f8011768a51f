"""Agreement reports (the dicts of annotation.reports.agreement.campaign_report and csvfile.csv_report) as text or CSV.

Text is a readable table per layer (figures to 3 decimals, "-" for a figure that cannot be computed);
CSV has one row per figure set, with a `scope` column: layer (overall), pair, topic, ranking.
Values keep full precision in CSV; an empty cell is a figure that cannot be computed.
"""

import csv
import io

from assessments.exporters.csvcells import safe_row

CSV_COLUMNS = (
    "scope", "layer", "level", "topic", "a", "b", "units", "assessors", "alpha", "fleiss_kappa", "fleiss_units",
    "fleiss_raters", "all_agree", "none_agree", "cohen_kappa", "weighted_kappa", "span_jaccard", "measure", "runs",
    "topics", "tau",
)
LAYER_FIGURES = ("units", "assessors", "alpha", "fleiss_kappa", "fleiss_units", "fleiss_raters", "all_agree",
                 "none_agree", "span_jaccard")
PAIR_FIGURES = ("units", "cohen_kappa", "weighted_kappa", "span_jaccard")


def report_csv(report) -> str:
    """The report as CSV text (CSV_COLUMNS)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for layer in report["layers"]:
        base = {"layer": layer["layer"], "level": layer["level"]}
        writer.writerow(_cells({"scope": "layer", **base, **_pick(layer, LAYER_FIGURES)}))
        for pair in layer.get("pairs", []):
            names = {"a": pair["a"], "b": pair["b"]}
            writer.writerow(_cells({"scope": "pair", **base, **names, **_pick(pair, PAIR_FIGURES)}))
        for topic in layer.get("topics", []):
            writer.writerow(_cells({"scope": "topic", **base, "topic": topic["topic"], **_pick(topic, LAYER_FIGURES)}))
    stability = report.get("ranking_stability") or {}
    for pair in stability.get("pairs", []):
        writer.writerow(_cells({
            "scope": "ranking", "layer": stability["layer"], "measure": stability["measure"], "a": pair["a"],
            "b": pair["b"], "runs": pair["runs"], "topics": pair["topics"], "tau": pair["tau"],
        }))
    return out.getvalue()


def report_text(report) -> str:
    """The report as readable tables."""
    lines = [_title(report), ""]
    if not report["layers"]:
        lines += ["No labels: nothing to compare.", ""]
    for layer in report["layers"]:
        lines += _layer_text(layer)
    stability = report.get("ranking_stability")
    if stability and stability.get("measure"):
        runs = stability["runs"]
        lines.append(f"Ranking stability: Kendall's τ of the runs ranked by {stability['measure']} with each "
                     f"assessor's {stability['layer']} qrels ({runs} run{'s' if runs != 1 else ''})")
        lines += [f"  ({reason})" for reason in sorted(set(stability["reasons"].values()))]
        lines += _table(("a", "b", "topics", "runs", "tau"),
                        [(p["a"], p["b"], p["topics"], p["runs"], _number(p["tau"]))
                         for p in stability["pairs"]], indent="  ")
        lines.append("")
    if report.get("notes"):
        lines.append("Notes:")
        lines += [f"- {note}" for note in report["notes"]]
    return "\n".join(lines).rstrip() + "\n"


def _title(report):
    if "campaign" in report:
        topic = f", topic {report['topic']}" if report.get("topic") else ""
        return f"Agreement in campaign {report['campaign']} ({report['task']}{topic})"
    return f"Agreement of the labels in {report['input']}"


def _layer_text(layer):
    spans = layer["level"] == "spans"
    head = f"{layer['layer']} ({layer['level']}): {_count(layer['units'], 'unit')} labelled by two or more of " \
           f"{_count(layer['assessors'], 'assessor')}"
    lines = [head]
    if spans:
        lines.append(f"  mean pairwise Jaccard {_number(layer['span_jaccard'])}")
    else:
        fleiss = f"{_number(layer['fleiss_kappa'])} ({_count(layer['fleiss_units'], 'unit')} × " \
                 f"{_count(layer['fleiss_raters'], 'rater')})"
        lines.append(f"  Krippendorff's α {_number(layer['alpha'])}   Fleiss' κ {fleiss}   "
                     f"all agree {_number(layer['all_agree'])}   none agree {_number(layer['none_agree'])}")
    reasons = sorted(set(layer["reasons"].values()))
    lines += [f"  ({reason})" for reason in reasons]
    if layer.get("pairs"):
        if spans:
            rows = [(p["a"], p["b"], p["units"], _number(p["span_jaccard"])) for p in layer["pairs"]]
            lines += _table(("a", "b", "units", "jaccard"), rows, indent="  ")
        else:
            rows = [(p["a"], p["b"], p["units"], _number(p["cohen_kappa"]), _number(p["weighted_kappa"]))
                    for p in layer["pairs"]]
            lines += _table(("a", "b", "units", "cohen κ", "weighted κ"), rows, indent="  ")
    if len(layer.get("topics", [])) > 1:
        if spans:
            rows = [(t["topic"], t["units"], t["assessors"], _number(t["span_jaccard"])) for t in layer["topics"]]
            lines += _table(("topic", "units", "assessors", "jaccard"), rows, indent="  ")
        else:
            rows = [(t["topic"], t["units"], t["assessors"], _number(t["alpha"]), _number(t["fleiss_kappa"]),
                     _number(t["all_agree"]), _number(t["none_agree"])) for t in layer["topics"]]
            lines += _table(("topic", "units", "assessors", "α", "Fleiss κ", "all agree", "none agree"), rows,
                            indent="  ")
    return lines + [""]


def _table(header, rows, indent=""):
    cells = [tuple(map(str, header))] + [tuple("-" if v is None else str(v) for v in row) for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return [indent + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in cells]


def _number(value):
    if value is None:
        return "-"
    return f"{value:.3f}"


def _count(n, noun):
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _pick(figures, names):
    return {name: figures[name] for name in names if name in figures}


def _cells(row):
    """A CSV row: None as an empty cell, texts a spreadsheet would run as a formula neutralised."""
    return safe_row({key: "" if value is None else value for key, value in row.items()})
