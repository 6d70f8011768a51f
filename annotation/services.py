"""The assessor's work: the queue, the outline page's state, saving one change, and an assignment's status.

Plain functions: they take models and values, return values, own their
transaction and raise domain errors (ChangeInvalid), never HTTP errors.
"""

import uuid
from collections import defaultdict
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from annotation.models import Assignment
from annotation.roles import Role
from assessments.models import Judgement, JudgementChange, Layer, RunEntry, SpecialFacet
from assessments.services.judging import JudgementInvalid, record_judgement

OUTLINE_LAYERS = (Layer.NOTES, Layer.FACET, Layer.REMOVAL, Layer.TRANSITION)
PROGRESS_LAYERS = (Layer.FACET, Layer.REMOVAL, Layer.TRANSITION)
MAX_NOTES = 20_000
MAX_SESSION_ID = 200
MAX_ACTIVE_MS = 24 * 3600 * 1000  # active time sent with a change: at most a day


class ChangeInvalid(ValueError):
    """A change the page sent that cannot be stored; `field` names the offending field."""

    def __init__(self, field, message):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Progress:
    """How far an article is judged: kept passages graded, transitions between kept passages labelled."""

    passages: int
    removed: int
    passages_left: int
    transitions: int
    transitions_left: int

    @property
    def complete(self) -> bool:
        return self.passages > 0 and self.passages_left == 0 and self.transitions_left == 0

    @property
    def percent(self) -> int:
        total = self.passages + self.transitions
        done = total - self.passages_left - self.transitions_left
        return round(100 * done / total) if total else 0


def can_review(user) -> bool:
    """Organisers may look at any assignment's page, read-only."""
    return user.is_staff or user.is_superuser or user.groups.filter(name=Role.ORGANISER).exists()


# Reading ---------------------------------------------------------------------------------------------------------


def article(assignment, *, text=True) -> list[RunEntry]:
    """The run's passages for the topic, in article order; without `text`, the passages' ids alone (a save)."""
    entries = RunEntry.objects.filter(run_id=assignment.run_id, topic_id=assignment.topic_id).select_related("passage")
    if not text:
        entries = entries.only("rank", "passage_id", "passage__id")
    return list(entries.order_by("rank"))


def current_labels(assessor, topic_id, passage_ids, *, layers=OUTLINE_LAYERS) -> dict:
    """The assessor's current outline labels for these passages of a topic, whatever run they were made under.

    Returns {"notes": {pid: text}, "facets": {pid: [...]}, "removed": {pid: bool},
    "transitions": {"pid1-pid2": value}, "runs": {pid: [run names]}}; cleared labels are left out.
    `layers` narrows what is read (progress needs no notes).
    """
    ids = set(passage_ids)
    labels = {"notes": {}, "facets": {}, "removed": {}, "transitions": {}, "runs": {}}
    rows = Judgement.objects.filter(
        assessor=assessor, topic_id=topic_id, layer__in=layers, passage_id__in=ids
    ).order_by().values_list("layer", "passage_id", "passage2_id", "value", "run_ids")  # no ordering: no joins
    for layer, pid, pid2, value, run_ids in rows:
        if layer == Layer.TRANSITION:
            if pid2 in ids and value is not None:
                labels["transitions"][f"{pid}-{pid2}"] = value
            continue
        runs = labels["runs"].setdefault(pid, set())
        runs.update(run_ids or ())
        if value is None or value == [] or value == "":
            continue
        if layer == Layer.NOTES:
            labels["notes"][pid] = value
        elif layer == Layer.FACET:
            labels["facets"][pid] = value
        elif layer == Layer.REMOVAL:
            labels["removed"][pid] = bool(value)
    labels["runs"] = {pid: sorted(runs) for pid, runs in labels["runs"].items()}
    return labels


def progress_of(passage_ids, labels) -> Progress:
    """Progress of an article (passage ids in order) under `labels` (as current_labels returns them)."""
    kept = [pid for pid in passage_ids if not labels["removed"].get(pid)]
    graded = sum(1 for pid in kept if labels["facets"].get(pid))
    pairs = list(zip(kept, kept[1:]))
    labelled = sum(1 for a, b in pairs if labels["transitions"].get(f"{a}-{b}"))
    return Progress(
        passages=len(passage_ids),
        removed=len(passage_ids) - len(kept),
        passages_left=len(kept) - graded,
        transitions=len(pairs),
        transitions_left=len(pairs) - labelled,
    )


