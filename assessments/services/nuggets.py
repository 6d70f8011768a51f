"""THE nugget rules (TREC RAG nugget evaluation): the values, how nugget labels are keyed, and which bank is a topic's.

A topic's nugget bank is a Judgement of layer `nuggets` keyed on (campaign, topic) alone, its value the list of
nuggets `[{"id", "text", "importance", "origin"}, …]`; each assessor who edits a bank has their own judgement, every
change kept (record_judgement), so the bank a creation page autosaves and the bank imported from the nuggetizer are
stored the same way. The topic's bank is the adjudicated one if there is one, else the one changed last (by the
assessor's clock, then the server's). A nugget's `id` never changes when the bank is edited, so the support labels
that name it survive edits; a nugget taken out of the bank no longer counts. Who made each nugget (a person, an
imported file, an LLM's suggestion: `made_by`) is read from the banks' history when a bank is exported.

A nugget's support in an answer is a Judgement of layer `nugget_support` keyed on the topic and
item `"<answer id>:<nugget id>"`; a cited passage's support of a sentence is a Judgement of layer `citation_support`
keyed on the topic, the passage and item `"<answer id>:<sentence position>"`.
"""

import re
from collections import defaultdict
from pathlib import PurePath

from assessments.labels import CitationSupport, NuggetSupport
from assessments.models import Judgement, JudgementChange, Layer, MachineLabel, MachineLabelSource

VITAL, OKAY = "vital", "okay"
IMPORTANCE = (VITAL, OKAY)
ORIGINS = ("imported", "assessor", "machine")  # where a nugget came from: a file, a person, a machine's suggestion
# The support values are the label registry's (assessments.labels.NuggetSupport, CitationSupport), named here too.
SUPPORT, PARTIAL, NOT_SUPPORT = (NuggetSupport.SUPPORT.value, NuggetSupport.PARTIAL.value,
                                 NuggetSupport.NOT_SUPPORT.value)
SUPPORT_VALUES = tuple(NuggetSupport.values)  # best first
CITATION_VALUES = tuple(CitationSupport.values)
SUPPORT_ORDER = NuggetSupport.ranks()  # {value: rank}, worst 0; a tie of the majority takes the lower
CITATION_ORDER = CitationSupport.ranks()  # the same for a citation's support (agreement's scale too)

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


# --- who made each nugget (made_by, written by every export of banks: assessments.importers.rag.nugget_lines) ----


def made_by(campaign_id, banks) -> dict[tuple[int, str], dict]:
    """{(topic id, nugget id): who made the nugget} of `banks` ({topic id: judgement}, topic_banks'), read from the
    history of every bank of the topic in the campaign (JudgementChange, first by the server's clock):

    - ``{"kind": "person", "user"}``: the first change holding the nugget's text was a person's (the creation page, the
      API, an organiser's adjudication);
    - ``{"kind": "import", "user", "file"}``: it came in a bank file (the user it was imported under; the file's
      name, null when not known);
    - ``{"kind": "machine", "source", "model", "model_version", "prompt", "taken_by"}``: an LLM suggestion kept as
      it came (same text and importance): the campaign's suggestion source that suggested the text (the newest
      suggestion of it made by the time the nugget was taken; each field null when none is found, e.g. a nugget
      imported with `suggested` from another campaign), and `taken_by` (a person or import, as above) who took it
      into a bank;
    - a suggestion changed since (text or importance): a person or import, the first change holding the nugget as it
      reads now, with ``"suggested_by"``: the machine as above, without taken_by.

    A nugget's text is its author's: an importance changed later (adjudication) leaves a person's nugget theirs."""
    topic_ids = list(banks)
    bank_nuggets = [(topic_id, n) for topic_id, row in banks.items() if isinstance(row.value, list)
                    for n in row.value]
    wanted = {("text", t, same_text(n["text"])) for t, n in bank_nuggets}
    from_machine = [(t, n) for t, n in bank_nuggets if n.get("suggested")]
    wanted |= {("as_now", t, same_text(n["text"]), n["importance"]) for t, n in from_machine}
    wanted |= {("taken", t, same_text(n["suggested"]["text"])) for t, n in from_machine}
    first = _first_changes(campaign_id, topic_ids, wanted)
    suggesters = _suggesters(campaign_id, topic_ids) if from_machine else {}
    out = {}
    for topic_id, n in bank_nuggets:
        text, suggested = same_text(n["text"]), n.get("suggested")
        if not suggested:
            out[topic_id, n["id"]] = _who(first.get(("text", topic_id, text)), banks[topic_id])
            continue
        took = first.get(("taken", topic_id, same_text(suggested["text"])))
        machine = _machine(suggesters.get((topic_id, same_text(suggested["text"])), []), took)
        if text == same_text(suggested["text"]) and n["importance"] == suggested["importance"]:
            out[topic_id, n["id"]] = {**machine, "taken_by": _who(took, banks[topic_id])}
        else:
            as_now = first.get(("as_now", topic_id, text, n["importance"]))
            out[topic_id, n["id"]] = {**_who(as_now, banks[topic_id]), "suggested_by": machine}
    return out


