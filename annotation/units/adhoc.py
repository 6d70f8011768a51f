"""Ad hoc relevance (TREC style): a topic and its pool's documents, each graded on the campaign's scale, with the
evidence that makes it relevant marked (annotation.services.adhoc)."""

from annotation.services import adhoc
from annotation.units import pooled, reviewing
from annotation.units.registry import UnitKind, register

UNIT = register(UnitKind(
    kind="adhoc", title="Relevance", noun="document", layers=adhoc.LAYERS,
    template="annotation/adhoc.html", script="annotation/adhoc.js", data_id="adhoc-data",
    page=adhoc.adhoc_page, change_key=adhoc.change_key, progress=adhoc.progress,
    progress_of_units=pooled.progress_of_units, review_units=reviewing.candidate_units,
    review_labels=reviewing.passage_labels, queue_row="annotation/queue/_pooled.html",
))
