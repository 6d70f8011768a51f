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
- `nuggets` (nuggets): a topic's bank, where two assessors of the topic saved banks that differ (as sets of (text,
  importance): the order does not count); key ("nuggets", topic id, None, "bank"). The organiser sees the banks side
  by side and takes one whole or ticks nuggets from any of them (set_final_bank); the adjudicated bank is then the
  topic's bank (assessments.services.nuggets.topic_banks prefers it), and support labels name its nuggets' ids.
An item is listed when at least two of the campaign's assessors of its topic labelled it and their
labels differ. Qualification topics are left out.

The final label is stored through record_judgement as the organiser's own judgement with source
ADJUDICATION, which flags it `adjudicated` (the history keeps every change): for `relevance` and
`facet` a facet with its relevance, or "removed" (a REMOVAL judgement; setting a facet afterwards
records the removal as undone); for `transition`, `plot_grade` and `nugget_support` the label itself (nugget scores then take it). An organiser who
judged the item as an assessor cannot adjudicate it (one judgement per person and key).
`export_qrels --aggregate adjudicated` reads these labels.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model

from annotation.models import Assignment, CampaignTopic
from assessments.models import (
    Facet, Judgement, JudgementChange, Layer, Relevance, SpecialFacet, Topic, Transition,
)
from assessments.labels import GRADE_NAMES
from assessments.models.judgements import RELEVANCE_GRADE
from assessments.services import nuggets
from assessments.services.judging import GRADE_MAX, JudgementInvalid, record_judgement
from config.ids import parse_id
from retrieval.models import Passage

LAYERS = ("relevance", "facet", "transition", "plot_grade", "grade", "nugget_support", "nuggets")
BANK_ITEM = "bank"  # the item of a bank disagreement (a bank is keyed on its topic alone)
SUPPORT_NAMES = {nuggets.SUPPORT: "support", nuggets.PARTIAL: "partial support", nuggets.NOT_SUPPORT: "no support"}
SUPPORT_CHOICES = [(value, SUPPORT_NAMES[value]) for value in nuggets.SUPPORT_VALUES]
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
    item: str = ""  # nugget_support: "<answer id>:<nugget id>"
    nugget: dict | None = None  # nugget_support: the nugget of the topic's bank ({id, text, importance, origin})
    answer: str = ""  # nugget_support: the answer's text (its sentences), never its run
    banks: list = field(default_factory=list)  # nuggets: [(username, their bank)] side by side
    final_bank: list | None = None  # nuggets: the adjudicated bank, if one is set

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
    """{topic id: ids of the assessors with formal units of it} in the campaign."""
    topics = defaultdict(set)
    rows = Assignment.objects.filter(campaign=campaign, qualification=False).values_list("topic_id", "assessor_id")
    for topic_id, assessor_id in rows.distinct():
        topics[topic_id].add(assessor_id)
    qualifying = set(CampaignTopic.objects.filter(campaign=campaign, qualification=True).values_list("topic_id", flat=True))
    return {t: a for t, a in topics.items() if t not in qualifying}


def disagreements(campaign, *, layer=None, topic=None) -> Disagreements:
    """The items of the campaign where its assessors disagree, optionally of one layer or one topic (external id)."""
    if layer is not None and layer not in LAYERS:
        raise AdjudicationInvalid("layer", f"{layer!r} is not one of {', '.join(LAYERS)}")
    wanted, finals, names = _disagreeing(campaign, layer=layer, topic=topic)
    per_layer = defaultdict(int)
    for key, _ in wanted:
        per_layer[key[0]] += 1
    wanted.sort(key=lambda kv: (LAYERS.index(kv[0][0]), kv[0][1], kv[0][2] or 0, _order(kv[0][3])))
    shown = wanted[:LIMIT]
    topics = Topic.objects.in_bulk({k[1] for k, _ in shown})
    passages = Passage.objects.in_bulk({p for k, _ in shown if k[0] not in ("nugget_support", "nuggets")
                                        for p in (k[2], k[3]) if p})
    headings = _headings({k[1] for k, _ in shown})
    nugget_of, answer_text = _nugget_context(campaign, [k for k, _ in shown if k[0] == "nugget_support"])
    items = []
    banks = _assessor_banks(campaign, {k[1] for k, _ in shown if k[0] == "nuggets"})
    for key, given in shown:
        if key[0] == "nuggets":
            mine = sorted((names[a], banks.get((key[1], a), [])) for a in given)
            items.append(Item(
                layer=key[0], topic=topics[key[1]], passage=None, item=BANK_ITEM, banks=mine,
                labels=[(name, _bank_words(bank)) for name, bank in mine],
                final=_bank_words(finals[key]) if key in finals else None, final_bank=finals.get(key),
            ))
            continue
        if key[0] == "nugget_support":
            answer_id, nugget_id = nuggets.SUPPORT_ITEM.match(key[3]).groups()
            items.append(Item(
                layer=key[0], topic=topics[key[1]], passage=None, item=key[3],
                labels=sorted((names[a], SUPPORT_NAMES.get(label, label)) for a, label in given.items()),
                final=SUPPORT_NAMES.get(finals.get(key), finals.get(key)),
                nugget=nugget_of.get((key[1], nugget_id)), answer=answer_text.get(int(answer_id), ""),
            ))
            continue
        items.append(Item(
            layer=key[0], topic=topics[key[1]], passage=passages[key[2]], passage2=passages.get(key[3]),
            labels=sorted((names[a], _facet_label(label, headings, key[1])) for a, label in given.items()),
            final=_final_label(finals.get(key), headings, key[1]),
        ))
    return Disagreements(items=items, total=len(wanted), per_layer=dict(per_layer))


