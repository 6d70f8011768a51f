"""Nugget assignment (TREC RAG): an assessor says how well one generated answer supports each nugget of its topic.

A unit is an Assignment of kind NUGGET_SUPPORT made for a campaign of task ``nuggets`` (annotation.services.assignment:
one unit per answer, i.e. per (topic, run)); its `run` says which answer, and it stays on the server: the page is
given the answer's id, its sentences, the passages they cite and the topic's bank, never the run. A label is a
``nugget_support`` judgement keyed on the topic and item "<answer id>:<nugget id>" (assessments.services.nuggets),
its value "support", "partial_support" or "not_support" (null clears it). The unit is complete when every nugget of
the topic's bank (topic_banks: adjudicated, else the latest) has a label; a nugget taken out of the bank stops counting.

A unit waits for its topic's nuggets (ready_banks, the one home of that rule: the queue, the page, the save path, the
mark and the dashboard read it) until the topic's bank is settled: topic_banks gives one, with a nugget, and it is
the organiser's adjudicated bank or no nugget creation unit of the topic in the campaign is still open (a bank being
written is not yet the bank: support labels would name nuggets that may still change). An imported bank with no
creation unit is settled at once. A unit that waits is listed as waiting, its page says so and shows no form, and a
save or a mark is refused (BankNotReady, a 409) without storing anything.
"""

from collections import defaultdict

from annotation.models import Assignment
from annotation.services import status
from annotation.services.adhoc import topic_card
from annotation.services.errors import ChangeInvalid
from annotation.services.progress import Progress
from assessments.labels import NUGGET_SUPPORT
from assessments.models import Answer, AnswerCitation, AnswerSentence, Judgement, Layer
from assessments.services import nuggets

WAITING = "waits for the topic's nuggets"  # what the queue, the page and a refused save say
NOT_READY = f"this unit {WAITING}: the topic's bank is not settled yet (nothing was saved)"


class BankNotReady(ChangeInvalid):
    """A change or a mark of a unit that waits for its topic's nuggets (the page's answer is a 409)."""

    status_code = 409

VALUES = NUGGET_SUPPORT  # [value, name, key]: the keys the page shows and takes (the label registry's)


def answer_of(assignment):
    """The answer the unit judges (its run's answer to its topic in its campaign), or None."""
    return Answer.objects.select_related("run").filter(run_id=assignment.run_id, topic_id=assignment.topic_id,
                                                       campaign_id=assignment.campaign_id).first()


def writing_units(campaign_id, topic_ids, *, qualification=False):
    """The campaign's nugget creation units of the topics (a topic's writers): formal ones (`qualification` False),
    qualification ones (True) or both (None)."""
    units = Assignment.objects.filter(campaign_id=campaign_id, topic_id__in=list(topic_ids),
                                      kind=Assignment.Kind.NUGGET_CREATION)
    return units if qualification is None else units.filter(qualification=qualification)


def ready_banks(campaign_id, topic_ids) -> dict[int, list]:
    """{topic id: its bank [{id, text, importance, origin}, …]} of those of the topics whose bank is settled for
    support labels: the topic's bank (nuggets.topic_banks), holding a nugget, adjudicated or with no nugget creation
    unit of the topic in the campaign still open (qualification units aside). The topics left out wait. Two queries."""
    banks = nuggets.topic_banks(campaign_id, topic_ids)
    writing = set(writing_units(campaign_id, banks).exclude(status=Assignment.Status.DONE)
                  .values_list("topic_id", flat=True))
    return {topic_id: list(bank.value) for topic_id, bank in banks.items()
            if isinstance(bank.value, list) and bank.value and (bank.adjudicated or topic_id not in writing)}


def waits(assignment) -> bool:
    """Whether the unit waits for its topic's nuggets (ready_banks)."""
    return assignment.topic_id not in ready_banks(assignment.campaign_id, [assignment.topic_id])


