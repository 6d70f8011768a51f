"""Adjudication: the items where a campaign's assessors disagree, side by side, and the organiser's final label.

Items and layers compared (each assessor's current label, adjudicated rows excluded):
- `relevance` (outline): a passage's page-level grade as the qrels exporter gives it (removed 0,
  else the highest graded facet: MUST 3, SHOULD 2, CAN 1);
- `facet` (outline): which facets a kept passage was given (whatever the grades);
- `transition` (outline): the label of a pair of consecutive passages;
- `plot_grade` (plot), `grade` (ad hoc): a candidate's grade;
- `nugget_support` (nuggets): whether an answer supports a nugget of its topic's bank (item "<answer id>:<nugget id>";
  a nugget taken out of the bank is not listed). Its key's fourth place holds the item instead of a second passage;
  the organiser sees the nugget's text and the answer, never the run;
- `citation_support` (nuggets): whether a cited passage supports the answer's sentence that cites it (key
  ("citation_support", topic id, passage id, "<answer id>:<sentence>")); the organiser sees the sentence and the
  passage, the run only where the campaign shows run names;
- `nuggets` (nuggets): a topic's bank, where two assessors of the topic saved banks that differ (as sets of (text,
  importance): the order does not count); key ("nuggets", topic id, None, "bank"). The organiser sees the banks side
  by side and takes one whole or ticks nuggets from any of them (set_final_bank); the adjudicated bank is then the
  topic's bank (assessments.services.nuggets.topic_banks prefers it), and support labels name its nuggets' ids.
An item is listed when at least two of the campaign's assessors of its topic labelled it and their
labels differ. Labels imported into the campaign under a user without a unit of the topic (import_nugget_assignments'
`imported-assignments`, say) are voices too, as the qrels and the nugget scores count them; not for banks, whose
topic_banks takes the latest, never a majority. Practice labels (an assessor's qualification answers on a topic they
hold no formal unit of: Judgement.objects.without_practice) are left out, as in the qrels and the agreement figures.
The data browser's "disagreement" filter is this rule as the database applies it (disagreeing).

The final label is stored through record_judgement as the organiser's own judgement with source
ADJUDICATION, which flags it `adjudicated` (the history keeps every change): for `relevance` and
`facet` a facet with its relevance, or "removed" (a REMOVAL judgement; setting a facet afterwards
records the removal as undone); for `transition`, `plot_grade`, `nugget_support` and `citation_support` the
label itself (nugget and citation scores then take it). An organiser who judged the item as an assessor cannot
adjudicate it (one judgement per person and key). Where a second organiser settles an item again, the final label
set last counts, here, in the qrels and in the scores (Judgement.objects.without_superseded_finals).
`export_qrels --aggregate adjudicated` reads these labels.
"""

import json
import re
from collections import defaultdict
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import NotSupportedError, connection, transaction
from django.db.models import (
    BooleanField, Case, CharField, Count, Exists, Func, IntegerField, OuterRef, Q, TextField, Value, When,
)
from django.db.models.functions import Cast, Concat, StrIndex, Substr

from annotation.models import Assignment
from assessments.models import (
    Facet, Judgement, JudgementChange, Layer, Relevance, SpecialFacet, Topic, Transition,
)
from assessments.labels import ADHOC_GRADE_MAX, CITATION_SUPPORT_NAMES, GRADE_NAMES, NUGGET_SUPPORT_NAMES
from assessments.models.judgements import RELEVANCE_GRADE
from assessments.services import nuggets
from assessments.services.judging import JudgementInvalid, record_judgement
from config.ids import ID_MAX, parse_id
from retrieval.models import Passage

LAYERS = ("relevance", "facet", "transition", "plot_grade", "grade", "nugget_support", "citation_support", "nuggets")
# The layers a campaign of each task can disagree on (the page's layer filter offers these).
TASK_LAYERS = {"outline": ("relevance", "facet", "transition"), "plot": ("plot_grade",), "adhoc": ("grade",),
               "nuggets": ("nugget_support", "citation_support", "nuggets")}
BANK_ITEM = "bank"  # the item of a bank disagreement (a bank is keyed on its topic alone)
SUPPORT_NAMES = NUGGET_SUPPORT_NAMES  # the support pages' names in lower case (assessments.labels), best first
CITATION_NAMES = CITATION_SUPPORT_NAMES


@dataclass(frozen=True)
class AnswerLayer:
    """A layer of labels of an answer's items: the stored layer, its labels' names (best first), the item's shape."""

    stored: str
    names: dict
    item: re.Pattern  # the item's pattern: its first group the answer's id
    shape: str

    @property
    def choices(self):
        return list(self.names.items())


