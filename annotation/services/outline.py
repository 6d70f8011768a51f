"""Outline judging (CAR Y3): an article's passages, the assessor's labels on them, progress, and checking a change.

An outline unit is a topic and one run's article. Labels are keyed on (topic, passage) within the campaign, so a
passage judged in one run's article is judged in every article of the topic that shows it.
"""

from collections import defaultdict
from dataclasses import dataclass

from django.core.cache import cache

from annotation.services.errors import ChangeInvalid
from annotation.services.progress import Progress
from assessments.models import Facet, Judgement, Layer, RunEntry, SpecialFacet
from config.prepared import Prepared
from retrieval.models import Passage

OUTLINE_LAYERS = (Layer.NOTES, Layer.FACET, Layer.REMOVAL, Layer.TRANSITION)
PROGRESS_LAYERS = (Layer.FACET, Layer.REMOVAL, Layer.TRANSITION)
MAX_NOTES = 20_000
ARTICLE_CACHE_SECONDS = 24 * 3600


# Reading ---------------------------------------------------------------------------------------------------------


def _article(run, topic, *, text=True):
    entries = RunEntry.objects.filter(run_id=run, topic_id=topic).select_related("passage")
    if not text:
        entries = entries.only("rank", "passage_id", "passage__id")
    return entries.order_by("rank")


_ARTICLE = Prepared(lambda run, topic: _article(run, topic), run=2_147_275_005, topic=2_147_275_006)


def article(assignment, *, text=True) -> list[RunEntry]:
    """The run's passages for the topic, in article order; without `text`, the passages' ids alone (a save)."""
    if text:  # the page: the SQL compiled once
        return _ARTICLE.objects(run=assignment.run_id, topic=assignment.topic_id)
    return list(_article(assignment.run_id, assignment.topic_id, text=False))


def article_ids(assignment) -> list[int]:
    """The article's passage ids in order, kept per assignment in the process and in the shared cache (a save reads
    no run entries, and asks the shared cache once per process).

    An article is written once, with its run (entries for a run and topic are never added to or changed
    afterwards; deleting the run deletes the assignment), so the entry is right as long as the assignment points at
    the same run and topic: both are part of what is cached and checked.
    """
    cached = _ARTICLE_IDS.get(assignment.token)
    if cached is None:
        cached = cache.get(f"pj:article:{assignment.token}")
    if cached is not None and cached[:2] == [assignment.run_id, assignment.topic_id]:
        _remember_article(assignment.token, cached)
        return cached[2]
    ids = [e.passage_id for e in article(assignment, text=False)]
    if ids:  # an article not written yet is not cached
        entry = [assignment.run_id, assignment.topic_id, ids]
        cache.set(f"pj:article:{assignment.token}", entry, ARTICLE_CACHE_SECONDS)
        _remember_article(assignment.token, entry)
    return ids


_ARTICLE_IDS = {}  # token -> [run, topic, passage ids]: the shared cache's entries this process has used
_ARTICLE_IDS_MAX = 5_000  # under 20 MB at 100 passages an article; emptied when full


def _remember_article(token, entry):
    if token not in _ARTICLE_IDS:
        if len(_ARTICLE_IDS) >= _ARTICLE_IDS_MAX:
            _ARTICLE_IDS.clear()
        _ARTICLE_IDS[token] = entry


