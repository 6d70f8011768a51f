"""Assessor pages for plot assignments (a pool's candidates for one query): labelling, forced choice, pair rating.

annotation.views dispatches `a/<token>/` here when the assignment has no run (its save endpoint calls plot.save_change).
"""

from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse

from annotation import plot, services
from assessments.services.judging import RATING_MAX, RATING_MIN

# page kind -> (template, script, id of the page's data)
PAGES = {
    "plot": ("annotation/plot.html", "annotation/plot.js", "plot-data"),
    "choice": ("annotation/choice.html", "annotation/study.js", "study-data"),
    "pair": ("annotation/pair.html", "annotation/study.js", "study-data"),
}


def assignment_page(request, assignment, *, own):
    """The page of a plot assignment: its assessor works, organisers may look (read-only)."""
    try:
        kind = plot.page_kind(assignment)
        first_visit = assignment.status == assignment.Status.TODO
        if own:
            services.mark_opened(assignment)
        if kind == "plot":
            page = plot.plot_page(assignment, readonly=not own)
        else:
            page = plot.study_page(assignment, kind, readonly=not own)
    except plot.SettingsInvalid as exc:
        return HttpResponse(f"This campaign's settings are wrong: {exc}", status=500, content_type="text/plain")
    page["state"].update(
        user=request.user.pk,
        save_url=reverse("annotation:save", args=[assignment.token]),
        mark_url=reverse("annotation:mark", args=[assignment.token]),
        next_url=reverse("annotation:next") + "?after=" + assignment.token,
    )
    template, script, data_id = PAGES[kind]
    return render(request, template, {
        **page,
        "assignment": assignment,
        "topic": assignment.topic,
        "campaign": assignment.campaign,
        "readonly": not own,
        "first_visit": first_visit,
        "rating_values": range(RATING_MIN, RATING_MAX + 1),
        "page_script": script,
        "data_id": data_id,
    })