def queue(user) -> list[tuple[Assignment, Progress]]:
    """The user's outline assignments in queue order, each with its progress (three queries in all)."""
    assignments = list(
        Assignment.objects.for_assessor(user).filter(run__isnull=False).select_related("topic", "run", "campaign")
    )
    if not assignments:
        return []
    articles = defaultdict(list)
    entries = (
        RunEntry.objects.filter(run_id__in={a.run_id for a in assignments}, topic_id__in={a.topic_id for a in assignments})
        .order_by("run_id", "topic_id", "rank")
        .values_list("run_id", "topic_id", "passage_id")
    )
    for run_id, topic_id, passage_id in entries:
        articles[run_id, topic_id].append(passage_id)
    by_topic = {}
    for topic_id in {a.topic_id for a in assignments}:
        ids = {pid for (_, t), pids in articles.items() if t == topic_id for pid in pids}
        by_topic[topic_id] = current_labels(user, topic_id, ids)
    return [(a, progress_of(articles[a.run_id, a.topic_id], by_topic[a.topic_id])) for a in assignments]


def next_assignment(user, *, exclude=None, items=None):
    """The user's next assignment: a batch sent back for revision first, else the first one not done.

    `items` is the queue to look through ((assignment, progress) pairs; default: the outline queue).
    Formal work waiting for the user's qualification is skipped (annotation.qualification); statuses
    are brought up to date on the way (a complete assignment becomes done).
    """
    from annotation.qualification import locked_campaign_ids

    locked = locked_campaign_ids(user)
    first = None
    for assignment, progress in queue(user) if items is None else items:
        if assignment.status == Assignment.Status.DONE or (exclude and assignment.pk == exclude.pk):
            continue
        if not assignment.qualification and assignment.campaign_id in locked:
            continue
        if assignment.status == Assignment.Status.REVISE:
            return assignment
        if progress.complete:
            _set_status(assignment, Assignment.Status.DONE)
            continue
        first = first or assignment
    return first


@dataclass(frozen=True)
class OutlinePage:
    """What the outline page shows: the article's entries, the page's data (JSON-able) and the progress."""

    entries: list
    state: dict
    progress: Progress


def outline_page(assignment, *, readonly=False) -> OutlinePage:
    """Everything the outline page needs; `state` is plain data rendered into the page as JSON, never as markup."""
    entries = article(assignment)
    ids = [e.passage_id for e in entries]
    labels = current_labels(assignment.assessor, assignment.topic_id, ids)
    facets = [
        {"id": f.heading_id, "heading": f.heading, "key": str(i) if i <= 9 else "", "notes": f.notes}
        for i, f in enumerate(assignment.topic.facets.order_by("position"), start=1)
    ]
    facets += [
        {"id": SpecialFacet.OTHER.value, "heading": SpecialFacet.OTHER.label, "key": "o", "special": True},
        {"id": SpecialFacet.GENERAL.value, "heading": SpecialFacet.GENERAL.label, "key": "g", "special": True},
    ]
    state = {
        "assignment": assignment.token,
        "status": assignment.status,
        "readonly": readonly,
        "run": assignment.run.name,
        "topic": assignment.topic.external_id,
        "facets": facets,
        "passages": [{"id": e.passage_id, "n": n} for n, e in enumerate(entries, start=1)],
        "labels": {key: {str(k): v for k, v in labels[key].items()} for key in labels},
    }
    return OutlinePage(entries=entries, state=state, progress=progress_of(ids, labels))


# Writing ---------------------------------------------------------------------------------------------------------


def mark_opened(assignment):
    """An assignment opened by its assessor for the first time is started."""
    if assignment.status == Assignment.Status.TODO:
        _set_status(assignment, Assignment.Status.STARTED)


def set_done(assignment, done: bool, *, by_assessor=False):
    """Mark an assignment done (also when labels are missing: the assessor says so), or open it again.

    A batch sent back for revision (or qualification units open for a retake) stays "to revise" until its
    assessor marks it done (by_assessor=True: the page's mark endpoint); a change that completes it does not
    finish it, and opening it again keeps it to revise.
    """
    if assignment.status == Assignment.Status.REVISE and not (done and by_assessor):
        return
    _set_status(assignment, Assignment.Status.DONE if done else Assignment.Status.STARTED)


