"""A campaign's results (/campaigns/<name>/results/): downloads of its own labels (qrels at each level and
aggregation, the Y3 assessments, plot labels, study results, the agreement CSV, the audit log) and the runs
evaluated against the current qrels, as a table and a chart. Downloads read only; nothing is written.

Each download calls the service its command calls: qrels through assessments.services.qrels with the
campaign's id (export_qrels --campaign), the Y3 files through export_car_assessments, plot labels and
choices through assessments.exporters.plot (export_plot_labels --campaign), the audit through
annotation.services.audit (export_audit --campaign), agreement through annotation.reports.agreement.
"""

import io
import json

from django.http import FileResponse, Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotation.reports.results import evaluation, nugget_evaluation, nugget_machine
from annotation.services.errors import ServiceError
from annotation.units import tasks
from annotation.views.console.common import campaign_of, organisers_only
from assessments.exporters import qrels as qrels_rules
from assessments.exporters.common import ExportFailed, Scope
from assessments.services.qrels import QrelsRequest, qrels_text

DOWNLOADS = ("qrels", "y3", "plot-labels", "choices", "adhoc", "nugget-scores", "nugget-assignments", "nugget-banks",
             "agreement", "audit", "evaluation")


@require_GET
@organisers_only
def results_page(request, name):
    """Downloads, and the runs scored against the campaign's current qrels (a nuggets campaign: its answers' nugget
    scores)."""
    campaign = campaign_of(name)
    aggregate = request.GET.get("aggregate", "majority")
    if aggregate not in qrels_rules.AGGREGATES or aggregate == "one":
        aggregate = "majority"
    nuggets = tasks.of(campaign).answers
    machine, status = None, 200
    if nuggets:
        try:  # the LLM's nugget assignments: beside the people's, and scored alone only when chosen by name
            machine = nugget_machine(campaign, request.GET.get("source"))
        except ServiceError as exc:
            machine, status = {"error": f"{exc.field}: {exc.message}"}, 400
    return render(request, "annotation/console/results.html", {
        "nugget_machine": machine,
        "campaign": campaign, "tab": "results", "aggregate": aggregate,
        "evaluation": None if nuggets else evaluation(campaign, aggregate=aggregate),
        "nugget_scores": nugget_evaluation(campaign) if nuggets else None,
        "aggregates": [a for a in qrels_rules.AGGREGATES if a != "one"], "levels": qrels_rules.LEVELS,
        "ties": qrels_rules.TIES,
        "assessors": sorted(set(campaign.assignments.values_list("assessor__username", flat=True))),
    }, status=status)


def _attachment(response, filename):
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _nugget_download(campaign, what, source):
    """A nuggets campaign's scores (JSON) or labels in the nuggetizer's assignments format (JSON lines), the
    people's or a machine source's, or its banks (export_nuggets: each nugget with who made it); ExportFailed naming
    campaign or source."""
    from annotation.services.nuggets import export_assignments, export_banks, scores

    if not tasks.of(campaign).answers:
        raise ExportFailed(f"campaign {campaign.name!r} is not a nuggets campaign", "campaign")
    try:
        if what == "nugget-scores":
            text, kind, name = json.dumps(scores(campaign, source=source), indent=1) + "\n", "json", "scores.json"
        elif what == "nugget-banks":
            text, kind, name = export_banks(campaign), "x-ndjson", "banks.jsonl"
        else:
            text, kind, name = export_assignments(campaign, source=source), "x-ndjson", "assignments.jsonl"
    except ServiceError as exc:
        raise ExportFailed(exc.message, exc.field) from None
    return _attachment(HttpResponse(text, content_type=f"application/{kind}; charset=utf-8"),
                       f"{campaign.name}-nugget-{name}")


def _failed(exc):
    return HttpResponse(f"Nothing was exported: {exc}", status=400, content_type="text/plain; charset=utf-8")


@require_GET
@organisers_only
def download(request, name, what):
    """One of the campaign's downloads (DOWNLOADS); 400 naming the option when it cannot be made."""
    campaign = campaign_of(name)
    if what not in DOWNLOADS:
        raise Http404("No such download.")
    track = getattr(campaign, "track", None)
    try:
        if what == "qrels":
            if tasks.of(campaign).answers:  # its labels grade answers against nuggets, not documents
                raise ExportFailed(f"campaign {campaign.name!r} judges answers against nuggets: it has no qrels; "
                                   "download its nugget scores", "campaign")
            level = request.GET.get("level") or "page"
            aggregate = request.GET.get("aggregate") or "majority"
            ties = request.GET.get("ties") or qrels_rules.TIES[0]
            lines = qrels_text(QrelsRequest(collection=track.collection.name if track else None, level=level,
                                            aggregate=aggregate, campaign_id=campaign.pk, ties=ties))
            response = StreamingHttpResponse(lines, content_type="text/plain; charset=utf-8")
            tied = "" if ties == qrels_rules.TIES[0] else f"-ties-{ties}"
            return _attachment(response, f"{campaign.name}-{level}-{aggregate.replace(':', '-')}{tied}.qrels")
        if what == "y3":
            return _attachment(FileResponse(_y3_zip(campaign, track), content_type="application/zip"),
                               f"{campaign.name}-y3-assessments.zip")
        if what in ("plot-labels", "choices"):
            return _plot(campaign, what)
        if what == "adhoc":
            from assessments.exporters.adhoc import adhoc_records

            lines = (json.dumps(record, ensure_ascii=False) + "\n" for record in adhoc_records(campaign.pk))
            return _attachment(StreamingHttpResponse(lines, content_type="application/x-ndjson; charset=utf-8"),
                               f"{campaign.name}-assessments.jsonl")
        if what in ("nugget-scores", "nugget-assignments", "nugget-banks"):
            return _nugget_download(campaign, what, request.GET.get("source"))
        if what == "agreement":
            from annotation.reports.agreement import campaign_report
            from assessments.agreement.formats import report_csv

            text = report_csv(campaign_report(campaign))
            return _attachment(HttpResponse(text, content_type="text/csv; charset=utf-8"),
                               f"{campaign.name}-agreement.csv")
        if what == "evaluation":
            return _evaluation(campaign, request.GET.get("aggregate") or "majority",
                               layout=request.GET.get("layout") or "table", run=request.GET.get("run"))
        return _audit(campaign)
    except ExportFailed as exc:
        return _failed(exc)


