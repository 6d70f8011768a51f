"""When to stop, per topic, for the dashboard: relevant found against judgements made (a chart per topic), the
estimate of relevant candidates still unjudged with its interval, and whether the topic is stopped (by the target
recall, the budget, or the organiser's word), from annotation.services.judging_order. Reading only.

Counted over the campaign's human candidate grades (plot or ad hoc) (all assessors; a candidate's grade the upper median of theirs);
machine labels never count.
"""

from annotation.models import Assignment
from annotation.reports.dashboard import PALETTE, lines, stacked
from annotation.services import judging_order
from annotation.units import grading_kinds, tasks
from assessments.ordering import OrderError

CHARTS = 24  # topics drawn (the table lists every one)


def stopping(campaign) -> dict:
    """{"available", "note", "settings", "topics": [row…], "charts": [chart…], "reusability"} for the dashboard
    (reusability: the pool's leave-one-run-out, annotation.reports.results.reusability, for every campaign)."""
    from annotation.reports.results import reusability

    reuse = reusability(campaign)
    if not tasks.of(campaign).pooled:
        return {"available": False, "reusability": reuse,
                "note": "Judging orders and stopping apply to plot-labels and ad hoc campaigns."}
    try:
        settings = judging_order.settings_of(campaign)
    except judging_order.OrderSettingsInvalid as exc:
        return {"available": False, "reusability": reuse, "note": f"The judging-order settings are wrong: {exc}"}
    units = (Assignment.objects.filter(campaign=campaign, kind__in=grading_kinds(), qualification=False)
             .select_related("pool", "topic").order_by("topic__external_id", "pool__name"))
    pairs = {}
    for a in units:
        pairs.setdefault((a.pool_id, a.topic_id), a)
    rows, charts = [], []
    for (_, _), a in pairs.items():
        try:
            state = judging_order.topic_state(campaign, a.pool, a.topic_id, settings, a.topic.external_id)
        except OrderError as exc:
            rows.append({"topic": a.topic.external_id, "pool": a.pool.name, "error": str(exc)})
            continue
        est = state.estimate
        curve = state.found_curve()
        rows.append({
            "topic": a.topic.external_id, "pool": a.pool.name, "candidates": len(state.pool), "judged": est.judged,
            "found": est.found, "remaining": est.remaining, "low": est.low, "high": est.high,
            "recall": est.recall, "recall_low": est.recall_low, "stopped": state.stopped, "why": state.why,
            "override": state.override or "", "reason": est.reason,
        })
        if len(charts) < CHARTS:
            chart = lines(f"found-{a.topic.external_id}", f"{a.topic.external_id}: relevant found against judgements",
                          [str(n) for n in range(1, len(curve) + 1)],
                          [("relevant found", PALETTE[0], curve)], bucket_label="judgements")
            chart["topic"] = a.topic.external_id
            charts.append(chart)
    return {"available": True, "settings": settings, "topics": rows, "charts": charts, "reusability": reuse,
            "stops": (judging_order.STOP, judging_order.GO), "budget": budget_chart(campaign)}


BUDGET_PARTS = ("judged: random sample", "judged: picked by the order", "left")


def budget_chart(campaign) -> dict | None:
    """A hybrid campaign's budget on each pool as a stacked bar (judged in the random sample, judged where the order
    picked, left), counts of human judgements; None for another order."""
    budgets = judging_order.hybrid_budgets(campaign)
    if not budgets:
        return None
    chart = stacked("hybrid-budget", "Budget of human judgements: spent and left",
                    [(b["pool"], {BUDGET_PARTS[0]: b["sample_judged"], BUDGET_PARTS[1]: b["spent"] - b["sample_judged"],
                                  BUDGET_PARTS[2]: b["left"]}) for b in budgets], BUDGET_PARTS, share=False)
    chart["pools"] = budgets
    return chart
