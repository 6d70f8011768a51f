"""A campaign's judging order: which candidate of a topic each assessor of a plot-labels campaign judges next, and
when a topic stops (issue 17). The orders themselves are assessments.ordering's, the code
`manage.py simulate_judging` replays: one home.

The campaign's settings (checked by `settings_of`; the console's form writes them):

- ``judging_order``: ``shuffled`` (default: every candidate on the page, in the assessor's own shuffled order,
  as before), or a served order: ``depth`` (the pool's order), ``mtf`` (Move-to-Front), ``maxmean``
  (Losada et al.'s bandit), ``active`` (continuous active learning on rank features; with ``machine_source``
  set, that source's scores, e.g. the campaign's cross-topic annotator, are its prior) or ``machine`` (by the
  scores of the machine label source ``machine_source``; the scores order the queue but are never shown, and
  never counted as judgements) or ``hybrid`` (issue 41: people judge what the hybrid order of
  assessments.services.hybrid picks from ``machine_source``'s scores, calibrated on the human labels so far and
  refitted on every label, until ``hybrid_budget`` is spent: a share of the pool, e.g. 0.1, or a count, e.g. 500,
  over all the pool's topics together; the rule and the computation are assessments.services.hybrid_pool's);
- ``target_recall`` (0-1) and ``judging_budget`` (judgements per topic): a topic stops when its estimated recall,
  taken at the interval's pessimistic end, reaches the target, or at the budget (ordering.decide_stop);
- ``judging_min_rel``: a plot grade at or above it counts as relevant (default 1);
- ``topic_stops``: the organiser's word on a topic, {topic external id: "stop" | "go"}, over the estimate's.

How the order is served. Every human plot grade of this campaign on a topic (all assessors, cleared ones left out,
adjudicated ones, practice labels and machine labels never) makes the topic's *sequence*: its candidates in the order
they were first graded; a candidate's grade is the upper median of its assessors' grades. The order is replayed over
that sequence (ordering.replay) and gives the next candidate nobody has graded. An assessor is served the sequence's
candidates they have not graded yet, in sequence order (with overlap they follow the others), then the order's next
one, unless the topic is stopped. A qualification unit is served no order: its page shows every candidate, as its
score counts every gold candidate of the unit (annotation.services.qualification), and its labels, practice labels
(Judgement.objects.without_practice), are no part of the topic's sequence, estimate or stop. Everything is computed on
read: a GET writes nothing, and the one thing stored is each grade, by the save path.

A stored pool never changes once built, so each process keeps the last topics' TopicPool (with the active
model's features and kept rankings): a page asks the database for the topic's grades only.
"""

import threading
from collections import OrderedDict, defaultdict
from dataclasses import dataclass

from annotation.services.errors import ServiceError
from assessments.models import CandidateSource, MachineLabelSource, PoolCandidate, RunEntry
from assessments import ordering
from assessments.services import hybrid_pool

SHUFFLED = "shuffled"
HYBRID = hybrid_pool.HYBRID
ORDERS = (SHUFFLED, *ordering.LIVE_ORDERS, HYBRID)
ORDER_LABELS = {
    SHUFFLED: "Shuffled per assessor, every candidate on the page (no served order)",
    "depth": "Depth: the pool's order",
    "mtf": "Move-to-Front (Cormack et al.)",
    "maxmean": "MaxMean bandit (Losada et al.; TREC 2017 Common Core)",
    "hedge": "Hedge (Aslam et al.): runs weighted by how well they ranked the candidates judged so far",
    "active": "Continuous active learning (a model trained on the judgements so far)",
    "active-deep": "Continuous active learning on the runs' full rankings (their ranks below the pool's depth too)",
    "machine": "Machine scores: by a machine label source's scores (never shown to assessors)",
    HYBRID: "Hybrid under a budget: people judge where a calibrated machine source is unsure and it matters; "
            "the machine fills the rest",
}
STOP, GO = "stop", "go"
PRIOR_ORDERS = ("machine", "active", "active-deep")  # orders that read machine_source's scores: the order, or the prior
SOURCE_ORDERS = (*PRIOR_ORDERS, HYBRID)  # orders whose machine_source is checked where it is read
POOLS_KEPT = 64