ANSWER_LAYERS = {
    "nugget_support": AnswerLayer(Layer.NUGGET_SUPPORT, SUPPORT_NAMES, nuggets.SUPPORT_ITEM, "<answer id>:<nugget id>"),
    "citation_support": AnswerLayer(Layer.CITATION_SUPPORT, CITATION_NAMES, nuggets.CITATION_ITEM,
                                    "<answer id>:<sentence>"),
}
def layers_for(campaign) -> tuple[str, ...]:
    """The layers the campaign's task judges, in LAYERS' order (all of them for a task this does not know)."""
    return TASK_LAYERS.get(campaign.task, LAYERS)


_GRADE_LAYERS = {Layer.PLOT_GRADE: "plot_grade", Layer.GRADE: "grade"}  # a candidate's grade, as it is
LIMIT = 500  # items listed at once


class AdjudicationInvalid(ValueError):
    """A final label that cannot be stored; `field` names the offending form field."""

    def __init__(self, field, message):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass
class Item:
    """One item the assessors disagree on: who said what, and the final label if one is set."""

    layer: str
    topic: Topic
    passage: Passage | None
    passage2: Passage | None = None
    labels: list = field(default_factory=list)  # [(username, shown label)]
    final: str | None = None
    item: str = ""  # nugget_support: "<answer id>:<nugget id>"; citation_support: "<answer id>:<sentence>"
    nugget: dict | None = None  # nugget_support: the nugget of the topic's bank ({id, text, importance, origin})
    answer: str = ""  # nugget_support, citation_support: the answer's text (its sentences)
    sentence: str = ""  # citation_support: the sentence that cites the passage
    run: str = ""  # nugget_support, citation_support: the answer's run, only where the campaign shows run names
    choices: list = field(default_factory=list)  # an answer's item: [(value, name)] the final label may take
    banks: list = field(default_factory=list)  # nuggets: [(username, their bank)] side by side
    final_bank: list | None = None  # nuggets: the adjudicated bank, if one is set

    @property
    def what(self) -> str:
        """The layer in words ("citation support")."""
        return self.layer.replace("_", " ")

    @property
    def none_agree(self) -> bool:
        return len({label for _, label in self.labels}) == len(self.labels)


@dataclass
class Disagreements:
    """The listed items, and how many there are in all (per layer)."""

    items: list
    total: int
    per_layer: dict


def campaign_assessors(campaign) -> dict[int, set[int]]:
    """{topic id: ids of the assessors with formal units of it} in the campaign (a topic only qualification units
    hold is not one: its labels are practice, Judgement.objects.without_practice)."""
    topics = defaultdict(set)
    rows = Assignment.objects.filter(campaign=campaign, qualification=False).values_list("topic_id", "assessor_id")
    for topic_id, assessor_id in rows.distinct():
        topics[topic_id].add(assessor_id)
    return dict(topics)


def disagreements(campaign, *, layer=None, topic=None) -> Disagreements:
    """The items of the campaign where its assessors disagree, optionally of one layer or one topic (external id)."""
    if layer is not None and layer not in LAYERS:
        raise AdjudicationInvalid("layer", f"{layer!r} is not one of {', '.join(LAYERS)}")
    wanted, finals, names = _disagreeing(campaign, layer=layer, topic=topic)
    per_layer = defaultdict(int)
    for key, _ in wanted:
        per_layer[key[0]] += 1
    wanted.sort(key=lambda kv: _sort_key(kv[0]))
    shown = wanted[:LIMIT]
    topics = Topic.objects.in_bulk({k[1] for k, _ in shown})
    passages = Passage.objects.in_bulk({p for k, _ in shown for p in k[2:] if isinstance(p, int)})
    headings = _headings({k[1] for k, _ in shown})
    nugget_of = _bank_nuggets(campaign, {k[1] for k, _ in shown if k[0] == "nugget_support"})
    answers = _answer_context(campaign, [k for k, _ in shown if k[0] in ANSWER_LAYERS])
    items = []
    banks = _assessor_banks(campaign, {k[1] for k, _ in shown if k[0] == "nuggets"})
    scale = _scale_names(campaign) if any(k[0] == "grade" for k, _ in shown) else None
    for key, given in shown:
        if key[0] == "nuggets":
            mine = sorted((names[a], banks.get((key[1], a), [])) for a in given)
            items.append(Item(
                layer=key[0], topic=topics[key[1]], passage=None, item=BANK_ITEM, banks=mine,
                labels=[(name, _bank_words(bank)) for name, bank in mine],
                final=_bank_words(finals[key]) if key in finals else None, final_bank=finals.get(key),
            ))
            continue
        if key[0] in ANSWER_LAYERS:
            spec = ANSWER_LAYERS[key[0]]
            answer_id, part = spec.item.match(key[3]).groups()
            answer = answers.get(int(answer_id), {})
            items.append(Item(
                layer=key[0], topic=topics[key[1]], passage=passages.get(key[2]), item=key[3],
                labels=sorted((names[a], spec.names.get(label, label)) for a, label in given.items()),
                final=spec.names.get(finals.get(key), finals.get(key)), choices=spec.choices,
                nugget=nugget_of.get((key[1], part)) if key[0] == "nugget_support" else None,
                answer=answer.get("text", ""), run=answer.get("run", ""),
                sentence=answer.get("sentences", {}).get(int(part), "") if key[0] == "citation_support" else "",
            ))
            continue
        if key[0] == "grade" and scale is not None:  # an ad hoc grade as the page names it: "2 Highly relevant"
            items.append(Item(
                layer=key[0], topic=topics[key[1]], passage=passages[key[2]],
                labels=sorted((names[a], scale.get(label, label)) for a, label in given.items()),
                final=scale.get(finals.get(key), finals.get(key)), choices=list(scale.items()),
            ))
            continue
        items.append(Item(
            layer=key[0], topic=topics[key[1]], passage=passages[key[2]], passage2=passages.get(key[3]),
            labels=sorted((names[a], _facet_label(label, headings, key[1])) for a, label in given.items()),
            final=_final_label(finals.get(key), headings, key[1]),
        ))
    return Disagreements(items=items, total=len(wanted), per_layer=dict(per_layer))


