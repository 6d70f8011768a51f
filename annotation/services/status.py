"""An assignment's kind and its status: the one state machine every page, the queue, the API and the admin use.

    to do ──first change──▶ in progress ──complete / submit incomplete (with a reason)──▶ done
                                 ▲                                                        │
                                 └──────────────────────── reopen ◀──────────────────────┘
    done ──review fails / qualification retake──▶ to revise ──marked done by its assessor──▶ done

- A change moves "to do" to "in progress" (opening a page changes nothing: a GET never writes).
- A change that completes the unit makes it done, unless it is "to revise": a batch sent back is done only
  when its assessor says so. A unit of a kind done only by a mark (UnitKind.done_by_mark: a nugget bank to write,
  with no natural end, and its first nugget is not the last) is done only when its assessor marks it done; complete
  then means it may be marked done without a reason.
- Marking done needs the unit complete, or `incomplete_reason`: the assessor submits it incomplete and says
  why; reviewers see the reason. A unit done already stays as it is (never reopened, its reason kept).
- Reopening is its own action (the page asks first), never a second "mark done".
- Reopening a done unit makes it "in progress"; a unit to revise stays to revise.
- Becoming done scores a qualification attempt or opens a review: after_change and mark_done say when the unit
  became done, and their caller (annotation.services.changes) calls annotation.services.review.on_assignment_done.
  Review, qualification and triage call this module, never the other way round.
"""

from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import Assignment
from annotation.services.errors import ServiceError

Status = Assignment.Status
MAX_REASON = 2000


WAITING = "waiting"  # a unit's state, never stored: it cannot be worked on yet (state)


def state(assignment, *, waiting: bool) -> str:
    """THE state a unit is in for every reader (the queue's row, its counts and next unit, the unit's page, the
    dashboard): WAITING while it cannot be worked on (`waiting`: a nugget support unit whose topic's bank is not
    settled, nugget_support.ready_banks), whatever its stored status; else its stored status. A unit marked done
    whose topic's bank is no longer settled (a writer reopened it) waits again: its labels may name nuggets that
    still change, so it is neither done nor next until the bank is settled again, when its stored status shows."""
    return WAITING if waiting else assignment.status


class StatusInvalid(ServiceError):
    """A status change that is not allowed; `field` names what to fix."""


def kind_for(campaign, *, run=None, pool=None) -> str:
    """The kind of a unit made for `campaign` (the model's rule, Assignment.kind_of); a mode that is not one is
    StatusInvalid naming `mode`."""
    try:
        return Assignment.kind_of(campaign, run=run)
    except ValueError as exc:
        raise StatusInvalid("mode", str(exc)) from None


def after_change(assignment, progress, *, done_by_mark=False) -> bool:
    """Bring the status up to date after a new change: in progress, or done when the change completed it. True when
    this made it done (the caller then has it scored or reviewed: review.on_assignment_done). A unit of a kind that
    only a mark makes done (`done_by_mark`: annotation.units' UnitKind.done_by_mark) only moves to in progress."""
    if (progress.complete and not done_by_mark
            and assignment.status in (Status.TODO, Status.IN_PROGRESS)):
        return _move(assignment, Status.DONE)
    if assignment.status == Status.TODO:
        _move(assignment, Status.IN_PROGRESS)
    return False


def mark_done(assignment, progress, *, incomplete_reason="") -> bool:
    """The assessor marks the unit done: it must be complete, or submitted incomplete with a reason. A unit done
    already is left as it is. True when this made it done (as after_change)."""
    if assignment.status == Status.DONE:
        return False
    reason = (incomplete_reason or "").strip()
    if len(reason) > MAX_REASON:
        raise StatusInvalid("reason", f"at most {MAX_REASON} characters")
    if not progress.complete and not reason:
        missing = progress.wanting or (
            f"{progress.left} {progress.noun}{'s' if progress.left != 1 else ''} not labelled yet: finish them")
        raise StatusInvalid("reason", f"{missing}, or submit it incomplete and say why")
    Assignment.objects.filter(pk=assignment.pk).update(incomplete_reason="" if progress.complete else reason)
    assignment.incomplete_reason = "" if progress.complete else reason
    return _move(assignment, Status.DONE)


def reopen(assignment):
    """The assessor opens a done unit again: in progress (a unit to revise stays to revise)."""
    if assignment.status == Status.DONE:
        _move(assignment, Status.IN_PROGRESS)


def send_back(assignments):
    """Send units back to their assessor "to revise" (a failed review, a qualification retake); returns how many."""
    return assignments.update(status=Status.REVISE, finished_at=None)


def _move(assignment, status) -> bool:
    """Move an assignment to `status`: one conditional UPDATE (nothing changes when it is there already), which also
    sets started_at where it is empty; the assignment in hand is brought up to date without reading it again.
    True when this call moved it (False when another request had moved it there already)."""
    now = timezone.now()
    fields = {"status": status, "finished_at": now if status == Status.DONE else None}
    if status != Status.TODO:
        fields["started_at"] = Coalesce(F("started_at"), Value(now))
    changed = Assignment.objects.filter(pk=assignment.pk).exclude(status=status).update(**fields)
    if changed:
        assignment.status, assignment.finished_at = status, fields["finished_at"]
        if status != Status.TODO:
            assignment.started_at = assignment.started_at or now
    else:  # there already (another request moved it): as it is now
        if status != Status.TODO:
            Assignment.objects.filter(pk=assignment.pk, started_at__isnull=True).update(started_at=now)
        assignment.refresh_from_db(fields=["status", "started_at", "finished_at"])
    return bool(changed)
