"""THE campaign tasks (Campaign.Task): what each task makes and takes, reached by `tasks.of(campaign)`.

A task says which work units its campaigns are made of (and so, through Assignment.kind_of, which unit kinds:
annotation.units), which topics it judges and which file brings them at creation, which data its campaigns take,
which runs its participants upload, whether it takes generated answers and nugget banks, whether its units grade
pooled candidates, the stages its units are assigned in, the grades its qualification compares, which of its units
wait for a nugget bank, whether its pools make study items, its own settings and its dashboard's label charts. Its
callers (the assignment, campaign creation, submissions, qualification, triage, the nuggets service, the settings
service and forms, the console's pages, the reports and the API) ask it and never name a task.
"""

import hashlib
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable

from annotation.models import Campaign, DataImport, Track
from assessments.labels import DEFAULT_PLOT_SCALE, OUTLINE_GRADES
from assessments.models import Answer, PoolCandidate, RunEntry, Topic

# a nuggets campaign's units: its answers' nugget support, its topics' banks, or (optional) its answers' citations
NUGGET_STAGES = ("support", "create", "citations")


@dataclass(frozen=True)
class Unit:
    """One unit of work: a topic and a run's article (outline) or answer (nuggets), a topic and a pool's candidates
    (plot, ad hoc), or a topic alone (its nugget bank to write)."""

    topic_id: int
    run_id: int | None = None
    pool_id: int | None = None


@dataclass(frozen=True)
class CampaignTask:
    """Everything about one task of campaigns."""

    task: str  # the Campaign.Task value
    name: str  # what a message calls its campaigns ("ad hoc campaigns")
    kinds: tuple  # the unit kinds (annotation.units) its units may be: the model's Assignment.kind_of picks one
    topic_kind: str  # the Topic.Kind of its topics
    topic_file: str | None  # the DataImport.Kind of a topics file given at creation; None: topics of the collection
    article_runs: bool  # its runs are CAR Y3 articles (JSON lines), each judged whole; else TREC runs (six columns)
    units: Callable  # (campaign, pools) -> {topic id: [Unit]}: its work units of those pools (a stable order)
    no_units: Callable  # (campaign) -> (field, message): what to do when it has no work units
    example_scale: Callable  # (campaign) -> {grade: name}: the labels its qualification compares ({}: none)
    data: tuple  # the kinds of data import (DataImport.Kind) its campaigns take, most useful first
    pooled: bool = False  # its units grade pooled candidates: pre-labels, a judging order, triage apply
    stages: tuple = ()  # the stages its units are assigned in (a nuggets campaign's nugget_stage); () for none
    answers: bool = False  # it judges generated answers: it takes answers and nugget banks (TREC RAG)
    waiting: tuple = ()  # the unit kinds of its units that wait for their topic's nugget bank (nugget_support.waits)
    labels: str = ""  # the data browser's label filter menu (annotation.services.browser.LABEL_MENUS' key)
    charts: tuple = ()  # the dashboard's label-distribution charts of the layers it uses (annotation.reports.dashboard)
    studies: bool = False  # its pools make study items, for its choice and pair modes' units (assessments.studies)
    settings: tuple = ()  # its own settings (annotation.services.campaign_settings' keys, beyond every campaign's and
    # the pooled ones): the console's forms show only these


def blind_rank(campaign, topic_id, run_id) -> str:
    """Where a run's unit of a topic goes among the topic's units: a hash of (campaign, topic, run), stable, and
    another order in every topic. In run id order the first unit of every topic was one run's, so an assessor's queue
    told them which units of different topics were one system's (they judge blind)."""
    return hashlib.sha256(f"unit-order:{campaign.pk}:{topic_id}:{run_id}".encode()).hexdigest()


def nugget_stage(campaign) -> str:
    """Which units a nuggets campaign's assignment makes (settings["nugget_stage"]; support unless it says another
    of NUGGET_STAGES)."""
    settings_ = campaign.settings if isinstance(campaign.settings, dict) else {}
    return settings_.get("nugget_stage") if settings_.get("nugget_stage") in NUGGET_STAGES else "support"


def _run_units(campaign, rows) -> dict:
    """Units of (topic id, run id) rows, each topic's in an order of their own (blind_rank)."""
    units = defaultdict(list)
    for topic_id, run_id in sorted(rows, key=lambda tr: (tr[0], blind_rank(campaign, *tr))):
        units[topic_id].append(Unit(topic_id, run_id=run_id))
    return dict(units)


def _article_units(campaign, pools) -> dict:
    """A (topic, run) article of the pools' runs and topics."""
    seen = set()
    for pool in pools:
        seen.update(RunEntry.objects.filter(run__in=pool.runs.all(), topic__in=pool.topics.all())
                    .values_list("topic_id", "run_id").distinct())
    return _run_units(campaign, seen)


