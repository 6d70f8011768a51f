"""Ad hoc judging (TREC style): a topic statement and its pooled documents, each graded on the campaign's scale, with
the parts of a document that make it relevant marked as evidence.

An ad hoc unit is an Assignment of kind ADHOC (a campaign of task ``adhoc`` in labelling mode: status.kind_for) with
a pool and a topic. Its layers: ``grade`` (a whole number of the campaign's scale) and ``evidence`` ([start, end)
character offsets into the document's text). The candidates, the served judging order and the machine hints are
annotation.services.candidates', which the plot page reads too: one pool-candidate machinery, two pages. The campaign's settings:

- ``grade_scale``: a preset of assessments.labels.ADHOC_SCALES ("dl", the default; "robust"; "binary") or a list
  of [value, name, description], best first;
- ``evidence``: whether the page offers evidence marking (default true);
- ``adhoc_view``: "one" (a document at a time, the default) or "list" (every document on the page).
"""

from annotation.services import candidates
from annotation.services.errors import ChangeInvalid
from annotation.services.progress import Progress
from assessments.labels import ADHOC_GRADE_MAX, ADHOC_SCALES, DEFAULT_ADHOC_SCALE
from assessments.models import Judgement, Layer, PoolCandidate
from retrieval.terms import term_spans

LAYERS = (Layer.GRADE, Layer.EVIDENCE)
VIEWS = ("one", "list")
TOPIC_GUIDELINES = "topic_guidelines"  # a campaign's instructions per topic: {topic external id: text}
GUIDELINES_MAX = 4000  # characters of one topic's instructions
MAX_GRADES = 10


def grade_scale(campaign) -> list:
    """The campaign's scale: [[value, name, description], ...], best first. SettingsInvalid naming grade_scale."""
    raw = _settings(campaign).get("grade_scale", DEFAULT_ADHOC_SCALE)
    return check_scale(raw)


def named_grades(campaign) -> dict | None:
    """{value: "2 Highly relevant", ...}, best first: a grade as pages name it beside its number (the dashboard, the
    adjudication page); None when the scale setting is broken (pages then show the grades bare)."""
    try:
        return {value: f"{value} {name}" for value, name, _ in grade_scale(campaign)}
    except candidates.SettingsInvalid:
        return None


def check_scale(raw) -> list:
    """A scale setting (a preset name or a list of [value, name, description]) as the list it stands for."""
    if isinstance(raw, str):
        if raw not in ADHOC_SCALES:
            raise candidates.SettingsInvalid(f"grade_scale: {raw!r} is not one of {', '.join(ADHOC_SCALES)}")
        return [list(e) for e in ADHOC_SCALES[raw]]
    ok = isinstance(raw, list) and 2 <= len(raw) <= MAX_GRADES and all(
        isinstance(e, list) and len(e) in (2, 3) and isinstance(e[0], int) and not isinstance(e[0], bool)
        and 0 <= e[0] <= ADHOC_GRADE_MAX and all(isinstance(x, str) for x in e[1:]) and e[1].strip()
        for e in raw
    )
    if not ok or len({e[0] for e in raw}) != len(raw):
        raise candidates.SettingsInvalid("grade_scale: expected a preset (dl, robust, binary) or a list of 2 to 10 "
                                   f"[value 0-{ADHOC_GRADE_MAX}, name, description] with distinct values")
    return [[e[0], e[1], e[2] if len(e) == 3 else ""] for e in raw]


def shows_evidence(campaign) -> bool:
    value = _settings(campaign).get("evidence", True)
    if not isinstance(value, bool):
        raise candidates.SettingsInvalid("evidence: expected true or false")
    return value


def view(campaign) -> str:
    value = _settings(campaign).get("adhoc_view", "one")
    if value not in VIEWS:
        raise candidates.SettingsInvalid(f"adhoc_view: expected one of {', '.join(VIEWS)}")
    return value


def _settings(campaign) -> dict:
    return campaign.settings if campaign is not None and isinstance(campaign.settings, dict) else {}


def topic_card(topic, campaign=None) -> dict:
    """What the page shows of the topic statement: the title as the query, the description and the narrative, and
    the campaign's own instructions for the topic (`topic_guidelines`, beside the narrative) when it has some."""
    meta = topic.metadata if isinstance(topic.metadata, dict) else {}
    query = topic.title or topic.text
    description = meta.get("description") or (topic.text if topic.title and topic.text != topic.title else "")
    return {"query": query, "description": str(description or ""), "narrative": str(meta.get("narrative") or ""),
            "topic_guidelines": topic_guidelines(campaign, topic.external_id) if campaign is not None else ""}


def topic_guidelines(campaign, topic_id) -> str:
    """The campaign's instructions for one topic (its setting topic_guidelines: {topic id: text}), or ""."""
    settings = campaign.settings if isinstance(campaign.settings, dict) else {}
    found = settings.get(TOPIC_GUIDELINES, {})
    return str(found.get(topic_id, "")) if isinstance(found, dict) else ""


