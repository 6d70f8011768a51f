"""The hybrid judging order on a stored pool (issue 41): its settings' rule, the pool as assessments.services.hybrid's
Flat (its candidates, the runs that brought them at their ranks, a machine label source's scores), a campaign's human
labels on it, and the plan, the fill and the intervals hybrid computes from them.

The one home of these readings: the live queue and the dashboard (annotation.services.judging_order), `export_qrels
--source filled` (assessments.services.qrels: command, API, admin, pages) and the results page's intervals all call
it, so the served order, the budget shown, the filled qrels and the intervals are one computation. A campaign's
settings (`judging_order` "hybrid", `machine_source`, `hybrid_budget`, `judging_min_rel`) are checked by
`settings_from`; the budget is spent on each pool of the campaign (most have one), all its topics together.

Reading only. A stored pool never changes once built, so each process keeps the last pools' Flats, and the last plans
and intervals under the labels they were computed from (a new or changed label computes them again).
"""

import statistics
import threading
from collections import OrderedDict, defaultdict
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from assessments.campaign_link import campaign_pool_ids, campaign_settings
from assessments.models import CANDIDATE_GRADES, CandidateSource, Judgement, MachineLabelSource, Pool, PoolCandidate
from assessments.services import hybrid

HYBRID = "hybrid"
SEED = 0  # the random sample's and the intervals' draws: the same for the same pool and budget
KEPT = 16  # pools (and plans, and intervals) each process keeps


class HybridSettingInvalid(hybrid.HybridError):
    """A hybrid setting that cannot be used; `field` names it."""

    def __init__(self, field, message):
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


@dataclass(frozen=True)
class HybridSettings:
    source: int  # the machine label source whose scores are calibrated
    budget: float | int  # a share of each pool (float) or a count of human labels (int): hybrid.parse_budget
    min_rel: int = 1

    def describe(self) -> str:
        return f"{self.budget:.0%} of the pool" if isinstance(self.budget, float) else f"{self.budget:,} judgements"


def settings_from(raw: dict) -> HybridSettings | None:
    """The hybrid settings of a campaign's settings dict, checked; None where its order is not hybrid.
    HybridSettingInvalid names the setting (machine_source, hybrid_budget)."""
    if not isinstance(raw, dict) or raw.get("judging_order") != HYBRID:
        return None
    source = raw.get("machine_source")
    if isinstance(source, bool) or not isinstance(source, int):
        raise HybridSettingInvalid("machine_source", "the hybrid order needs a machine label source (its id)")
    if raw.get("hybrid_budget") is None:
        raise HybridSettingInvalid("hybrid_budget", "the hybrid order needs a budget: a share of the pool (e.g. 0.1) "
                                                    "or a number of judgements (e.g. 500)")
    try:
        budget = hybrid.parse_budget(raw["hybrid_budget"])
    except hybrid.HybridError as exc:
        raise HybridSettingInvalid("hybrid_budget", str(exc)) from None
    min_rel = raw.get("judging_min_rel", 1)
    return HybridSettings(source, budget, min_rel if isinstance(min_rel, int) and not isinstance(min_rel, bool) else 1)


def check_source(source_id, campaign_id=None, collections=None) -> MachineLabelSource:
    """The machine label source a hybrid order may calibrate: one that exists, labels passages, is the campaign's or
    made for no campaign (MachineLabelSource.objects.usable_by), and labels one of `collections` (names; None: not
    checked). HybridSettingInvalid("machine_source") otherwise."""
    source = MachineLabelSource.objects.filter(pk=source_id).select_related("collection").first()
    if source is None:
        raise HybridSettingInvalid("machine_source", f"no machine label source {source_id}")
    if not MachineLabelSource.objects.usable_by(campaign_id).filter(pk=source_id).exists():
        raise HybridSettingInvalid("machine_source", f"source {source_id} is another campaign's")
    if source.kind not in MachineLabelSource.PASSAGE_KINDS:
        raise HybridSettingInvalid("machine_source", f"source {source_id} ({source.get_kind_display()}) gives no "
                                                     "label of a passage to calibrate")
    if collections is not None and source.collection.name not in set(collections):
        raise HybridSettingInvalid("machine_source", f"source {source_id} labels collection "
                                                     f"{source.collection.name!r}, not this campaign's "
                                                     f"({', '.join(sorted(collections)) or 'none yet'})")
    return source


def campaign_hybrid(campaign_id) -> HybridSettings | None:
    """The campaign's hybrid settings (None where its order is not hybrid); HybridSettingInvalid when wrong."""
    return None if campaign_id is None else settings_from(campaign_settings(campaign_id))