def _order(last):
    """The sort key of a disagreement key's fourth place: a second passage's id, or a nugget item (by answer)."""
    if isinstance(last, str):
        answer_id, _, nugget_id = last.partition(":")
        return (int(answer_id) if answer_id.isdigit() else 0, nugget_id)
    return (last or 0, "")


def _nugget_context(campaign, keys):
    """({(topic id, nugget id): nugget}, {answer id: the answer's text}) for nugget_support disagreement keys."""
    if not keys:
        return {}, {}
    from assessments.models import Answer  # noqa: PLC0415 (only nuggets campaigns need it)

    answer_ids = {int(nuggets.SUPPORT_ITEM.match(k[3]).group(1)) for k in keys}
    texts = {}
    for answer in Answer.objects.filter(pk__in=answer_ids).prefetch_related("sentences"):
        texts[answer.pk] = " ".join(s.text for s in sorted(answer.sentences.all(), key=lambda s: s.position))
    return _bank_nuggets(campaign, {k[1] for k in keys}), texts


def _bank_nuggets(campaign, topic_ids) -> dict[tuple[int, str], dict]:
    """{(topic id, nugget id): nugget} of the topics' banks in the campaign (topic_banks: adjudicated, else latest)."""
    found = {}
    for topic_id, bank in nuggets.topic_banks(getattr(campaign, "pk", campaign), topic_ids).items():
        for nugget in bank.value if isinstance(bank.value, list) else []:
            found[topic_id, nugget["id"]] = nugget
    return found


def disagreeing_keys(campaign, *, topic=None) -> set[tuple]:
    """{(layer, topic id, passage id, passage2 id or None)} of every item where the campaign's assessors disagree,
    as disagreements() finds them (all of them, not the first LIMIT), optionally of one topic (external id)."""
    return {key for key, _ in _disagreeing(campaign, topic=topic)[0]}


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
                                            Layer.NUGGETS),
    ).exclude(value=None).without_stale_transitions().values_list(
        "topic_id", "passage_id", "passage2_id", "assessor_id", "layer", "value", "adjudicated", "item")
    final_marks = defaultdict(lambda: [False, {}])
    support = []
    for topic_id, pid, pid2, assessor, kind, value, adjudicated, item in rows:
        if not adjudicated and assessor not in who[topic_id]:
            continue
        if kind == Layer.NUGGET_SUPPORT:
            support.append((topic_id, item, assessor, value, adjudicated))
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
    if support and layer in (None, "nugget_support"):
        _nugget_labels(campaign, support, labels, finals)
    wanted = [
        (key, given) for key, given in labels.items()
        if (layer is None or key[0] == layer) and len(given) >= 2 and len(set(given.values())) > 1
    ]
    return wanted, finals, names


def _nugget_labels(campaign, rows, labels, finals):
    """Add these nugget_support labels [(topic id, item, assessor, value, adjudicated)] of the nuggets that are in
    their topic's bank now, keyed ("nugget_support", topic id, None, item)."""
    bank = _bank_nuggets(campaign, {row[0] for row in rows})
    for topic_id, item, assessor, value, adjudicated in rows:
        found = nuggets.SUPPORT_ITEM.match(item)
        if found is None or (topic_id, found.group(2)) not in bank:
            continue
        key = ("nugget_support", topic_id, None, item)
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
    used = {n.get("id") for row in Judgement.objects.in_campaign(campaign).of_layer(Layer.NUGGETS).filter(topic=topic)
            .exclude(value=None).values_list("value", flat=True) if isinstance(row, list)
            for n in row if isinstance(n, dict)}
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


