"""The data browser (/campaigns/<name>/browse/): a campaign's labels, filtered and sorted, one page at a time; one
item with every label and its history; a pool's candidates with the runs and ranks that brought each.

Reading only. The labels are `Judgement.objects.in_campaign(campaign)` less the transitions no article shows now
(`without_stale_transitions`); "disagreement" is adjudication's rule (`adjudication.disagreeing`, a filter the database
applies row by row: a page reads a page of labels, however large the campaign). Pages are
keysets as the API's lists (annotation/api/pagination.py: its cursor, `after` and `flip`): a page is the rows
after the cursor's position in the sort's order, unique as a whole, never OFFSET, and nothing counts every row.
A filter value that names nothing (an unknown topic, assessor, status, label, sort or a cursor not ours) is a
BrowseInvalid naming the field.
"""

import json
import re
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from types import SimpleNamespace

from django.contrib.auth import get_user_model
from django.db.models import Exists, F, OuterRef, Q
from django.db.models.functions import Left

from annotation.models import Assignment, CampaignTopic
from annotation.services import adhoc, plot
from annotation.services.adjudication import disagreeing, without_jit
from annotation.services.errors import ServiceError
from annotation.units import tasks
from assessments.labels import (
    CITATION_SUPPORT_NAMES, DEFAULT_PLOT_SCALE, NUGGET_SUPPORT_SAID, RELEVANCE, REMOVED, TRANSITION_NAMES,
    TRANSITIONS,
)
from assessments.models import CandidateSource, MachineLabel, Judgement, JudgementChange, Layer, PoolCandidate, Topic, Transition
from assessments.services import nuggets
from retrieval.models import Passage

PAGE_SIZE = 50
HISTORY_LIMIT = 1000  # changes shown of one item (an assessor may toggle a label many times)
SNIPPET = 160  # characters of a passage shown in a list

# sort name -> (words, the keyset's order: unique as a whole). "layer" follows the campaign's index
# (campaign_id, layer, topic): a page seeks to its place and sorts no more than one topic's layer.
SORTS = {
    "layer": ("Layer, topic", ("layer", "topic_id", "id")),
    "newest": ("Newest first", ("-id",)),
    "oldest": ("Oldest first", ("id",)),
    "assessor": ("Assessor", ("assessor_id", "id")),
    "changed": ("Last changed (assessor's clock)", ("-client_time", "-id")),
}
LABEL = re.compile(r"(?P<layer>[a-z_]{1,20})(?::(?P<value>-?[0-9]{1,4}|[a-z_]{1,20}))?")


class BrowseInvalid(ServiceError):
    """A filter, sort or cursor the browser cannot use; `field` names it."""


@dataclass
class Filters:
    """What the list shows, as the request gave it (empty: no filter)."""

    topic: str = ""
    assessor: str = ""
    status: str = ""
    label: str = ""
    disagreement: bool = False
    sort: str = "layer"
    cursor: str = ""

    def query(self, **changes) -> dict:
        """The filters as URL parameters (empty ones left out), with `changes`."""
        values = {"topic": self.topic, "assessor": self.assessor, "status": self.status, "label": self.label,
                  "disagreement": "1" if self.disagreement else "", "sort": "" if self.sort == "layer" else self.sort,
                  "cursor": self.cursor} | changes
        return {k: v for k, v in values.items() if v}


@dataclass
class Page:
    rows: list
    next_cursor: str | None = None
    previous_cursor: str | None = None
    extra: dict = field(default_factory=dict)


def read_filters(params) -> Filters:
    """Filters from the query string's values (stripped; anything else is ignored)."""
    def get(name):
        return (params.get(name) or "").strip()

    disagreement = get("disagreement")
    if disagreement not in ("", "0", "1", "on"):
        raise BrowseInvalid("disagreement", f"1 (only items the assessors disagree on) or nothing, not {disagreement[:50]!r}")
    sort = get("sort") or "layer"
    if sort not in SORTS:
        raise BrowseInvalid("sort", f"one of {', '.join(SORTS)}, not {sort[:50]!r}")
    return Filters(topic=get("topic"), assessor=get("assessor"), status=get("status"), label=get("label"),
                   disagreement=disagreement in ("1", "on"), sort=sort, cursor=get("cursor"))


def _outline_labels(campaign) -> list[tuple[str, str]]:
    return ([(f"facet:{r['grade']}", r["name"]) for r in RELEVANCE] + [("facet", "any facet")]
            + [(f"removal:{REMOVED['grade']}", REMOVED["name"])]
            + [(f"transition:{t['value']}", t["name"]) for t in TRANSITIONS] + [("notes", "notes")])