EVALUATION_LAYOUTS = ("table", "leaderboard", "trec_eval")


def _evaluation(campaign, aggregate, *, layout="table", run=None):
    """The runs' scores as the results page shows them (reports.results.evaluation), in one of three layouts:
    - table: TSV, a header of the measures, a line per run, best first; the page's notes as # lines above;
    - leaderboard: every run per topic and over all, `run measure topic value` a line (tab-separated);
    - trec_eval: one `run`'s lines as `trec_eval -q` prints them, `measure topic value`, topics then `all`."""
    if aggregate not in qrels_rules.AGGREGATES or aggregate == "one":
        raise ExportFailed(f"{aggregate[:100]!r} is not one of {', '.join(a for a in qrels_rules.AGGREGATES if a != 'one')}",
                           "aggregate")
    if tasks.of(campaign).answers:
        raise ExportFailed(f"campaign {campaign.name!r} is a nuggets campaign: its runs' scores are the nugget scores",
                           "campaign")
    if layout not in EVALUATION_LAYOUTS:
        raise ExportFailed(f"{layout[:100]!r} is not one of {', '.join(EVALUATION_LAYOUTS)}", "layout")
    found = evaluation(campaign, aggregate=aggregate)
    if "error" in found:
        raise ExportFailed(found["error"], "campaign")
    if layout != "table":
        lines = found["report"].lines(per_topic=True)
        name = f"{campaign.name}-{aggregate.replace(':', '-')}-leaderboard.tsv"
        if layout == "trec_eval":
            names = [r.name for r in found["report"].runs]
            if run not in names:
                raise ExportFailed(f"{(run or '')[:200]!r} is not one of the campaign's runs ({', '.join(names)})",
                                   "run")
            lines = [f"{measure:<22}\t{topic}\t{value}" for line in lines
                     for owner, measure, topic, value in [line.split("\t")] if owner == run]
            name = f"{campaign.name}-{aggregate.replace(':', '-')}-{run.replace('/', '-')}.trec_eval"
        return _attachment(HttpResponse("\n".join(lines) + "\n", content_type="text/plain; charset=utf-8"), name)
    lines = [f"# {note}" for note in found["notes"]]
    lines.append("\t".join(["run", *found["measures"]]))
    lines += ["\t".join([row[0], *("" if v is None else f"{v:.4f}" for v in row[1:])]) for row in found["rows"]]
    return _attachment(HttpResponse("\n".join(lines) + "\n", content_type="text/tab-separated-values; charset=utf-8"),
                       f"{campaign.name}-evaluation-{aggregate}.tsv")


def _y3_zip(campaign, track):
    """The campaign's own outline labels as Y3 files (one per topic and assessor), zipped into a temporary file that
    the download streams."""
    from assessments.exporters.car_y3 import zipped

    if track is None:
        raise ExportFailed("the campaign has no topics", "campaign")
    return zipped(Scope(collection=track.collection, topic_ids=None, assessor=None, campaign_id=campaign.pk))


def _plot(campaign, what):
    from assessments.exporters.plot import choice_rows, plot_label_records, resolve_pools, write_choices

    pools = resolve_pools(campaign=campaign.name)
    out = io.StringIO()
    if what == "choices":
        write_choices(choice_rows(pools), "-", "csv", stream=out)
        return _attachment(HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8"),
                           f"{campaign.name}-choices.csv")
    lines = (json.dumps(record, ensure_ascii=False) + "\n" for record in plot_label_records(pools))
    return _attachment(StreamingHttpResponse(lines, content_type="application/x-ndjson; charset=utf-8"),
                       f"{campaign.name}-plot-labels.jsonl")


def _audit(campaign):
    from annotation.services.audit import change_rows

    lines = (json.dumps(row, ensure_ascii=False, default=str) + "\n" for row in change_rows(campaign=campaign))
    return _attachment(StreamingHttpResponse(lines, content_type="application/x-ndjson; charset=utf-8"),
                       f"{campaign.name}-audit.jsonl")