def waiting_on(assignment) -> dict:
    """What a unit that waits for its topic's nuggets waits on (ready_banks decides that it waits; this says which
    step, for its page and its queue row): `step` "writers" (a nugget creation unit of the topic is still open:
    `finished` of `writers` marked done; the organiser may settle the bank before), "empty" (every writer finished,
    the bank holds no nugget) or "organiser" (no one writes the topic's bank in the campaign and none is stored: an
    import or an assignment); `why`, the sentence the page and the queue show. Counts only: no writer's name, no
    nugget. One query (waiting_on_topics)."""
    return waiting_on_topics(assignment.campaign_id, [assignment.topic_id])[assignment.topic_id]


def waiting_on_topics(campaign_id, topic_ids) -> dict[int, dict]:
    """{topic id: waiting_on's answer} for each of the topics of the campaign, in one query (the queue's rows)."""
    statuses = {topic_id: [] for topic_id in topic_ids}
    for topic_id, stored in writing_units(campaign_id, statuses).values_list("topic_id", "status"):
        statuses[topic_id].append(stored)
    out = {}
    for topic_id, found in statuses.items():
        finished = sum(1 for stored in found if stored == Assignment.Status.DONE)
        step = "writers" if finished < len(found) else "empty" if found else "organiser"
        on = {"step": step, "writers": len(found), "finished": finished}
        out[topic_id] = {**on, "why": _why(on)}
    return out


def _why(on) -> str:
    """The one sentence that says which step a waiting unit waits on (counts only)."""
    if on["step"] == "writers":
        if on["writers"] == 1:
            return "The topic's nugget writer has not finished the bank yet."
        return f"The topic's nugget writers are still at work: {on['finished']} of {on['writers']} finished."
    if on["step"] == "empty":
        return "The topic's nugget writers finished without a nugget."
    return "This topic has no nuggets yet and no one is assigned to write them."


def check_ready(assignment):
    """Raise BankNotReady (field `nugget`) when the unit waits for its topic's nuggets."""
    if waits(assignment):
        raise BankNotReady("nugget", NOT_READY)


def bank_of(assignment) -> list:
    """The topic's nugget bank once settled: [{id, text, importance, origin}, …] (empty while the unit waits)."""
    return ready_banks(assignment.campaign_id, [assignment.topic_id]).get(assignment.topic_id, [])


def labels(assignment, answer_id) -> dict:
    """{nugget id: value} of the assessor's current labels of the answer in the unit's campaign."""
    rows = Judgement.objects.in_campaign(assignment.campaign_id).filter(
        adjudicated=False, assessor_id=assignment.assessor_id, topic_id=assignment.topic_id,
        layer=Layer.NUGGET_SUPPORT, item__startswith=f"{answer_id}:", value__isnull=False,
    ).values_list("item", "value")
    return {item.split(":", 1)[1]: value for item, value in rows}


def sentences(answer) -> list:
    """The answer's sentences in order, each with its citations: [{n, text, citations: [{ref, passage}]}]."""
    return answers_sentences([answer])[answer.pk] if answer is not None else []


def answers_sentences(answers) -> dict:
    """{answer id: sentences(answer)} of several answers in two queries (the nugget writers' page shows twenty)."""
    ids = [a.pk for a in answers]
    cites = {}
    for c in AnswerCitation.objects.filter(sentence__answer_id__in=ids).select_related("passage").order_by(
            "sentence__position", "position"):
        cites.setdefault(c.sentence_id, []).append(c)
    found = {pk: [] for pk in ids}
    for s in AnswerSentence.objects.filter(answer_id__in=ids).order_by("answer_id", "position"):
        found[s.answer_id].append({"n": s.position + 1, "text": s.text, "citations": [
            {"ref": c.reference + 1, "passage": c.passage} for c in cites.get(s.pk, [])]})
    return found