def _adhoc_labels(campaign) -> list[tuple[str, str]]:
    try:
        scale = adhoc.grade_scale(campaign)
    except plot.SettingsInvalid:  # a broken setting (its pages say so): the grades as numbers still filter
        scale = [[value, str(value), ""] for value in range(3, -1, -1)]
    return ([(f"{Layer.GRADE.value}:{value}", f"{value}: {name}") for value, name, _ in scale]
            + [(Layer.EVIDENCE.value, Layer.EVIDENCE.label)])


def _nugget_labels(campaign) -> list[tuple[str, str]]:
    return ([(Layer.NUGGETS.value, "nugget bank")]
            + [(f"{Layer.NUGGET_SUPPORT.value}:{v}", f"nugget: {SUPPORT_WORDS[v]}") for v in nuggets.SUPPORT_VALUES]
            + [(f"{Layer.CITATION_SUPPORT.value}:{v}", f"citation: {CITATION_SUPPORT_NAMES[v]}")
               for v in nuggets.CITATION_VALUES])


def _plot_labels(campaign) -> list[tuple[str, str]]:
    settings = campaign.settings if isinstance(campaign.settings, dict) else {}
    scale = settings.get("plot_scale")
    scale = scale if isinstance(scale, list) and all(isinstance(e, list) and len(e) == 2 for e in scale) else DEFAULT_PLOT_SCALE
    return ([(f"plot_grade:{value}", f"{value}: {name}") for value, name in scale]
            + [(Layer.PLOT_SPANS.value, Layer.PLOT_SPANS.label), (Layer.CHOICE.value, Layer.CHOICE.label),
               (Layer.RATING.value, Layer.RATING.label)])


# A campaign task's `labels` fact (annotation.units.tasks) -> (campaign) -> its label filter menu
LABEL_MENUS = {"outline": _outline_labels, "adhoc": _adhoc_labels, "nuggets": _nugget_labels, "plot": _plot_labels}


def label_choices(campaign) -> list[tuple[str, str]]:
    """(label filter value, words) the page offers for the campaign's task; read_label takes any layer[:value]."""
    return LABEL_MENUS[tasks.of(campaign).labels](campaign)


SUPPORT_WORDS = NUGGET_SUPPORT_SAID
# The layers whose values are words, not grades: the words each takes.
WORD_VALUES = {Layer.TRANSITION: tuple(Transition.values), Layer.NUGGET_SUPPORT: nuggets.SUPPORT_VALUES,
               Layer.CITATION_SUPPORT: nuggets.CITATION_VALUES}


def read_label(text) -> dict:
    """The judgement filter of a label `layer` or `layer:value` (a grade, or a word: a transition's, a support's)."""
    found = LABEL.fullmatch(text)
    if found is None or found["layer"] not in Layer.values:
        raise BrowseInvalid("label", f"a layer ({', '.join(Layer.values)}), optionally :grade, not {text[:50]!r}")
    layer, value = found["layer"], found["value"]
    if value is None:
        return {"layer": layer}
    if layer in WORD_VALUES:
        if value not in WORD_VALUES[layer]:
            raise BrowseInvalid("label", f"a {layer} label is one of {', '.join(WORD_VALUES[layer])}, not {value!r}")
        return {"layer": layer, "value": value}
    if not re.fullmatch(r"-?[0-9]+", value):
        raise BrowseInvalid("label", f"a {layer} label's value is a whole-number grade, not {value!r}")
    return {"layer": layer, "grade": int(value)}


