"""The one save path: a change from any judging page, checked, stored, and the unit's status brought up to date.

    page (autosave.js) ── POST a/<token>/save ──▶ views.assessor.save ──▶ save_change(assignment, data)
        change_envelope (change_id, client_time, client_seq, session_id, active_ms)
        units.of(assignment).change_key (the layer, the key and the value, checked for this unit's kind)
        prelabels: whether the page showed a machine label for the item (campaigns that show pre-labels)
        assessments.services.judging.record_judgement (stored once, history kept, campaign's own label)
        units.of(assignment).progress ──▶ status.after_change (in progress, or done when complete)
        a unit that became done ──▶ review.on_assignment_done (scores a qualification attempt or opens a review)
    ◀── {ok, duplicate, current, status, progress} (the page shows the server's progress)
"""

import math
import uuid

from django.db.models import Exists, OuterRef

from django.utils.dateparse import parse_datetime

from annotation import units
from annotation.models import Assignment
from annotation.services import prelabels, review, status
from annotation.services.errors import ChangeInvalid
from assessments.models import JudgementChange
from assessments.services.judging import JudgementInvalid, record_judgement

MAX_SESSION_ID = 200
MAX_ACTIVE_MS = 24 * 3600 * 1000  # active time sent with a change: at most a day


def progress(assignment):
    """The unit's progress now, whatever its kind."""
    return units.of(assignment).progress(assignment)


def save_change(assignment, data) -> tuple:
    """Store one change sent by a judging page; returns (Recorded, Progress). Raises ChangeInvalid naming the field.

    `data` is the decoded JSON body: the envelope (change_id, client_time, client_seq, session_id, active_ms), the
    layer, the value and the key (`passage`, `passage2` or `item`, as the unit's kind needs). A change already
    stored (same change_id) is stored once and changes no status.
    """
    envelope = change_envelope(data)
    layer, value = data.get("layer"), data.get("value")
    if not isinstance(layer, str):
        raise ChangeInvalid("layer", "expected the name of a label layer")
    check_text(value, "value")
    check_text(data.get("item"), "item")  # an item's key (a study item's page handle) is text every database compares
    kind = units.of(assignment)
    key = kind.change_key(assignment, data, layer, value)
    passage_ids = key.pop("_passage_ids", None)
    value = key.pop("_value", value)
    try:
        shown = prelabels.of_assignment(assignment).was_shown(assignment.topic_id, key.get("passage"))
    except prelabels.PrelabelsInvalid as exc:
        raise ChangeInvalid("assignment", str(exc)) from exc
    try:
        recorded = record_judgement(
            assessor=assignment.assessor, layer=layer, value=value, topic=assignment.topic,
            source=JudgementChange.Source.WEB, campaign_id=assignment.campaign_id, machine_shown=shown, **key,
            **envelope,
        )
    except JudgementInvalid as exc:
        field, _, message = str(exc).partition(": ")
        raise ChangeInvalid(field if message else "value", message or str(exc)) from exc
    now = kind.progress(assignment, passage_ids) if passage_ids is not None else kind.progress(assignment)
    if not recorded.duplicate:
        if status.after_change(assignment, now, done_by_mark=kind.done_by_mark):
            _became_done(assignment)
        if kind.labels_by_topic:
            _finish_siblings(assignment, kind)
    return recorded, now


def open_sibling_articles():
    """An annotation for Assignment querysets: whether the assessor has other open units of the topic of the same kind
    in the campaign or another (read with the assignment itself, so a save of a kind whose labels are the topic's,
    an outline article's, asks for siblings only when there are some)."""
    return Exists(Assignment.objects.filter(
        assessor_id=OuterRef("assessor_id"), topic_id=OuterRef("topic_id"), kind=OuterRef("kind"),
        status__in=(Assignment.Status.TODO, Assignment.Status.IN_PROGRESS),
    ).exclude(pk=OuterRef("pk")))