def nugget_page(assignment, *, readonly=False) -> dict:
    """Everything the page needs: the topic, the answer's sentences and cited passages, the bank, the labels, and
    `state` (plain data for its script; no run in it). A unit that waits for its topic's nuggets (`waiting`) has no
    nuggets to label and its script takes no label (state readonly)."""
    answer = answer_of(assignment)
    bank = bank_of(assignment)
    waiting = not bank
    readonly = readonly or waiting
    current = labels(assignment, answer.pk) if answer is not None else {}
    ids = {n["id"] for n in bank}
    topic = assignment.topic
    shown = sentences(answer)
    passages = {}  # each cited passage once, with the [n] its citations write (in the answer's order)
    for s in shown:
        for c in s["citations"]:
            cited = passages.setdefault(c["passage"].pk, {"passage": c["passage"], "refs": []})
            if c["ref"] not in cited["refs"]:
                cited["refs"].append(c["ref"])
    state = {
        "kind": "nugget_support",
        "layer": Layer.NUGGET_SUPPORT,  # what nugget_support.js labels (the citation page's too: citation_support)
        "ready": "nuggets",
        "noun": "nugget",
        "dom_prefix": "nugget-",
        "assignment": assignment.token,
        "status": status.state(assignment, waiting=waiting),  # the queue's rule: "waiting" even if marked done
        "readonly": readonly,
        "waiting": waiting,
        "readonly_text": "Waiting for the topic's nuggets" if waiting else None,  # the save box, not "Read-only"
        "topic": topic.external_id,
        "values": VALUES,  # no answer id: ids follow the runs' files, so units of one run would show as such
        "nuggets": [{"id": n["id"], "n": i, "text": n["text"], "importance": n["importance"]}
                    for i, n in enumerate(bank, start=1)],
        "labels": {nid: v for nid, v in current.items() if nid in ids},
    }
    state["items"] = [{"id": n["id"], "n": n["n"], "fields": {"nugget": n["id"]}} for n in state["nuggets"]]
    done = sum(1 for nid in current if nid in ids)
    return {
        **topic_card(topic, assignment.campaign),  # query, description, narrative: the whole question (a cut title is not)
        "sentences": shown,
        "passages": list(passages.values()),
        "nuggets": state["nuggets"],
        "values": VALUES,
        "has_answer": answer is not None,
        "waiting": waiting,
        "waiting_text": WAITING,
        "waiting_on": waiting_on(assignment) if waiting else None,
        "state": state,
        "progress": Progress(total=len(bank), done=done, noun="nugget", size=len(bank)),
    }


def change_key(assignment, data, layer, value) -> dict:
    """The key of a nugget support change, checked: `nugget` is an id of the topic's bank, the value one of
    support, partial_support, not_support (or null to clear). ChangeInvalid names the field; BankNotReady when the
    unit waits for its topic's nuggets."""
    if layer != Layer.NUGGET_SUPPORT:
        raise ChangeInvalid("layer", f"expected {Layer.NUGGET_SUPPORT}")
    bank = bank_of(assignment)
    if not bank:
        raise BankNotReady("nugget", NOT_READY)
    nugget = data.get("nugget")
    if not isinstance(nugget, str) or not nuggets.NUGGET_ID.match(nugget) or nugget not in {n["id"] for n in bank}:
        raise ChangeInvalid("nugget", "not a nugget of this topic's bank")
    if value is not None and value not in nuggets.SUPPORT_VALUES:
        raise ChangeInvalid("value", f"expected one of {', '.join(nuggets.SUPPORT_VALUES)} (or null to clear)")
    answer = answer_of(assignment)
    if answer is None:
        raise ChangeInvalid("assignment", "this unit's answer is no longer stored")
    return {"item": nuggets.support_item(answer.pk, nugget), "run_ids": [answer.run.name]}


