"""The assessor's queue: every unit of every kind in queue order with its progress, and which one is next.

Reading only: nothing here writes (a GET never changes the database). A unit's status is what
annotation.services.status stored; progress is counted from the assessor's labels in the unit's campaign. A unit
may wait (`waiting`: a nugget support unit before its topic's bank is settled, nugget_support.ready_banks): it is
listed with what it waits on (`waiting_on`, the page's words), counted apart and never next. Each unit's `state` is
status.state (the one rule its page reads too): "waiting" whatever its stored status, else the stored status; the
counts and the next unit read it, never the stored status alone.

A unit of a campaign that serves a judging order (annotation.services.judging_order) may have nothing to judge now:
its topic is stopped (by the estimate, the budget or the organiser), or a hybrid topic waits for other topics or its
pool's budget is spent. Such a unit is marked `paused` with the page's words (judging_order.nothing_to_judge, the same
test and stop as its page), counted apart (`Counts.paused`) and never next; its stored status is what it was (the
assessor may still open it and mark it done), and it is next again once the order serves it something.
"""

from dataclasses import dataclass

from annotation import units
from annotation.models import Assignment
from annotation.services import status
from annotation.services.progress import Progress

Status = Assignment.Status


@dataclass(frozen=True)
class Counts:
    """The header's figures: units in the queue, done, and left (of which `waiting` cannot be worked on yet)."""

    total: int
    done: int
    waiting: int = 0
    paused: int = 0  # not done, and nothing to judge now: the judging order serves its topic nothing (queue's doc)

    @property
    def left(self) -> int:
        return self.total - self.done


def queue(user) -> list[tuple[Assignment, Progress]]:
    """The user's assignments (every kind) in queue order, each with its progress (a handful of queries in all)."""
    assignments = list(Assignment.objects.for_assessor(user).select_related("topic", "run", "pool", "campaign"))
    if not assignments:
        return []
    for a in assignments:
        a.unit = units.of(a)  # its kind: its row in the queue, its progress
    progress = {}
    for read in dict.fromkeys(unit.progress_of_units for unit in units.kinds()):  # kinds read together, once
        progress.update(read(user, [a for a in assignments if a.unit.progress_of_units is read]))
    for a in assignments:
        a.waiting = getattr(a, "waiting", False)
        a.waiting_on = getattr(a, "waiting_on", None)
        a.state = status.state(a, waiting=a.waiting)
        a.paused = _paused(a)
    items = sorted(((a, progress[a.pk]) for a in assignments), key=lambda ap: (ap[0].position, ap[0].pk))
    _number_parts([a for a, _ in items])
    return items


def _number_parts(assignments) -> None:
    """A topic with candidates in several of the campaign's pools is several units of one kind for the assessor
    (a unit is a topic and a pool), which read as identical rows. Each gets `part` (i, n) in queue order, shown as
    "part i of n": no pool's name (an organiser's, which may name a system) reaches the assessor. A document in
    both parts is judged once: its label is the topic's, shown judged in the other part too."""
    groups = {}
    for a in assignments:
        a.part = None
        if a.pool_id is not None:
            groups.setdefault((a.campaign_id, a.topic_id, a.kind), []).append(a)
    for units in groups.values():
        if len(units) > 1:
            for i, a in enumerate(units, start=1):
                a.part = (i, len(units))


def _paused(a) -> str | None:
    """Why an open unit has nothing to judge now (judging_order.nothing_to_judge), else None. A campaign whose
    settings are wrong is not paused here: its page says what is wrong (a 409 naming the setting)."""
    from annotation.services import judging_order

    if a.state in (Status.DONE, status.WAITING) or a.pool_id is None or a.qualification:
        return None
    if a.kind not in units.grading_kinds():  # a kind that grades no candidate is served no order
        return None
    try:
        return judging_order.nothing_to_judge(a)
    except (judging_order.OrderSettingsInvalid, judging_order.ordering.OrderError):
        return None


def counts(items) -> Counts:
    """Units, units done and units that wait of a queue, by each unit's state (status.state, as its row and its page
    show it: a unit marked done that waits again is waiting, not done)."""
    return Counts(total=len(items), done=sum(1 for a, _ in items if _state(a) == Status.DONE),
                  waiting=sum(1 for a, _ in items if _state(a) == status.WAITING),
                  paused=sum(1 for a, _ in items if getattr(a, "paused", None)))


def _state(a) -> str:
    """The unit's state as queue() set it (status.state)."""
    return getattr(a, "state", None) or status.state(a, waiting=getattr(a, "waiting", False))


def next_assignment(user, *, after=None, items=None, locked=None):
    """The user's next unit: a batch sent back for revision first, else the first one not done, other than `after`.
    Units waiting for the user's qualification (`locked` campaign ids) or for their topic's nuggets, and units whose
    judging order serves nothing to judge now (`paused`), are skipped."""
    from annotation.services.qualification import locked_campaign_ids

    items = queue(user) if items is None else items
    locked = locked_campaign_ids(user) if locked is None else locked
    open_units = [
        a for a, _ in items
        if _state(a) not in (Status.DONE, status.WAITING) and (after is None or a.pk != after.pk)
        and (a.qualification or a.campaign_id not in locked) and not getattr(a, "paused", None)
    ]
    revise = next((a for a in open_units if a.status == Status.REVISE), None)
    return revise or next(iter(open_units), None)