class OrderSettingsInvalid(ServiceError):
    """A judging-order setting that cannot be used; `field` names it."""


@dataclass(frozen=True)
class OrderSettings:
    order: str = SHUFFLED
    target_recall: float | None = None
    budget: int | None = None
    min_rel: int = 1
    machine_source: int | None = None
    stops: dict = None
    hybrid: hybrid_pool.HybridSettings | None = None  # the hybrid order's source, budget and min_rel

    @property
    def served(self) -> bool:
        """Whether the queue serves an order (else the page shows every candidate, shuffled)."""
        return self.order != SHUFFLED


def settings_of(campaign) -> OrderSettings:
    """The campaign's judging-order settings, checked (OrderSettingsInvalid names the setting)."""
    raw = campaign.settings if campaign is not None and isinstance(campaign.settings, dict) else {}
    settings = check_settings(raw)
    if (settings.machine_source is not None and settings.order in SOURCE_ORDERS
            and not MachineLabelSource.objects.usable_by(campaign.pk).filter(pk=settings.machine_source).exists()):
        # checked where it is read too: a value stored before the check (or typed into the admin) is never used
        raise OrderSettingsInvalid("machine_source", f"source {settings.machine_source} is not one this campaign "
                                                     f"may use (its own, or one made for no campaign)")
    return settings


def check_settings(raw: dict) -> OrderSettings:
    order = raw.get("judging_order", SHUFFLED) or SHUFFLED
    if order not in ORDERS:
        raise OrderSettingsInvalid("judging_order", f"{order!r} is not one of {', '.join(ORDERS)}")
    target = raw.get("target_recall")
    if target is not None and (isinstance(target, bool) or not isinstance(target, (int, float)) or not 0 < target <= 1):
        raise OrderSettingsInvalid("target_recall", "a share above 0 and at most 1 (e.g. 0.9), or empty")
    budget = raw.get("judging_budget")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
        raise OrderSettingsInvalid("judging_budget", "a whole number of judgements per topic, 1 or more, or empty")
    min_rel = raw.get("judging_min_rel", 1)
    if isinstance(min_rel, bool) or not isinstance(min_rel, int) or min_rel < 1:
        raise OrderSettingsInvalid("judging_min_rel", "a whole grade, 1 or more")
    source = raw.get("machine_source")
    if order == "machine" and (isinstance(source, bool) or not isinstance(source, int)):
        raise OrderSettingsInvalid("machine_source", "the machine order needs a machine label source (its id)")
    stops = raw.get("topic_stops") or {}
    if not isinstance(stops, dict) or any(v not in (STOP, GO) for v in stops.values()):
        raise OrderSettingsInvalid("topic_stops", 'expected {topic: "stop" or "go"}')
    try:
        hybrid = hybrid_pool.settings_from(raw)
        if hybrid is None and raw.get("hybrid_budget") is not None:
            hybrid_pool.hybrid.parse_budget(raw["hybrid_budget"])
    except hybrid_pool.HybridSettingInvalid as exc:
        raise OrderSettingsInvalid(exc.field, exc.message) from None
    except hybrid_pool.hybrid.HybridError as exc:
        raise OrderSettingsInvalid("hybrid_budget", str(exc)) from None
    return OrderSettings(order, None if target is None else float(target), budget, min_rel,
                         source if isinstance(source, int) and not isinstance(source, bool) else None, dict(stops),
                         hybrid)