def campaign_pools(campaign_id) -> list:
    """The pools a hybrid campaign spends its budget on (assessments.campaign_link.campaign_pool_ids), by name."""
    return list(Pool.objects.filter(pk__in=campaign_pool_ids(campaign_id)).order_by("name"))


# --- the pool and the labels -----------------------------------------------------------------------------------


@dataclass
class StoredPool:
    """A stored pool as a Flat: candidate i is (topic id, passage id) = flat.keys[i]."""

    flat: hybrid.Flat
    names: list  # (topic external id, passage external id) of each candidate
    topic_ids: list

    def __len__(self):
        return len(self.flat)


_pools: OrderedDict = OrderedDict()
_plans: OrderedDict = OrderedDict()
_intervals: OrderedDict = OrderedDict()
_lock = threading.Lock()


def _kept(store, key, make):
    with _lock:
        if key in store:
            store.move_to_end(key)
            return store[key]
    value = make()
    with _lock:
        store[key] = value
        while len(store) > KEPT:
            store.popitem(last=False)
    return value


def stored_pool(pool, source_id) -> StoredPool:
    """The pool's candidates (each topic's in the pool's order, topics by external id), each run's rank of them (the
    pool's CandidateSource rows: the runs that brought them; a fused or re-ranked run, the pool's own order, is left
    out; a pool without provenance is one ranking, its order) and the source's scores (missing: none)."""
    return _kept(_pools, (pool.pk, pool.built_at, source_id, _labels_version(source_id)),
                 lambda: _stored_pool(pool, source_id))


def _labels_version(source_id) -> tuple:
    """What changes when a source's labels change: importing a file again under the source's name replaces its
    labels in the same source (assessments.importers.machine_labels), so a process kept the old scores by id alone."""
    from django.db.models import Count, Max

    found = (MachineLabelSource.objects.filter(pk=source_id).annotate(n=Count("labels"), last=Max("labels__pk"))
             .values_list("n", "last", "checksum").first())  # one query: it runs on every queue request
    return tuple(found or (0, None, None))


def _stored_pool(pool, source_id) -> StoredPool:
    from assessments.services.machine import pool_scores

    rows = (PoolCandidate.objects.filter(pool_id=pool.pk).order_by("topic__external_id", "topic_id", "rank", "pk")
            .values_list("topic_id", "passage_id", "topic__external_id", "passage__external_id"))
    keys, names = defaultdict(list), {}
    for topic_id, passage_id, topic_name, doc in rows:
        keys[topic_id].append(passage_id)
        names[topic_id, passage_id] = (topic_name, doc)
    final = ((pool.params or {}).get("built") or {}).get("final_run")
    ranked = defaultdict(dict)  # run id: {topic id: {passage id: rank}}
    for run_id, topic_id, passage_id, rank in (
            CandidateSource.objects.filter(candidate__pool_id=pool.pk).exclude(run_id=final)
            .values_list("run_id", "candidate__topic_id", "candidate__passage_id", "rank")):
        ranked[run_id].setdefault(topic_id, {})[passage_id] = rank
    if not ranked:
        ranked["pool"] = {t: {p: r for r, p in enumerate(ps, start=1)} for t, ps in keys.items()}
    from assessments.models import Run
    from assessments.services.runs import run_labels

    labels = run_labels(Run.objects.filter(pk__in=[r for r in ranked if r != "pool"]))
    runs = sorted(ranked, key=lambda r: labels.get(r, str(r)))
    pools, rankings = {}, {labels.get(r, str(r)): {} for r in runs}
    for topic_id, passages in keys.items():
        ranks = np.zeros((len(passages), len(runs)), dtype=np.int32)
        for j, run in enumerate(runs):
            got = ranked[run].get(topic_id, {})
            ranks[:, j] = [got.get(p, 0) for p in passages]
            at = [None] * max(got.values(), default=0)  # the run's ranking, a gap where it ranked no candidate
            for p, r in got.items():
                at[r - 1] = p
            rankings[labels.get(run, str(run))][topic_id] = at
        pools[topic_id] = SimpleNamespace(keys=passages, ranks=ranks)
    scores = defaultdict(dict)
    for (topic_id, passage_id), score in pool_scores(source_id, pool.pk).items():
        scores[topic_id][passage_id] = score
    flat = hybrid.flatten(pools, rankings, scores)
    return StoredPool(flat, [names[key] for key in flat.keys], list(pools))


