"""Nugget assignment (TREC RAG): an assessor says how well one generated answer supports each nugget of its topic.

A unit is an Assignment of kind NUGGET_SUPPORT made for a campaign of task ``nuggets`` (annotation.services.assignment:
one unit per answer, i.e. per (topic, run)); its `run` says which answer, and it stays on the server: the page is
given the answer's id, its sentences, the passages they cite and the topic's bank, never the run. A label is a
``nugget_support`` judgement keyed on the topic and item "<answer id>:<nugget id>" (assessments.services.nuggets),
its value "support", "partial_support" or "not_support" (null clears it). The unit is complete when every nugget of
the topic's bank (topic_banks: adjudicated, else the latest) has a label; a nugget taken out of the bank stops counting.
"""

from annotation.services.errors import ChangeInvalid
from annotation.services.progress import Progress
from assessments.models import Answer, AnswerCitation, Judgement, Layer
from assessments.services import nuggets

VALUES = [  # [value, name, key]: the keys the page shows and takes
    [nuggets.SUPPORT, "Support", "s"],
    [nuggets.PARTIAL, "Partial support", "p"],
    [nuggets.NOT_SUPPORT, "No support", "n"],
]


def answer_of(assignment):
    """The answer the unit judges (its run's answer to its topic in its campaign), or None."""
    return Answer.objects.filter(run_id=assignment.run_id, topic_id=assignment.topic_id,
                                 campaign_id=assignment.campaign_id).first()


def bank_of(assignment) -> list:
    """The topic's nugget bank now: [{id, text, importance, origin}, …] (empty when it has none yet)."""
    bank = nuggets.topic_banks(assignment.campaign_id, [assignment.topic_id]).get(assignment.topic_id)
    return list(bank.value) if bank is not None and isinstance(bank.value, list) else []


def labels(assignment, answer_id) -> dict:
    """{nugget id: value} of the assessor's current labels of the answer in the unit's campaign."""
    rows = Judgement.objects.in_campaign(assignment.campaign_id).filter(
        adjudicated=False, assessor_id=assignment.assessor_id, topic_id=assignment.topic_id,
        layer=Layer.NUGGET_SUPPORT, item__startswith=f"{answer_id}:", value__isnull=False,
    ).values_list("item", "value")
    return {item.split(":", 1)[1]: value for item, value in rows}


def sentences(answer) -> list:
    """The answer's sentences in order, each with its citations: [{n, text, citations: [{ref, passage}]}]."""
    if answer is None:
        return []
    cites = {}
    for c in AnswerCitation.objects.filter(sentence__answer=answer).select_related("passage").order_by(
            "sentence__position", "position"):
        cites.setdefault(c.sentence_id, []).append(c)
    return [{"n": s.position + 1, "text": s.text,
             "citations": [{"ref": c.reference + 1, "passage": c.passage} for c in cites.get(s.pk, [])]}
            for s in answer.sentences.order_by("position")]


def nugget_page(assignment, *, readonly=False) -> dict:
    """Everything the page needs: the topic, the answer's sentences and cited passages, the bank, the labels, and
    `state` (plain data for its script; no run in it)."""
    answer = answer_of(assignment)
    bank = bank_of(assignment)
    current = labels(assignment, answer.pk) if answer is not None else {}
    ids = {n["id"] for n in bank}
    topic = assignment.topic
    meta = topic.metadata if isinstance(topic.metadata, dict) else {}
    shown = sentences(answer)
    passages = {}
    for s in shown:
        for c in s["citations"]:
            passages.setdefault(c["passage"].pk, c["passage"])
    state = {
        "kind": "nugget_support",
        "layer": Layer.NUGGET_SUPPORT,  # what nugget_support.js labels (the citation page's too: citation_support)
        "ready": "nuggets",
        "noun": "nugget",
        "dom_prefix": "nugget-",
        "assignment": assignment.token,
        "status": assignment.status,
        "readonly": readonly,
        "topic": topic.external_id,
        "answer": answer.pk if answer is not None else None,
        "values": VALUES,
        "nuggets": [{"id": n["id"], "n": i, "text": n["text"], "importance": n["importance"]}
                    for i, n in enumerate(bank, start=1)],
        "labels": {nid: v for nid, v in current.items() if nid in ids},
    }
    state["items"] = [{"id": n["id"], "n": n["n"], "fields": {"nugget": n["id"]}} for n in state["nuggets"]]
    done = sum(1 for nid in current if nid in ids)
    return {
        "query": topic.title or topic.text,
        "description": str(meta.get("description") or ""),
        "sentences": shown,
        "passages": list(passages.values()),
        "nuggets": state["nuggets"],
        "values": VALUES,
        "has_answer": answer is not None,
        "state": state,
        "progress": Progress(total=len(bank), done=done, noun="nugget", size=len(bank)),
    }


def change_key(assignment, data, layer, value) -> dict:
    """The key of a nugget support change, checked: `nugget` is an id of the topic's bank, the value one of
    support, partial_support, not_support (or null to clear). ChangeInvalid names the field."""
    if layer != Layer.NUGGET_SUPPORT:
        raise ChangeInvalid("layer", f"expected {Layer.NUGGET_SUPPORT}")
    nugget = data.get("nugget")
    if not isinstance(nugget, str) or not nuggets.NUGGET_ID.match(nugget) or nugget not in {
            n["id"] for n in bank_of(assignment)}:
        raise ChangeInvalid("nugget", "not a nugget of this topic's bank")
    if value is not None and value not in nuggets.SUPPORT_VALUES:
        raise ChangeInvalid("value", f"expected one of {', '.join(nuggets.SUPPORT_VALUES)} (or null to clear)")
    answer = answer_of(assignment)
    if answer is None:
        raise ChangeInvalid("assignment", "this unit's answer is no longer stored")
    return {"item": nuggets.support_item(answer.pk, nugget), "run_ids": [answer.run_id]}


def progress(assignment) -> Progress:
    """The unit's progress: the nuggets of the topic's bank labelled for its answer."""
    bank = bank_of(assignment)
    answer = answer_of(assignment)
    have = labels(assignment, answer.pk) if answer is not None else {}
    done = sum(1 for n in bank if n["id"] in have)
    return Progress(total=len(bank), done=done, noun="nugget", size=len(bank))
