"""Shared by the API views: the querysets a caller may see, and error responses."""

import re

from django.db.models import Exists, OuterRef, Prefetch
from rest_framework import status
from rest_framework.response import Response

from annotation.api.permissions import PARTICIPANT, request_role, scope_campaign
from annotation.models import Campaign, Track
from assessments.models import Pool, Run
from assessments.models.counting import related_count

# The importers speak to command-line users: "(--create-missing creates it)", "(give another --name)".
# Such hints mean nothing to an API client, so they are cut from the messages.
COMMAND_LINE_HINT = re.compile(r"\s*\([^()]*--[a-z][^()]*\)$")


def visible_campaigns(request):
    """Campaigns the caller may see: organisers all, participants those that take runs; a token's campaign only."""
    campaigns = Campaign.objects.select_related("track__collection").annotate(
        topic_count=related_count(Track.topics.through, "track_id", outer="track"),  # a page counts its own campaigns' topics
    )
    if request_role(request) == PARTICIPANT:
        campaigns = campaigns.filter(track__isnull=False)
    scope = scope_campaign(request)
    if scope is not None:
        campaigns = campaigns.filter(pk=scope.pk)
    return campaigns.order_by("name")


def visible_runs(request):
    """Runs the caller may see: a participant its own, an organiser all; a token's campaign only."""
    pooled = Pool.runs.through.objects.filter(run_id=OuterRef("pk"))
    runs = Run.objects.select_related("collection", "owner").with_counts().annotate(pooled=Exists(pooled))
    if request_role(request) == PARTICIPANT:
        runs = runs.filter(owner=request.user)
    scope = scope_campaign(request)
    if scope is not None:
        runs = runs.filter(track=scope.name)
    return runs.order_by("-created_at", "-id")


def visible_pools(request):
    """Pools an organiser may see (a token's campaign: that campaign's pools, each listing that campaign alone, not
    the other campaigns that share it), with counts in one query."""
    scope = scope_campaign(request)
    campaigns = Prefetch("campaigns", queryset=Campaign.objects.filter(pk=scope.pk)) if scope is not None else "campaigns"
    pools = Pool.objects.select_related("collection").prefetch_related(campaigns, "runs").with_counts()
    if scope is not None:
        pools = pools.filter(campaigns=scope)
    return pools.order_by("-created_at", "-id")


def detail(status_code, message):
    """A JSON error {"detail": message}."""
    return Response({"detail": message}, status=status_code)


def rejection(failure, what="The run"):
    """400 listing an ImportFailed's problems (up to its cap) with line and field."""
    problems = [
        {"line": p.line, "field": p.field, "message": COMMAND_LINE_HINT.sub("", p.message)} for p in failure.problems
    ]
    return _rejected(what, problems, failure.total)


def invalid_upload(errors):
    """400 for an upload request whose form is invalid, in the same shape as a rejected run."""
    problems = [
        {"line": None, "field": field, "message": str(message)}
        for field, messages in errors.items()
        for message in (messages if isinstance(messages, list) else [messages])
    ]
    return _rejected("The request", problems, len(problems))


def _rejected(what, problems, total):
    count = f"{total} problem{'s' if total != 1 else ''}"
    shown = f" (the first {len(problems)} are listed)" if total > len(problems) else ""
    return Response(
        {"detail": f"{what} was rejected, nothing was stored: {count}{shown}.", "total": total, "problems": problems},
        status=status.HTTP_400_BAD_REQUEST,
    )
