"""THE nugget rules (TREC RAG nugget evaluation): the values, how nugget labels are keyed, and which bank is a topic's.

A topic's nugget bank is a Judgement of layer `nuggets` keyed on (campaign, topic) alone, its value the list of
nuggets `[{"id", "text", "importance", "origin"}, …]`; each assessor who edits a bank has their own judgement, every
change kept (record_judgement), so the bank a creation page autosaves and the bank imported from the nuggetizer are
stored the same way. The topic's bank is the adjudicated one if there is one, else the one changed last (by the
assessor's clock, then the server's). A nugget's `id` never changes when the bank is edited, so the support labels
that name it survive edits; a nugget taken out of the bank no longer counts.

A nugget's support in an answer is a Judgement of layer `nugget_support` keyed on the topic and
item `"<answer id>:<nugget id>"`; a cited passage's support of a sentence is a Judgement of layer `citation_support`
keyed on the topic, the passage and item `"<answer id>:<sentence position>"`.
"""

import re
from collections import defaultdict

from assessments.models import Judgement, Layer

VITAL, OKAY = "vital", "okay"
IMPORTANCE = (VITAL, OKAY)
ORIGINS = ("imported", "assessor", "machine")  # where a nugget came from: a file, a person, a machine's suggestion
SUPPORT, PARTIAL, NOT_SUPPORT = "support", "partial_support", "not_support"
SUPPORT_VALUES = (SUPPORT, PARTIAL, NOT_SUPPORT)
CITATION_VALUES = ("full", "partial", "none")
SUPPORT_ORDER = {NOT_SUPPORT: 0, PARTIAL: 1, SUPPORT: 2}  # a tie of the majority takes the lower
CITATION_ORDER = {"none": 0, "partial": 1, "full": 2}  # the same for a citation's support (agreement's scale too)

MAX_NUGGETS = 500  # nuggets in one topic's bank
MAX_NUGGET_TEXT = 2000
NUGGET_ID = re.compile(r"[A-Za-z0-9_-]{1,40}\Z")
SUPPORT_ITEM = re.compile(r"([0-9]{1,18}):([A-Za-z0-9_-]{1,40})\Z")
CITATION_ITEM = re.compile(r"([0-9]{1,18}):([0-9]{1,9})\Z")


def support_item(answer_id, nugget_id) -> str:
    """The `item` of a nugget_support judgement."""
    return f"{answer_id}:{nugget_id}"


def citation_item(answer_id, position) -> str:
    """The `item` of a citation_support judgement (the sentence's position in the answer)."""
    return f"{answer_id}:{position}"


def same_text(text: str) -> str:
    """A nugget's text as matching compares it (runs of white space as one space, ends trimmed)."""
    return " ".join(text.split())


def next_id(used) -> str:
    """A nugget id not among `used`: n1, n2, …"""
    taken = set(used)
    number = len(taken) + 1
    while f"n{number}" in taken:
        number += 1
    return f"n{number}"


def ids_in_use(campaign_id, topic_ids) -> dict[int, set]:
    """{topic id: every nugget id a bank of the topic holds or a support label names, in the campaign}: a new nugget
    takes none of them (the importer, the creation page's next id), as a label names its nugget by id (a reused id
    handed a taken-out nugget's labels to a new text)."""
    used = defaultdict(set)
    rows = Judgement.objects.in_campaign(campaign_id).filter(topic_id__in=list(topic_ids))
    for topic_id, value in rows.of_layer(Layer.NUGGETS).values_list("topic_id", "value"):
        used[topic_id].update(nid for nid, _ in _ids_and_texts(value))
    for topic_id, nugget_id in _labelled(rows):
        used[topic_id].add(nugget_id)
    return used


def reused_ids(campaign_id, topic_id, bank, before) -> list[str]:
    """The ids of `bank` (a bank about to be saved for the topic) that would hand support labels to another text: an
    id a support label names, that `before` (the bank the writer edited) does not hold, and that no bank of the topic
    holds with this text. A nugget keeps its id through edits, so an id `before` holds may take a new text."""
    kept = {nid for nid, _ in _ids_and_texts(before)}
    rows = Judgement.objects.in_campaign(campaign_id).filter(topic_id=topic_id)
    labelled = {nugget_id for _, nugget_id in _labelled(rows)}
    fresh = [(nid, text) for nid, text in _ids_and_texts(bank) if nid in labelled and nid not in kept]
    if not fresh:
        return []
    known = {(nid, same_text(text)) for value in rows.of_layer(Layer.NUGGETS).values_list("value", flat=True)
             for nid, text in _ids_and_texts(value)}
    return [nid for nid, text in fresh if (nid, same_text(text)) not in known]


def _ids_and_texts(value):
    """(id, text) of each well-formed nugget of a bank's value (anything else yields none)."""
    for n in value if isinstance(value, list) else []:
        if isinstance(n, dict) and isinstance(n.get("id"), str):
            yield n["id"], n["text"] if isinstance(n.get("text"), str) else ""


def _labelled(rows):
    """(topic id, nugget id) of each nugget_support label among the judgements `rows`."""
    for topic_id, item in rows.of_layer(Layer.NUGGET_SUPPORT).values_list("topic_id", "item"):
        named = SUPPORT_ITEM.match(item or "")
        if named:
            yield topic_id, named.group(2)


def topic_banks(campaign_id, topic_ids=None, *, leaving_out=()) -> dict[int, Judgement]:
    """{topic id: the judgement holding the topic's bank} for the campaign's topics (or those of `topic_ids`):
    the adjudicated bank where there is one, else the one changed last. A cleared bank (value null) is no bank, nor
    is a practice one (a writer's qualification answer: Judgement.objects.without_practice).
    `leaving_out`: assessor ids whose own (not adjudicated) banks are not counted (a writer's page starts from the
    topic's bank without the other writers')."""
    rows = Judgement.objects.in_campaign(campaign_id).of_layer(Layer.NUGGETS).filter(
        value__isnull=False).without_practice(campaign_id)
    if topic_ids is not None:
        rows = rows.filter(topic_id__in=list(topic_ids))
    if leaving_out:
        rows = rows.exclude(adjudicated=False, assessor_id__in=list(leaving_out))
    banks = {}
    for row in rows.order_by("topic_id", "-adjudicated", "-client_time", "-client_seq", "-updated_at", "-id"):
        banks.setdefault(row.topic_id, row)
    return banks