def current_labels(assessor, topic_id, passage_ids, *, campaign_id=None, layers=OUTLINE_LAYERS) -> dict:
    """The assessor's current outline labels in one campaign for these passages of a topic, whatever run they were
    made under.

    Returns {"notes": {pid: text}, "facets": {pid: [...]}, "removed": {pid: bool},
    "transitions": {"pid1-pid2": value}, "runs": {pid: [run names]}}; cleared labels are left out.
    `layers` narrows what is read (progress needs no notes).
    """
    ids = set(passage_ids)
    labels = {"notes": {}, "facets": {}, "removed": {}, "transitions": {}, "runs": {}}
    assessor_id = getattr(assessor, "pk", assessor)
    prepared = _LABELS.get((tuple(layers), campaign_id is None))
    if prepared is None:
        rows = _labels_of_topic(assessor_id, topic_id, campaign_id, layers).filter(passage_id__in=ids)
    elif campaign_id is None:
        rows = prepared.rows(user=assessor_id, topic=topic_id)
    else:
        rows = prepared.rows(user=assessor_id, topic=topic_id, campaign=campaign_id)
    for layer, pid, pid2, value, run_ids in rows:
        if pid not in ids:  # the topic's labels on passages of its other articles
            continue
        if layer == Layer.TRANSITION:
            if pid2 in ids and value is not None:
                labels["transitions"][f"{pid}-{pid2}"] = value
            continue
        runs = labels["runs"].setdefault(pid, set())
        runs.update(run_ids or ())
        if value is None or value == [] or value == "":
            continue
        if layer == Layer.NOTES:
            labels["notes"][pid] = value
        elif layer == Layer.FACET:
            labels["facets"][pid] = value
        elif layer == Layer.REMOVAL:
            labels["removed"][pid] = bool(value)
    labels["runs"] = {pid: sorted(runs) for pid, runs in labels["runs"].items()}
    return labels


def _labels_of_topic(assessor_id, topic_id, campaign_id, layers):
    """The assessor's current (not adjudicated) labels of these layers on the topic, in one campaign."""
    return Judgement.objects.in_campaign(campaign_id).filter(
        assessor_id=assessor_id, topic_id=topic_id, layer__in=layers, adjudicated=False,
    ).order_by().values_list("layer", "passage_id", "passage2_id", "value", "run_ids")  # no ordering: no joins


def _prepared_labels(layers, outside):
    """The labels of a page (all layers) or a save's progress, compiled once: every passage of the topic rather than
    the article's, so one SQL text whatever the article's length (`outside`: units made outside any campaign)."""
    if outside:
        return Prepared(lambda user, topic: _labels_of_topic(user, topic, None, layers),
                        user=2_147_275_002, topic=2_147_275_003)
    return Prepared(lambda user, topic, campaign: _labels_of_topic(user, topic, campaign, layers),
                    user=2_147_275_002, topic=2_147_275_003, campaign=2_147_275_004)


_FACETS = Prepared(lambda topic: Facet.objects.filter(topic_id=topic).order_by("position"), topic=2_147_275_007)
_LABELS = {(layers, outside): _prepared_labels(layers, outside)
           for layers in (OUTLINE_LAYERS, PROGRESS_LAYERS) for outside in (False, True)}


def progress_of(passage_ids, labels) -> Progress:
    """Progress of an article (passage ids in order) under `labels` (as current_labels returns them): every kept
    passage graded, every transition between consecutive kept passages labelled; a removed passage is done."""
    kept = [pid for pid in passage_ids if not labels["removed"].get(pid)]
    graded = sum(1 for pid in kept if labels["facets"].get(pid))
    pairs = list(zip(kept, kept[1:]))
    labelled = sum(1 for a, b in pairs if labels["transitions"].get(f"{a}-{b}"))
    total = len(passage_ids) + len(pairs)
    return Progress(
        total=total, done=(len(passage_ids) - len(kept)) + graded + labelled, noun="label", size=len(passage_ids),
        parts={"passages": len(kept) - graded, "transitions": len(pairs) - labelled},
    )


def progress(assignment, passage_ids=None) -> Progress:
    """The outline unit's progress now (`passage_ids`: the article's, when the caller has them)."""
    ids = passage_ids if passage_ids is not None else article_ids(assignment)
    labels = current_labels(
        assignment.assessor_id, assignment.topic_id, ids, campaign_id=assignment.campaign_id, layers=PROGRESS_LAYERS,
    )
    return progress_of(ids, labels)


