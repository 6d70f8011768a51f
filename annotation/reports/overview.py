"""The organisers' overview of every campaign: units done and left, and what needs attention (a few queries)."""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta

from django.db.models import Count, Max, Q
from django.utils import timezone

from annotation.models import Assignment, Campaign, Review
from annotation.services import nugget_support
from annotation.units import tasks

STALLED_AFTER = timedelta(days=2)  # an assessor with open work and no change for this long has stalled


@dataclass
class CampaignLine:
    """One campaign on the overview."""

    campaign: Campaign
    units: int = 0
    done: int = 0
    in_progress: int = 0
    assessors: int = 0
    reviews_waiting: int = 0
    stalled: list = field(default_factory=list)

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.units) if self.units else 0

    @property
    def left(self) -> int:
        return self.units - self.done


def campaign_overview() -> list[CampaignLine]:
    """Every campaign with its units done and left, open reviews and stalled assessors."""
    lines = {c.pk: CampaignLine(campaign=c) for c in Campaign.objects.order_by("name")}
    rows = Assignment.objects.filter(campaign__isnull=False).values("campaign_id").annotate(
        units=Count("id"),
        done=Count("id", filter=Q(status=Assignment.Status.DONE)),
        in_progress=Count("id", filter=Q(status=Assignment.Status.IN_PROGRESS)),
        assessors=Count("assessor_id", distinct=True),
    ).order_by()
    for row in rows:
        line = lines[row["campaign_id"]]
        line.units, line.done, line.in_progress, line.assessors = row["units"], row["done"], row["in_progress"], row["assessors"]
    _done_but_waiting(lines)
    for row in Review.objects.filter(status=Review.Status.OPEN).values("assignment__campaign_id").annotate(
        n=Count("id")
    ).order_by():
        if row["assignment__campaign_id"] in lines:
            lines[row["assignment__campaign_id"]].reviews_waiting = row["n"]
    cutoff = timezone.now() - STALLED_AFTER
    open_work = Assignment.objects.filter(campaign__isnull=False).exclude(status=Assignment.Status.DONE)
    for row in open_work.values("campaign_id", "assessor__username").annotate(
        last=Max("assessor__judgement_changes__received_at")
    ).order_by("campaign_id", "assessor__username"):
        if row["last"] is not None and row["last"] < cutoff:
            lines[row["campaign_id"]].stalled.append(row["assessor__username"])
    return list(lines.values())


def _done_but_waiting(lines):
    """Take out of `done` the nugget support units marked done that wait again for their topic's nuggets (a writer
    reopened the bank): their state is waiting (status.state over nugget_support.ready_banks), as the queue, the
    unit's page and the dashboard say. One query, and ready_banks' two per nuggets campaign with such a unit."""
    done = defaultdict(list)
    waiting = Q()
    for task in tasks.TASKS.values():
        if task.waiting:
            waiting |= Q(campaign__task=task.task, kind__in=task.waiting)
    for campaign_id, topic_id in Assignment.objects.filter(waiting, status=Assignment.Status.DONE).values_list(
            "campaign_id", "topic_id") if waiting else ():
        done[campaign_id].append(topic_id)
    for campaign_id, topics in done.items():
        ready = nugget_support.ready_banks(campaign_id, set(topics))
        if campaign_id in lines:
            lines[campaign_id].done -= sum(1 for topic_id in topics if topic_id not in ready)