def order_settings(*, order=SHUFFLED, target_recall=None, budget=None, min_rel=1, machine_source=None,
                   campaign_id=None, hybrid_budget=None, collections=None) -> dict:
    """The settings dict of a judging order (what the console's forms, the API and the admin store), checked: the one
    rule of every way a campaign's order is set. `machine_source` is also the source of the pre-labels the campaign's
    assessors may be shown (one setting), so it is refused unless it is the campaign's (`campaign_id`; None: a
    campaign not made yet) or made for no campaign, whatever the order. The hybrid order also needs `hybrid_budget`
    (a share of the pool or a count: hybrid.parse_budget; stored as the number) and a source that labels passages of
    one of `collections` (the campaign's collections' names; None: not checked)."""
    raw = {"judging_order": order or SHUFFLED, "target_recall": target_recall, "judging_budget": budget,
           "judging_min_rel": min_rel}
    if hybrid_budget not in (None, ""):
        try:
            raw["hybrid_budget"] = hybrid_pool.hybrid.parse_budget(hybrid_budget)
        except hybrid_pool.hybrid.HybridError as exc:
            raise OrderSettingsInvalid("hybrid_budget", str(exc)) from None
    if raw["judging_order"] == HYBRID and machine_source is not None:
        try:
            hybrid_pool.check_source(machine_source, campaign_id, collections)
        except hybrid_pool.HybridSettingInvalid as exc:
            raise OrderSettingsInvalid(exc.field, exc.message) from None
    if machine_source is not None:
        raw["machine_source"] = machine_source
        found = MachineLabelSource.objects.filter(pk=machine_source).values_list("campaign_id", flat=True)
        if not found.exists():
            raise OrderSettingsInvalid("machine_source", f"no machine label source {machine_source}")
        if not MachineLabelSource.objects.usable_by(campaign_id).filter(pk=machine_source).exists():
            raise OrderSettingsInvalid("machine_source", f"source {machine_source} is another campaign's")
    check_settings(raw)
    return raw


# --- a topic's pool, kept per process -----------------------------------------------------------------------

_pools: OrderedDict = OrderedDict()
_lock = threading.Lock()


def topic_pool(pool, topic_id, machine_source=None, deep=False) -> ordering.TopicPool:
    """The stored pool's candidates of one topic (passage ids in the pool's order, each run's rank) as a TopicPool;
    with `machine_source`, that source's scores as the prior (assessments.services.machine.pool_scores); with
    `deep`, each run's ranks of the candidates below the pool's depth too (its RunEntry rows, for active-deep)."""
    key = (pool.pk, pool.built_at, topic_id, machine_source, deep)
    with _lock:
        found = _pools.get(key)
        if found is not None:
            _pools.move_to_end(key)
            return found
    keys = list(PoolCandidate.objects.filter(pool_id=pool.pk, topic_id=topic_id).order_by("rank")
                .values_list("passage_id", flat=True))
    rankings = defaultdict(list)
    for run_id, passage_id in (CandidateSource.objects.filter(candidate__pool_id=pool.pk, candidate__topic_id=topic_id)
                               .order_by("run_id", "rank").values_list("run_id", "candidate__passage_id")):
        rankings[run_id].append(passage_id)
    if not rankings:  # a pool without provenance (e.g. made by hand): one ranking, the pool's order
        rankings["pool"] = keys
    prior = None
    if machine_source is not None:  # the one reading of a source's scores on a pool (issue 18's service)
        from assessments.services.machine import pool_scores

        prior = {pid: float(score) for (_, pid), score in pool_scores(machine_source, pool.pk, [topic_id]).items()}
    below = None
    if deep and "pool" not in rankings:
        below = defaultdict(dict)
        for run_id, passage_id, rank in (RunEntry.objects.filter(run_id__in=list(rankings), topic_id=topic_id,
                                                                 passage_id__in=keys, rank__gt=pool.depth)
                                         .values_list("run_id", "passage_id", "rank")):
            below[run_id].setdefault(passage_id, rank)
    built = ordering.TopicPool.from_rankings(dict(rankings), None, order=keys, prior=prior, deep=below)
    with _lock:
        _pools[key] = built
        while len(_pools) > POOLS_KEPT:
            _pools.popitem(last=False)
    return built


def topic_grades(campaign_id, topic_id, passage_ids=None) -> tuple[dict, dict]:
    """The campaign's human plot grades of a topic: ({passage: grade} in the order first graded, the grade the upper
    median of its assessors'), {assessor id: set of passages they graded}. Practice labels are none of them (the
    rule: hybrid_pool.campaign_grades, which the hybrid order reads too)."""
    grades, by = hybrid_pool.campaign_grades(campaign_id, [topic_id], passage_ids)
    return ({pid: grade for (_, pid), grade in grades.items()},
            {assessor: {pid for _, pid in keys} for assessor, keys in by.items()})


