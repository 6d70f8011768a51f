"""Citation support (TREC RAG, optional per campaign): an assessor says whether each passage an answer cites supports
the sentence that cites it: full, partial or no support.

A unit is an Assignment of kind CITATION_SUPPORT, made by `assign_campaign --stage citations` for a nuggets campaign
(one per answer that cites something; its `run` says which answer and stays on the server, as on the nugget support
page). Its items are the answer's cited (sentence, passage) pairs, a passage cited twice by one sentence once. A
label is a ``citation_support`` judgement keyed on the topic, the cited passage and item "<answer id>:<sentence
position>" (assessments.services.nuggets.citation_item), its value "full", "partial" or "none" (null clears it). The
unit is complete when every pair has a label. The page reuses the nugget support page's script (nugget_support.js:
a list of items, each labelled with a key) and its topic card.
"""

from annotation.services.adhoc import topic_card
from annotation.services.errors import ChangeInvalid
from annotation.services.nugget_support import answer_of, answers_of_units, sentences
from annotation.services.progress import Progress
from assessments.labels import CITATION_SUPPORT
from assessments.models import AnswerCitation, Judgement, Layer
from assessments.services import nuggets
from retrieval.models import Passage

VALUES = CITATION_SUPPORT  # [value, name, key]: the keys the page shows and takes (the label registry's)


def pairs(answer) -> list[dict]:
    """The answer's cited (sentence, passage) pairs in reading order: [{id, n, sentence, ref, passage}] where `id` is
    "<sentence position>:<passage id>" (the page's name of the pair) and `sentence` the sentence's number from 1."""
    found, seen = [], set()
    for s in sentences(answer):
        for c in s["citations"]:
            pid = c["passage"].pk
            if (s["n"], pid) in seen:
                continue
            seen.add((s["n"], pid))
            found.append({"id": f"{s['n'] - 1}:{pid}", "n": len(found) + 1, "sentence": s["n"], "ref": c["ref"],
                          "passage": c["passage"]})
    return found


def labels(assignment, answer_id) -> dict:
    """{"<sentence position>:<passage id>": value} of the assessor's current labels of the answer's citations."""
    rows = Judgement.objects.in_campaign(assignment.campaign_id).filter(
        adjudicated=False, assessor_id=assignment.assessor_id, topic_id=assignment.topic_id,
        layer=Layer.CITATION_SUPPORT, item__startswith=f"{answer_id}:", value__isnull=False,
    ).values_list("item", "passage_id", "value")
    return {f"{item.split(':', 1)[1]}:{pid}": value for item, pid, value in rows}


def citation_page(assignment, *, readonly=False) -> dict:
    """Everything the page needs: the topic, the answer's sentences, each cited pair with its passage, the labels,
    and `state` (plain data for the script; no run in it)."""
    answer = answer_of(assignment)
    shown = sentences(answer)
    found = pairs(answer)
    current = labels(assignment, answer.pk) if answer is not None else {}
    ids = {p["id"] for p in found}
    topic = assignment.topic
    state = {
        "kind": "citation_support",
        "layer": Layer.CITATION_SUPPORT,
        "ready": "citations",
        "noun": "citation",
        "dom_prefix": "pair-",
        "assignment": assignment.token,
        "status": assignment.status,
        "readonly": readonly,
        "topic": topic.external_id,
        "values": VALUES,
        # A pair is named by its sentence's position and passage, never by the answer's id (answer ids follow the
        # runs' files, so they would tell which units are one run's); the server knows the unit's answer.
        "items": [{"id": p["id"], "n": p["n"], "fields": {"passage": p["passage"].pk, "sentence": p["sentence"] - 1}}
                  for p in found],
        "labels": {pid: v for pid, v in current.items() if pid in ids},
    }
    return {
        **topic_card(topic, assignment.campaign),  # query, description, narrative: the whole question (a cut title is not)
        "sentences": shown,
        "pairs": found,
        "values": VALUES,
        "has_answer": answer is not None,
        "state": state,
        "progress": Progress(total=len(found), done=len(state["labels"]), noun="citation", size=len(found)),
    }