def _sort_key(key):
    """The listing order of a disagreement key: by layer and topic, then a passage and its second passage, or an
    answer's item by answer, then its nugget or sentence (numbers in their order), then the cited passage."""
    layer, topic_id, passage_id, last = key
    if isinstance(last, str):
        answer_id, _, part = last.partition(":")
        return (LAYERS.index(layer), topic_id, int(answer_id) if answer_id.isdigit() else 0, part.rjust(40, "0"),
                passage_id or 0)
    return (LAYERS.index(layer), topic_id, passage_id or 0, last or 0)


def _answer_context(campaign, keys) -> dict[int, dict]:
    """{answer id: {"text": its sentences joined, "sentences": {position: text}, "run": its run's name where the
    campaign shows run names, else ""}} of the answers these disagreement keys of ANSWER_LAYERS name."""
    if not keys:
        return {}
    from assessments.models import Answer  # noqa: PLC0415 (only nuggets campaigns need it)

    answer_ids = {int(ANSWER_LAYERS[k[0]].item.match(k[3]).group(1)) for k in keys}
    found = {}
    for answer in Answer.objects.filter(pk__in=answer_ids).select_related("run").prefetch_related("sentences"):
        shown = {s.position: s.text for s in answer.sentences.all()}
        found[answer.pk] = {"text": " ".join(shown[p] for p in sorted(shown)), "sentences": shown,
                            "run": answer.run.name if campaign.show_run_names else ""}
    return found


def _bank_nuggets(campaign, topic_ids) -> dict[tuple[int, str], dict]:
    """{(topic id, nugget id): nugget} of the topics' banks in the campaign (topic_banks: adjudicated, else latest)."""
    found = {}
    for topic_id, bank in nuggets.topic_banks(getattr(campaign, "pk", campaign), topic_ids).items():
        for nugget in bank.value if isinstance(bank.value, list) else []:
            found[topic_id, nugget["id"]] = nugget
    return found


def disagreeing(campaign) -> Q:
    """THE rule of disagreement as a filter of the campaign's Judgement rows, for the data browser: a row passes
    where its item is one the assessors disagree on (whoever's label the row is: an assessor's, a practice one, the
    final one; a page-level relevance or facet item is its passage's facet and removal labels). _disagreeing says
    the same in Python for the listing, which reads every label once; tests/annotation/test_disagreement_rule.py
    holds the two to one answer.

    The database decides, row by row (an EXISTS of the row's item: a page reads its labels in the page's order until
    it has a page, so it costs a page where disagreements are common, and at worst, where almost none are, a walk of
    the campaign's labels in the database, never a read of them into Python): the voices of the row's item
    (_voices), grouped, hold two different labels. An outline passage's relevance and facets are derived per
    assessor as _grade derives them (removed: 0, else their facet label's grade; the facet ids of one not removed);
    the other layers' label is the stored value. Read into Python, bounded by the campaign's topics, not its labels:
    the banks (a topic's few, compared as sets of normalised texts) and the nuggets of the topics' current banks
    (nuggets.topic_banks, THE rule of which bank is a topic's). Run what it filters inside without_jit().
    """
    voices = _voices(campaign)
    nugget = Substr("item", StrIndex("item", Value(":")) + 1)
    in_banks = [f"{topic_id}:{nugget_id}" for topic_id, nugget_id in _bank_nuggets(campaign, None)]
    current = (OneOf(Concat(Cast("topic_id", CharField()), Value(":"), nugget, output_field=CharField()), in_banks)
               if in_banks else Q(pk__in=[]))  # a nugget of its topic's bank now (one taken out no longer counts)
    found = _outline_disagrees(voices) | _stored_disagrees(voices, current) | _bank_disagrees(campaign, voices)
    topics = Assignment.objects.filter(campaign=campaign, qualification=False).values("topic_id")
    return Q(topic_id__in=topics) & found


