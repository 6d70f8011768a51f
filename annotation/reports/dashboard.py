"""The organiser's dashboard of a campaign: figures gathered in a few queries, and charts laid out as plain data.

Every chart is a dict the template draws as inline SVG (no script, no outside assets) with its numbers
in a table under it: {"id", "title", "kind" ("hbars", "stacked", "lines", "matrix"), geometry..., "table":
{"head": [...], "rows": [[...]]}}. Text in charts comes from names and labels and is escaped by the
template like everything else.

What it shows:
- progress over time: judgement changes per day (per hour when everything happened within two days, per minute
  within an hour), cumulative, one line per assessor; current labels per assessor and per topic; units done;
- label distributions per assessor, of the layers the campaign's task uses (_layer_charts): page-level grades
  (MUST/SHOULD/CAN/removed) and transitions (outline), grades (plot; ad hoc named by its scale);
- agreement per layer with confusion matrices, from annotation.reports.agreement.campaign_report;
- review pass rates per assessor and per review;
- time per judgement: the active time the pages send with each change (JudgementChange.active_ms,
  idle time not counted): median and quartiles per assessor and the distribution over time bins;
- machine labels, where a source labelled the campaign's topics: against the assessors and on the system
  ranking (annotation.reports.machine), apart from the figures above.
"""

import statistics
from collections import Counter, defaultdict
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db.models import Count, Q
from django.db.models.functions import TruncDay, TruncHour, TruncMinute

from annotation.models import Assignment, Review
from annotation.reports.machine import machine_section
from annotation.services import adhoc, nugget_support
from annotation.services.qualification import page_grades
from annotation.units import tasks
from assessments.agreement.statistics import kept_labels
from assessments.labels import OUTLINE_GRADES
from assessments.models import CANDIDATE_GRADES, Judgement, JudgementChange, Layer, Transition

PALETTE = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d", "#475569"]
GRADE_LABELS = OUTLINE_GRADES
TIME_BINS = [(2_000, "< 2 s"), (5_000, "2–5 s"), (10_000, "5–10 s"), (30_000, "10–30 s"), (60_000, "30–60 s"),
             (120_000, "1–2 min"), (None, "> 2 min")]
LABEL_W, BAR_W, ROW_H = 170, 420, 22
CHAR_W = 7.5  # the widest average character of the charts' 12px text, for room around a matrix's labels
ROW_LABEL, COLUMN_LABEL = 20, 14  # characters of a matrix's row and (slanted) column labels drawn
TOPIC_BARS = 60  # bars in the per-topic chart (its table lists every topic)
MATRIX_LABELS = 12  # a confusion matrix shows at most this many labels (the rest summed as "(other)")


def _layer_charts(campaign):
    """The label-distribution charts of the layers the campaign's task uses (its task's `charts`)."""
    charts = {"grades": _grade_distribution, "transitions": _transition_distribution,
              "plot grades": _plot_distribution, "ad hoc grades": _adhoc_distribution}
    return [charts[name] for name in tasks.of(campaign).charts]


