"""An assignment's kind and its status: the one state machine every page, the queue, the API and the admin use.

    to do ──first change──▶ in progress ──complete / submit incomplete (with a reason)──▶ done
                                 ▲                                                        │
                                 └──────────────────────── reopen ◀──────────────────────┘
    done ──review fails / qualification retake──▶ to revise ──marked done by its assessor──▶ done

- A change moves "to do" to "in progress" (opening a page changes nothing: a GET never writes).
- A change that completes the unit makes it done, unless it is "to revise": a batch sent back is done only
  when its assessor says so.
- Marking done needs the unit complete, or `incomplete_reason`: the assessor submits it incomplete and says
  why; reviewers see the reason. A unit done already stays as it is (never reopened, its reason kept).
- Reopening is its own action (the page asks first), never a second "mark done".
- Reopening a done unit makes it "in progress"; a unit to revise stays to revise.
- Becoming done scores a qualification attempt or opens a review (annotation.services.review.on_assignment_done).
"""

from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import Assignment
from annotation.services.errors import ServiceError

Kind = Assignment.Kind
Status = Assignment.Status
MODES = {"label": Kind.PLOT_LABELS, "choice": Kind.CHOICE, "pair": Kind.PAIR}  # campaign settings["mode"]
MAX_REASON = 2000


class StatusInvalid(ServiceError):
    """A status change that is not allowed; `field` names what to fix."""


def kind_for(campaign, *, run=None, pool=None) -> str:
    """The kind of a unit made for `campaign`: an outline article when it has a run, else its campaign's mode (an
    ad hoc campaign's labelling mode grades documents)."""
    if run:
        return Kind.OUTLINE
    settings = campaign.settings if campaign is not None and isinstance(campaign.settings, dict) else {}
    mode = settings.get("mode", "label")
    if mode not in MODES:
        raise StatusInvalid("mode", f"{mode!r} is not one of {', '.join(MODES)}")
    if mode == "label" and campaign is not None and campaign.task == campaign.Task.ADHOC:
        return Kind.ADHOC
    return MODES[mode]


def after_change(assignment, progress):
    """Bring the status up to date after a new change: in progress, or done when the change completed it."""
    if progress.complete and assignment.status in (Status.TODO, Status.IN_PROGRESS):
        _move(assignment, Status.DONE)
    elif assignment.status == Status.TODO:
        _move(assignment, Status.IN_PROGRESS)


def mark_done(assignment, progress, *, incomplete_reason=""):
    """The assessor marks the unit done: it must be complete, or submitted incomplete with a reason. A unit done
    already is left as it is."""
    if assignment.status == Status.DONE:
        return
    reason = (incomplete_reason or "").strip()
    if len(reason) > MAX_REASON:
        raise StatusInvalid("reason", f"at most {MAX_REASON} characters")
    if not progress.complete and not reason:
        raise StatusInvalid(
            "reason", f"{progress.left} {progress.noun}{'s' if progress.left != 1 else ''} not labelled yet: "
            "finish them, or submit it incomplete and say why",
        )
    Assignment.objects.filter(pk=assignment.pk).update(incomplete_reason="" if progress.complete else reason)
    assignment.incomplete_reason = "" if progress.complete else reason
    _move(assignment, Status.DONE)


def reopen(assignment):
    """The assessor opens a done unit again: in progress (a unit to revise stays to revise)."""
    if assignment.status == Status.DONE:
        _move(assignment, Status.IN_PROGRESS)


def send_back(assignments):
    """Send units back to their assessor "to revise" (a failed review, a qualification retake); returns how many."""
    return assignments.update(status=Status.REVISE, finished_at=None)


def _move(assignment, status):
    """Move an assignment to `status`: one conditional UPDATE (nothing changes when it is there already), which also
    sets started_at where it is empty; the assignment in hand is brought up to date without reading it again."""
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
    if changed and status == Status.DONE:
        from annotation.services.review import on_assignment_done  # scores a qualification or opens a review

        on_assignment_done(assignment)
        assignment.refresh_from_db(fields=["status", "started_at", "finished_at"])