def _candidate_units(campaign, pools) -> dict:
    """A (topic, pool) batch of the pool's candidates of the topic, by pool id."""
    units = defaultdict(list)
    for topic_id, pool_id in (PoolCandidate.objects.filter(pool__in=pools).values_list("topic_id", "pool_id")
                              .distinct().order_by("topic_id", "pool_id")):
        units[topic_id].append(Unit(topic_id, pool_id=pool_id))
    return dict(units)


def _nugget_units(campaign, pools) -> dict:
    """The stage's units: a topic's bank to write (create), else an answer (support; citations: one that cites)."""
    if nugget_stage(campaign) == "create":
        track = Track.objects.filter(campaign=campaign).first()
        return {topic_id: [Unit(topic_id)]
                for topic_id in (sorted(track.topics.values_list("pk", flat=True)) if track else ())}
    rows = Answer.objects.filter(campaign_id=campaign.pk)
    if nugget_stage(campaign) == "citations":
        rows = rows.filter(sentences__citations__isnull=False).distinct()
    return _run_units(campaign, rows.values_list("topic_id", "run_id"))


def _add_a_pool(campaign) -> tuple[str, str]:
    return "pool", f"campaign {campaign.name!r} has no work units: add a pool"


def _no_answers(campaign) -> tuple[str, str]:
    return "campaign", (f"campaign {campaign.name!r} has no topics" if nugget_stage(campaign) == "create"
                        else f"campaign {campaign.name!r} has no answers: import or upload some")


def _plot_scale(campaign) -> dict:
    settings = campaign.settings if isinstance(campaign.settings, dict) else {}
    return {v: name for v, name in settings.get("plot_scale", DEFAULT_PLOT_SCALE)}


def _adhoc_scale(campaign) -> dict:
    from annotation.services.adhoc import grade_scale

    return {v: name for v, name, _ in grade_scale(campaign)}


Data = DataImport.Kind
TASKS = {task.task: task for task in (
    CampaignTask(Campaign.Task.OUTLINE, "outline", ("outline",), Topic.Kind.OUTLINE, Data.CAR_OUTLINES, True,
                 _article_units, _add_a_pool, lambda campaign: dict(OUTLINE_GRADES),
                 data=(Data.CAR_OUTLINES, Data.CAR_RUNS, Data.QRELS, Data.CAR_ASSESSMENTS),
                 labels="outline", charts=("grades", "transitions"), settings=("worked_examples",)),
    CampaignTask(Campaign.Task.PLOT, "plot", ("plot_labels", "choice", "pair"), Topic.Kind.PLOT, Data.PLOT_QUERIES,
                 False, _candidate_units, _add_a_pool, _plot_scale, data=(Data.PLOT_QUERIES, Data.TREC_RUN, Data.QRELS),
                 pooled=True, studies=True, labels="plot", charts=("plot grades",),
                 settings=("plot_scale", "context_sentences", "worked_examples")),
    CampaignTask(Campaign.Task.ADHOC, "ad hoc", ("adhoc", "choice", "pair"), Topic.Kind.ADHOC, None, False,
                 _candidate_units, _add_a_pool, _adhoc_scale, data=(Data.TOPICS, Data.DOCUMENTS, Data.TREC_RUN, Data.QRELS),
                 pooled=True, labels="adhoc", charts=("ad hoc grades",),
                 settings=("grade_scale", "adhoc_view", "evidence", "worked_examples", "topic_guidelines")),
    CampaignTask(Campaign.Task.NUGGETS, "nuggets", ("nugget_support", "nugget_creation", "citation_support"),
                 Topic.Kind.ADHOC, None, False, _nugget_units, _no_answers,
                 lambda campaign: {}, data=(Data.TOPICS, Data.DOCUMENTS, Data.ANSWERS, Data.NUGGETS,
                                            Data.NUGGET_ASSIGNMENTS, Data.TREC_RUN, Data.QRELS),
                 stages=NUGGET_STAGES, answers=True, waiting=("nugget_support",), labels="nuggets",
                 settings=("nugget_suggestions", "topic_guidelines")),
)}


def of(campaign) -> CampaignTask:
    """The task of `campaign`."""
    return TASKS[campaign.task]


def settings_keys() -> set:
    """Every task's own settings (CampaignTask.settings): a campaign takes those of its task only."""
    return {key for task in TASKS.values() for key in task.settings}


def get(task: str) -> CampaignTask:
    """The task named `task` (a Campaign.Task value); KeyError for none."""
    return TASKS[task]