def labels(assessor_id, topic_id, passage_ids, campaign_id) -> dict:
    """The assessor's current grades and evidence in one campaign: {"grades": {pid: v}, "evidence": {pid: spans}}."""
    out = {"grades": {}, "evidence": {}}
    rows = Judgement.objects.in_campaign(campaign_id).filter(
        adjudicated=False, assessor_id=assessor_id, topic_id=topic_id, layer__in=LAYERS,
        passage_id__in=set(passage_ids),
    ).values_list("layer", "passage_id", "value")
    for layer, pid, value in rows:
        if value is None or value == []:
            continue
        out["grades" if layer == Layer.GRADE else "evidence"][pid] = value
    return out


def adhoc_page(assignment, *, readonly=False) -> dict:
    """Everything the ad hoc page needs: the topic card, the documents (title, text, the query's terms in it), the
    scale, and `state` (plain data for its script). Where the campaign serves a judging order, the documents this
    assessor graded in the topic's sequence, then the one to judge now (candidates.served_order); otherwise every
    candidate, shuffled for this assessor."""
    campaign = assignment.campaign if assignment.campaign_id else None
    served = candidates.served_order(assignment)
    if served is None:
        rows = candidates.candidates(assignment)
    else:
        by_id = {c.passage_id: c for c in PoolCandidate.objects.filter(
            pool_id=assignment.pool_id, topic_id=assignment.topic_id, passage_id__in=served[0]).select_related("passage")}
        rows = [by_id[pid] for pid in served[0]]
    documents = [c.passage for c in rows]
    card = topic_card(assignment.topic, campaign)
    scale = grade_scale(campaign)
    current = labels(assignment.assessor_id, assignment.topic_id, [d.pk for d in documents], assignment.campaign_id)
    machine = candidates.shown_machine_labels(assignment, [d.pk for d in documents])
    state = {
        "kind": assignment.kind,
        "assignment": assignment.token,
        "status": assignment.status,
        "readonly": readonly,
        "topic": assignment.topic.external_id,
        "view": view(campaign),
        "evidence": shows_evidence(campaign),
        "scale": [[value, name, str(value)] for value, name, _ in scale],
        "documents": [{"id": d.pk, "n": n, "title": d.title, "text": d.text, "terms": term_spans(card["query"], d.text),
                       "title_terms": term_spans(card["query"], d.title)}
                      for n, d in enumerate(documents, start=1)],
        "labels": {k: {str(pid): v for pid, v in current[k].items()} for k in current},
    }
    total = len(documents)
    if served is not None:
        state["ordered"] = candidates.served_state(served[1], assignment, documents)
        total = len(served[1].pool)
    if machine:  # only where the campaign shows pre-labels (annotation.services.prelabels), never blind items
        state["machine"] = {str(pid): label for pid, label in machine.items()}
    return {
        "documents": [{"n": n, "passage": d, "machine": machine.get(d.pk)} for n, d in enumerate(documents, start=1)],
        "scale": scale,
        "card": card,
        "state": state,
        "progress": Progress(total=total, done=len(current["grades"]), noun="document", size=total),
    }


def change_key(assignment, data, layer, value) -> dict:
    """The key and value of an ad hoc change, checked: record_judgement's keyword arguments. `passage` is a
    candidate's id; a grade must be on the campaign's scale; evidence spans are merged and must lie inside the
    document (judging.validate_value). Raises ChangeInvalid naming the field."""
    if layer not in LAYERS:
        raise ChangeInvalid("layer", f"expected one of {', '.join(LAYERS)}")
    key = {"passage": candidates.candidate_passage(assignment, data.get("passage"), "not a document of this assignment")}
    campaign = assignment.campaign if assignment.campaign_id else None
    try:
        if layer == Layer.GRADE and value is not None:
            values = [v for v, _, _ in grade_scale(campaign)]
            if isinstance(value, bool) or not isinstance(value, int) or value not in values:
                raise ChangeInvalid("value", f"expected one of {values} (or null to clear)")
        if layer == Layer.EVIDENCE:
            if not shows_evidence(campaign):
                raise ChangeInvalid("layer", "this campaign does not mark evidence")
            if isinstance(value, list) and all(candidates.is_span(s) for s in value):
                key["_value"] = candidates.merged(value)
    except candidates.SettingsInvalid as exc:
        raise ChangeInvalid("assignment", str(exc)) from exc
    return key


def progress(assignment) -> Progress:
    """An ad hoc unit's progress: its pool's documents for the topic graded (evidence is optional)."""
    ids = list(PoolCandidate.objects.filter(pool_id=assignment.pool_id, topic_id=assignment.topic_id)
               .values_list("passage_id", flat=True))
    grades = labels(assignment.assessor_id, assignment.topic_id, ids, assignment.campaign_id)["grades"]
    return Progress(total=len(ids), done=len(grades), noun="document", size=len(ids))
