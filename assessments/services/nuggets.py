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


def topic_banks(campaign_id, topic_ids=None) -> dict[int, Judgement]:
    """{topic id: the judgement holding the topic's bank} for the campaign's topics (or those of `topic_ids`):
    the adjudicated bank where there is one, else the one changed last. A cleared bank (value null) is no bank."""
    rows = Judgement.objects.in_campaign(campaign_id).of_layer(Layer.NUGGETS).filter(value__isnull=False)
    if topic_ids is not None:
        rows = rows.filter(topic_id__in=list(topic_ids))
    banks = {}
    for row in rows.order_by("topic_id", "-adjudicated", "-client_time", "-client_seq", "-updated_at", "-id"):
        banks.setdefault(row.topic_id, row)
    return banks