def labels(campaign, filters: Filters, *, size=PAGE_SIZE) -> Page:
    """One page of the campaign's labels under `filters`: Judgement rows with `topic`, `assessor`, `latest_change`,
    `passage_ref`/`passage2_ref` (external ids), `passage_text` (its start) and `unit_statuses` (the statuses of the
    assessor's units of the topic in the campaign)."""
    rows = Judgement.objects.in_campaign(campaign)
    if filters.topic:
        topic = campaign_topics(campaign).filter(external_id=filters.topic).values_list("pk", flat=True).first()
        if topic is None:
            raise BrowseInvalid("topic", f"campaign {campaign.name!r} has no topic {filters.topic[:100]!r}")
        rows = rows.filter(topic_id=topic)
    if filters.assessor:
        assessor = get_user_model().objects.filter(username=filters.assessor).values_list("pk", flat=True).first()
        if assessor is None:
            raise BrowseInvalid("assessor", f"there is no assessor {filters.assessor[:150]!r}")
        rows = rows.filter(assessor_id=assessor)
    if filters.status:
        if filters.status not in Assignment.Status.values:
            raise BrowseInvalid("status", f"one of {', '.join(Assignment.Status.values)}, not {filters.status[:50]!r}")
        rows = rows.filter(Exists(Assignment.objects.filter(
            campaign=campaign, assessor_id=OuterRef("assessor_id"), topic_id=OuterRef("topic_id"), status=filters.status,
        )))
    if filters.label:
        rows = rows.filter(**read_label(filters.label))
    if filters.disagreement:
        rows = rows.filter(disagreeing(campaign))
    ordering = SORTS[filters.sort][1]
    rows = rows.without_stale_transitions().select_related("topic", "assessor", "latest_change").annotate(
        passage_ref=F("passage__external_id"), passage2_ref=F("passage2__external_id"),
        passage_text=Left("passage__text", SNIPPET),
    )
    with without_jit() if filters.disagreement else nullcontext():
        page = keyset_page(rows, ordering, filters.cursor, size)
    statuses = {}
    if page.rows:
        units = Assignment.objects.filter(
            campaign=campaign, assessor_id__in={r.assessor_id for r in page.rows},
            topic_id__in={r.topic_id for r in page.rows},
        ).values_list("assessor_id", "topic_id", "status")
        for assessor_id, topic_id, status in units:
            statuses.setdefault((assessor_id, topic_id), set()).add(status)
    names = dict(Assignment.Status.choices)
    machine = machine_labels(campaign, page.rows)
    texts = dict(Passage.objects.filter(  # the documents evidence marks: its spans are offsets into the whole text
        pk__in={r.passage_id for r in page.rows if r.layer == Layer.EVIDENCE and r.passage_id}).values_list("pk", "text"))
    for row in page.rows:
        row.unit_statuses = [names[s] for s in sorted(statuses.get((row.assessor_id, row.topic_id), ()))]
        row.machine_label = machine.get((row.topic_id, row.passage_id))
        row.shown = shown(row.layer, row.value, texts.get(row.passage_id))
    return page


def _marked(spans, text) -> str:
    """Evidence spans as the words they mark, quoted ("“…” · “…”"), or as offsets where the text is not at hand."""
    if text is None:
        return "evidence at " + ", ".join(f"{a}–{b}" for a, b in spans)
    return "evidence: " + " · ".join(
        "“" + (" ".join(text[a:b].split()) if b - a <= 80 else " ".join(text[a:a + 79].split()) + "…") + "”"
        for a, b in spans)


def shown(layer, value, text=None) -> str:
    """A label's value in words: facets with their relevance, removed or kept, a transition's name, a grade, the
    words evidence marks (`text`: the document's, whose offsets the spans are)."""
    if value is None:
        return "cleared"
    if layer == Layer.EVIDENCE and isinstance(value, list):
        spans = [s for s in value if isinstance(s, list) and len(s) == 2 and all(type(x) is int for x in s)]
        if not spans:
            return "no evidence"
        words = _marked(spans, text)
        return words if len(words) <= 200 else words[:199] + "…"
    if layer == Layer.FACET and isinstance(value, list):
        return "; ".join(f"{str(e.get('facet', '')).rsplit('/', 1)[-1]} {str(e.get('relevance', '')).upper()}"
                         for e in value if isinstance(e, dict))
    if layer == Layer.REMOVAL:
        return "removed" if value is True else "kept (removal undone)"
    if layer == Layer.TRANSITION:
        return TRANSITION_NAMES.get(value, str(value))
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 200 else text[:199] + "…"


def machine_labels(campaign, rows) -> dict:
    """{(topic id, passage id): words} of the machine labels the judging pages show for these labels' passages (the
    campaign's pre-labels, blind items left out); empty where the campaign shows none."""
    from annotation.services.prelabels import PrelabelsInvalid, prelabels

    try:
        shown = prelabels(campaign)
    except PrelabelsInvalid:
        return {}
    if not shown.on or not rows:
        return {}
    found = MachineLabel.objects.filter(
        source_id=shown.source_id, topic_id__in={r.topic_id for r in rows}, grade__isnull=False,
        passage_id__in={r.passage_id for r in rows if r.passage_id},
    ).values_list("topic_id", "passage_id", "grade")
    return {(t, p): shown.describe(grade) for t, p, grade in found if not shown.blind(t, p)}


def keyset_page(rows, ordering, cursor, size) -> Page:
    """The page of `rows` after (a "previous" cursor: before) the cursor's position in `ordering`, as the API's
    KeysetPagination reads it: the cursor is checked against the fields (a bad one: BrowseInvalid naming cursor)."""
    from rest_framework.exceptions import ValidationError

    from annotation.api.pagination import KeysetPagination, after, cursor_value, flip

    pager = KeysetPagination()
    pager.ordering = tuple(ordering)
    try:
        reverse, position = pager.decode_cursor(SimpleNamespace(query_params={"cursor": cursor}), rows.model)
    except ValidationError:
        raise BrowseInvalid("cursor", "not a cursor of this list: use the page's Next or Previous link") from None
    order = [flip(f) for f in ordering] if reverse else list(ordering)
    if position is not None:
        rows = rows.filter(after(order, position))
    found = list(rows.order_by(*order)[: size + 1])
    page, more = found[:size], len(found) > size
    if reverse:
        page.reverse()

    def at(row):
        values = [getattr(row, name.lstrip("-")) for name in ordering]
        return [v.isoformat() if isinstance(v, datetime) else v for v in values]

    has_next = position is not None if reverse else more
    has_previous = more if reverse else position is not None
    return Page(
        rows=page,
        next_cursor=cursor_value(False, at(page[-1]) if page else position) if has_next else None,
        previous_cursor=cursor_value(True, at(page[0]) if page else position) if has_previous else None,
    )