# --- the state of a topic --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicState:
    """One topic of a pool in a campaign: the sequence graded so far, the order's next, the estimate and the stop."""

    settings: OrderSettings
    pool: ordering.TopicPool
    sequence: list  # passage ids in the order first graded
    grades: dict  # {passage: grade}
    graded_by: dict  # {assessor id: set of passages}
    following: int | None  # the order's next candidate nobody has graded
    estimate: ordering.Estimate
    decision: ordering.Decision
    override: str | None

    @property
    def stopped(self) -> bool:
        if self.override == STOP:
            return True
        if self.override == GO:
            return self.estimate.unjudged == 0
        return self.decision.stop

    @property
    def why(self) -> str:
        if self.override == STOP:
            return "stopped by the organiser"
        if self.override == GO:
            return "kept going by the organiser" + ("" if self.estimate.unjudged else "; every candidate is judged")
        return self.decision.reason

    def found_curve(self) -> list[int]:
        """Relevant found after each judgement of the sequence."""
        found, out = 0, []
        for pid in self.sequence:
            grade = self.grades[pid]
            found += grade is not None and grade >= self.settings.min_rel
            out.append(found)
        return out

    def serve(self, assessor_id) -> tuple[list, int | None]:
        """(the sequence's candidates this assessor graded, in sequence order; the candidate to serve them now)."""
        mine = self.graded_by.get(assessor_id, set())
        done = [pid for pid in self.sequence if pid in mine]
        behind = next((pid for pid in self.sequence if pid not in mine), None)
        if behind is not None:
            return done, behind
        return done, None if self.stopped else self.following


def topic_state(campaign, pool, topic_id, settings: OrderSettings | None = None, topic_external_id=None, *,
                estimate: bool = True) -> TopicState:
    """The state of one topic now (reading only). Without `estimate` the model of the stopping estimate is fitted
    only when a target recall needs it (the queue's case); counts are always there."""
    settings = settings or settings_of(campaign)
    tpool = topic_pool(pool, topic_id, settings.machine_source if settings.order in PRIOR_ORDERS else None,
                       deep=settings.order == "active-deep")
    grades, by = topic_grades(campaign.pk, topic_id, None)
    grades = {pid: g for pid, g in grades.items() if pid in tpool.index}
    by = {a: {pid for pid in pids if pid in tpool.index} for a, pids in by.items()}
    name = settings.order if settings.served and settings.order != HYBRID else "depth"
    with ordering.single_threaded():
        following_i = ordering.replay(ordering.make_order(name, tpool, settings.min_rel), grades).next()
        following = None if following_i is None else tpool.keys[following_i]
        if estimate or settings.target_recall is not None:
            figures = ordering.estimate_remaining(tpool, grades, settings.min_rel)
        else:
            found = sum(1 for g in grades.values() if g is not None and g >= settings.min_rel)
            figures = ordering.Estimate(len(grades), len(tpool) - len(grades), found, None, reason="not asked for")
    decision = ordering.decide_stop(figures, target_recall=settings.target_recall, budget=settings.budget)
    if settings.order == HYBRID:
        following, hybrid_decision = hybrid_next(campaign, pool, topic_id, settings)
        decision = decision if decision.stop else hybrid_decision
    if topic_external_id is None:
        from assessments.models import Topic

        topic_external_id = Topic.objects.filter(pk=topic_id).values_list("external_id", flat=True).first()
    return TopicState(settings, tpool, list(grades), grades, by, following, figures, decision,
                      settings.stops.get(topic_external_id))


