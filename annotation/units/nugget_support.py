"""Nugget support (TREC RAG): one generated answer, each nugget of its topic's settled bank labelled supported,
partly supported or not (annotation.services.nugget_support). A unit waits while its topic's bank is not settled:
it takes no change and cannot be marked done."""

from annotation.services import nugget_support
from annotation.units import reviewing
from annotation.units.registry import UnitKind, register
from assessments.models import Layer
from assessments.services import nuggets


def review_units(assignment) -> list:
    """Its labels: item "<answer id>:<nugget id>" for each nugget of the topic's bank."""
    answer = nugget_support.answer_of(assignment)
    if answer is None:
        return []
    return [(None, nuggets.support_item(answer.pk, n["id"])) for n in nugget_support.bank_of(assignment)]


def review_texts(review) -> dict:
    """The nuggets of the topic's bank by id: the reviewer reads a label with its nugget's text."""
    topic_id = review.assignment.topic_id
    bank = nuggets.topic_banks(review.assignment.campaign_id, [topic_id]).get(topic_id)
    return {n.get("id"): n for n in (bank.value if bank is not None and isinstance(bank.value, list) else [])
            if isinstance(n, dict)}


def review_name(key) -> str:
    """A label's key without its answer's id (answer ids follow the runs' files, so they would tell which batches are
    one run's; the review is of one answer)."""
    found = nuggets.SUPPORT_ITEM.match(key or "")
    return f"nugget {found.group(2)}" if found else key


UNIT = register(UnitKind(
    kind="nugget_support", title="Nugget support", noun="nugget", layers=(Layer.NUGGET_SUPPORT,),
    template="annotation/nugget_support.html", script="annotation/nugget_support.js", data_id="nugget-data",
    page=nugget_support.nugget_page, change_key=nugget_support.change_key, progress=nugget_support.progress,
    progress_of_units=nugget_support.progress_in_queue, review_units=review_units,
    review_labels=reviewing.item_labels, queue_row="annotation/queue/_answer.html",
    check_mark=nugget_support.check_ready, review_texts=review_texts, review_name=review_name,
))