def progress_of_units(user, assignments) -> dict:
    """{unit pk: progress} of the user's outline units, as `progress` counts it: the articles in one query, the
    labels in one a (campaign, topic) (the queue)."""
    if not assignments:
        return {}
    articles = defaultdict(list)
    entries = (
        RunEntry.objects.filter(run_id__in={a.run_id for a in assignments}, topic_id__in={a.topic_id for a in assignments})
        .order_by("run_id", "topic_id", "rank")
        .values_list("run_id", "topic_id", "passage_id")
    )
    for run_id, topic_id, passage_id in entries:
        articles[run_id, topic_id].append(passage_id)
    labels = {}
    for campaign_id, topic_id in {(a.campaign_id, a.topic_id) for a in assignments}:
        ids = {pid for (_, t), pids in articles.items() if t == topic_id for pid in pids}
        labels[campaign_id, topic_id] = current_labels(user, topic_id, ids, campaign_id=campaign_id,
                                                       layers=PROGRESS_LAYERS)
    return {a.pk: progress_of(articles[a.run_id, a.topic_id], labels[a.campaign_id, a.topic_id]) for a in assignments}


@dataclass(frozen=True)
class OutlinePage:
    """What the outline page shows: the article's entries, the page's data (JSON-able) and the progress."""

    entries: list
    state: dict
    progress: Progress


def outline_page(assignment, *, readonly=False) -> OutlinePage:
    """Everything the outline page needs; `state` is plain data rendered into the page as JSON, never as markup."""
    from assessments.labels import outline_labels

    entries = article(assignment)
    ids = [e.passage_id for e in entries]
    labels = current_labels(assignment.assessor_id, assignment.topic_id, ids, campaign_id=assignment.campaign_id)
    facets = [
        {"id": f.heading_id, "heading": f.heading, "key": str(i) if i <= 9 else "", "notes": f.notes}
        for i, f in enumerate(_FACETS.objects(topic=assignment.topic_id), start=1)
    ]
    facets += [
        {"id": SpecialFacet.OTHER.value, "heading": SpecialFacet.OTHER.label, "key": "o", "special": True},
        {"id": SpecialFacet.GENERAL.value, "heading": SpecialFacet.GENERAL.label, "key": "g", "special": True},
    ]
    state = {
        "assignment": assignment.token,
        "status": assignment.status,
        "readonly": readonly,
        "topic": assignment.topic.external_id,
        "facets": facets,
        "label_sets": outline_labels(),
        "passages": [{"id": e.passage_id, "n": n} for n, e in enumerate(entries, start=1)],
        "labels": {key: {str(k): v for k, v in labels[key].items()} for key in labels},
    }
    if assignment.shown_run_name:
        state["run"] = assignment.shown_run_name
    else:  # blind: how many other articles a passage was judged in, not their runs' names
        runs = state["labels"]["runs"]
        runs.update({pid: len(set(names) - {assignment.run.name}) for pid, names in runs.items()})
    from annotation.services.candidates import shown_machine_labels

    machine = shown_machine_labels(assignment, ids)
    if machine:  # only where the campaign shows pre-labels (annotation.services.prelabels), never blind items
        state["machine"] = {str(pid): label for pid, label in machine.items()}
        for entry in entries:
            entry.machine = machine.get(entry.passage_id)
    return OutlinePage(entries=entries, state=state, progress=progress_of(ids, labels))


# Checking a change ----------------------------------------------------------------------------------------------


def change_key(assignment, data, layer, value) -> dict:
    """The key and value of an outline change, checked: record_judgement's keyword arguments. Raises ChangeInvalid."""
    if layer not in OUTLINE_LAYERS:
        raise ChangeInvalid("layer", f"expected one of {', '.join(OUTLINE_LAYERS)}")
    if layer == Layer.NOTES and isinstance(value, str) and len(value) > MAX_NOTES:
        raise ChangeInvalid("value", f"notes are limited to {MAX_NOTES:,} characters")
    ids = article_ids(assignment)
    known = set(ids)
    passage = _article_passage(known, data.get("passage"), "passage")
    passage2 = None
    if layer == Layer.TRANSITION:
        passage2 = _article_passage(known, data.get("passage2"), "passage2")
    elif data.get("passage2") is not None:
        raise ChangeInvalid("passage2", f"a {layer} change is about one passage")
    return {"passage": passage, "passage2": passage2, "run_ids": [assignment.run.name], "_passage_ids": ids}


def _article_passage(known, raw, field):
    """The passage (by its id: nothing else of it is read) when it is in the article."""
    if not isinstance(raw, int) or isinstance(raw, bool) or raw not in known:
        raise ChangeInvalid(field, "not a passage of this article")
    return Passage(pk=raw)
