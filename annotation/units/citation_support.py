"""Citation support (TREC RAG, optional: the stage `citations`): one answer that cites, each cited (sentence,
passage) pair labelled full, partial or no support (annotation.services.citation_support)."""

from annotation.services import citation_support, nugget_support
from annotation.units import reviewing
from annotation.units.registry import UnitKind, register, without_user
from assessments.models import Layer
from assessments.services import nuggets


def review_units(assignment) -> list:
    """Its cited pairs: (passage, item "<answer id>:<sentence>")."""
    answer = nugget_support.answer_of(assignment)
    return [(p["passage"].pk, nuggets.citation_item(answer.pk, p["sentence"] - 1))
            for p in citation_support.pairs(answer)] if answer is not None else []


def review_labels(assignment, units) -> dict:
    labels = {unit: {} for unit in units}
    passages = [pid for pid, _ in units if pid is not None]
    items = [key for _, key in units if key]
    for pid, key, value in reviewing.own_labels(assignment).filter(
            layer=Layer.CITATION_SUPPORT, passage_id__in=passages, item__in=items,
    ).values_list("passage_id", "item", "value"):
        if (pid, key) in labels:
            labels[pid, key][Layer.CITATION_SUPPORT] = value
    return labels


UNIT = register(UnitKind(
    kind="citation_support", title="Citation support", noun="citation", layers=(Layer.CITATION_SUPPORT,),
    template="annotation/citation_support.html", script="annotation/nugget_support.js", data_id="nugget-data",
    page=citation_support.citation_page, change_key=citation_support.change_key, progress=citation_support.progress,
    progress_of_units=without_user(citation_support.progress_of_units), review_units=review_units,
    review_labels=review_labels,
    queue_row="annotation/queue/_answer.html",
))
