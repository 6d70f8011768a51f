"""A campaign's agreement report: every label layer's figures overall, per topic and per assessor pair.

The campaign's judgements are the labels (Judgement rows, never the adjudicated ones: those are the
organisers' final labels, nor the practice ones: qualification answers, Judgement.objects.without_practice) of the
assessors who have an assignment in the campaign, on the topics of the campaign's assignments, plus their labels
of the study items of the campaign's pools (forced choice, pair ratings). The figures come from
assessments.agreement; see its modules for each one.
"""

import numpy as np
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db.models import Count, Q, Sum

from annotation.models import Assignment, Campaign
from annotation.units import tasks
from assessments.agreement import judgements as layers_of
from assessments.agreement.ranking import ranking_stability
from assessments.agreement.spans import span_figures
from assessments.agreement.statistics import NOTES as FIGURE_NOTES
from assessments.agreement.statistics import figures
from assessments.evaluation import parse_measure
from assessments.models import Judgement, Layer, Run, RunEntry, StudyItem, Topic
from assessments.services.runs import run_labels

LAYERS = layers_of.LAYERS
RANKING_MEASURE = {"relevance": "nDCG@20", "plot_grade": "nDCG@10", "grade": "nDCG@10"}
CACHE_SECONDS = 600  # how long cached() keeps a figure at most
NOTES = [
    "Judgements: the labels of the campaign's assessors on its topics and study items; adjudicated labels and "
    "qualification answers are left out.",
    *FIGURE_NOTES,
    "relevance: MUST 3, SHOULD 2, CAN 1 (highest facet), removed 0; facet: the set of chosen facets as one label, "
    "removed passages left out; removal: removed or kept.",
    "plot_spans, evidence: mean pairwise character-level Jaccard of the marked spans (two empty marks agree), not α.",
    "Ranking stability: Kendall's τ-b between the runs' mean scores with each assessor's qrels, over the topics "
    "both judged (a topic a run lacks scores 0).",
]


class AgreementFailed(Exception):
    """A report that cannot be made as asked (unknown topic or layer); the message says which."""


def campaign_report(campaign: Campaign, *, topic: str | None = None, layers=None, per_topic: bool = True,
                    most: int | None = None) -> dict:
    """The agreement report of a campaign, JSON-serialisable (no NaN: a figure that cannot be computed is None).

    topic: only this topic (its external id); layers: only these layers (names of LAYERS); per_topic=False
    leaves each layer's "topics" list empty (an α per topic costs most of the time on a large campaign);
    most: each pair's confusion matrix keeps its `most` - 1 most frequent labels and sums the rest as "(other)"
    (statistics.pair_figures; the facet layer's labels are the sets of facets chosen: thousands on a large
    campaign), None: the whole domain.
    Shape:
        {"campaign": name, "task": task, "topic": external id or None,
         "layers": [{"layer": "relevance", "level": "ordinal", "units": n, "assessors": m,
                     "alpha": x|None, "fleiss_kappa": x|None, "fleiss_units": n, "fleiss_raters": k,
                     "all_agree": share|None, "none_agree": share|None, "reasons": {figure: why it is None},
                     "pairs": [{"a": username, "b": username, "units": n, "cohen_kappa": x|None,
                                "weighted_kappa": x|None, "confusion": {"labels": [...], "matrix": [[...]]},
                                "reasons": {...}}],
                     "topics": [{"topic": external id, ...the same figures without pairs}]}],
         "ranking_stability": {"layer": "relevance"|"plot_grade"|None, "measure": "nDCG@20", "runs": n,
                               "pairs": [{"a", "b", "topics", "runs", "tau", "p_value", "reasons"}], "reasons"},
         "notes": [...]}
    The span layers (plot_spans, evidence: level "spans") have the same keys, α, κ and the shares None (reasons say why), plus
    "span_jaccard" (its pairs too, with confusion None). The rating layer comes twice, at levels ordinal and
    interval. Layers without labels are left out. AgreementFailed for an unknown topic or layer.
    """
    unknown = sorted(set(layers or ()) - set(LAYERS))
    if unknown:
        raise AgreementFailed(f"layer: {unknown[0]!r} is not one of {', '.join(LAYERS)}")
    judgements, topic_names = campaign_judgements(campaign, topic)
    assessor_ids = Assignment.objects.filter(campaign=campaign).values("assessor_id")
    usernames = dict(get_user_model().objects.filter(pk__in=assessor_ids).values_list("pk", "username"))
    present = layers_of.layer_present(judgements, [layer for layer in LAYERS if not layers or layer in layers])
    report_layers, graded = [], {}
    for layer in LAYERS:
        if layer not in present:
            continue
        if layer in layers_of.SPAN_LAYERS:
            marks = layers_of.span_marks(judgements, usernames, layer)
            report_layers.append(_spans_entry(marks, topic_names, per_topic, layer=layer))
            continue
        for ratings in layers_of.layer_ratings(judgements, layer, usernames):
            if layer in RANKING_MEASURE:
                graded[layer] = ratings
            report_layers.append(_entry(layer, ratings, topic_names, per_topic, most))
    return {
        "campaign": campaign.name,
        "task": campaign.task,
        "topic": topic,
        "layers": report_layers,
        "ranking_stability": _stability(campaign, graded, topic_names),
        "notes": list(NOTES),
    }