def change_key(assignment, data, layer, value) -> dict:
    """The key of a citation support change, checked: `sentence` is the position of a sentence of the unit's answer
    (or, as pages before it sent, `item` "<this unit's answer id>:<sentence position>"), and `passage` a passage that
    sentence cites; the value full, partial or none (or null to clear). ChangeInvalid names the field."""
    if layer != Layer.CITATION_SUPPORT:
        raise ChangeInvalid("layer", f"expected {Layer.CITATION_SUPPORT}")
    answer = answer_of(assignment)
    if answer is None:
        raise ChangeInvalid("assignment", "this unit's answer is no longer stored")
    item = data.get("item")
    if item is None and "sentence" in data:
        sentence = data["sentence"]
        if isinstance(sentence, bool) or not isinstance(sentence, int) or not 0 <= sentence < 10**9:
            raise ChangeInvalid("sentence", "expected the position of a sentence of this unit's answer")
        item = nuggets.citation_item(answer.pk, sentence)
    found = nuggets.CITATION_ITEM.match(item) if isinstance(item, str) else None
    if found is None or int(found.group(1)) != answer.pk:
        raise ChangeInvalid("item", "expected '<answer id>:<sentence>' of this unit's answer")
    passage = data.get("passage")
    if not isinstance(passage, int) or isinstance(passage, bool) or f"{found.group(2)}:{passage}" not in {
            p["id"] for p in pairs(answer)}:
        raise ChangeInvalid("passage", "not a passage this sentence cites")
    if value is not None and value not in nuggets.CITATION_VALUES:
        raise ChangeInvalid("value", f"expected one of {', '.join(nuggets.CITATION_VALUES)} (or null to clear)")
    return {"item": item, "passage": Passage(pk=passage), "run_ids": [answer.run.name]}


def progress(assignment) -> Progress:
    """The unit's progress: the answer's cited pairs labelled."""
    answer = answer_of(assignment)
    found = {p["id"] for p in pairs(answer)} if answer is not None else set()
    done = sum(1 for pid in (labels(assignment, answer.pk) if answer is not None else {}) if pid in found)
    return Progress(total=len(found), done=done, noun="citation", size=len(found))


def progress_of_units(assignments) -> dict:
    """{unit pk: progress} of citation support units, as `progress` counts it, in three queries in all whatever the
    number of units (the queue): their answers, the answers' cited pairs and the assessors' labels."""
    if not assignments:
        return {}
    answers = answers_of_units(assignments)
    found = {}
    for answer_id, position, passage_id in AnswerCitation.objects.filter(
        sentence__answer_id__in=set(answers.values()),
    ).values_list("sentence__answer_id", "sentence__position", "passage_id"):
        found.setdefault(answer_id, set()).add(f"{position}:{passage_id}")
    have = {}
    for campaign_id, assessor_id, topic_id, item, passage_id in Judgement.objects.filter(
        campaign_id__in={a.campaign_id for a in assignments}, assessor_id__in={a.assessor_id for a in assignments},
        topic_id__in={a.topic_id for a in assignments}, adjudicated=False, layer=Layer.CITATION_SUPPORT,
        value__isnull=False,
    ).values_list("campaign_id", "assessor_id", "topic_id", "item", "passage_id"):
        answer_id, _, position = item.partition(":")
        have.setdefault((campaign_id, assessor_id, topic_id, answer_id), set()).add(f"{position}:{passage_id}")
    out = {}
    for a in assignments:
        answer_id = answers.get(a.pk)
        pairs_of = found.get(answer_id, set()) if answer_id is not None else set()
        labelled = have.get((a.campaign_id, a.assessor_id, a.topic_id, str(answer_id)), set())
        out[a.pk] = Progress(total=len(pairs_of), done=len(pairs_of & labelled), noun="citation", size=len(pairs_of))
    return out