def _finish_siblings(assignment, kind):
    """Labels keyed on (topic, passage) (UnitKind.labels_by_topic: an outline article's): a change can complete the
    assessor's other units of the topic of its kind."""
    if getattr(assignment, "open_siblings", True) is False:
        return
    siblings = Assignment.objects.filter(
        assessor_id=assignment.assessor_id, campaign_id=assignment.campaign_id, topic_id=assignment.topic_id,
        kind=assignment.kind, status__in=(Assignment.Status.TODO, Assignment.Status.IN_PROGRESS),
    ).exclude(pk=assignment.pk)
    for sibling in siblings:
        sibling.assessor = assignment.assessor
        done = kind.progress(sibling)
        if done.complete and status.after_change(sibling, done, done_by_mark=kind.done_by_mark):
            _became_done(sibling)


def _became_done(assignment):
    """A unit this request made done: its qualification attempt is scored or its review opens (which may send it
    back), and the assignment in hand shows where that left it."""
    review.on_assignment_done(assignment)
    assignment.refresh_from_db(fields=["status", "started_at", "finished_at"])


def change_envelope(data) -> dict:
    """The fields every page's change carries, checked: record_judgement's change_id, client_time,
    client_seq, session_id and active_ms. Raises ChangeInvalid naming the field."""
    if not isinstance(data, dict):
        raise ChangeInvalid("body", "expected a JSON object")
    client_seq = data.get("client_seq", 0)
    if not isinstance(client_seq, int) or isinstance(client_seq, bool) or not 0 <= client_seq < 2**62:
        raise ChangeInvalid("client_seq", "expected a whole number, 0 or more")
    session_id = data.get("session_id", "")
    if not isinstance(session_id, str) or len(session_id) > MAX_SESSION_ID or not _clean_text(session_id):
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


def _clean_text(text) -> bool:
    """No NUL and no lone surrogate: text every database stores."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_text(value, field):
    """Raise ChangeInvalid when text (or text inside a list or dict) has NUL or a lone surrogate."""
    if isinstance(value, str):
        if not _clean_text(value):
            raise ChangeInvalid(field, "text with a NUL character or a lone surrogate cannot be stored")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            check_text(v, f"{field}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            check_text(k, field)
            check_text(v, f"{field}.{k}")
    elif isinstance(value, float) and not math.isfinite(value):
        raise ChangeInvalid(field, "expected a finite number")


def _uuid(raw):
    try:
        return uuid.UUID(raw)
    except (TypeError, ValueError, AttributeError):
        raise ChangeInvalid("change_id", "expected a UUID made by the page") from None


def _client_time(raw):
    """The assessor's clock (it orders the assessor's changes: assessments.services.judging)."""
    try:
        when = parse_datetime(raw) if isinstance(raw, str) else None
    except (ValueError, OverflowError):
        when = None
    if when is None or when.tzinfo is None:
        raise ChangeInvalid("client_time", "expected an ISO 8601 time with a zone, e.g. 2024-05-01T12:00:00.000Z")
    return when


def mark(assignment, done=True, *, reason: str = ""):
    """The assessor marks the unit done (complete, or submitted incomplete with `reason`); a unit done already stays
    done. It never reopens one: that is `reopen`, a request of its own. Raises ChangeInvalid naming `done` or `reason`
    (nugget_support.BankNotReady for a nugget support unit that waits for its topic's nuggets)."""
    if done is not True:
        raise ChangeInvalid("done", "expected true (to open a done unit again, reopen it)")
    if not isinstance(reason, str):
        raise ChangeInvalid("reason", "expected text")
    check_text(reason, "reason")
    kind = units.of(assignment)
    if kind.check_mark is not None and assignment.status != Assignment.Status.DONE:
        kind.check_mark(assignment)  # a nugget support unit waiting for its topic's nuggets: not done, even with a reason
    if status.mark_done(assignment, kind.progress(assignment), incomplete_reason=reason):
        _became_done(assignment)


def reopen(assignment):
    """The assessor opens a done unit again (annotation.services.status.reopen)."""
    status.reopen(assignment)
