"""Giving out a campaign's work (/campaigns/<name>/work/): assign topics in bulk with overlap k (as
manage.py assign_campaign does), each assessor's load, pace and active time, and taking back or reassigning
work nobody has started."""

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from annotation.roles import Role
from annotation.services.assignment import AssignmentError, assign_campaign, campaign_units, nugget_stage
from annotation.services.workload import WorkInvalid, held_topics, loads, reassign, take_back
from annotation.units import tasks
from annotation.views.console.common import campaign_of, organisers_only
from annotation.views.console.forms import AssignForm
from config.ids import parse_id


def _assessors():
    return list(get_user_model().objects.filter(is_active=True, groups__name=Role.ASSESSOR).order_by("username"))


def _sources(campaign):
    """The machine label sources triage may use: the campaign's own annotators, LLM judges and zero-shot sources
    (annotation.services.triage.triage_sources), ready."""
    from annotation.services.triage import triage_sources
    from assessments.services.machine import campaign_sources

    return [s for s in triage_sources(campaign_sources(campaign.pk)) if s.status == "ready"]


def _render(request, campaign, form=None, status=200, error=None):
    assessors = _assessors()
    units = campaign_units(campaign)
    return render(request, "annotation/console/work.html", {
        "campaign": campaign, "tab": "work", "error": error, "loads": loads(campaign), "held": held_topics(campaign),
        "form": form or _assign_form(campaign, assessors=assessors, initial={
            # no assessor ticked until chosen: all ticked, assigning "alice" gave units to bob and carol too
            "overlap": campaign.overlap, "seed": 0, "assessors": [], "stage": nugget_stage(campaign)}),
        "assessors": assessors, "unit_topics": len(units), "unit_count": sum(len(u) for u in units.values()),
    }, status=status)


def _assign_form(campaign, data=None, *, assessors, initial=None):
    return AssignForm(data, assessors=assessors, sources=_sources(campaign), initial=initial,
                      nuggets=tasks.of(campaign).answers)


def _pairs(request):
    pairs = []
    for value in request.POST.getlist("work"):
        assessor, _, topic = (parse_id(part) for part in value.partition(":"))
        if assessor is not None and topic is not None:
            pairs.append((assessor, topic))
    return pairs


@require_http_methods(["GET", "POST"])
@organisers_only
def work_page(request, name):
    """Assign with overlap; see the load; take back or reassign unstarted topics."""
    campaign = campaign_of(name)
    if request.method == "GET":
        return _render(request, campaign)
    action = request.POST.get("action")
    if action == "assign":
        form = _assign_form(campaign, request.POST, assessors=_assessors())
        if not form.is_valid():
            return _render(request, campaign, form, status=400)
        data = form.cleaned_data
        try:
            result = assign_campaign(campaign, data["assessors"], overlap=data["overlap"], seed=data["seed"],
                                     likely=form.likely(), stage=data.get("stage") or None)
        except AssignmentError as exc:
            if exc.field in form.fields and (exc.field.startswith("likely_") or exc.field == "stage"):
                form.add_error(exc.field, exc.message)
                return _render(request, campaign, form, status=400)
            form.add_error(None, str(exc).removeprefix("--assessors: ").removeprefix("--overlap: "))
            return _render(request, campaign, form, status=400)
        messages.success(request, result.summary())
        return redirect("annotation:console_work", name=campaign.name)
    try:
        if action == "take_back":
            count = take_back(campaign, _pairs(request))
            messages.success(request, f"{count} unit{'s' if count != 1 else ''} taken back.")
        elif action == "reassign":
            count = reassign(campaign, _pairs(request), request.POST.get("to", ""))
            messages.success(request, f"{count} unit{'s' if count != 1 else ''} given to {request.POST.get('to')}.")
        else:
            return _render(request, campaign, status=400, error="Choose what to do.")
    except WorkInvalid as exc:
        return _render(request, campaign, status=400, error=exc.message)
    return redirect("annotation:console_work", name=campaign.name)
