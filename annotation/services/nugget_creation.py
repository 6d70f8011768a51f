"""Nugget creation (TREC RAG): an assessor writes a topic's nugget bank: nuggets added, edited, marked vital or okay,
reordered, taken out.

A unit is an Assignment of kind NUGGET_CREATION (a nuggets campaign assigned at stage "create": one per topic, no run,
no pool). Every edit saves the assessor's whole bank as the value of their ``nuggets`` judgement on the topic
(assessments.services.nuggets: checked by validate_value, every version kept), through the one save path; the
topic's bank is then topic_banks' (adjudicated, else the one changed last). A nugget keeps its id through edits, so
support labels that name it survive. The page starts from the assessor's own bank, else the topic's as it is
without the other writers' own banks (imported or adjudicated): writers of a topic write independently.

When it is done: a bank has no natural end (its first nugget is seldom its last), so no save makes the unit done
(its kind is done only by a mark: annotation.units.nugget_creation, done_by_mark): the assessor marks it done
(Shift D, the shared mark path), which needs the bank to hold at least one vital nugget (else a reason: submitted
incomplete); they may reopen it.

LLM suggestions (assessments.machine.nuggets, `manage.py llm_nuggets suggest`) are on the page only where the
campaign's setting nugget_suggestions is on. A nugget taken from one has origin `machine` and keeps the suggestion
as it came (`suggested`: {text, importance}) beside its text and importance, however the assessor edits them.
"""

from annotation.services.adhoc import topic_card
from annotation.services.errors import ChangeInvalid
from annotation.services.nugget_support import answers_sentences, writing_units
from annotation.services.progress import Progress
from assessments.machine.nuggets import topic_suggestions
from assessments.models import Answer, Judgement, Layer, PoolCandidate
from assessments.services import nuggets

SUGGESTIONS_SETTING = "nugget_suggestions"  # the campaign setting that shows the LLM's suggestions


def own_bank(assignment):
    """The assessor's own bank of the topic in the campaign (a list), or None when they have not saved one."""
    return own_bank_and_version(assignment)[0]


def own_bank_and_version(assignment):
    """(own_bank, its version: the change_id of the bank's latest change as text, or None when none is stored)."""
    row = Judgement.objects.in_campaign(assignment.campaign_id).of_layer(Layer.NUGGETS).filter(
        adjudicated=False, assessor_id=assignment.assessor_id, topic_id=assignment.topic_id,
    ).values_list("value", "latest_change__change_id").first()
    if row is None:
        return None, None
    value, version = row
    return (value if isinstance(value, list) else None), (str(version) if version else None)


class BankChanged(ChangeInvalid):
    """A bank save made from a page that had not seen the bank's latest version (another tab or device saved since):
    refused (a 409), so that no writer's nugget is dropped by another's older copy of the bank."""

    status_code = 409


STALE = ("the bank was changed elsewhere (another tab or device) since this page last saw it: this change was not "
         "saved, so that it drops none of those nuggets; reload the page to go on from the bank as it is")


def creation_page(assignment, *, readonly=False) -> dict:
    """The topic, a few of its answers' sentences to draw nuggets from, and the bank to edit (`state`)."""
    topic = assignment.topic
    bank, version = own_bank_and_version(assignment)
    own = bank is not None
    if bank is None:
        bank = starting_bank(assignment)
    answers, sources, pooled = writers_reading(assignment)
    state = {
        "kind": "nugget_creation",
        "assignment": assignment.token,
        "status": assignment.status,
        "readonly": readonly,
        "topic": topic.external_id,
        "nuggets": [{"id": n["id"], "text": n["text"], "importance": n["importance"], "origin": n["origin"],
                     **({"suggested": n["suggested"]} if "suggested" in n else {})} for n in bank],
        "own": own,  # whether the bank shown is the assessor's own (saved): only theirs counts towards done
        "version": version,  # the bank's latest change: each save says it is based on it (change_key refuses else)
        # ids a new nugget must not take (nuggets.ids_in_use): a support label may name one (the page's nextId)
        "ids_in_use": sorted(nuggets.ids_in_use(assignment.campaign_id, [topic.pk])[topic.pk]),
        "importance": list(nuggets.IMPORTANCE),
        "max_text": nuggets.MAX_NUGGET_TEXT,
    }
    shown = suggestions_on(assignment.campaign)
    if shown:
        found = topic_suggestions(assignment.campaign_id, topic.pk)
        state["suggestions"] = found["nuggets"] if found else []
    return {
        "suggestions_on": shown,
        **topic_card(topic, assignment.campaign),  # query, description, narrative: the whole question (a cut title is not)
        "answers": answers,
        "sources": sources,
        "pooled": pooled,
        "state": state,
        "progress": bank_progress(bank if own else []),
    }


ANSWERS_SHOWN, SOURCES_SHOWN, POOLED_SHOWN = 20, 40, 10


