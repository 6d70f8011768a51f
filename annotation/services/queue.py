"""The assessor's queue: every unit of every kind in queue order with its progress, and which one is next.

Reading only: nothing here writes (a GET never changes the database). A unit's status is what
annotation.services.status stored; progress is counted from the assessor's labels in the unit's campaign. A unit
may wait (`waiting`: a nugget support unit before its topic's bank is settled, nugget_support.ready_banks): it is
listed with what it waits on (`waiting_on`, the page's words), counted apart and never next. Each unit's `state` is
status.state (the one rule its page reads too): "waiting" whatever its stored status, else the stored status; the
counts and the next unit read it, never the stored status alone.
"""

from collections import defaultdict
from dataclasses import dataclass

from annotation.models import Assignment
from annotation.services import citation_support, nugget_creation, nugget_support, outline, plot, status
from annotation.services.progress import Progress
from assessments.models import CANDIDATE_GRADES, Judgement, Layer, PoolCandidate, RunEntry, StudyItem

Status = Assignment.Status


@dataclass(frozen=True)
class Counts:
    """The header's figures: units in the queue, done, and left (of which `waiting` cannot be worked on yet)."""

    total: int
    done: int
    waiting: int = 0

    @property
    def left(self) -> int:
        return self.total - self.done


OWN_PROGRESS = (Assignment.Kind.OUTLINE, Assignment.Kind.NUGGET_SUPPORT, Assignment.Kind.NUGGET_CREATION,
                Assignment.Kind.CITATION_SUPPORT)  # not counted by _work_progress


def queue(user) -> list[tuple[Assignment, Progress]]:
    """The user's assignments (every kind) in queue order, each with its progress (a handful of queries in all)."""
    assignments = list(Assignment.objects.for_assessor(user).select_related("topic", "run", "pool", "campaign"))
    if not assignments:
        return []
    progress = {}
    progress.update(_outline_progress(user, [a for a in assignments if a.kind == Assignment.Kind.OUTLINE]))
    progress.update(_work_progress(user, [a for a in assignments if a.kind not in OWN_PROGRESS]))
    progress.update(_support_progress([a for a in assignments if a.kind == Assignment.Kind.NUGGET_SUPPORT]))
    progress.update(nugget_creation.progress_of_units(
        [a for a in assignments if a.kind == Assignment.Kind.NUGGET_CREATION]))
    progress.update(citation_support.progress_of_units(
        [a for a in assignments if a.kind == Assignment.Kind.CITATION_SUPPORT]))
    for a in assignments:
        a.page_kind = plot.page_kind(a)
        a.waiting = getattr(a, "waiting", False)
        a.waiting_on = getattr(a, "waiting_on", None)
        a.state = status.state(a, waiting=a.waiting)
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


def counts(items) -> Counts:
    """Units, units done and units that wait of a queue, by each unit's state (status.state, as its row and its page
    show it: a unit marked done that waits again is waiting, not done)."""
    return Counts(total=len(items), done=sum(1 for a, _ in items if _state(a) == Status.DONE),
                  waiting=sum(1 for a, _ in items if _state(a) == status.WAITING))


def _state(a) -> str:
    """The unit's state as queue() set it (status.state)."""
    return getattr(a, "state", None) or status.state(a, waiting=getattr(a, "waiting", False))


def next_assignment(user, *, after=None, items=None, locked=None):
    """The user's next unit: a batch sent back for revision first, else the first one not done, other than `after`.
    Units waiting for the user's qualification (`locked` campaign ids) or for their topic's nuggets are skipped."""
    from annotation.services.qualification import locked_campaign_ids

    items = queue(user) if items is None else items
    locked = locked_campaign_ids(user) if locked is None else locked
    open_units = [
        a for a, _ in items
        if _state(a) not in (Status.DONE, status.WAITING) and (after is None or a.pk != after.pk)
        and (a.qualification or a.campaign_id not in locked)
    ]
    revise = next((a for a in open_units if a.status == Status.REVISE), None)
    return revise or next(iter(open_units), None)