def save_change(assignment, data) -> tuple:
    """Store one change sent by the outline page; returns (Recorded, Progress). Raises ChangeInvalid.

    `data` is the decoded JSON body: change_id, layer, passage (and passage2 for a
    transition), value, client_time (ISO 8601 with zone), client_seq, session_id, active_ms.
    The change is recorded under this assignment's run. A change already stored
    (same change_id) is not stored again.
    """
    envelope = change_envelope(data)
    layer = data.get("layer")
    if layer not in OUTLINE_LAYERS:
        raise ChangeInvalid("layer", f"expected one of {', '.join(OUTLINE_LAYERS)}")
    value = data.get("value")
    if layer == Layer.NOTES and isinstance(value, str) and len(value) > MAX_NOTES:
        raise ChangeInvalid("value", f"notes are limited to {MAX_NOTES:,} characters")

    entries = {e.passage_id: e for e in article(assignment, text=False)}
    passage = _article_passage(entries, data.get("passage"), "passage")
    passage2 = None
    if layer == Layer.TRANSITION:
        passage2 = _article_passage(entries, data.get("passage2"), "passage2")
    elif data.get("passage2") is not None:
        raise ChangeInvalid("passage2", f"a {layer} change is about one passage")

    try:
        recorded = record_judgement(
            assessor=assignment.assessor, layer=layer, value=value, topic=assignment.topic,
            passage=passage, passage2=passage2, run_ids=[assignment.run.name], source=JudgementChange.Source.WEB,
            **envelope,
        )
    except JudgementInvalid as exc:
        field, _, message = str(exc).partition(": ")
        raise ChangeInvalid(field if message else "value", message or str(exc)) from exc
    ids = list(entries)
    progress = progress_of(ids, current_labels(assignment.assessor, assignment.topic_id, ids, layers=PROGRESS_LAYERS))
    if not recorded.duplicate:  # a batch to revise is done only when its assessor says so (mark)
        if progress.complete and assignment.status in (Assignment.Status.TODO, Assignment.Status.STARTED):
            _set_status(assignment, Assignment.Status.DONE)
        elif assignment.status == Assignment.Status.TODO:
            _set_status(assignment, Assignment.Status.STARTED)
    return recorded, progress


def change_envelope(data) -> dict:
    """The fields every page's change carries, checked: record_judgement's change_id, client_time,
    client_seq, session_id and active_ms. Raises ChangeInvalid naming the field."""
    if not isinstance(data, dict):
        raise ChangeInvalid("body", "expected a JSON object")
    client_seq = data.get("client_seq", 0)
    if not isinstance(client_seq, int) or isinstance(client_seq, bool) or not 0 <= client_seq < 2**62:
        raise ChangeInvalid("client_seq", "expected a whole number, 0 or more")
    session_id = data.get("session_id", "")
    if not isinstance(session_id, str) or len(session_id) > MAX_SESSION_ID:
        raise ChangeInvalid("session_id", f"expected text of at most {MAX_SESSION_ID} characters")
    active_ms = data.get("active_ms")
    if active_ms is not None and (
        not isinstance(active_ms, int) or isinstance(active_ms, bool) or not 0 <= active_ms <= MAX_ACTIVE_MS
    ):
        raise ChangeInvalid("active_ms", f"expected milliseconds, a whole number from 0 to {MAX_ACTIVE_MS}")
    return dict(
        change_id=_uuid(data.get("change_id")), client_time=_client_time(data.get("client_time")),
        client_seq=client_seq, session_id=session_id, active_ms=active_ms,
    )


def _set_status(assignment, status):
    """Move an assignment to `status` (conditional UPDATEs: nothing changes when it is there already)."""
    now = timezone.now()
    with transaction.atomic():
        changed = Assignment.objects.filter(pk=assignment.pk).exclude(status=status).update(
            status=status, finished_at=now if status == Assignment.Status.DONE else None
        )
        Assignment.objects.filter(pk=assignment.pk, started_at__isnull=True).update(started_at=now)
    assignment.refresh_from_db(fields=["status", "started_at", "finished_at"])
    if changed and status == Assignment.Status.DONE:
        from annotation.review import on_assignment_done  # scores a qualification attempt or opens a review

        on_assignment_done(assignment)
        assignment.refresh_from_db(fields=["status", "started_at", "finished_at"])


def _uuid(raw):
    try:
        return uuid.UUID(raw)
    except (TypeError, ValueError, AttributeError):
        raise ChangeInvalid("change_id", "expected a UUID made by the page") from None


def _client_time(raw):
    when = parse_datetime(raw) if isinstance(raw, str) else None
    if when is None or when.tzinfo is None:
        raise ChangeInvalid("client_time", "expected an ISO 8601 time with a zone, e.g. 2024-05-01T12:00:00.000Z")
    return when


def _article_passage(entries, raw, field):
    if not isinstance(raw, int) or isinstance(raw, bool) or raw not in entries:
        raise ChangeInvalid(field, "not a passage of this article")
    return entries[raw].passage

