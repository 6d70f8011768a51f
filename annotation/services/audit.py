"""The audit trail: every judgement change with who, when, from which session, its old and its new value.

`change_rows` streams the history (optionally of one campaign or one assessor) as plain dicts; the old value
of a change is the value of the change before it on the same label in the assessor's own clock order (None for
the first). `write_jsonl` writes such rows to a file that appears only when complete
(assessments.exporters.common.atomic_file). `delete_campaign` keeps
an export of a campaign (its assignments, the current judgements and the history of its assessors on its
topics) under settings.EXPORT_DIR before deleting it.
"""

import json
import re
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotation.models import Assignment, Campaign
from assessments.exporters.common import ExportFailed, atomic_file
from assessments.models import Judgement, JudgementChange

CHUNK = 2000
CHANGE_FIELDS = (
    "change_id", "judgement_id", "assessor__username", "received_at", "client_time", "client_seq", "session_id",
    "source", "layer", "judgement__topic__external_id", "judgement__passage__external_id",
    "judgement__passage2__external_id", "judgement__item", "run_ids", "value", "active_ms",
)


def changes_of(*, campaign=None, assessor=None):
    """JudgementChange rows of `campaign` (the changes of its own labels) and/or of one `assessor`."""
    changes = JudgementChange.objects.all()
    if assessor is not None:
        changes = changes.filter(assessor=assessor)
    if campaign is not None:
        changes = changes.filter(judgement__campaign_id=campaign.pk)
    return changes


def change_rows(*, campaign=None, assessor=None):
    """Every change in scope as a dict with `old_value` and `new_value`, label by label in the assessor's clock order."""
    # Whether a change is its label's current one comes with the row (no map of every label: constant memory).
    rows = (
        changes_of(campaign=campaign, assessor=assessor)
        .order_by("judgement_id", "client_time", "client_seq", "id")
        .values_list(*CHANGE_FIELDS, "id", "judgement__latest_change_id")
    )
    previous_judgement, old = None, None
    for (change_id, judgement_id, username, received_at, client_time, client_seq, session_id, source, layer,
         topic, passage, passage2, item, run_ids, value, active_ms, pk, latest) in rows.iterator(chunk_size=CHUNK):
        if judgement_id != previous_judgement:
            previous_judgement, old = judgement_id, None
        yield {
            "change_id": str(change_id), "assessor": username, "received_at": _iso(received_at),
            "client_time": _iso(client_time), "client_seq": client_seq, "session_id": session_id, "source": source,
            "layer": layer, "topic": topic, "passage": passage, "passage2": passage2, "item": item,
            "run_ids": run_ids, "old_value": old, "new_value": value, "current": latest == pk,
            "active_ms": active_ms,
        }
        old = value


def _iso(when):
    return when.isoformat().replace("+00:00", "Z") if when else None


def write_jsonl(rows, path) -> int:
    """Write dicts as JSON lines to `path` (complete or not at all); returns how many."""
    count = 0
    with atomic_file(path) as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, default=str))
            handle.write("\n")
            count += 1
    return count


def campaign_rows(campaign):
    """Everything a campaign's deletion would lose or orphan: the campaign, its assignments, the current
    judgements of its assessors on its topics, and their whole history, as tagged dicts."""
    yield {"type": "campaign", "name": campaign.name, "title": campaign.title, "task": campaign.task,
           "guidelines": campaign.guidelines, "settings": campaign.settings, "created_at": _iso(campaign.created_at),
           "exported_at": _iso(datetime.now(UTC))}
    assignments = (
        Assignment.objects.filter(campaign=campaign).order_by("assessor__username", "position", "id")
        .values_list("assessor__username", "topic__external_id", "run__name", "pool__name", "status",
                     "position", "started_at", "finished_at")
    )
    for username, topic, run, pool, status, position, started_at, finished_at in assignments.iterator(CHUNK):
        yield {"type": "assignment", "assessor": username, "topic": topic, "run": run, "pool": pool,
               "status": status, "position": position, "started_at": _iso(started_at),
               "finished_at": _iso(finished_at)}
    judgements = (
        Judgement.objects.in_campaign(campaign).order_by("id")
        .values_list("assessor__username", "layer", "topic__external_id", "passage__external_id",
                     "passage2__external_id", "item", "value", "grade", "run_ids", "client_time")
    )
    for username, layer, topic, passage, passage2, item, value, grade, run_ids, client_time in judgements.iterator(CHUNK):
        yield {"type": "judgement", "assessor": username, "layer": layer, "topic": topic, "passage": passage,
               "passage2": passage2, "item": item, "value": value, "grade": grade, "run_ids": run_ids,
               "client_time": _iso(client_time)}
    for row in change_rows(campaign=campaign):
        yield {"type": "change", **row}


def export_path(campaign) -> Path:
    """Where a campaign's deletion export goes: EXPORT_DIR/campaign-<id>-<name>-<UTC time>.jsonl.

    The name is a slug, but it is still reduced to [A-Za-z0-9_-] here: nothing from user input decides a
    folder, and the result is checked to lie inside EXPORT_DIR.
    """
    folder = Path(settings.EXPORT_DIR).resolve()
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", campaign.name)[:80].strip("-") or "campaign"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    path = (folder / f"campaign-{campaign.pk}-{safe}-{stamp}.jsonl").resolve()
    if path.parent != folder:
        raise ExportFailed(f"refusing to write outside {folder}: {path}")
    return path


def export_campaign(campaign) -> Path:
    """Write the campaign's export under EXPORT_DIR; returns its path. Raises ExportFailed."""
    path = export_path(campaign)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportFailed(f"cannot create {str(path.parent)!r}: {exc.strerror or exc}") from None
    write_jsonl(campaign_rows(campaign), path)
    return path


def delete_campaign(campaign) -> Path:
    """Export the campaign (complete, on disk) and then delete it with its assignments; returns the export's path.

    An export that fails deletes nothing. The campaign's judgements stay in the database (a judgement is never deleted), keyed by its old id.
    """
    path = export_campaign(campaign)
    with transaction.atomic():
        Campaign.objects.filter(pk=campaign.pk).delete()
    return path