@contextmanager
def without_jit():
    """PostgreSQL compiles nothing just in time for the statements run inside (SET LOCAL jit = off: to the end of
    the transaction, one of its own outside any): a statement filtered by disagreeing() is estimated dear (a
    subquery per row, each counted as if run for every row), and compiling it took 0.5 s where running it took
    25 ms. SQLite: nothing to do."""
    if connection.vendor != "postgresql":
        yield
        return
    with transaction.atomic() if not connection.in_atomic_block else nullcontext():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL jit = off")
        yield


# The layers whose label is the stored value, an item its key: those with a passage, and the nuggets' support.
_STORED = (Layer.TRANSITION, Layer.PLOT_GRADE, Layer.GRADE, Layer.CITATION_SUPPORT)


def _voices(campaign):
    """The labels that count in a disagreement: the campaign's current labels, not cleared, no final label, no
    practice one (Judgement.objects.without_practice)."""
    return (Judgement.objects.in_campaign(campaign).filter(adjudicated=False).exclude(value=None)
            .without_practice(campaign).order_by())


def _differ(rows, **labels) -> Exists:
    """Whether `rows`, all of one item, hold two different values of one of `labels` {name: expression}."""
    grouped = rows.values("topic_id").annotate(**{name: Count(label, distinct=True) for name, label in labels.items()})
    differs = Q()
    for name in labels:
        differs |= Q(**{f"{name}__gt": 1})
    return Exists(grouped.filter(differs))


def _stored_disagrees(voices, current_nugget) -> Q:
    """A row of a layer whose label is the stored value, whose key the voices label differently (no transition an
    article no longer shows; a citation's support with a passage; a nugget's support of a nugget `current_nugget`)."""
    same = {"layer": OuterRef("layer"), "topic_id": OuterRef("topic_id"), "key": OuterRef("key")}
    by_passage = voices.without_stale_transitions().filter(passage_id=OuterRef("passage_id"), **same)  # its index
    return ((Q(layer__in=_STORED, passage_id__isnull=False) & _differ(by_passage, labels="value"))
            | (Q(layer=Layer.NUGGET_SUPPORT) & current_nugget & _differ(voices.filter(**same), labels="value")))


def _outline_disagrees(voices) -> Q:
    """A facet or removal row of a passage whose relevance or facets (per assessor: see _grade) the voices differ on."""
    at = {"topic_id": OuterRef("topic_id"), "passage_id": OuterRef("passage_id")}
    removal = Q(layer=Layer.REMOVAL, grade=0)  # a removal's grade is 0 where it removes (value true), else null
    kept = Q(layer=Layer.FACET) & ~Exists(voices.filter(removal, assessor_id=OuterRef("assessor_id"), **at))
    grades = Case(When(removal, then=Value(0)), When(kept, then="grade"), output_field=IntegerField())
    facets = Case(When(kept, then=FacetIds("value")))
    marks = voices.filter(layer__in=(Layer.FACET, Layer.REMOVAL), **at)
    return Q(layer__in=(Layer.FACET, Layer.REMOVAL)) & _differ(marks, grades=grades, facets=facets)


def _bank_disagrees(campaign, voices) -> Q:
    """A bank row of a topic whose assessors (those with formal units of it) saved banks that differ (_bank_label)."""
    formal = Assignment.objects.filter(campaign_id=OuterRef("campaign_id"), topic_id=OuterRef("topic_id"),
                                       assessor_id=OuterRef("assessor_id"), qualification=False)
    banks = defaultdict(dict)
    rows = voices.filter(Exists(formal), layer=Layer.NUGGETS).values_list("topic_id", "assessor_id", "value")
    for topic_id, assessor_id, value in rows:
        banks[topic_id][assessor_id] = _bank_label(value)
    differ = [t for t, given in banks.items() if len(given) >= 2 and len(set(given.values())) > 1]
    return Q(layer=Layer.NUGGETS, topic_id__in=differ)


class FacetIds(Func):
    """The facet ids of a facet label ([{facet, relevance}, …]) as a sorted JSON array (text), null where it names
    none: two assessors gave the same facets where these are equal, whatever their order and relevance."""

    output_field = TextField()

    def as_sql(self, compiler, connection, **extra):
        raise NotSupportedError("FacetIds: SQLite and PostgreSQL only")

    def as_postgresql(self, compiler, connection, **extra):
        value, params = compiler.compile(self.source_expressions[0])
        return (f"(SELECT jsonb_agg(e.facet->'facet' ORDER BY e.facet->>'facet' COLLATE \"C\")::text FROM "
                f"jsonb_array_elements(CASE WHEN jsonb_typeof({value}) = 'array' THEN {value} END) AS e(facet))",
                (*params, *params))

    def as_sqlite(self, compiler, connection, **extra):
        value, params = compiler.compile(self.source_expressions[0])
        return (f"(SELECT NULLIF(json_group_array(f), '[]') FROM (SELECT json_extract(e.value, '$.facet') AS f "
                f"FROM json_each(CASE WHEN json_type({value}) = 'array' THEN {value} END) AS e ORDER BY f))",
                (*params, *params))


