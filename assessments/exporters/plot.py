"""Plot labels out of the system: every label as JSON lines, and forced-choice results as JSON or CSV.

JSON lines (`plot_label_records`): one object per current label (Judgement) of the plot layers,
grade (PLOT_GRADE), query spans (PLOT_SPANS), forced choice (CHOICE) and pair rating (RATING), or
with `history` one per change (JudgementChange, oldest first per label). Every object has the
layer, topic, collection, passage(s), study item and its pool, the assessor, the value, the
assessor's clock (`client_time`, `client_seq`), the server's (`received_at`), the session, the runs
it was judged under, the source (web, api, import, adjudication) and `adjudicated`. Spans are
written with the query text they cover ({start, end, text}); a choice with the item's answer and
whether it was right; a rating with the pair's encoder similarity and group (most/least similar).
Time stamps are ISO 8601 UTC with microseconds (…Z), as in the CAR Y3 files.

Forced-choice results (`choice_rows`): one row per answer (adjudicated rows left out): pool, item,
topic, assessor, chosen, answer, correct, the run whose top ranks gave the negatives, its choice
and whether it was right, N, time and session.

Scope: the plot topics of the given pools (a campaign's pools, or one pool), else every plot topic;
choices and ratings only for the study items of those pools; never practice labels (qualification answers,
Judgement.objects.without_practice). The files are written atomically.
"""

import csv
import json
import sys
from contextlib import contextmanager

from django.db.models import Q

from assessments.campaign_link import campaign_exists
from assessments.exporters.car_y3 import format_time
from assessments.exporters.common import ExportFailed, atomic_file
from assessments.exporters.csvcells import safe_row
from assessments.models import Judgement, JudgementChange, Layer, Pool, StudyItem, Topic

LAYERS = (Layer.PLOT_GRADE, Layer.PLOT_SPANS, Layer.CHOICE, Layer.RATING)
CHUNK = 2000  # rows fetched per round trip
CHOICE_FIELDS = ("pool", "item", "topic", "assessor", "chosen", "answer", "correct", "run", "retriever_choice",
                 "retriever_correct", "n", "client_time", "session_id")


def resolve_pools(*, pool=None, campaign=None):
    """The pools named on a command line (None: no restriction); ExportFailed names what does not exist."""
    if pool and campaign:
        raise ExportFailed("name --pool or --campaign, not both")
    if pool:
        found = list(Pool.objects.filter(name=pool))
        if not found:
            raise ExportFailed(f"--pool: no pool named {pool!r}")
        return found
    if campaign:
        # Campaign (annotation) holds the pools; looked up by name so that assessments imports nothing from annotation.
        found = list(Pool.objects.filter(campaigns__name=campaign).order_by("name"))
        if not found and not campaign_exists(campaign):
            raise ExportFailed(f"--campaign: no campaign named {campaign!r}")
        return found
    return None


def _items(pools):
    """{(topic id, key): StudyItem} of the pools' study items (of every pool when None), first pool by name wins."""
    items = StudyItem.objects.select_related("pool", "answer", "retriever_choice", "run").order_by("pool__name", "key")
    if pools is not None:
        items = items.filter(pool__in=pools)
    found = {}
    for item in items:
        found.setdefault((item.topic_id, item.key), item)
    return found


def _topics(pools):
    topics = Topic.objects.filter(kind=Topic.Kind.PLOT)
    if pools is not None:
        topics = topics.filter(pools__in=pools)
    return topics


def _in_scope(pools, items):
    """The plot labels in scope: grades and spans of the topics, choices and ratings of the pools' own items."""
    rows = Judgement.objects.filter(layer__in=LAYERS, topic__in=_topics(pools)).without_practice()
    if pools is not None:
        rows = rows.filter(Q(layer__in=(Layer.PLOT_GRADE, Layer.PLOT_SPANS)) | Q(item__in={key for _, key in items}))
    return rows


def spans_with_text(value, query):
    """[{start, end, text}] of a PLOT_SPANS value ([[start, end], …]); anything else is returned as None."""
    if not isinstance(value, list):
        return None
    spans = []
    for span in value:
        if isinstance(span, list) and len(span) == 2 and all(isinstance(x, int) for x in span):
            spans.append({"start": span[0], "end": span[1], "text": query[span[0]:span[1]]})
    return spans


def _details(judgement, value, item):
    record = {}
    if judgement.layer == Layer.PLOT_SPANS:
        record["spans"] = spans_with_text(value, judgement.topic.text)
    if item is not None:
        record["pool"] = item.pool.name
    if judgement.layer == Layer.CHOICE and item is not None:
        answer = item.answer.external_id if item.answer else None
        record["choice"] = {
            "answer": answer, "correct": value is not None and value == answer,
            "run": item.run.name if item.run else None,
            "retriever_choice": item.retriever_choice.external_id if item.retriever_choice else None,
            "n": item.metadata.get("n"),
        }
    if judgement.layer == Layer.RATING and item is not None:
        record["pair"] = {"similarity": item.similarity, "group": item.metadata.get("group")}
    return record