def hybrid_next(campaign, pool, topic_id, settings: OrderSettings) -> tuple[int | None, ordering.Decision]:
    """The hybrid order's next candidate of this topic (None: none now) and whether the topic waits. The words are
    the assessor's too: they name neither the order nor the machine."""
    state = hybrid_pool.pool_plan(campaign.pk, pool, settings.hybrid)
    plan = state.plan
    if not plan.left:
        return None, ordering.Decision(True, f"the campaign's budget of {plan.budget:,} judgements on this pool "
                                             "is spent")
    following = state.next_in_topic(topic_id)
    if following is None:
        return None, ordering.Decision(True, "other topics come first for now; this one may be served again later")
    return following, ordering.Decision(False, f"{plan.left:,} of the pool's budget of {plan.budget:,} judgements "
                                               "left")


def hybrid_budgets(campaign) -> list[dict]:
    """A hybrid campaign's budget on each of its pools, for the dashboard: [{"pool", "budget", "spent", "left",
    "outside", "sample", "sample_judged", "candidates"}] ("spent" never above "budget"; "outside": candidates first
    labelled once the budget was spent, stored and counted apart: hybrid_pool.PoolPlan.outside); [] where the order
    is not hybrid. OrderSettingsInvalid when wrong."""
    settings = settings_of(campaign)
    if settings.order != HYBRID:
        return []
    out = []
    for pool in hybrid_pool.campaign_pools(campaign.pk):
        state = hybrid_pool.pool_plan(campaign.pk, pool, settings.hybrid)
        out.append({"pool": pool.name, "budget": state.plan.budget, "spent": state.spent, "left": state.plan.left,
                    "outside": state.outside, "sample": int(state.plan.sample.sum()),
                    "sample_judged": state.sample_judged, "candidates": len(state.plan.sample)})
    return out


def served_candidates(assignment) -> tuple[list, TopicState] | None:
    """For a plot-labels unit of a campaign with a served order: the passage ids its page shows (those the assessor
    graded, in the sequence's order, then the one to judge now, if any) and the topic's state; None when the
    campaign shows every candidate (shuffled), and for a qualification unit (the module's docstring)."""
    campaign = assignment.campaign if assignment.campaign_id else None
    settings = settings_of(campaign)
    if not settings.served or assignment.pool_id is None or assignment.qualification:
        return None
    state = topic_state(campaign, assignment.pool, assignment.topic_id, settings, assignment.topic.external_id,
                        estimate=False)
    done, now = state.serve(assignment.assessor_id)
    return done + ([now] if now is not None else []), state


def nothing_to_judge(assignment) -> str | None:
    """Why the unit's page has no candidate for its assessor to judge now (the page's words, TopicState.why: the
    topic is stopped, a hybrid topic waits for other topics or its pool's budget is spent), or None when it has one,
    or serves no order (shuffled, a qualification unit): the page's own test (candidates.served_state's "waiting":
    the last candidate served is not graded by them), for the queue's next unit (annotation.services.queue, which
    asks only of the kinds that grade candidates, units.grading_kinds: this module is below the kinds package), and
    the same stop as the page's (TopicState.stopped, every order). Reading only; OrderSettingsInvalid or
    ordering.OrderError when the campaign's settings are wrong (the page's 409)."""
    served = served_candidates(assignment)
    if served is None:
        return None
    ids, state = served
    if ids and ids[-1] not in state.graded_by.get(assignment.assessor_id, set()):
        return None
    return state.why if state.stopped else "every candidate served so far is judged"


def set_topic_stop(campaign, topic_external_id, word) -> None:
    """The organiser's word on a topic: "stop", "go", or "" (back to the estimate's). Stored in the settings."""
    if word not in (STOP, GO, ""):
        raise OrderSettingsInvalid("stop", 'expected "stop", "go" or "" (follow the estimate)')
    from annotation.models import Assignment

    if not isinstance(topic_external_id, str) or not Assignment.objects.filter(
            campaign=campaign, topic__external_id=topic_external_id).exists():
        raise OrderSettingsInvalid("topic", "not a topic of this campaign's units")
    settings = dict(campaign.settings or {})
    stops = dict(settings.get("topic_stops") or {})
    if word:
        stops[topic_external_id] = word
    else:
        stops.pop(topic_external_id, None)
    settings["topic_stops"] = stops
    campaign.settings = settings
    campaign.save(update_fields=["settings"])
