"""Who holds which work in a campaign, how fast it goes, and moving unstarted work: take it back or reassign it.

Work moves by (assessor, topic), never by single unit: annotation.services.assignment gives a topic's
assessors every unit of that topic (judgements are keyed on topic and passage), so a topic's units move
together, and only while every one of them is still to do (nothing judged, nothing opened). A reassigned
topic goes to the end of its new assessor's queue.
"""

from collections import defaultdict
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, Max, Min, Q, Sum

from annotation.models import Assignment
from annotation.roles import can_be_assigned
from annotation.services.errors import ServiceError
from assessments.models import Judgement, JudgementChange


class WorkInvalid(ServiceError):
    """Work that cannot be moved as asked; `field` names the input."""


@dataclass
class Load:
    """One assessor's work in a campaign."""

    username: str
    user_id: int
    units: int = 0
    todo: int = 0
    in_progress: int = 0
    done: int = 0
    revise: int = 0
    topics: int = 0
    changes: int = 0
    active_ms: int = 0
    first: object = None
    last: object = None

    @property
    def active_hours(self) -> float:
        return self.active_ms / 3_600_000

    @property
    def pace(self) -> float | None:
        """Units done per active hour (None before any active time is known)."""
        return self.done / self.active_hours if self.active_ms else None

    @property
    def seconds_per_change(self) -> float | None:
        return self.active_ms / 1000 / self.changes if self.changes and self.active_ms else None


def loads(campaign) -> list[Load]:
    """Each assessor's units by status, topics, label changes and active time in the campaign (three queries)."""
    rows = (
        Assignment.objects.filter(campaign=campaign).values("assessor_id", "assessor__username").annotate(
            units=Count("id"), topics=Count("topic_id", distinct=True),
            todo=Count("id", filter=Q(status=Assignment.Status.TODO)),
            in_progress=Count("id", filter=Q(status=Assignment.Status.IN_PROGRESS)),
            done=Count("id", filter=Q(status=Assignment.Status.DONE)),
            revise=Count("id", filter=Q(status=Assignment.Status.REVISE)),
        ).order_by("assessor__username")
    )
    found = {
        r["assessor_id"]: Load(
            username=r["assessor__username"], user_id=r["assessor_id"], units=r["units"], todo=r["todo"],
            in_progress=r["in_progress"], done=r["done"], revise=r["revise"], topics=r["topics"],
        )
        for r in rows
    }
    changes = (
        JudgementChange.objects.filter(judgement__campaign_id=campaign.pk, assessor_id__in=found)
        .exclude(source=JudgementChange.Source.ADJUDICATION)
        .values("assessor_id").annotate(n=Count("id"), ms=Sum("active_ms"), first=Min("received_at"),
                                        last=Max("received_at")).order_by()
    )
    for row in changes:
        load = found[row["assessor_id"]]
        load.changes, load.active_ms, load.first, load.last = row["n"], row["ms"] or 0, row["first"], row["last"]
    return list(found.values())


def held_topics(campaign) -> list[dict]:
    """[{assessor, username, topic, external_id, title, units, statuses, movable}] of the campaign, by assessor.

    `statuses`: {status in words (Assignment.Status's label, "To do"): units}, in the state machine's order.
    """
    rows = (
        Assignment.objects.filter(campaign=campaign, qualification=False)
        .values("assessor_id", "assessor__username", "topic_id", "topic__external_id", "topic__title", "status")
        .annotate(n=Count("id")).order_by("assessor__username", "topic__external_id")
    )
    grouped = {}
    for row in rows:
        key = (row["assessor_id"], row["topic_id"])
        entry = grouped.setdefault(key, {
            "assessor": row["assessor_id"], "username": row["assessor__username"], "topic": row["topic_id"],
            "external_id": row["topic__external_id"], "title": row["topic__title"], "units": 0,
            "statuses": defaultdict(int),
        })
        entry["units"] += row["n"]
        entry["statuses"][row["status"]] += row["n"]
    for entry in grouped.values():
        entry["movable"] = set(entry["statuses"]) == {Assignment.Status.TODO}
        entry["statuses"] = {s.label: entry["statuses"][s] for s in Assignment.Status if s in entry["statuses"]}
    return list(grouped.values())


def _pairs(campaign, pairs):
    """The campaign's units of each (assessor id, topic id), checked to be all still to do."""
    units = []
    for assessor_id, topic_id in dict.fromkeys(pairs):
        rows = list(Assignment.objects.select_for_update().select_related("assessor", "topic").filter(
            campaign=campaign, assessor_id=assessor_id, topic_id=topic_id, qualification=False,
        ))
        if not rows:
            raise WorkInvalid("work", "no such work in this campaign")
        started = [a for a in rows if a.status != Assignment.Status.TODO]
        judged = Judgement.objects.filter(campaign_id=campaign.pk, assessor_id=assessor_id, topic_id=topic_id).exists()
        if started or judged:
            raise WorkInvalid(
                "work", f"{rows[0].assessor.username} has started topic {rows[0].topic.external_id!r}: "
                "only work still to do can be taken back or reassigned",
            )
        units.append(rows)
    if not units:
        raise WorkInvalid("work", "choose the work to move")
    return units


def take_back(campaign, pairs) -> int:
    """Delete the unstarted units of each (assessor id, topic id); how many were deleted."""
    with transaction.atomic():
        units = _pairs(campaign, pairs)
        ids = [a.pk for rows in units for a in rows]
        Assignment.objects.filter(pk__in=ids).delete()
    return len(ids)


def reassign(campaign, pairs, to_username) -> int:
    """Give the unstarted units of each (assessor id, topic id) to `to_username` instead; how many moved."""
    target = get_user_model().objects.filter(username=to_username, is_active=True).first()
    if target is None:
        raise WorkInvalid("to", f"no one called {to_username!r}")
    if not can_be_assigned(target):
        raise WorkInvalid("to", f"{target.username} is a participant team: it may not judge (its own runs among them)")
    with transaction.atomic():
        units = _pairs(campaign, pairs)
        moved = 0
        last = Assignment.objects.filter(assessor=target).aggregate(last=Max("position"))["last"]
        position = -1 if last is None else last
        for rows in units:
            topic = rows[0].topic
            if rows[0].assessor_id == target.pk:
                raise WorkInvalid("to", f"{target.username} already has topic {topic.external_id!r}")
            if (Assignment.objects.filter(campaign=campaign, assessor=target, topic=topic).exists()
                    or Judgement.objects.filter(assessor=target, topic=topic, adjudicated=False).exists()):
                raise WorkInvalid("to", f"{target.username} already judges topic {topic.external_id!r}: "
                                        "two of one topic's assessors would be the same person")
            for assignment in rows:
                position += 1
                assignment.assessor, assignment.position = target, position
                assignment.save(update_fields=["assessor", "position"])
                moved += 1
    return moved