def _base(judgement):
    return {
        "layer": judgement.layer,
        "collection": judgement.topic.collection.name,
        "topic": judgement.topic.external_id,
        "passage": judgement.passage.external_id if judgement.passage else None,
        "passage2": judgement.passage2.external_id if judgement.passage2 else None,
        "item": judgement.item or None,
        "assessor": judgement.assessor.get_username(),
        "adjudicated": judgement.adjudicated,
    }


ORDER = ("topic__collection__name", "topic__external_id", "layer", "assessor__username", "key")
RELATED = ("topic", "topic__collection", "passage", "passage2", "assessor")


def plot_label_records(pools=None, *, history=False):
    """Yield one dict per current plot label (or, with history, per change), ordered by topic, layer, assessor.

    One query either way (streamed in chunks), whatever the number of labels or changes.
    """
    items = _items(pools)
    scope = _in_scope(pools, items)
    if not history:
        rows = scope.select_related(*RELATED, "latest_change").order_by(*ORDER)
        for judgement in rows.iterator(chunk_size=CHUNK):
            item = items.get((judgement.topic_id, judgement.item)) if judgement.item else None
            change = judgement.latest_change
            yield {
                **_base(judgement), "value": judgement.value, "grade": judgement.grade,
                **_details(judgement, judgement.value, item),
                "client_time": format_time(judgement.client_time), "client_seq": judgement.client_seq,
                "received_at": format_time(change.received_at) if change else None,
                "session_id": change.session_id if change else "", "run_ids": judgement.run_ids,
                "source": change.source if change else None,
            }
        return
    changes = JudgementChange.objects.filter(judgement__in=scope.values("pk")).select_related(
        "judgement", *(f"judgement__{name}" for name in RELATED),
    ).order_by(*(f"judgement__{name}" for name in ORDER), "client_time", "client_seq", "id")
    for change in changes.iterator(chunk_size=CHUNK):
        judgement = change.judgement
        item = items.get((judgement.topic_id, judgement.item)) if judgement.item else None
        yield {
            **_base(judgement), "change_id": str(change.change_id), "value": change.value,
            **_details(judgement, change.value, item),
            "client_time": format_time(change.client_time), "client_seq": change.client_seq,
            "received_at": format_time(change.received_at), "session_id": change.session_id,
            "run_ids": change.run_ids, "source": change.source, "active_ms": change.active_ms,
        }


def choice_rows(pools=None):
    """Yield one dict (CHOICE_FIELDS) per forced-choice answer of the pools' items; adjudicated rows and practice
    answers (Judgement.objects.without_practice) are left out."""
    items = _items(pools)
    choices = (Judgement.objects.filter(layer=Layer.CHOICE, adjudicated=False, value__isnull=False).exclude(item="")
               .without_practice())
    choices = choices.select_related("assessor", "latest_change").order_by("item", "assessor__username")
    for judgement in choices.filter(item__in={key for _, key in items}):
        item = items.get((judgement.topic_id, judgement.item))
        if item is None or item.kind != StudyItem.Kind.CHOICE:
            continue
        answer = item.answer.external_id if item.answer else None
        retriever = item.retriever_choice.external_id if item.retriever_choice else None
        yield {
            "pool": item.pool.name, "item": item.key, "topic": item.topic.external_id,
            "assessor": judgement.assessor.get_username(), "chosen": judgement.value, "answer": answer,
            "correct": judgement.value == answer, "run": item.run.name if item.run else None,
            "retriever_choice": retriever, "retriever_correct": retriever is not None and retriever == answer,
            "n": item.metadata.get("n"), "client_time": format_time(judgement.client_time),
            "session_id": judgement.latest_change.session_id if judgement.latest_change else "",
        }


@contextmanager
def output(out, stream=None):
    """A text handle on the file `out`, written atomically, or on `stream` (default stdout) for "-"."""
    if str(out) == "-":
        yield stream or sys.stdout
        return
    with atomic_file(out) as handle:
        yield handle


def write_json_lines(records, out, stream=None) -> int:
    """Write dicts as JSON lines to the file `out` (atomically; "-" for stdout); returns how many."""
    count = 0
    with output(out, stream) as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False, sort_keys=False) + "\n")
            count += 1
    return count


def write_choices(rows, out, fmt="csv", stream=None) -> int:
    """Write forced-choice rows to `out` (atomically; "-" for stdout) as CSV with a header or a JSON array; returns how many."""
    if fmt not in ("csv", "json"):
        raise ExportFailed(f"--format: {fmt!r} is not one of csv, json")
    rows = list(rows)
    with output(out, stream) as handle:
        if fmt == "json":
            json.dump(rows, handle, ensure_ascii=False, indent=1)
            handle.write("\n")
        elif fmt == "csv":
            writer = csv.DictWriter(handle, fieldnames=CHOICE_FIELDS, lineterminator="\n")
            writer.writeheader()
            writer.writerows(safe_row(row) for row in rows)
    return len(rows)
