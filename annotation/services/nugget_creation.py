"""Nugget creation (TREC RAG): an assessor writes a topic's nugget bank: nuggets added, edited, marked vital or okay,
reordered, taken out.

A unit is an Assignment of kind NUGGET_CREATION (a nuggets campaign assigned at stage "create": one per topic, no run,
no pool). Every edit saves the assessor's whole bank as the value of their ``nuggets`` judgement on the topic
(assessments.services.nuggets: checked by validate_value, every version kept), through the one save path; the
topic's bank is then topic_banks' (adjudicated, else the one changed last). A nugget keeps its id through edits, so
support labels that name it survive. The page starts from the assessor's own bank, else the topic's. The unit is
complete once the bank holds a nugget; the assessor may go on editing it.
"""

from annotation.services.errors import ChangeInvalid
from annotation.services.progress import Progress
from assessments.models import Answer, Judgement, Layer
from assessments.services import nuggets


def own_bank(assignment):
    """The assessor's own bank of the topic in the campaign (a list), or None when they have not saved one."""
    row = Judgement.objects.in_campaign(assignment.campaign_id).of_layer(Layer.NUGGETS).filter(
        adjudicated=False, assessor_id=assignment.assessor_id, topic_id=assignment.topic_id).first()
    return row.value if row is not None and isinstance(row.value, list) else None


def creation_page(assignment, *, readonly=False) -> dict:
    """The topic, a few of its answers' sentences to draw nuggets from, and the bank to edit (`state`)."""
    topic = assignment.topic
    meta = topic.metadata if isinstance(topic.metadata, dict) else {}
    bank = own_bank(assignment)
    if bank is None:
        found = nuggets.topic_banks(assignment.campaign_id, [topic.pk]).get(topic.pk)
        bank = list(found.value) if found is not None and isinstance(found.value, list) else []
    answers = Answer.objects.filter(campaign_id=assignment.campaign_id, topic=topic).order_by("pk")[:20]
    texts = [[s.text for s in a.sentences.order_by("position")] for a in answers]
    state = {
        "kind": "nugget_creation",
        "assignment": assignment.token,
        "status": assignment.status,
        "readonly": readonly,
        "topic": topic.external_id,
        "nuggets": [{"id": n["id"], "text": n["text"], "importance": n["importance"], "origin": n["origin"]}
                    for n in bank],
        "importance": list(nuggets.IMPORTANCE),
        "max_text": nuggets.MAX_NUGGET_TEXT,
    }
    return {
        "query": topic.title or topic.text,
        "description": str(meta.get("description") or ""),
        "answers": texts,
        "state": state,
        "progress": Progress(total=1, done=1 if bank else 0, noun="nugget bank", size=len(bank)),
    }


def change_key(assignment, data, layer, value) -> dict:
    """A bank change: layer nuggets, the value the whole list (validate_value checks it: ids, texts, importance,
    origin, each once). ChangeInvalid names the field."""
    if layer != Layer.NUGGETS:
        raise ChangeInvalid("layer", f"expected {Layer.NUGGETS}")
    if value is None:
        raise ChangeInvalid("value", "expected the list of nuggets (an empty list for none)")
    return {}


def progress(assignment) -> Progress:
    bank = own_bank(assignment) or []
    return Progress(total=1, done=1 if bank else 0, noun="nugget bank", size=len(bank))