def progress(assignment, bank=None) -> Progress:
    """The unit's progress: the nuggets of the topic's settled bank (`bank` when the caller read it: ready_banks)
    labelled for its answer; nothing to label while the unit waits for its topic's nuggets."""
    bank = bank_of(assignment) if bank is None else bank
    if not bank:
        return Progress(total=0, done=0, noun="nugget", wanting=f"this unit {WAITING}")
    answer = answer_of(assignment)
    have = labels(assignment, answer.pk) if answer is not None else {}
    done = sum(1 for n in bank if n["id"] in have)
    return Progress(total=len(bank), done=done, noun="nugget", size=len(bank))


def answers_of_units(assignments) -> dict[int, int]:
    """{unit pk: the id of its answer (answer_of's)} of units, those whose answer is stored, in one query."""
    if not assignments:
        return {}
    answers = {}
    for answer_id, campaign_id, run_id, topic_id in Answer.objects.filter(
        campaign_id__in={a.campaign_id for a in assignments}, run_id__in={a.run_id for a in assignments},
        topic_id__in={a.topic_id for a in assignments},
    ).order_by("pk").values_list("pk", "campaign_id", "run_id", "topic_id"):
        answers.setdefault((campaign_id, run_id, topic_id), answer_id)  # answer_of's: the first
    return {a.pk: answers[a.campaign_id, a.run_id, a.topic_id] for a in assignments
            if (a.campaign_id, a.run_id, a.topic_id) in answers}


def progress_of_units(assignments, banks) -> dict:
    """{unit pk: progress} of nugget support units, as `progress` counts it, with `banks` {campaign id: ready_banks
    of their topics}: their answers and labels in two queries in all, whatever the number of units (the queue)."""
    ready = [a for a in assignments if banks[a.campaign_id].get(a.topic_id)]
    out = {a.pk: progress(a, []) for a in assignments if not banks[a.campaign_id].get(a.topic_id)}
    if not ready:
        return out
    answers = answers_of_units(ready)
    have = {}
    for campaign_id, assessor_id, topic_id, item in Judgement.objects.filter(
        campaign_id__in={a.campaign_id for a in ready}, assessor_id__in={a.assessor_id for a in ready},
        topic_id__in={a.topic_id for a in ready}, adjudicated=False, layer=Layer.NUGGET_SUPPORT, value__isnull=False,
    ).values_list("campaign_id", "assessor_id", "topic_id", "item"):
        answer_id, _, nugget_id = item.partition(":")
        have.setdefault((campaign_id, assessor_id, topic_id, answer_id), set()).add(nugget_id)
    for a in ready:
        bank = banks[a.campaign_id][a.topic_id]
        answer_id = answers.get(a.pk)
        labelled = have.get((a.campaign_id, a.assessor_id, a.topic_id, str(answer_id)), set()) if answer_id else set()
        out[a.pk] = Progress(total=len(bank), done=sum(1 for n in bank if n["id"] in labelled), noun="nugget",
                             size=len(bank))
    return out


def progress_in_queue(user, assignments) -> dict:
    """The user's nugget support units' progress (the queue), each marked `waiting` where its topic's bank is not
    settled (ready_banks: one read per campaign) with what it waits on (`waiting_on`, one read per campaign with a unit
    waiting); no read per unit."""
    topics = defaultdict(set)
    for a in assignments:
        topics[a.campaign_id].add(a.topic_id)
    banks = {campaign_id: ready_banks(campaign_id, ids) for campaign_id, ids in topics.items()}
    waits = defaultdict(set)
    for a in assignments:
        if a.topic_id not in banks[a.campaign_id]:
            waits[a.campaign_id].add(a.topic_id)
    on = {campaign_id: waiting_on_topics(campaign_id, ids) for campaign_id, ids in waits.items()}
    for a in assignments:
        a.waiting = a.topic_id in waits[a.campaign_id]
        a.waiting_on = on[a.campaign_id][a.topic_id] if a.waiting else None
    return progress_of_units(assignments, banks)