def dashboard(campaign) -> dict:
    """Everything the dashboard page shows for `campaign`."""
    assignments = Assignment.objects.filter(campaign=campaign)
    assessor_ids = set(assignments.values_list("assessor_id", flat=True))
    topic_ids = set(assignments.filter(qualification=False).values_list("topic_id", flat=True))
    names = dict(get_user_model().objects.filter(pk__in=assessor_ids).values_list("pk", "username"))
    order = sorted(names, key=names.get)
    waiting = _waiting(campaign, assignments)
    colours = {pk: PALETTE[i % len(PALETTE)] for i, pk in enumerate(order)}
    judgements = Judgement.objects.in_campaign(campaign).filter(
        topic_id__in=topic_ids, assessor_id__in=assessor_ids, adjudicated=False,
    ).without_practice(campaign)
    changes = JudgementChange.objects.filter(
        judgement__campaign_id=campaign.pk, judgement__topic_id__in=topic_ids, assessor_id__in=assessor_ids,
    ).exclude(source=JudgementChange.Source.ADJUDICATION)
    practice = assignments.practice_labels(prefix="judgement__")  # the rule without_practice applies
    if practice is not None:
        changes = changes.exclude(practice)
    return {
        "summary": _summary(campaign, assignments, names, order, waiting),
        "charts": [
            _progress_over_time(changes, names, order, colours),
            _per_assessor(judgements, names, order),
            _per_topic(assignments, judgements, waiting),
            *(chart(judgements, names, order, campaign) for chart in _layer_charts(campaign)),
            _review_rates(campaign, names, order),
            _active_time(changes, names, order),
        ],
        "agreement": agreement(campaign),
        "machine": _machine(campaign),
        "reviews": list(Review.objects.filter(assignment__campaign=campaign).exclude(status=Review.Status.OPEN)
                        .select_related("assignment__assessor", "assignment__topic", "assignment__run", "reviewer")
                        .order_by("-finished_at")[:100]),
    }


def _summary(campaign, assignments, names, order, waiting):
    counts = assignments.values("assessor_id").annotate(
        total=Count("id", filter=Q(qualification=False)),
        done=Count("id", filter=Q(qualification=False, status=Assignment.Status.DONE)),
        revise=Count("id", filter=Q(status=Assignment.Status.REVISE)),
        qualification=Count("id", filter=Q(qualification=True)),
    )
    by = {row["assessor_id"]: row for row in counts}
    waits = Counter(assessor_id for assessor_id, _, _ in waiting)  # a unit marked done that waits is not done
    done_waiting = Counter(assessor_id for assessor_id, _, stored in waiting if stored == Assignment.Status.DONE)
    rows = [[names[pk], by[pk]["total"], by[pk]["done"] - done_waiting[pk], by[pk]["revise"], by[pk]["qualification"]]
            for pk in order]
    head = ["assessor", "units", "done", "to revise", "qualification units"]
    found = None
    if tasks.of(campaign).waiting:
        head.append("waiting for nuggets")
        rows = [[*row, waits[pk]] for row, pk in zip(rows, order)]
        found = len(waiting)
    return {"head": head, "rows": rows, "units": sum(r[1] for r in rows), "done": sum(r[2] for r in rows),
            "waiting": found}


def _waiting(campaign, assignments) -> list[tuple]:
    """[(assessor id, topic's external id, stored status)] of the nugget support units (qualification aside) whose
    state is waiting (status.state over nugget_support.ready_banks, the queue's and the page's rule: whatever their
    stored status, so a unit marked done whose topic's bank was reopened counts as waiting, not done)."""
    if not tasks.of(campaign).waiting:
        return []
    support = assignments.filter(kind__in=tasks.of(campaign).waiting, qualification=False)
    ready = nugget_support.ready_banks(campaign.pk, set(support.values_list("topic_id", flat=True)))
    rows = support.exclude(topic_id__in=list(ready)).values_list("assessor_id", "topic__external_id", "status")
    return list(rows)


# Charts ----------------------------------------------------------------------------------------------------------


def hbars(chart_id, title, rows, *, unit="", fmt="{:,}", threshold=None):
    """A horizontal bar chart of [(label, value)] with a table of the same numbers."""
    top = max([v for _, v in rows if v is not None] + [threshold or 0, 1e-9])
    bars = []
    for i, (label, value) in enumerate(rows):
        width = 0 if value is None else round(BAR_W * value / top, 1)
        bars.append({"label": label, "y": i * ROW_H, "width": width, "text": "–" if value is None else fmt.format(value)})
    chart = {"id": chart_id, "title": title, "kind": "hbars", "bars": bars, "label_w": LABEL_W, "bar_w": BAR_W,
             "height": max(ROW_H, len(rows) * ROW_H) + 4, "width": LABEL_W + BAR_W + 80,
             "table": {"head": ["", unit or "value"], "rows": [[label, "–" if v is None else fmt.format(v)] for label, v in rows]}}
    if threshold is not None:
        chart["threshold_x"] = LABEL_W + round(BAR_W * threshold / top, 1)
    return chart


