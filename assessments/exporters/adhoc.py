"""Ad hoc assessments out of the system: one JSON object per (assessor, topic, document) of a campaign, with the
grade, the evidence spans with the text they cover, and the time spent on the document.

    {"topic", "docid", "assessor", "grade", "evidence": [{"start", "end", "text"}], "active_ms", "changes",
     "client_time", "session_id"}

`active_ms` is the assessor's active time on the document (idle time not counted) summed over every change of its
grade and evidence; `changes` counts them. Offsets are code points into the document's text, as stored. Human
labels only: adjudicated labels are left out, and practice labels (qualification answers,
Judgement.objects.without_practice); machine labels are never here. Ordered by topic, document, assessor.
"""

from collections import defaultdict

from django.db.models import Count, Sum

from assessments.exporters.car_y3 import format_time
from assessments.models import Judgement, JudgementChange, Layer

LAYERS = (Layer.GRADE, Layer.EVIDENCE)
CHUNK = 2000


def adhoc_records(campaign_id):
    """Yield the campaign's ad hoc assessments (see the module's docstring), two queries in all."""
    labels = (Judgement.objects.in_campaign(campaign_id).without_practice(campaign_id)
              .filter(layer__in=LAYERS, adjudicated=False))
    time = defaultdict(lambda: [0, 0])
    for assessor, topic, passage, active, n in (
        JudgementChange.objects.filter(judgement__in=labels.values("pk"))
        .values_list("judgement__assessor_id", "judgement__topic_id", "judgement__passage_id")
        .annotate(active=Sum("active_ms"), n=Count("id")).order_by()
    ):
        time[assessor, topic, passage][0] += active or 0
        time[assessor, topic, passage][1] += n
    rows = labels.select_related("topic", "passage", "assessor", "latest_change").order_by(
        "topic__external_id", "passage__external_id", "assessor__username", "layer")
    record = key = None
    for judgement in rows.iterator(chunk_size=CHUNK):
        here = (judgement.assessor_id, judgement.topic_id, judgement.passage_id)
        if here != key:
            if record is not None:
                yield record
            key = here
            spent, changes = time[here]
            record = {"topic": judgement.topic.external_id, "docid": judgement.passage.external_id,
                      "assessor": judgement.assessor.get_username(), "grade": None, "evidence": [],
                      "active_ms": spent, "changes": changes, "client_time": None, "session_id": ""}
        if judgement.layer == Layer.GRADE:
            record["grade"] = judgement.value
        elif isinstance(judgement.value, list):
            text = judgement.passage.text
            record["evidence"] = [{"start": s, "end": e, "text": text[s:e]} for s, e in judgement.value]
        latest = format_time(judgement.client_time)
        if record["client_time"] is None or latest > record["client_time"]:
            record["client_time"] = latest
            record["session_id"] = judgement.latest_change.session_id if judgement.latest_change else ""
    if record is not None:
        yield record