def _support_progress(assignments) -> dict:
    """Nugget support units' progress, each marked `waiting` where its topic's bank is not settled (ready_banks: one
    read per campaign) with what it waits on (`waiting_on`, one read per campaign with a unit waiting); no read per
    unit."""
    topics = defaultdict(set)
    for a in assignments:
        topics[a.campaign_id].add(a.topic_id)
    banks = {campaign_id: nugget_support.ready_banks(campaign_id, ids) for campaign_id, ids in topics.items()}
    waits = defaultdict(set)
    for a in assignments:
        if a.topic_id not in banks[a.campaign_id]:
            waits[a.campaign_id].add(a.topic_id)
    on = {campaign_id: nugget_support.waiting_on_topics(campaign_id, ids) for campaign_id, ids in waits.items()}
    for a in assignments:
        a.waiting = a.topic_id in waits[a.campaign_id]
        a.waiting_on = on[a.campaign_id][a.topic_id] if a.waiting else None
    return nugget_support.progress_of_units(assignments, banks)


def _outline_progress(user, assignments) -> dict:
    if not assignments:
        return {}
    articles = defaultdict(list)
    entries = (
        RunEntry.objects.filter(run_id__in={a.run_id for a in assignments}, topic_id__in={a.topic_id for a in assignments})
        .order_by("run_id", "topic_id", "rank")
        .values_list("run_id", "topic_id", "passage_id")
    )
    for run_id, topic_id, passage_id in entries:
        articles[run_id, topic_id].append(passage_id)
    labels = {}
    for campaign_id, topic_id in {(a.campaign_id, a.topic_id) for a in assignments}:
        ids = {pid for (_, t), pids in articles.items() if t == topic_id for pid in pids}
        labels[campaign_id, topic_id] = outline.current_labels(
            user, topic_id, ids, campaign_id=campaign_id, layers=outline.PROGRESS_LAYERS,
        )
    return {
        a.pk: outline.progress_of(articles[a.run_id, a.topic_id], labels[a.campaign_id, a.topic_id])
        for a in assignments
    }


def _work_progress(user, assignments) -> dict:
    if not assignments:
        return {}
    pools = {a.pool_id for a in assignments}
    topics = {a.topic_id for a in assignments}
    cands = defaultdict(set)
    for pool_id, topic_id, pid in PoolCandidate.objects.filter(pool_id__in=pools, topic_id__in=topics).values_list(
        "pool_id", "topic_id", "passage_id"
    ):
        cands[pool_id, topic_id].add(pid)
    items = defaultdict(set)
    for pool_id, topic_id, kind, key in StudyItem.objects.filter(pool_id__in=pools, topic_id__in=topics).values_list(
        "pool_id", "topic_id", "kind", "key"
    ):
        items[pool_id, topic_id, kind].add(key)
    graded, answered = defaultdict(set), defaultdict(set)
    rows = Judgement.objects.filter(
        assessor=user, topic_id__in=topics, value__isnull=False, adjudicated=False,
        layer__in=[*CANDIDATE_GRADES, Layer.CHOICE, Layer.RATING],
    ).values_list("campaign_id", "layer", "topic_id", "passage_id", "item")
    for campaign_id, layer, topic_id, pid, item in rows:
        if layer in CANDIDATE_GRADES:
            graded[campaign_id, topic_id].add(pid)
        else:
            answered[campaign_id, topic_id, layer].add(item)
    out = {}
    for a in assignments:
        kind = plot.page_kind(a)
        if kind in ("plot", "adhoc"):
            total = cands[a.pool_id, a.topic_id]
            done = total & graded[a.campaign_id, a.topic_id]
        else:
            total = items[a.pool_id, a.topic_id, kind]
            done = total & answered[a.campaign_id, a.topic_id, plot.PAGE_LAYERS[kind][0]]
        out[a.pk] = Progress(total=len(total), done=len(done), noun=plot.NOUNS[kind], size=len(total))
    return out