def stacked(chart_id, title, rows, categories, *, share=True):
    """Horizontal stacked bars: rows [(label, {category: count})], each row as shares of its total (or counts)."""
    colours = {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(categories)}
    top = max([sum(counts.values()) for _, counts in rows] + [1])
    bars = []
    for i, (label, counts) in enumerate(rows):
        total = sum(counts.values())
        x, segments = LABEL_W, []
        for category in categories:
            value = counts.get(category, 0)
            width = round(BAR_W * value / ((total if share else top) or 1), 1)
            if value:
                segments.append({"x": x, "width": width, "colour": colours[category], "category": category, "value": value})
            x += width
        bars.append({"label": label, "y": i * ROW_H, "segments": segments, "total": total})
    return {"id": chart_id, "title": title, "kind": "stacked", "bars": bars, "label_w": LABEL_W, "bar_w": BAR_W,
            "legend": [{"category": c, "colour": colours[c]} for c in categories],
            "height": max(ROW_H, len(rows) * ROW_H) + 4, "width": LABEL_W + BAR_W + 80,
            "table": {"head": ["", *categories, "total"],
                      "rows": [[label, *(counts.get(c, 0) for c in categories), sum(counts.values())]
                               for label, counts in rows]}}


def lines(chart_id, title, buckets, series, *, bucket_label):
    """Cumulative lines over time buckets: series [(name, colour, [value per bucket])]."""
    width, height, left, bottom = 640, 220, 50, 30
    top = max([max(values, default=0) for _, _, values in series] + [1])
    step = (width - left - 10) / max(1, len(buckets) - 1)
    drawn = []
    for name, colour, values in series:
        points = " ".join(
            f"{left + i * step:.1f},{height - bottom - (height - bottom - 10) * v / top:.1f}" for i, v in enumerate(values)
        )
        drawn.append({"name": name, "colour": colour, "points": points, "last": values[-1] if values else 0})
    ticks = [{"y": round(height - bottom - (height - bottom - 10) * f, 1), "text": f"{round(top * f):,}"} for f in (0, 0.5, 1)]
    xticks = []
    if buckets:
        last = len(buckets) - 1
        for i in sorted({0, last // 2, last}):
            anchor = "start" if i == 0 else "end" if i == last else "middle"
            xticks.append({"x": round(left + i * step, 1), "text": buckets[i], "anchor": anchor})
    return {"id": chart_id, "title": title, "kind": "lines", "series": drawn, "width": width, "height": height,
            "left": left, "base": height - bottom, "ticks": ticks, "xticks": xticks,
            "table": {"head": [bucket_label, *(name for name, _, _ in series)],
                      "rows": [[b, *(values[i] for _, _, values in series)] for i, b in enumerate(buckets)]}}


def matrix(chart_id, title, labels, counts, *, most=MATRIX_LABELS):
    """A confusion matrix as a grid of shaded cells with their counts (rows: first assessor, columns: second).

    Beyond `most` labels (the facet layer's labels are sets of one topic's facets, so a campaign has many),
    the most frequent are kept and the rest are summed into one "(other)" row and column.
    """
    if len(labels) > most:
        totals = [sum(counts[i]) + sum(row[i] for row in counts) for i in range(len(labels))]
        keep = kept_labels(totals, most).tolist()
        slot = {old: new for new, old in enumerate(keep)}
        folded = [[0] * most for _ in range(most)]
        for i, row in enumerate(counts):
            for j, value in enumerate(row):
                folded[slot.get(i, most - 1)][slot.get(j, most - 1)] += value
        labels, counts = [labels[i] for i in keep] + ["(other)"], folded
    cell = 34
    rows_short = [_short(str(lab), ROW_LABEL) for lab in labels]
    columns_short = [_short(str(lab), COLUMN_LABEL) for lab in labels]
    left = 10 + round(CHAR_W * max(map(len, rows_short), default=0))
    slant = round(CHAR_W * max(map(len, columns_short), default=0) * 0.71)  # a column label at 45°: as high as wide
    top_pad = 10 + slant
    top = max([max(row, default=0) for row in counts] + [1])
    cells = [
        {"x": left + j * cell, "y": top_pad + i * cell, "value": value, "opacity": round(0.08 + 0.85 * value / top, 2),
         "dark": value / top > 0.55}
        for i, row in enumerate(counts) for j, value in enumerate(row)
    ]
    return {"id": chart_id, "title": title, "kind": "matrix", "cells": cells, "cell": cell, "left": left,
            "top": top_pad, "labels": labels,
            "row_labels": [{"y": top_pad + i * cell + cell / 2 + 4, "text": lab, "short": short}
                           for i, (lab, short) in enumerate(zip(labels, rows_short))],
            "col_labels": [{"x": left + j * cell + cell / 2, "text": lab, "short": short}
                           for j, (lab, short) in enumerate(zip(labels, columns_short))],
            "width": left + cell * len(labels) + max(10, slant - cell // 2 + 6), "height": top_pad + cell * len(labels) + 10,
            "table": {"head": ["", *labels], "rows": [[lab, *row] for lab, row in zip(labels, counts)]}}


def _short(text, most):
    """`text` cut to `most` characters, its last an ellipsis when cut (as the template's truncatechars)."""
    return text if len(text) <= most else text[:most - 1] + "…"


# Figures ---------------------------------------------------------------------------------------------------------


BINS = [  # (changes all within, truncation, step, format, unit): the finest that fits
    (timedelta(hours=1), TruncMinute, timedelta(minutes=1), "%Y-%m-%d %H:%M", "minute"),
    (timedelta(days=2), TruncHour, timedelta(hours=1), "%Y-%m-%d %H:00", "hour"),
    (None, TruncDay, None, "%Y-%m-%d", "day"),
]


def _progress_over_time(changes, names, order, colours):
    times = changes.order_by().values_list("received_at", flat=True)
    first, last = (times.order_by("received_at").first(), times.order_by("-received_at").first())
    _, trunc, step, fmt, unit = next(
        b for b in BINS if b[0] is None or (first is not None and last - first < b[0]))
    rows = changes.order_by().annotate(bucket=trunc("received_at")).values("bucket", "assessor_id").annotate(n=Count("id"))
    per = defaultdict(dict)
    for row in rows:
        per[row["bucket"]][row["assessor_id"]] = row["n"]
    buckets = sorted(per)
    if step and buckets:  # fill the minutes or hours without changes so the lines keep time, from zero the step before
        filled, moment = [], buckets[0] - step
        while moment <= buckets[-1]:
            filled.append(moment)
            moment += step
        buckets = filled
    series = []
    for pk in order:
        total, values = 0, []
        for bucket in buckets:
            total += per.get(bucket, {}).get(pk, 0)
            values.append(total)
        series.append((names[pk], colours[pk], values))
    return lines("progress", f"Judgement changes over time, cumulative (per {unit})",
                 [b.strftime(fmt) for b in buckets], series, bucket_label=unit)


def _per_assessor(judgements, names, order):
    # A label cleared on its page is null, or an empty list where the page sends what is left of a list (ad hoc
    # evidence, plot spans: the last span taken out): neither is a label the page shows.
    counts = dict(judgements.exclude(value=None).exclude(value=[]).exclude(layer=Layer.NOTES)
                  .without_stale_transitions().order_by().values("assessor_id").annotate(n=Count("id"))
                  .values_list("assessor_id", "n"))
    return hbars("per-assessor", "Current labels per assessor", [(names[pk], counts.get(pk, 0)) for pk in order],
                 unit="labels")


def _per_topic(assignments, judgements, waiting):
    units = assignments.filter(qualification=False).order_by().values("topic__external_id").annotate(
        total=Count("id"), done=Count("id", filter=Q(status=Assignment.Status.DONE)))
    done_waiting = Counter(topic for _, topic, stored in waiting if stored == Assignment.Status.DONE)
    rows = sorted((r["topic__external_id"], r["done"] - done_waiting[r["topic__external_id"]], r["total"])
                  for r in units)
    title = "Units done per topic" + (f" (the first {TOPIC_BARS} of {len(rows)}; all in the numbers)"
                                      if len(rows) > TOPIC_BARS else "")
    chart = hbars("per-topic", title, [(t, done) for t, done, _ in rows[:TOPIC_BARS]], unit="units done")
    chart["table"] = {"head": ["topic", "units done", "units"], "rows": [list(r) for r in rows]}
    return chart


def _grade_distribution(judgements, names, order, campaign):
    rows = []
    for pk in order:
        grades = Counter(page_grades(judgements.filter(assessor_id=pk, layer__in=(Layer.FACET, Layer.REMOVAL))).values())
        rows.append((names[pk], {label: grades.get(g, 0) for g, label in GRADE_LABELS}))
    return stacked("grades", "Relevance per assessor (page level), share of passages", rows,
                   [label for _, label in GRADE_LABELS])


def _transition_distribution(judgements, names, order, campaign):
    per = defaultdict(Counter)
    known = {value: Transition(value).label for value in Transition.values}
    rows = (judgements.filter(layer=Layer.TRANSITION).exclude(value=None).without_stale_transitions().order_by()
            .values("assessor_id", "value")
            .annotate(n=Count("id")).values_list("assessor_id", "value", "n"))
    for assessor, value, n in rows:
        per[assessor][known.get(value, str(value)) if isinstance(value, str) else str(value)] += n
    categories = [t.label for t in Transition.offered()]
    categories += sorted({c for counts in per.values() for c in counts} - set(categories))
    return stacked("transitions", "Transitions per assessor, share of pairs", [(names[pk], per[pk]) for pk in order],
                   categories)


def _plot_distribution(judgements, names, order, campaign):
    per = defaultdict(Counter)
    for assessor, grade in judgements.filter(layer__in=CANDIDATE_GRADES, grade__isnull=False).values_list("assessor_id", "grade"):
        per[assessor][str(grade)] += 1
    categories = sorted({c for counts in per.values() for c in counts}, key=int, reverse=True)
    return stacked("plot-grades", "Plot grades per assessor, share of candidates",
                   [(names[pk], per[pk]) for pk in order], categories)


def _adhoc_distribution(judgements, names, order, campaign):
    """An ad hoc campaign's grades per assessor, each named as its scale (and the assessors' page) names it."""
    named = adhoc.named_grades(campaign) or {}  # a broken scale setting: the grades as numbers (its page says so)
    per = defaultdict(Counter)
    for assessor, grade in judgements.filter(layer__in=CANDIDATE_GRADES, grade__isnull=False).values_list("assessor_id", "grade"):
        per[assessor][named.get(grade, str(grade))] += 1
    categories = [named[v] for v in sorted(named, reverse=True)]
    categories += sorted({c for counts in per.values() for c in counts} - set(categories), key=lambda c: -int(c))
    return stacked("adhoc-grades", "Grades per assessor, share of documents", [(names[pk], per[pk]) for pk in order],
                   categories)


def _review_rates(campaign, names, order):
    rates = defaultdict(list)
    rows = Review.objects.filter(assignment__campaign=campaign, pass_rate__isnull=False).values_list(
        "assignment__assessor_id", "pass_rate")
    for assessor, rate in rows:
        rates[assessor].append(rate)
    data = [(names[pk], (sum(rates[pk]) / len(rates[pk])) if rates[pk] else None) for pk in order]
    chart = hbars("review-rates", f"Review pass rate per assessor (mean over reviews; threshold {campaign.review_threshold:.0%})",
                  data, unit="mean pass rate", fmt="{:.0%}", threshold=campaign.review_threshold)
    chart["table"] = {"head": ["assessor", "reviews", "mean pass rate", "lowest"],
                      "rows": [[names[pk], len(rates[pk]), f"{sum(rates[pk]) / len(rates[pk]):.0%}" if rates[pk] else "–",
                                f"{min(rates[pk]):.0%}" if rates[pk] else "–"] for pk in order]}
    return chart


def _active_time(changes, names, order):
    per = defaultdict(list)
    for assessor, ms in changes.filter(active_ms__isnull=False).order_by().values_list("assessor_id", "active_ms"):
        per[assessor].append(ms)
    labels = [label for _, label in TIME_BINS]
    rows = []
    for pk in order:
        counts = Counter()
        for ms in per[pk]:
            counts[next(label for limit, label in TIME_BINS if limit is None or ms < limit)] += 1
        rows.append((names[pk], counts))
    chart = stacked("active-time", "Active time per judgement change, share of changes per time bin", rows, labels)
    table = []
    for pk in order:
        values = sorted(per[pk])
        if values:
            q1, median, q3 = statistics.quantiles(values, n=4) if len(values) > 1 else (values[0],) * 3
            table.append([names[pk], len(values), f"{median / 1000:.1f}", f"{q1 / 1000:.1f}", f"{q3 / 1000:.1f}"])
        else:
            table.append([names[pk], 0, "–", "–", "–"])
    chart["medians"] = table
    chart["table"] = {"head": ["assessor", "changes timed", "median s", "lower quartile s", "upper quartile s",
                               *labels],
                      "rows": [[*row, *(counts.get(label, 0) for label in labels)] for row, (_, counts) in zip(table, rows)]}
    return chart


def _machine(campaign) -> dict:
    """Machine labels against the assessors (annotation.reports.machine), kept apart from every other figure, with a
    confusion-matrix chart per source that has labels in common with the people."""
    section = machine_section(campaign)
    for n, report in enumerate(section["sources"]):
        confusion = report["agreement"]["confusion"]
        if confusion["labels"]:
            report["chart"] = matrix(f"machine-confusion-{n}", f"People (rows) × {report['name']} (columns)",
                                     [str(x) for x in confusion["labels"]], confusion["matrix"])
    return section


def agreement(campaign) -> dict:
    """campaign_report's figures with a confusion-matrix chart per assessor pair, or a note when it is not there.

    Computed once per change of the campaign's judgements or assignments (agreement.cached), not on every view.
    """
    try:
        from annotation.reports.agreement import cached
    except ImportError:
        return {"available": False, "note": "Agreement statistics are not installed in this version."}
    return cached(campaign, "dashboard", lambda: _agreement(campaign))


def _agreement(campaign) -> dict:
    from annotation.reports.agreement import campaign_report

    # No per-topic agreement here; each pair's matrix comes folded to the labels its chart shows.
    report = campaign_report(campaign, per_topic=False, most=MATRIX_LABELS)
    layers = []
    for n, layer in enumerate(report.get("layers", [])):
        pairs = []
        for m, pair in enumerate(layer.get("pairs", [])):
            confusion = pair.get("confusion") or {}
            pair = dict(pair)
            if confusion.get("labels"):
                pair["chart"] = matrix(f"confusion-{n}-{m}", f"{pair['a']} (rows) × {pair['b']} (columns)",
                                       [str(x) for x in confusion["labels"]], confusion["matrix"])
            pairs.append(pair)
        layers.append({**layer, "pairs": pairs})
    return {"available": True, "layers": layers, "notes": report.get("notes", []),
            "ranking_stability": report.get("ranking_stability")}