class OneOf(Func):
    """`expression IN values`, the values bound as one parameter however many (an IN list binds one each:
    PostgreSQL takes at most 65,535 a statement, SQLite 32,766): PostgreSQL's = ANY(array), SQLite's json_each."""

    output_field = BooleanField()

    def __init__(self, expression, values):
        super().__init__(expression)
        self.values = list(values)

    def as_sql(self, compiler, connection, **extra):
        raise NotSupportedError("OneOf: SQLite and PostgreSQL only")

    def as_postgresql(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return f"({sql} = ANY(%s))", (*params, self.values)

    def as_sqlite(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return f"({sql} IN (SELECT value FROM json_each(%s)))", (*params, json.dumps(self.values))


def _disagreeing(campaign, *, layer=None, topic=None):
    """([(item key, {assessor: label})] where the assessors disagree, {item key: final label}, {assessor: name})."""
    who = campaign_assessors(campaign)
    if topic is not None:
        wanted = set(Topic.objects.filter(pk__in=who, external_id=topic).values_list("pk", flat=True))
        who = {t: a for t, a in who.items() if t in wanted}
    names = dict(get_user_model().objects.filter(pk__in={a for s in who.values() for a in s}).values_list("pk", "username"))
    labels = defaultdict(dict)  # (layer, topic, passage, passage2) -> {assessor: label}
    finals = {}
    marks = defaultdict(lambda: [False, {}])  # (topic, passage, assessor) -> [removed, {facet: relevance}]
    rows = Judgement.objects.in_campaign(campaign).filter(
        topic_id__in=who, layer__in=(Layer.FACET, Layer.REMOVAL, Layer.TRANSITION, *_GRADE_LAYERS, Layer.NUGGET_SUPPORT,
                                     Layer.CITATION_SUPPORT, Layer.NUGGETS),
    ).exclude(value=None).without_practice(campaign).without_stale_transitions().without_superseded_finals().values_list(
        "topic_id", "passage_id", "passage2_id", "assessor_id", "layer", "value", "adjudicated", "item")
    final_marks = defaultdict(lambda: [False, {}])
    support = []
    for topic_id, pid, pid2, assessor, kind, value, adjudicated, item in rows:
        if not adjudicated and kind == Layer.NUGGETS and assessor not in who[topic_id]:
            continue  # a bank imported or adjudicated is no assessor's bank (other labels are voices: see above)
        if kind in (Layer.NUGGET_SUPPORT, Layer.CITATION_SUPPORT):
            support.append((kind, topic_id, pid, item, assessor, value, adjudicated))
        elif kind == Layer.NUGGETS:
            key = ("nuggets", topic_id, None, BANK_ITEM)
            if adjudicated:
                finals[key] = value
            else:
                labels[key][assessor] = _bank_label(value)
        elif kind == Layer.TRANSITION or kind in _GRADE_LAYERS:
            transition = kind == Layer.TRANSITION
            key = ("transition" if transition else _GRADE_LAYERS[kind], topic_id, pid, pid2)
            shown = _transition_name(value) if transition else str(value)
            if adjudicated:
                finals[key] = shown
            else:
                labels[key][assessor] = shown
        else:
            mark = final_marks[topic_id, pid] if adjudicated else marks[topic_id, pid, assessor]
            if kind == Layer.REMOVAL:
                mark[0] = bool(value)
            else:
                mark[1] = {e["facet"]: e["relevance"] for e in value}
    for (topic_id, pid, assessor), (removed, facets) in marks.items():
        grade = _grade(removed, facets)
        if grade is not None:
            labels["relevance", topic_id, pid, None][assessor] = GRADE_NAMES.get(grade, str(grade))
        if not removed and facets:
            labels["facet", topic_id, pid, None][assessor] = tuple(sorted(facets))
    for (topic_id, pid), (removed, facets) in final_marks.items():
        if _grade(removed, facets) is not None or facets:
            finals["relevance", topic_id, pid, None] = finals["facet", topic_id, pid, None] = (removed, facets)
    if support and layer in (None, *ANSWER_LAYERS):
        _answer_labels(campaign, support, labels, finals)
    wanted = [
        (key, given) for key, given in labels.items()
        if (layer is None or key[0] == layer) and len(given) >= 2 and len(set(given.values())) > 1
    ]
    unnamed = {a for _, given in wanted for a in given} - names.keys()
    if unnamed:  # labels imported under a user with no unit
        names.update(get_user_model().objects.filter(pk__in=unnamed).values_list("pk", "username"))
    return wanted, finals, names


def _answer_labels(campaign, rows, labels, finals):
    """Add these labels of answers' items [(stored layer, topic id, passage id, item, assessor, value, adjudicated)]:
    nugget_support of the nuggets in their topic's bank now, keyed ("nugget_support", topic id, None, item), and
    citation_support, keyed ("citation_support", topic id, passage id, item)."""
    bank = _bank_nuggets(campaign, {row[1] for row in rows if row[0] == Layer.NUGGET_SUPPORT})
    for kind, topic_id, pid, item, assessor, value, adjudicated in rows:
        nugget = kind == Layer.NUGGET_SUPPORT
        found = ANSWER_LAYERS[kind].item.match(item)
        if found is None or (nugget and (topic_id, found.group(2)) not in bank) or (not nugget and pid is None):
            continue
        key = (str(kind), topic_id, None if nugget else pid, item)
        if adjudicated:
            finals[key] = value
        else:
            labels[key][assessor] = value


def _bank_label(bank) -> frozenset:
    """What two banks are compared on: their nuggets as (text, importance), in any order."""
    return frozenset((nuggets.same_text(str(n.get("text", ""))), n.get("importance"))
                     for n in bank if isinstance(n, dict)) if isinstance(bank, list) else frozenset()


def _bank_words(bank) -> str:
    """A bank in a few words: how many nuggets, how many vital."""
    bank = [n for n in bank if isinstance(n, dict)] if isinstance(bank, list) else []
    vital = sum(1 for n in bank if n.get("importance") == nuggets.VITAL)
    return f"{len(bank)} nugget{'s' if len(bank) != 1 else ''}, {vital} vital"


def _assessor_banks(campaign, topic_ids) -> dict[tuple[int, int], list]:
    """{(topic id, assessor id): the assessor's own bank} of these topics in the campaign (adjudicated ones not)."""
    if not topic_ids:
        return {}
    rows = Judgement.objects.in_campaign(campaign).of_layer(Layer.NUGGETS).filter(
        topic_id__in=topic_ids, adjudicated=False).exclude(value=None).values_list("topic_id", "assessor_id", "value")
    return {(t, a): value for t, a, value in rows if isinstance(value, list)}


def set_final_bank(campaign, organiser, topic, *, take=None, keep=(), importance=None):
    """Store the organiser's final bank of `topic` (source ADJUDICATION), which becomes the topic's bank; returns the
    Recorded change.

    `take`: the username of an assessor of the topic whose bank is taken whole; else `keep`: nuggets ticked from
    the assessors' banks, each "<username>/<nugget id>", in the order given, with `importance` {same: vital|okay}
    to change one's importance. A text given twice is kept once (the first); a nugget keeps its id unless an earlier
    kept nugget has it, then it gets an id no bank of the topic uses (support labels name ids). Raises
    AdjudicationInvalid naming topic, take, keep, importance or assessor.
    """
    who = campaign_assessors(campaign)
    if topic.pk not in who:
        raise AdjudicationInvalid("topic", f"{topic.external_id!r} is not a topic of campaign {campaign.name!r}")
    if Judgement.objects.in_campaign(campaign).of_layer(Layer.NUGGETS).filter(
            assessor=organiser, topic=topic, adjudicated=False).exists():
        raise AdjudicationInvalid("assessor", "you wrote a bank of this topic: another organiser must adjudicate it")
    names = dict(get_user_model().objects.filter(pk__in=who[topic.pk]).values_list("pk", "username"))
    banks = {names[a]: bank for (_, a), bank in _assessor_banks(campaign, [topic.pk]).items() if a in names}
    if take:
        if take not in banks:
            raise AdjudicationInvalid("take", f"{str(take)[:150]!r} saved no bank of this topic")
        keep = [f"{take}/{n['id']}" for n in banks[take]]
    importance = importance or {}
    picked, texts = [], set()
    for ref in keep:
        name, _, nugget_id = str(ref).rpartition("/")
        found = next((n for n in banks.get(name, []) if n.get("id") == nugget_id), None)
        if found is None:
            raise AdjudicationInvalid("keep", f"{str(ref)[:150]!r} is not a nugget of an assessor's bank of this topic")
        if nuggets.same_text(found["text"]) in texts:
            continue
        texts.add(nuggets.same_text(found["text"]))
        level = importance.get(ref, found["importance"])
        if level not in nuggets.IMPORTANCE:
            raise AdjudicationInvalid("importance", f"expected one of {', '.join(nuggets.IMPORTANCE)}")
        picked.append({**found, "importance": level})
    if not picked:
        raise AdjudicationInvalid("keep", "tick at least one nugget, or take one assessor's bank")
    used = nuggets.ids_in_use(campaign.pk, [topic.pk])[topic.pk]  # a renumbered nugget takes no labelled id either
    final, ids = [], set()
    for nugget in picked:
        nid = nugget["id"] if nugget["id"] not in ids else nuggets.next_id(used | ids)
        ids.add(nid)
        final.append({**nugget, "id": nid})  # its origin, and the suggestion a machine nugget came from, kept
    try:
        return record_judgement(assessor=organiser, layer=Layer.NUGGETS, value=final, topic=topic,
                                source=JudgementChange.Source.ADJUDICATION, campaign_id=campaign.pk)
    except JudgementInvalid as exc:
        raise AdjudicationInvalid("keep", str(exc)) from exc


def _headings(topic_ids) -> dict[tuple[int, str], str]:
    """{(topic id, facet id): the heading an organiser reads} of these topics, the special facets included."""
    special = dict(SpecialFacet.choices)
    rows = Facet.objects.filter(topic_id__in=topic_ids).values_list("topic_id", "heading_id", "heading")
    found = {(t, fid): heading or fid for t, fid, heading in rows}
    return found | {(t, fid): name for t in topic_ids for fid, name in special.items()}


def _facet_label(label, headings, topic_id):
    """A label as shown: facet ids (a tuple) become their headings; any other label is already words."""
    if not isinstance(label, tuple):
        return label
    return ", ".join(headings.get((topic_id, f), f) for f in label)


def _final_label(final, headings, topic_id):
    if not isinstance(final, tuple):
        return final
    removed, facets = final
    if removed:
        return "removed"
    return "; ".join(f"{headings.get((topic_id, f), f)} {r.upper()}" for f, r in sorted(facets.items()))


def _grade(removed, facets):
    if removed:
        return 0
    grades = [RELEVANCE_GRADE.get(Relevance(r)) for r in facets.values() if r in Relevance.values]
    grades = [g for g in grades if g is not None]
    return max(grades) if grades else None


def _transition_name(value):
    return Transition(value).label if value in Transition.values else str(value)


def facet_choices(topic) -> list[tuple[str, str]]:
    """(facet id, heading) the organiser may pick for a passage of `topic`."""
    facets = [(f.heading_id, f.heading) for f in Facet.objects.filter(topic=topic).order_by("position")]
    return facets + [(SpecialFacet.OTHER.value, SpecialFacet.OTHER.label),
                     (SpecialFacet.GENERAL.value, SpecialFacet.GENERAL.label)]


def _set_final_answer_label(campaign, organiser, layer, topic, passage, item, label):
    """The organiser's final label of an answer's item, of a layer of ANSWER_LAYERS (see set_final_label)."""
    from assessments.models import Answer, AnswerCitation  # noqa: PLC0415 (only nuggets campaigns need them)

    spec = ANSWER_LAYERS[layer]
    found = spec.item.match(item or "")
    if found is None:
        raise AdjudicationInvalid("item", f"expected {spec.shape}")
    answer_id, part = found.groups()
    if not Answer.objects.filter(pk=int(answer_id), topic=topic, campaign_id=campaign.pk).exists():
        raise AdjudicationInvalid("item", "not an answer to this topic in this campaign")
    if layer == "nugget_support":
        passage = None
        if (topic.pk, part) not in _bank_nuggets(campaign, [topic.pk]):
            raise AdjudicationInvalid("item", "not a nugget of this topic's bank")
    elif passage is None or not AnswerCitation.objects.filter(
            sentence__answer_id=int(answer_id), sentence__position=int(part), passage=passage).exists():
        raise AdjudicationInvalid("passage", "not a passage this sentence of the answer cites")
    if label not in spec.names:
        raise AdjudicationInvalid("label", f"expected one of {', '.join(spec.names)}")
    if Judgement.objects.in_campaign(campaign).filter(
            assessor=organiser, topic=topic, passage=passage, layer=spec.stored, item=item, adjudicated=False).exists():
        raise AdjudicationInvalid("assessor", "you judged this item as an assessor: another organiser must adjudicate it")
    try:
        return record_judgement(assessor=organiser, layer=spec.stored, value=label, topic=topic, passage=passage,
                                item=item, source=JudgementChange.Source.ADJUDICATION, campaign_id=campaign.pk)
    except JudgementInvalid as exc:
        raise AdjudicationInvalid("label", str(exc)) from exc


def _scale_names(campaign) -> dict | None:
    """{"2": "2 Highly relevant", ...}: adhoc.named_grades keyed as the labels are shown here (text), best first (the
    final label's choices); None when the scale setting is broken (the grades are shown bare)."""
    from annotation.services.adhoc import named_grades  # noqa: PLC0415 (only ad hoc campaigns need it)

    named = named_grades(campaign)
    return None if named is None else {str(value): words for value, words in named.items()}


def _check_on_scale(campaign, grade):
    """AdjudicationInvalid(label) unless `grade` is a value of the ad hoc campaign's grade scale."""
    from annotation.services.adhoc import grade_scale  # noqa: PLC0415 (only ad hoc campaigns need it)
    from annotation.services.plot import SettingsInvalid  # noqa: PLC0415

    try:
        values = [value for value, _, _ in grade_scale(campaign)]
    except SettingsInvalid as exc:
        raise AdjudicationInvalid("label", str(exc)) from None
    if grade not in values:
        raise AdjudicationInvalid("label", f"expected one of {values}: the campaign's grade scale")


def set_final_label(campaign, organiser, *, layer, topic, passage, passage2=None, label=None, facet=None,
                    relevance=None, item=""):
    """Store the organiser's final label of one item (source ADJUDICATION); returns the Recorded change(s).

    `layer` relevance/facet: `label` "removed", or a `facet` with its `relevance`; transition: `label` a
    transition (SAME/COHERENT/SWITCH value); plot_grade: `label` a whole number; nugget_support: `item`
    "<answer id>:<nugget id>" (a nugget of the topic's bank, an answer to the topic; no passage) and `label` support,
    partial_support or not_support; citation_support: `item` "<answer id>:<sentence>", `passage` one that sentence
    cites, `label` full, partial or none. Raises AdjudicationInvalid.
    """
    if layer not in LAYERS:
        raise AdjudicationInvalid("layer", f"{layer!r} is not one of {', '.join(LAYERS)}")
    if topic.pk not in campaign_assessors(campaign):
        raise AdjudicationInvalid("topic", f"{topic.external_id!r} is not a topic of campaign {campaign.name!r}")
    if layer in ANSWER_LAYERS:
        return [_set_final_answer_label(campaign, organiser, layer, topic, passage, item, label)]
    if layer == "nuggets":
        raise AdjudicationInvalid("layer", "a bank is settled with set_final_bank (take or keep)")
    if layer == "transition" and passage2 is None:
        raise AdjudicationInvalid("passage2", "a transition is about two passages")
    kinds = {"relevance": (Layer.FACET, Layer.REMOVAL), "facet": (Layer.FACET, Layer.REMOVAL),
             "transition": (Layer.TRANSITION,), "plot_grade": (Layer.PLOT_GRADE,), "grade": (Layer.GRADE,)}[layer]
    own = Judgement.objects.in_campaign(campaign).filter(
        assessor=organiser, topic=topic, passage=passage, layer__in=kinds, adjudicated=False,
    )
    if passage2 is not None:
        own = own.filter(passage2=passage2)
    if own.exists():
        raise AdjudicationInvalid("assessor", "you judged this item as an assessor: another organiser must adjudicate it")

    def judged():
        """The item is one the campaign's assessors labelled (checked once the label is read): a final label settles
        what they said, never a passage nobody of the campaign judged, of another collection even."""
        rows = Judgement.objects.in_campaign(campaign).filter(topic=topic, passage=passage, layer__in=kinds,
                                                              adjudicated=False)
        if not (rows.filter(passage2=passage2) if passage2 is not None else rows).exists():
            raise AdjudicationInvalid("passage2" if passage2 is not None else "passage",
                                      f"no assessor of campaign {campaign.name!r} labelled this item of topic "
                                      f"{topic.external_id!r}")

    record = dict(assessor=organiser, topic=topic, passage=passage, source=JudgementChange.Source.ADJUDICATION,
                  campaign_id=campaign.pk)
    try:
        if layer == "transition":
            if label not in Transition.offered():
                raise AdjudicationInvalid("label", f"expected one of {', '.join(Transition.offered())}")
            judged()
            return [record_judgement(layer=Layer.TRANSITION, value=label, passage2=passage2, **record)]
        if layer in ("plot_grade", "grade"):
            most = ADHOC_GRADE_MAX if layer == "grade" else ID_MAX  # a plot scale's values are any whole numbers
            grade = parse_id(str(label), minimum=0, maximum=most)
            if grade is None:
                raise AdjudicationInvalid("label", f"a grade is a whole number from 0 to {most}")
            if layer == "grade":  # on the campaign's scale, as the ad hoc page takes it (the qrels carry it as it is)
                _check_on_scale(campaign, grade)
            judged()
            return [record_judgement(layer=Layer(layer), value=grade, **record)]
        if label == "removed":
            judged()
            return [record_judgement(layer=Layer.REMOVAL, value=True, **record)]
        if not facet:
            raise AdjudicationInvalid("facet", "choose a facet, or mark the passage removed")
        if relevance not in Relevance.offered():
            raise AdjudicationInvalid("relevance", f"expected one of {', '.join(Relevance.offered())}")
        judged()
        recorded = [record_judgement(layer=Layer.FACET, value=[{"facet": facet, "relevance": relevance}], **record)]
        # The removal undone: the item's final removal (whoever set it: another organiser's counts until a later
        # one replaces it) gives way to this organiser's own "not removed", set after it.
        removal_key = Judgement.make_key(Layer.REMOVAL, topic.pk, passage.pk, campaign_id=campaign.pk)
        if (Judgement.objects.filter(key=removal_key, layer=Layer.REMOVAL, topic=topic, adjudicated=True)
                .without_superseded_finals().filter(value=True).exists()):
            recorded.append(record_judgement(layer=Layer.REMOVAL, value=False, **record))
        return recorded
    except JudgementInvalid as exc:
        field, _, message = str(exc).partition(": ")
        raise AdjudicationInvalid(field.split("[")[0] if message else "label", message or str(exc)) from exc