def writers_reading(assignment) -> tuple[list, list, list]:
    """What a nugget writer reads, as TREC assessors write nuggets from the sources (issue 39 item 6):
    (answers: the first ANSWERS_SHOWN of the topic's answers, each [{n, text, sources: [source numbers]}];
    sources: the passages those answers cite, each once, numbered in the order first cited, [{n, passage}];
    pooled: the topic's top POOLED_SHOWN documents in the campaign's pools, best rank first, those cited left out,
    [{passage}]). Nothing says which run wrote an answer or brought a document (writers read blind)."""
    rows = list(Answer.objects.filter(campaign_id=assignment.campaign_id, topic_id=assignment.topic_id)
                .order_by("pk")[:ANSWERS_SHOWN])
    by_answer = answers_sentences(rows)
    numbers, sources, answers = {}, [], []
    for answer in rows:
        shown = []
        for sentence in by_answer[answer.pk]:
            cited = []
            for c in sentence["citations"]:
                passage = c["passage"]
                if passage.pk not in numbers and len(sources) < SOURCES_SHOWN:
                    numbers[passage.pk] = len(sources) + 1
                    sources.append({"n": numbers[passage.pk], "passage": passage})
                if passage.pk in numbers and numbers[passage.pk] not in cited:
                    cited.append(numbers[passage.pk])
            shown.append({"n": sentence["n"], "text": sentence["text"], "sources": cited})
        answers.append(shown)
    pooled, seen = [], set(numbers)
    candidates = PoolCandidate.objects.filter(pool__in=assignment.campaign.pools.all(), topic_id=assignment.topic_id)
    for candidate in candidates.select_related("passage").order_by("rank", "pool_id")[:POOLED_SHOWN * 4]:
        if candidate.passage_id not in seen and len(pooled) < POOLED_SHOWN:
            seen.add(candidate.passage_id)
            pooled.append({"passage": candidate.passage})
    return answers, sources, pooled


def starting_bank(assignment) -> list:
    """The bank a writer's page starts from before they save their own: the topic's bank, never another writer's (the
    writers of a topic write independently)."""
    writers = writing_units(assignment.campaign_id, [assignment.topic_id], qualification=None).exclude(
        assessor_id=assignment.assessor_id).values_list("assessor_id", flat=True)
    found = nuggets.topic_banks(assignment.campaign_id, [assignment.topic_id], leaving_out=set(writers)).get(
        assignment.topic_id)
    return list(found.value) if found is not None and isinstance(found.value, list) else []


def suggestions_on(campaign) -> bool:
    """Whether the campaign shows the LLM's nugget suggestions on its creation pages (settings nugget_suggestions;
    off unless turned on: nothing of them reaches the page otherwise)."""
    settings = campaign.settings if isinstance(campaign.settings, dict) else {}
    return settings.get(SUGGESTIONS_SETTING) is True


def change_key(assignment, data, layer, value) -> dict:
    """A bank change: layer nuggets, the value the whole list (validate_value checks it: ids, texts, importance,
    origin, each once). A nugget that is not in the bank the writer edited (their own, else the one their page starts
    from) may not take an id a support label names for another text (nuggets.reused_ids). ChangeInvalid names the
    field. A save that says which version it is `base`d on (the page's: the change_id of the bank's latest change it
    saw, null before any) is refused with BankChanged (409) when the bank has moved on since, unless it is that very
    change sent again (stored once)."""
    if layer != Layer.NUGGETS:
        raise ChangeInvalid("layer", f"expected {Layer.NUGGETS}")
    if value is None:
        raise ChangeInvalid("value", "expected the list of nuggets (an empty list for none)")
    before, version = own_bank_and_version(assignment)
    if "base" in data:
        base = data["base"]
        if base is not None and not isinstance(base, str):
            raise ChangeInvalid("base", "expected the change_id of the bank's version the page saw, or null")
        if base != version and not _stored(data.get("change_id")):
            raise BankChanged("base", STALE)
    reused = nuggets.reused_ids(assignment.campaign_id, assignment.topic_id, value,
                                starting_bank(assignment) if before is None else before)
    if reused:  # refused, never renumbered here: the page names its nuggets by id (it keeps editing the one it sent)
        at = next(i for i, n in enumerate(value) if isinstance(n, dict) and n.get("id") == reused[0])
        raise ChangeInvalid(f"value[{at}].id", f"{reused[0]!r} is the id of a nugget taken out of the bank, whose "
                            "support labels would count for this text: give the new nugget an id not in use "
                            "(reload the page)")
    return {}


def _stored(change_id) -> bool:
    """Whether the change `change_id` is stored already (a resend: the save path stores it once)."""
    import uuid

    from assessments.models import JudgementChange

    try:
        key = uuid.UUID(str(change_id))
    except ValueError:
        return False
    return JudgementChange.objects.filter(change_id=key).exists()


def bank_progress(bank) -> Progress:
    """A bank's progress: complete (may be marked done) once it holds a vital nugget; `size` counts its nuggets."""
    vital = any(isinstance(n, dict) and n.get("importance") == nuggets.VITAL for n in bank)
    return Progress(total=1, done=1 if vital else 0, noun="vital nugget", size=len(bank),
                    wanting="the bank has no vital nugget yet: mark one vital (v)")


def progress(assignment) -> Progress:
    return bank_progress(own_bank(assignment) or [])


def progress_of_units(assignments) -> dict:
    """{unit pk: progress} of nugget creation units, as `progress` counts it, in one query whatever their number."""
    if not assignments:
        return {}
    banks = {}
    for campaign_id, assessor_id, topic_id, value in Judgement.objects.filter(
        campaign_id__in={a.campaign_id for a in assignments}, assessor_id__in={a.assessor_id for a in assignments},
        topic_id__in={a.topic_id for a in assignments}, layer=Layer.NUGGETS, adjudicated=False,
    ).order_by("pk").values_list("campaign_id", "assessor_id", "topic_id", "value"):
        banks.setdefault((campaign_id, assessor_id, topic_id), value)  # own_bank's: the first
    out = {}
    for a in assignments:
        bank = banks.get((a.campaign_id, a.assessor_id, a.topic_id))
        out[a.pk] = bank_progress(bank if isinstance(bank, list) else [])
    return out
