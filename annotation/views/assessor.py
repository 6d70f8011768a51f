"""Assessor pages: the queue, the judging page of any kind of unit, and its JSON endpoints (save a change, mark).

Thin views: they check who asks, parse the request, and call one service (annotation.services.queue, .changes,
.status; a judging page: its unit's kind, annotation.units). A GET never writes.
"""

import json
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, JsonResponse
from django.http.request import RawPostDataException
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation import units
from annotation.models import Assignment, Campaign
from annotation.roles import can_view_assignment, is_organiser, is_reviewer
from annotation.services import changes, qualification, queue, review
from annotation.services.candidates import SettingsInvalid
from annotation.services.errors import ServiceError
from assessments.services.judging import RATING_MAX, RATING_MIN
from config import auth
from config.prepared import Prepared

page_login_required = login_required(login_url="login")
MAX_JSON_DEPTH = 64

# unit kind -> (template, script, id of the page's data): each kind's page, as its module in annotation.units says
PAGES = {unit.kind: (unit.template, unit.script, unit.data_id) for unit in units.kinds()}


def _own_assignment_json(view):
    """For the page's script (save, mark): `view(request, assignment)` with the signed-in assessor's own assignment
    of the URL's token; 403 JSON when signed out (not a redirect to the sign-in page), 404 for anyone else's.

    The assignment is read with its assessor in one statement, and that row stands for the signed-in user
    (config.auth.resolve_user: Django still checks the session against it), so a save reads no user of its own."""

    @wraps(view)
    def wrapped(request, token):
        user_id = auth.session_user_id(request)
        assignment = None
        if user_id is not None and len(token) <= 64 and "\x00" not in token:  # NUL: not text PostgreSQL compares
            assignment = OWN_ASSIGNMENT.first(token=token, user=user_id)
        if not auth.resolve_user(request, assignment.assessor if assignment is not None else None).is_authenticated:
            return JsonResponse({"field": None, "message": "signed out: sign in again", "signed_out": True}, status=403)
        if assignment is None or assignment.assessor_id != request.user.pk:
            raise Http404("No such assignment.")
        assignment.assessor = request.user
        return view(request, assignment)

    return wrapped


# The assignment of a save or a page, with what a save needs, read in one statement compiled once (config.prepared).
OWN_ASSIGNMENT = Prepared(
    lambda token, user: Assignment.objects.select_related("topic", "run", "campaign", "assessor").annotate(
        open_siblings=changes.open_sibling_articles(), qualification_locked=qualification.locked_annotation(),
    ).filter(token=token, assessor_id=user),
    token="\x00own-assignment-token", user=2_147_275_001,
)


# The unit of a judging page (its assessor's, or an organiser looking), compiled once.
PAGE_ASSIGNMENT = Prepared(
    lambda token: Assignment.objects.select_related("topic", "run", "pool", "assessor", "campaign").filter(token=token),
    token="\x00page-assignment-token",
)


def _locked():
    return JsonResponse({"field": None, "message": "qualification first: this work opens when you pass it"}, status=403)


def _error(field, message, status_code=400):
    return JsonResponse({"field": field, "message": message}, status=status_code)


def _json_body(request):
    """The request's JSON object, or None when the body is not JSON (or is nested beyond reason). A multipart form
    is no JSON: its stream was read as form fields already (UnstorableTextMiddleware), so it has no body to read."""
    try:
        raw = request.body.decode("utf-8")
    except (UnicodeDecodeError, RawPostDataException):
        return None
    depth = 0
    for ch in raw:  # refuse deep nesting before the parser recurses into it
        if ch in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return None
        elif ch in "]}":
            depth -= 1
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


@require_GET
@page_login_required
def home(request):
    """The user's own queue with progress; the next open unit is one key away. Organisers go to their campaigns."""
    items = queue.queue(request.user)
    organiser = is_organiser(request.user)
    if organiser and not items and "queue" not in request.GET:
        return redirect("annotation:campaigns")
    locked = qualification.locked_campaign_ids(request.user)
    remarks = review.revision_remarks(request.user)
    for a, _ in items:
        a.locked = not a.qualification and a.campaign_id in locked
        a.remarks = remarks.get(a.pk, [])
    next_unit = queue.next_assignment(request.user, items=items, locked=locked)
    return render(request, "annotation/home.html", {
        "items": items,
        "next_item": next(((a, p) for a, p in items if a == next_unit), None),
        "counts": queue.counts(items),
        "done_count": queue.counts(items).done,
        "can_review": organiser,
        "is_reviewer": is_reviewer(request.user),
        "notices": qualification.notices(request.user),
        "campaigns": Campaign.objects.order_by("name") if organiser else [],
    })


