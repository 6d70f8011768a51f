"""Assessor pages: the queue, the outline judging page, and its JSON endpoints (save a change, mark done).

Plot assignments (a pool's candidates, no run) open the pages of annotation.plot_views from the same URLs.
"""

import json
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation import plot, plot_views, qualification, review, services
from annotation.models import Assignment, Campaign

page_login_required = login_required(login_url="login")


def _json_login_required(view):
    """Like login_required, but answers the page's script with 403 JSON instead of a redirect to the login page."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return JsonResponse({"field": None, "message": "signed out: sign in again", "signed_out": True}, status=403)
        return view(request, *args, **kwargs)

    return wrapped


def _own_assignment(request, token):
    """The assignment with this token if it is the user's own; 404 for anyone else."""
    try:
        assignment = Assignment.objects.select_related("topic", "run", "campaign").get(token=token, assessor=request.user)
    except Assignment.DoesNotExist:
        raise Http404("No such assignment.") from None
    assignment.assessor = request.user  # already loaded: saves a query per save
    return assignment


def _locked():
    return JsonResponse({"field": None, "message": "qualification first: this work opens when you pass it"}, status=403)


@require_GET
@page_login_required
def home(request):
    """The assessor's own queue with progress; the next open assignment is one key away."""
    items = plot.full_queue(request.user)
    locked = qualification.locked_campaign_ids(request.user)
    remarks = review.revision_remarks(request.user)
    for a, _ in items:
        a.locked = not a.qualification and a.campaign_id in locked
        a.remarks = remarks.get(a.pk, [])
    workable = [(a, p) for a, p in items if not a.locked and a.status != Assignment.Status.DONE]
    next_item = next(((a, p) for a, p in workable if a.status == Assignment.Status.REVISE), None) or next(
        ((a, p) for a, p in workable if not p.complete), None)
    return render(request, "annotation/home.html", {
        "items": items,
        "next_item": next_item,
        "done_count": sum(1 for a, p in items if a.status == Assignment.Status.DONE
                          or (p.complete and a.status != Assignment.Status.REVISE)),
        "can_review": services.can_review(request.user),
        "is_reviewer": review.is_reviewer(request.user),
        "notices": qualification.notices(request.user),
        "campaigns": Campaign.objects.order_by("name") if review.is_organiser(request.user) else [],
    })


@require_GET
@page_login_required
def next_assignment(request):
    """Go to the first assignment in the queue that is not done (other than `after`), or home when none is left."""
    after = Assignment.objects.filter(token=request.GET.get("after", ""), assessor=request.user).first()
    assignment = services.next_assignment(request.user, exclude=after, items=plot.full_queue(request.user))
    if assignment is None:
        return redirect("annotation:home")
    return redirect("annotation:outline", token=assignment.token)


@require_GET
@page_login_required
def outline(request, token):
    """The page of one assignment: its assessor judges, organisers may look (read-only).

    An outline article (a run) opens the outline page; a plot assignment (a pool) the page its campaign's mode names.
    """
    assignment = Assignment.objects.select_related("topic", "run", "assessor", "campaign").filter(token=token).first()
    if assignment is None or (assignment.run_id is None and assignment.pool_id is None):
        raise Http404("No such assignment.")
    own = assignment.assessor_id == request.user.pk
    if not own and not services.can_review(request.user):
        raise Http404("No such assignment.")
    if own and qualification.is_locked(assignment):
        return redirect("annotation:home")  # the queue says why: qualification first
    if assignment.run_id is None:
        return plot_views.assignment_page(request, assignment, own=own)
    first_visit = assignment.status == Assignment.Status.TODO
    if own:
        services.mark_opened(assignment)
    page = services.outline_page(assignment, readonly=not own)
    page.state.update(
        user=request.user.pk,
        save_url=reverse("annotation:save", args=[assignment.token]),
        mark_url=reverse("annotation:mark", args=[assignment.token]),
        next_url=reverse("annotation:next") + "?after=" + assignment.token,
    )
    return render(request, "annotation/outline.html", {
        "assignment": assignment,
        "topic": assignment.topic,
        "facets": page.state["facets"],
        "entries": page.entries,
        "state": page.state,
        "progress": page.progress,
        "readonly": not own,
        "first_visit": first_visit,
    })


@require_POST
@_json_login_required
def save(request, token):
    """Store one change (JSON body); a resent change is stored once. 400 names the bad field."""
    assignment = _own_assignment(request, token)
    if qualification.is_locked(assignment):
        return _locked()
    try:
        data = json.loads(request.body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return JsonResponse({"field": "body", "message": "expected a JSON object"}, status=400)
    # Outline articles and plot/study pages store a change alike; each reports its own progress.
    save_change, progress_of = (
        (services.save_change, lambda p: {"passages_left": p.passages_left, "transitions_left": p.transitions_left})
        if assignment.run_id is not None
        else (plot.save_change, lambda p: {"left": p.left, "total": p.total})
    )
    try:
        recorded, progress = save_change(assignment, data)
    except services.ChangeInvalid as exc:
        return JsonResponse({"field": exc.field, "message": exc.message}, status=400)
    return JsonResponse({
        "ok": True,
        "duplicate": recorded.duplicate,
        "current": recorded.current,
        "status": assignment.status,
        **progress_of(progress),
    })


@require_POST
@_json_login_required
def mark(request, token):
    """Mark the assignment done (`{"done": true}`) or open it again (`{"done": false}`)."""
    assignment = _own_assignment(request, token)
    if qualification.is_locked(assignment):
        return _locked()
    try:
        done = json.loads(request.body.decode("utf-8")).get("done")
    except (UnicodeDecodeError, ValueError, AttributeError):
        done = None
    if not isinstance(done, bool):
        return JsonResponse({"field": "done", "message": "expected true or false"}, status=400)
    services.set_done(assignment, done, by_assessor=True)
    return JsonResponse({"ok": True, "status": assignment.status})