def _first_changes(campaign_id, topic_ids, wanted) -> dict:
    """{key: (username, source, session_id, received_at) of the first change of a bank of the campaign holding it}
    for each key of `wanted`: ("text", topic, text), ("as_now", topic, text, importance) or ("taken", topic, the
    suggestion's text)."""
    found = {}
    rows = JudgementChange.objects.filter(judgement__in=Judgement.objects.in_campaign(campaign_id).of_layer(
        Layer.NUGGETS).filter(topic_id__in=topic_ids)).order_by("received_at", "pk").values_list(
        "judgement__topic_id", "value", "assessor__username", "source", "session_id", "received_at")
    for topic_id, value, *change in rows.iterator():
        for n in value if isinstance(value, list) else []:
            if not isinstance(n, dict) or not isinstance(n.get("text"), str):
                continue
            text = same_text(n["text"])
            keys = [("text", topic_id, text), ("as_now", topic_id, text, n.get("importance"))]
            if isinstance(n.get("suggested"), dict) and isinstance(n["suggested"].get("text"), str):
                keys.append(("taken", topic_id, same_text(n["suggested"]["text"])))
            for key in keys:
                if key in wanted and key not in found:
                    found[key] = tuple(change)
        if len(found) == len(wanted):
            break
    return found


def _who(change, bank) -> dict:
    """A person or an import, from a change (username, source, session_id, received_at); without one (a bank stored
    with no history), the bank's writer as a person."""
    if change is None:
        return {"kind": "person", "user": bank.assessor.username}
    user, source, session_id, _ = change
    if source != JudgementChange.Source.IMPORT:
        return {"kind": "person", "user": user}
    path = session_id.removeprefix("import:") if session_id.startswith("import:") else ""
    return {"kind": "import", "user": user, "file": PurePath(path).name or None}


def _suggesters(campaign_id, topic_ids) -> dict:
    """{(topic id, suggested text): [(made at, source), …] oldest first} of the campaign's LLM suggestions."""
    found = defaultdict(list)
    rows = MachineLabel.objects.filter(
        source__campaign_id=campaign_id, source__kind=MachineLabelSource.Kind.NUGGET_SUGGEST, topic_id__in=topic_ids,
        item="", passage__isnull=True, grade__isnull=False)
    for label in rows.select_related("source").order_by("created_at", "pk"):
        for n in label.value if isinstance(label.value, list) else []:
            if isinstance(n, dict) and isinstance(n.get("text"), str):
                found[label.topic_id, same_text(n["text"])].append((label.created_at, label.source))
    return found


def _machine(suggestions, took) -> dict:
    """The machine of a suggestion: of `suggestions` (made at, source) the newest made by the time it was taken
    (`took`, a change), else the newest; every field null when there is none."""
    made_before = [s for at, s in suggestions if took is None or at <= took[3]]
    source = (made_before or [s for _, s in suggestions] or [None])[-1]
    if source is None:
        return {"kind": "machine", "source": None, "model": None, "model_version": None, "prompt": None}
    prompt = source.settings.get("prompt") if isinstance(source.settings, dict) else None
    return {"kind": "machine", "source": source.name, "model": source.model or None,
            "model_version": source.model_version or None, "prompt": prompt}
