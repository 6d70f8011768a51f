"""Campaign pages for reviewers and organisers: the review queue and page, adjudication, the dashboard.

Thin views: they check who asks, parse the form and call one function of annotation.services.review,
annotation.services.adjudication or annotation.reports.dashboard. Anyone else gets 404 (nothing says the page exists).
"""

from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from annotation.services import adjudication, review
from annotation.reports.dashboard import dashboard as dashboard_data
from annotation.reports.stopping import stopping as stopping_data
from annotation.models import Campaign
from annotation.reports.overview import campaign_overview
from annotation.roles import is_organiser, is_reviewer
from assessments.models import Topic
from retrieval.models import Passage

page_login_required = login_required(login_url="login")


def _only(allowed, who):
    """A decorator: signed-in users for whom allowed(user) holds; 404 for everyone else."""

    def decorator(view):
        @wraps(view)
        @page_login_required
        def wrapped(request, *args, **kwargs):
            if not allowed(request.user):
                raise Http404("No such page.")
            return view(request, *args, **kwargs)

        wrapped.__doc__ = f"{view.__doc__} ({who} only.)"
        return wrapped

    return decorator


organisers_only = _only(is_organiser, "organisers")
reviewers_only = _only(is_reviewer, "reviewers and organisers")


@require_http_methods(["GET", "POST"])
@organisers_only
def campaign_list(request):
    """The organiser's home: every campaign with its progress, agreement at a glance and what needs attention.
    A POST dismisses one failure of the background work."""
    from annotation.reports.jobs import background_work, dismiss
    from annotation.reports.results import agreement_glance
    from annotation.services.errors import ServiceError

    error = None
    if request.method == "POST":
        try:
            dismiss(request.POST.get("dismiss"), request.user)
        except ServiceError as exc:
            error = exc
        else:
            return redirect("annotation:campaigns")
    lines = campaign_overview()
    for line in lines:
        line.agreement = agreement_glance(line.campaign) if line.done or line.in_progress else None
    return render(request, "annotation/campaigns.html", {"campaigns": lines, "work": background_work(),
                                                         "error": error}, status=400 if error else 200)


@require_GET
@reviewers_only
def review_queue(request):
    """The reviews given to the reviewer (organisers: every review), open ones first."""
    queue = review.review_queue(request.user)
    return render(request, "annotation/review_queue.html", {"queue": queue})


@require_http_methods(["GET", "POST"])
@reviewers_only
def review_page(request, pk):
    """One review: the sampled items with the assessor's labels; the reviewer marks each right or wrong."""
    item = review.visible_reviews(request.user).filter(pk=pk).first()
    if item is None:
        raise Http404("No such review.")
    error, verdicts = None, {}
    if request.method == "POST":
        for entry in item.items.all():
            raw = request.POST.get(f"correct-{entry.pk}")
            verdicts[entry.pk] = ({"right": True, "wrong": False}.get(raw), request.POST.get(f"remark-{entry.pk}", ""))
        try:
            done = review.submit_review(item, request.user, verdicts)
        except review.ReviewInvalid as exc:
            error = exc
        else:
            outcome = "passed" if done.status == done.Status.PASSED else "sent back for revision"
            messages.success(request, f"Review saved: {done.pass_rate:.0%} right, the batch {outcome}.")
            return redirect("annotation:review_queue")
    items = review.review_items(item)
    for entry in items:  # a form sent back with an error keeps what the reviewer entered
        if entry["item"].pk in verdicts:
            entry["item"].correct, entry["item"].remark = verdicts[entry["item"].pk]
    return render(request, "annotation/review.html", {
        "review": item, "items": items, "error": error,
    }, status=400 if error else 200)


@require_http_methods(["GET", "POST"])
@organisers_only
def adjudication_page(request, name):
    """Items where the campaign's assessors disagree, labels side by side; a form sets each final label."""
    campaign = get_object_or_404(Campaign, name=name)
    layer = request.GET.get("layer") or None
    topic = request.GET.get("topic") or None
    error = None
    if request.method == "POST":
        try:
            _adjudicate(campaign, request)
        except adjudication.AdjudicationInvalid as exc:
            error = exc
        else:
            messages.success(request, "Final label saved.")
            return redirect(request.get_full_path())
    try:
        found = adjudication.disagreements(campaign, layer=layer, topic=topic)
    except adjudication.AdjudicationInvalid as exc:
        error, found = exc, adjudication.Disagreements(items=[], total=0, per_layer={})
    facets = {}
    for item in found.items:
        if item.layer in ("relevance", "facet") and item.topic.pk not in facets:
            facets[item.topic.pk] = adjudication.facet_choices(item.topic)
        item.facet_choices = facets.get(item.topic.pk, [])
    return render(request, "annotation/adjudication.html", {
        "campaign": campaign, "found": found, "layer": layer, "topic": topic, "error": error,
        "layers": adjudication.layers_for(campaign), "transitions": adjudication.Transition.offered(),
        "relevances": adjudication.Relevance.offered(), "importances": adjudication.nuggets.IMPORTANCE,
    }, status=400 if error else 200)


def _adjudicate(campaign, request):
    data = request.POST
    topic = Topic.objects.filter(pk=_int(data.get("topic"), "topic")).first()
    if data.get("layer") == "nuggets":  # a topic's bank: one assessor's taken whole, or nuggets ticked from several
        if topic is None:
            raise adjudication.AdjudicationInvalid("topic", "no such topic")
        keep = [str(ref)[:200] for ref in data.getlist("keep")[:1000]]
        adjudication.set_final_bank(
            campaign, request.user, topic, take=str(data.get("take") or "")[:200] or None, keep=keep,
            importance={ref: data.get(f"importance-{ref}") for ref in keep if data.get(f"importance-{ref}")},
        )
        return
    nugget = data.get("layer") == "nugget_support"  # an item of an answer, no passage (a citation's names its passage)
    passage = None if nugget else Passage.objects.filter(pk=_int(data.get("passage"), "passage")).first()
    if topic is None:
        raise adjudication.AdjudicationInvalid("topic", "no such topic")
    if passage is None and not nugget:
        raise adjudication.AdjudicationInvalid("passage", "no such passage")
    passage2 = None
    if data.get("passage2"):
        passage2 = Passage.objects.filter(pk=_int(data.get("passage2"), "passage2")).first()
        if passage2 is None:
            raise adjudication.AdjudicationInvalid("passage2", "no such passage")
    adjudication.set_final_label(
        campaign, request.user, layer=data.get("layer"), topic=topic, passage=passage, passage2=passage2,
        label=data.get("label") or None, facet=data.get("facet") or None, relevance=data.get("relevance") or None,
        item=str(data.get("item") or "")[:200],
    )


def _int(raw, field):
    try:
        return int(raw)
    except (TypeError, ValueError):
        raise adjudication.AdjudicationInvalid(field, "expected a number") from None


@require_GET
@organisers_only
def dashboard(request, name):
    """The organiser's dashboard of one campaign: progress, labels, agreement, reviews, time per judgement."""
    campaign = get_object_or_404(Campaign, name=name)
    return render(request, "annotation/dashboard.html", {
        "campaign": campaign, "data": dashboard_data(campaign), "stopping": stopping_data(campaign),
        "adjudication_url": reverse("annotation:adjudication", args=[campaign.name]),
        "has_qualification": campaign.campaign_topics.filter(qualification=True).exists(),
    })
