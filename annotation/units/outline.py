"""An outline article (CAR Y3): a topic and one run's article, its passages labelled with facets, removals,
transitions and notes (annotation.services.outline). Labels are the topic's: a change may complete the assessor's
other articles of the topic."""

from django.template.loader import render_to_string

from annotation.services import outline
from annotation.units import reviewing
from annotation.units.registry import UnitKind, register
from assessments.models import RunEntry


def page(assignment, *, readonly=False) -> dict:
    shown = outline.outline_page(assignment, readonly=readonly)
    context = {"facets": shown.state["facets"], "entries": shown.entries, "state": shown.state,
               "progress": shown.progress, "label_sets": shown.state["label_sets"]}
    context["passage_controls"] = render_to_string("annotation/_outline_controls.html", {
        "facets": context["facets"], "label_sets": context["label_sets"], "readonly": readonly})
    return context


def review_units(assignment) -> list:
    rows = RunEntry.objects.filter(run_id=assignment.run_id, topic_id=assignment.topic_id).order_by("rank")
    return [(pid, "") for pid in rows.values_list("passage_id", flat=True)]


UNIT = register(UnitKind(
    kind="outline", title="Article", noun="label", layers=outline.OUTLINE_LAYERS,
    template="annotation/outline.html", script="annotation/outline.js", data_id="outline-data",
    page=page, change_key=outline.change_key, progress=outline.progress,
    progress_of_units=outline.progress_of_units, review_units=review_units,
    review_labels=reviewing.passage_labels, queue_row="annotation/queue/_article.html", labels_by_topic=True,
))