def campaign_judgements(campaign, topic=None):
    """(Judgement queryset, {topic id: external id}) of the campaign (module docstring), or of one of its topics."""
    rows, topics = _scope(campaign, topic)
    return rows, dict(topics.values_list("pk", "external_id"))


def report_state(campaign) -> str:
    """A text that changes whenever the judgements or the assignments campaign_report reads change (two queries).

    The judgements: how many, and the sum of their latest change ids (a new change of any of them has a
    larger id than every change before it, so the sum grows, whatever order concurrent saves commit in).
    The assignments: how many, and the sums of their ids, assessors, topics and runs. Not in it: usernames,
    runs added to the pools, entries added to the runs (ranking stability); callers that cache the report
    keep it a bounded time (cached()). A nuggets campaign's banks count too, whoever saved them (an import, an
    adjudication): nugget_support's units are the nuggets of the topics' banks.
    """
    rows, _ = _scope(campaign)
    labels = rows.aggregate(n=Count("id"), changes=Sum("latest_change_id"))
    units = Assignment.objects.filter(campaign=campaign).order_by().aggregate(
        n=Count("id"), ids=Sum("id"), assessors=Sum("assessor_id"), topics=Sum("topic_id"), runs=Sum("run_id"))
    banks = {}
    if tasks.of(campaign).answers:
        banks = Judgement.objects.in_campaign(campaign).filter(layer=Layer.NUGGETS).order_by().aggregate(
            n=Count("id"), changes=Sum("latest_change_id"))
    return ":".join(str(x) for x in (*labels.values(), *units.values(), *banks.values()))


def cached(campaign, name, compute):
    """compute() as kept in the shared cache under `name` and the campaign's report_state, for CACHE_SECONDS at
    most (what report_state does not follow shows within that time); computed and kept when it is not there.

    A view that shows agreement reads it once per change of the campaign's labels, not once per view; it
    writes the cache only, never the database.
    """
    key = f"agreement:{name}:{campaign.pk}:{report_state(campaign)}"
    kept = cache.get(key)
    if kept is None:
        kept = (compute(),)  # a tuple: None is a value too
        cache.set(key, kept, CACHE_SECONDS)
    return kept[0]


def _scope(campaign, topic=None):
    assignments = Assignment.objects.filter(campaign=campaign)
    topics = Topic.objects.filter(pk__in=assignments.values("topic_id"))
    items = StudyItem.objects.filter(pool__in=campaign.pools.all()).values("key")
    if topic is not None:
        topics = topics.filter(external_id=topic)
        if not topics.exists():
            raise AgreementFailed(f"topic: campaign {campaign.name!r} has no assigned topic {topic!r}")
    scope = Q(topic__in=topics.values("pk"))
    if topic is None:
        scope |= Q(topic__isnull=True, item__in=items)
    rows = Judgement.objects.in_campaign(campaign).filter(
        scope, adjudicated=False, assessor__in=assignments.values("assessor_id"),
    ).without_practice(campaign).order_by()
    return rows, topics