def campaign_grades(campaign_id, topic_ids=None, passage_ids=None) -> tuple[dict, dict]:
    """The campaign's human candidate grades (plot, ad hoc): ({(topic id, passage id): grade} in the order first
    graded, the grade the upper median of its assessors'), {assessor id: set of (topic id, passage id) they graded}.
    Adjudicated labels, practice labels (Judgement.objects.without_practice) and machine labels are none of them."""
    rows = Judgement.objects.in_campaign(campaign_id).filter(
        layer__in=CANDIDATE_GRADES, adjudicated=False, value__isnull=False,
    ).without_practice(campaign_id)
    if topic_ids is not None:
        rows = rows.filter(topic_id__in=list(topic_ids))
    if passage_ids is not None:
        rows = rows.filter(passage_id__in=passage_ids)
    grades, by = {}, defaultdict(set)
    for assessor_id, topic_id, passage_id, grade in rows.order_by("pk").values_list(
            "assessor_id", "topic_id", "passage_id", "grade"):
        grades.setdefault((topic_id, passage_id), []).append(grade)
        by[assessor_id].add((topic_id, passage_id))
    return {key: statistics.median_high([g for g in gs if g is not None] or [None])
            for key, gs in grades.items()}, by


# --- the plan, the fill and the intervals ------------------------------------------------------------------------


@dataclass
class PoolPlan:
    """A hybrid campaign's state on one pool: the stored pool, the plan (hybrid.Plan), the settings."""

    pool: object
    stored: StoredPool
    plan: hybrid.Plan
    settings: HybridSettings
    key: tuple  # what the plan was computed from

    @property
    def spent(self) -> int:
        """Human labels the budget counts: the first `budget` candidates labelled, in the order first labelled (a
        label the order served, or one from a page opened before the budget's last judgement went). Never above the
        budget."""
        return min(self.plan.spent, self.plan.budget)

    @property
    def outside(self) -> int:
        """Candidates first labelled once the budget was spent (pages open at its end, a save the order did not
        serve): stored and used as the person's labels everywhere (qrels, fill, intervals), counted apart, never
        spent."""
        return max(0, self.plan.spent - self.plan.budget)

    @property
    def sample_judged(self) -> int:
        """Candidates of the random sample among those the budget counts."""
        return int(self.plan.sample[self.plan.judged.order[:self.spent]].sum())

    def next_in_topic(self, topic_id):
        """The passage id the plan wants judged next on this topic, or None (none of its batch is the topic's)."""
        for i in self.plan.batch:
            if self.stored.flat.keys[i][0] == topic_id:
                return self.stored.flat.keys[i][1]
        return None

    def fill_rows(self, topic_ids=None):
        """(topic, docid, grade) of every candidate no person graded: the calibrated fill (hybrid.fill: per topic the
        ⌊Σp + ½⌋ most probable relevant, grade min_rel; the rest 0), sorted by topic then docid (code points)."""
        labels = hybrid.fill(self.stored.flat, self.plan.judged)
        judged = self.plan.judged.judged
        wanted = None if topic_ids is None else set(topic_ids)
        rows = [(*self.stored.names[i], int(self.settings.min_rel if labels[i] else 0))
                for i in np.flatnonzero(~judged)
                if wanted is None or self.stored.flat.keys[i][0] in wanted]
        return sorted(rows)


def pool_plan(campaign_id, pool, settings: HybridSettings) -> PoolPlan:
    """The hybrid plan of the campaign's labels on the pool now (hybrid.plan), kept while the labels are the same."""
    stored = stored_pool(pool, settings.source)
    grades, _ = campaign_grades(campaign_id, stored.topic_ids)
    index = stored.flat.index
    given = {index[key]: (0 if grade is None else grade) for key, grade in grades.items() if key in index}
    key = (pool.pk, pool.built_at, settings, tuple(given.items()))

    def make():
        budget = hybrid.budget_count(len(stored), settings.budget)
        return PoolPlan(pool, stored, hybrid.plan(stored.flat, given, budget, min_rel=settings.min_rel, seed=SEED),
                        settings, key)

    return _kept(_plans, key, make)


def pool_intervals(state: PoolPlan, draws: int = hybrid.DRAWS) -> hybrid.Intervals | None:
    """Each run's MAP and nDCG@10 on the pool at the budget with a 95% interval (hybrid.intervals, the simulator's),
    from the plan's labels; None before any human label."""
    if not state.plan.spent:
        return None
    return _kept(_intervals, (state.key, draws), lambda: hybrid.intervals(state.stored.flat, state.plan.judged,
                                                                          draws=draws, seed=SEED))