def _set_final_support(campaign, organiser, topic, item, label):
    """The organiser's final nugget_support label of `item` (see set_final_label)."""
    from assessments.models import Answer  # noqa: PLC0415 (only nuggets campaigns need it)

    found = nuggets.SUPPORT_ITEM.match(item or "")
    if found is None:
        raise AdjudicationInvalid("item", "expected <answer id>:<nugget id>")
    answer_id, nugget_id = found.groups()
    if not Answer.objects.filter(pk=int(answer_id), topic=topic, campaign_id=campaign.pk).exists():
        raise AdjudicationInvalid("item", "not an answer to this topic in this campaign")
    if (topic.pk, nugget_id) not in _bank_nuggets(campaign, [topic.pk]):
        raise AdjudicationInvalid("item", "not a nugget of this topic's bank")
    if label not in nuggets.SUPPORT_VALUES:
        raise AdjudicationInvalid("label", f"expected one of {', '.join(nuggets.SUPPORT_VALUES)}")
    if Judgement.objects.in_campaign(campaign).filter(
            assessor=organiser, topic=topic, layer=Layer.NUGGET_SUPPORT, item=item, adjudicated=False).exists():
        raise AdjudicationInvalid("assessor", "you judged this item as an assessor: another organiser must adjudicate it")
    try:
        return record_judgement(assessor=organiser, layer=Layer.NUGGET_SUPPORT, value=label, topic=topic, item=item,
                                source=JudgementChange.Source.ADJUDICATION, campaign_id=campaign.pk)
    except JudgementInvalid as exc:
        raise AdjudicationInvalid("label", str(exc)) from exc


def set_final_label(campaign, organiser, *, layer, topic, passage, passage2=None, label=None, facet=None,
                    relevance=None, item=""):
    """Store the organiser's final label of one item (source ADJUDICATION); returns the Recorded change(s).

    `layer` relevance/facet: `label` "removed", or a `facet` with its `relevance`; transition: `label` a
    transition (SAME/COHERENT/SWITCH value); plot_grade: `label` a whole number; nugget_support: `item`
    "<answer id>:<nugget id>" (a nugget of the topic's bank, an answer to the topic; no passage) and `label` support,
    partial_support or not_support. Raises AdjudicationInvalid.
    """
    if layer not in LAYERS:
        raise AdjudicationInvalid("layer", f"{layer!r} is not one of {', '.join(LAYERS)}")
    if topic.pk not in campaign_assessors(campaign):
        raise AdjudicationInvalid("topic", f"{topic.external_id!r} is not a topic of campaign {campaign.name!r}")
    if layer == "nugget_support":
        return [_set_final_support(campaign, organiser, topic, item, label)]
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
    record = dict(assessor=organiser, topic=topic, passage=passage, source=JudgementChange.Source.ADJUDICATION,
                  campaign_id=campaign.pk)
    try:
        if layer == "transition":
            if label not in Transition.offered():
                raise AdjudicationInvalid("label", f"expected one of {', '.join(Transition.offered())}")
            return [record_judgement(layer=Layer.TRANSITION, value=label, passage2=passage2, **record)]
        if layer in ("plot_grade", "grade"):
            grade = parse_id(str(label), minimum=0, maximum=GRADE_MAX)
            if grade is None:
                raise AdjudicationInvalid("label", f"a grade is a whole number from 0 to {GRADE_MAX}")
            return [record_judgement(layer=Layer(layer), value=grade, **record)]
        if label == "removed":
            return [record_judgement(layer=Layer.REMOVAL, value=True, **record)]
        if not facet:
            raise AdjudicationInvalid("facet", "choose a facet, or mark the passage removed")
        if relevance not in Relevance.offered():
            raise AdjudicationInvalid("relevance", f"expected one of {', '.join(Relevance.offered())}")
        recorded = [record_judgement(layer=Layer.FACET, value=[{"facet": facet, "relevance": relevance}], **record)]
        removal_key = Judgement.make_key(Layer.REMOVAL, topic.pk, passage.pk, campaign_id=campaign.pk)
        if Judgement.objects.filter(assessor=organiser, key=removal_key, value=True).exists():
            recorded.append(record_judgement(layer=Layer.REMOVAL, value=False, **record))
        return recorded
    except JudgementInvalid as exc:
        field, _, message = str(exc).partition(": ")
        raise AdjudicationInvalid(field.split("[")[0] if message else "label", message or str(exc)) from exc