@require_GET
@page_login_required
def next_assignment(request):
    """Go to the first unit in the queue that is not done (other than `after`), or home when none is left."""
    after = Assignment.objects.filter(token=request.GET.get("after", "")[:64].replace("\x00", ""),
                                      assessor=request.user).first()
    assignment = queue.next_assignment(request.user, after=after)
    if assignment is None:
        return redirect(reverse("annotation:home") + "?queue")
    return redirect("annotation:unit", token=assignment.token)


@require_GET
def assignment_page(request, token):
    """The page of one unit, whatever its kind: its assessor judges, organisers may look (read-only)."""
    assignment = None
    if auth.session_user_id(request) is not None and len(token) <= 64 and "\x00" not in token:
        assignment = PAGE_ASSIGNMENT.first(token=token)
    auth.resolve_user(request, assignment.assessor if assignment is not None else None)  # its assessor: not read again
    return _assignment_page(request, assignment)


@page_login_required
def _assignment_page(request, assignment):
    if assignment is None or not can_view_assignment(request.user, assignment):
        raise Http404("No such assignment.")
    own = assignment.assessor_id == request.user.pk
    if own and qualification.is_locked(assignment):
        return redirect("annotation:home")  # the queue says why: qualification first
    if own and "examples" not in request.GET and qualification.examples_first(assignment):
        return redirect("annotation:qualification_examples", name=assignment.campaign.name)  # read them first
    unit = units.of(assignment)
    try:
        context = unit.page(assignment, readonly=not own)
    except SettingsInvalid as exc:
        return HttpResponse(f"This campaign's settings are wrong: {exc}", status=409, content_type="text/plain")
    context["state"].update(
        user=request.user.pk,
        kind=assignment.kind,
        save_url=reverse("annotation:save", args=[assignment.token]),
        mark_url=reverse("annotation:mark", args=[assignment.token]),
        reopen_url=reverse("annotation:reopen", args=[assignment.token]),
        next_url=reverse("annotation:next") + "?after=" + assignment.token,
    )
    if context.get("waiting"):  # a unit waiting (for its topic's nuggets) offers the next ready unit, if any
        ready = queue.next_assignment(request.user, after=assignment) if own else None
        context["next_ready"] = ready
        context["state"]["next_url"] = reverse("annotation:unit", args=[ready.token]) if ready else None
    return render(request, unit.template, {
        **context,
        "assignment": assignment,
        "topic": assignment.topic,
        "campaign": assignment.campaign,
        "readonly": not own,
        "first_visit": assignment.status == Assignment.Status.TODO,
        "rating_values": range(RATING_MIN, RATING_MAX + 1),
        "page_script": unit.script,
        "data_id": unit.data_id,
    })


@require_POST
@_own_assignment_json
def save(request, assignment):
    """Store one change (JSON body); a resent change is stored once. 400 names the bad field; 409 when the unit
    cannot take it yet (a nugget support unit waiting for its topic's nuggets)."""
    if qualification.is_locked(assignment):
        return _locked()
    data = _json_body(request)
    if data is None:
        return _error("body", "expected a JSON object")
    try:
        recorded, progress = changes.save_change(assignment, data)
    except ServiceError as exc:
        return _error(exc.field, exc.message, getattr(exc, "status_code", 400))
    return JsonResponse({
        "ok": True,
        "duplicate": recorded.duplicate,
        "current": recorded.current,
        "status": assignment.status,
        "progress": progress.as_json(),
        **progress.as_json(),
    })


@require_POST
@_own_assignment_json
def mark(request, assignment):
    """Mark the unit done (`{"done": true}`, with `"reason"` when labels are missing); it never reopens (`reopen`)."""
    if qualification.is_locked(assignment):
        return _locked()
    data = _json_body(request) or {}
    try:
        changes.mark(assignment, data.get("done"), reason=data.get("reason", ""))
    except ServiceError as exc:
        return _error(exc.field, exc.message, getattr(exc, "status_code", 400))
    return _status_answer(assignment)


@require_POST
@_own_assignment_json
def reopen(request, assignment):
    """Open a done unit again (the page asks first); a unit not done is left as it is."""
    if qualification.is_locked(assignment):
        return _locked()
    changes.reopen(assignment)
    return _status_answer(assignment)


def _status_answer(assignment):
    return JsonResponse({"ok": True, "status": assignment.status, "progress": changes.progress(assignment).as_json()})