def assessors(campaign) -> list[str]:
    """The names of the campaign's assessors (those with units), for the filter."""
    ids = Assignment.objects.filter(campaign=campaign).values("assessor_id")
    return list(get_user_model().objects.filter(pk__in=ids).order_by("username").values_list("username", flat=True))


def campaign_topics(campaign):
    """The campaign's topics: those it names (CampaignTopic) and those of its units."""
    return Topic.objects.filter(
        Q(pk__in=CampaignTopic.objects.filter(campaign=campaign).values("topic_id"))
        | Q(pk__in=Assignment.objects.filter(campaign=campaign).values("topic_id")))


def topics(campaign) -> list[tuple[str, str]]:
    """(external id, title) of the campaign's topics, for the filter."""
    return list(campaign_topics(campaign).order_by("external_id").values_list("external_id", "title"))


@dataclass
class Item:
    """One item of a campaign: its labels by every assessor (and the adjudicated one) and every change of them."""

    judgement: Judgement
    labels: list
    history: list
    more_history: bool


def item(campaign, judgement_id) -> Item | None:
    """The item of one of the campaign's labels (None: no such label in the campaign): every label of the same topic,
    passage(s) and study item in the campaign, every layer, and their changes in each label's clock order, each with
    the value it replaced (`old`)."""
    first = (Judgement.objects.in_campaign(campaign).filter(pk=judgement_id)
             .select_related("topic", "passage", "passage2").first())
    if first is None:
        return None
    same = Judgement.objects.in_campaign(campaign).filter(
        topic_id=first.topic_id, passage_id=first.passage_id, passage2_id=first.passage2_id, item=first.item)
    current = list(same.without_stale_transitions().select_related("assessor", "latest_change")
                   .order_by("layer", "adjudicated", "assessor__username", "id"))
    text = first.passage.text if first.passage_id else None
    for j in current:
        j.shown = shown(j.layer, j.value, text)
    ids = {j.pk for j in current} | {first.pk}
    changes = list(JudgementChange.objects.filter(judgement_id__in=ids).select_related("assessor")
                   .order_by("judgement_id", "client_time", "client_seq", "id")[: HISTORY_LIMIT + 1])
    more = len(changes) > HISTORY_LIMIT
    changes = changes[:HISTORY_LIMIT]
    previous = {}
    for change in changes:
        old = previous.get(change.judgement_id)
        change.old_shown = shown(old[0], old[1], text) if old else ""
        change.new_shown = shown(change.layer, change.value, text)
        previous[change.judgement_id] = (change.layer, change.value)
    changes.sort(key=lambda c: (c.received_at, c.pk))
    return Item(judgement=first, labels=current, history=changes, more_history=more)


def pool_candidates(pool, *, topic="", cursor="", size=PAGE_SIZE) -> Page:
    """One page of a pool's candidates in (topic, rank) order, each with `passage_ref`, `passage_text` and
    `brought_by`: [(run name, rank, the run's score or None)] of the runs that ranked it, best rank first (a union
    pool has no score of its own: each run's score is the one to show)."""
    rows = PoolCandidate.objects.filter(pool=pool)
    if topic:
        topic_id = pool.topics.filter(external_id=topic).values_list("pk", flat=True).first()
        if topic_id is None:
            raise BrowseInvalid("topic", f"pool {pool.name!r} has no topic {topic[:100]!r}")
        rows = rows.filter(topic_id=topic_id)
    rows = rows.select_related("topic").annotate(passage_ref=F("passage__external_id"),
                                                  passage_text=Left("passage__text", SNIPPET))
    page = keyset_page(rows, ("topic_id", "rank"), cursor, size)
    sources = {}
    rows = CandidateSource.objects.filter(candidate__in=[c.pk for c in page.rows]).order_by("rank", "run__name")
    for candidate_id, name, rank, score in rows.values_list("candidate_id", "run__name", "rank", "score"):
        sources.setdefault(candidate_id, []).append((name, rank, score))
    for candidate in page.rows:
        candidate.brought_by = sources.get(candidate.pk, [])
    return page
