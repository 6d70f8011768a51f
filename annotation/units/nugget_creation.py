"""Nugget creation (TREC RAG, the stage `create`): a topic's nugget bank written and saved whole as the assessor's
`nuggets` judgement (annotation.services.nugget_creation). It has no natural end: only the assessor's mark makes it
done."""

from annotation.services import nugget_creation
from annotation.units import reviewing
from annotation.units.registry import UnitKind, register, without_user
from assessments.models import Layer

BANK_ITEM = "bank"  # its one review item: the assessor's bank of the topic


def review_units(assignment) -> list:
    return [(None, BANK_ITEM)]


def review_labels(assignment, units) -> dict:
    row = reviewing.own_labels(assignment).filter(layer=Layer.NUGGETS).order_by("-updated_at", "-id").first()
    return {unit: {Layer.NUGGETS: row.value} if row is not None else {} for unit in units}


UNIT = register(UnitKind(
    kind="nugget_creation", title="Nugget creation", noun="nugget bank", layers=(Layer.NUGGETS,),
    template="annotation/nugget_creation.html", script="annotation/nugget_creation.js", data_id="nugget-bank-data",
    page=nugget_creation.creation_page, change_key=nugget_creation.change_key, progress=nugget_creation.progress,
    progress_of_units=without_user(nugget_creation.progress_of_units), review_units=review_units,
    review_labels=review_labels,
    queue_row="annotation/queue/_bank.html", done_by_mark=True,
))