def _entry(layer, ratings, topic_names, per_topic=True, most=None):
    entry = {"layer": layer, "level": ratings.level, **figures(ratings, most=most)}
    entry["topics"] = []
    if not per_topic or ratings.unit_groups is None or not ratings.unit_count:
        return entry
    groups, inverse = np.unique(ratings.unit_groups, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(groups) + 1))
    for i, group in enumerate(groups.tolist()):
        part = ratings.subset(order[bounds[i]:bounds[i + 1]])
        entry["topics"].append({"topic": topic_names.get(group), **figures(part, pairs=False)})
    entry["topics"].sort(key=lambda figure: str(figure["topic"]))
    return entry


SPAN_NULLS = {"alpha": None, "fleiss_kappa": None, "fleiss_units": 0, "fleiss_raters": 0, "all_agree": None,
              "none_agree": None}
NOT_CATEGORIES = "spans are compared by their overlap (span_jaccard), not as categories"


def _spans_entry(marks, topic_names, per_topic=True, layer="plot_spans"):
    """A span layer (plot_spans, evidence) in the shape of the others: the category figures are None, span_jaccard
    says it."""
    figure = span_figures(marks)
    figure["reasons"].update(dict.fromkeys(SPAN_NULLS, NOT_CATEGORIES))
    for pair in figure["pairs"]:
        pair.update(cohen_kappa=None, weighted_kappa=None, confusion=None,
                    reasons={"cohen_kappa": NOT_CATEGORIES, "weighted_kappa": NOT_CATEGORIES})
    entry = {"layer": layer, "level": "spans", **SPAN_NULLS, **figure, "topics": []}
    if not per_topic:
        return entry
    by_topic = {}
    for unit, marked in marks.items():
        by_topic.setdefault(unit[0], {})[unit] = marked
    for topic_id, topic_marks in sorted(by_topic.items(), key=lambda item: str(topic_names.get(item[0]))):
        figure = span_figures(topic_marks)
        del figure["pairs"]
        figure["reasons"].update(dict.fromkeys(SPAN_NULLS, NOT_CATEGORIES))
        entry["topics"].append({"topic": topic_names.get(topic_id), **SPAN_NULLS, **figure})
    return entry


def _stability(campaign, graded, topic_names):
    layer = next((name for name in ("relevance", "plot_grade", "grade") if name in graded), None)
    if layer is None:
        return {"layer": None, "measure": None, "runs": 0, "pairs": [],
                "reasons": {"tau": "no relevance or plot grades to make qrels from"}}
    measure = parse_measure(RANKING_MEASURE[layer])
    run_ids = set(campaign.pools.values_list("runs", flat=True)) | set(
        Assignment.objects.filter(campaign=campaign, run__isnull=False).values_list("run_id", flat=True))
    run_ids.discard(None)
    entries = RunEntry.objects.filter(run_id__in=run_ids, topic_id__in=list(topic_names)).order_by("run_id", "rank")
    labels = run_labels(Run.objects.filter(pk__in=run_ids).select_related("owner"))  # teams may share a name
    runs = {}
    for run_id, topic_id, passage_id in entries.values_list("run_id", "topic_id", "passage_id").iterator(10_000):
        runs.setdefault(labels[run_id], {}).setdefault(topic_id, []).append(passage_id)
    ratings = graded[layer]
    if runs:
        qrels = layers_of.graded_qrels(ratings)
    else:  # nothing to score: only which topics each assessor judged counts
        qrels = {name: dict.fromkeys(np.unique(ratings.unit_groups[~np.isnan(ratings.codes[a])]).tolist(), {})
                 for a, name in enumerate(ratings.assessors)}
    return {"layer": layer, **ranking_stability(qrels, runs, measure)}
