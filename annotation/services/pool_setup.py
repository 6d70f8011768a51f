"""Pools made from the organiser's console: from the campaign's runs and/or our retrievers, over its topics only,
with a preview of what the pool will hold before it is built.

The pool is defined by assessments.services.pooling.define_pool (as manage.py build_pool defines it) and
built by the assessments.tasks.build_pool task after the commit; retrieval (BM25, dense encoders,
cross-encoder re-ranking) runs as jobs on the workers, in-process without a broker. Only the campaign's own
topics are ever offered or accepted, so a pool's topics are always of the campaign's collection.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations

from django.db import transaction
from django.db.models import Q

from annotation.models import Track
from annotation.services.errors import ServiceError
from assessments.models import Pool, Run, RunEntry
from assessments.services.runs import run_labels
from retrieval import specs as retriever_specs


class PoolInvalid(ServiceError):
    """A pool that cannot be made as asked; `field` names the input."""


def campaign_track(campaign) -> Track:
    track = Track.objects.select_related("collection").filter(campaign=campaign).first()
    if track is None:
        raise PoolInvalid(None, f"campaign {campaign.name!r} has no topics to pool")
    return track


def retriever_list(*, bm25=False, dense=False, encoder="", rerankers=()) -> list[str]:
    """Retriever specs (retrieval.specs) from the form's choices; the default encoder when none is named."""
    specs = []
    if bm25:
        specs.append("bm25")
    if dense:
        specs.append(f"dense:{encoder.strip()}" if encoder.strip() else "dense")
    specs.extend(f"rerank:{model.strip()}" for model in rerankers if model.strip())
    try:
        first, second = retriever_specs.split(specs)
    except retriever_specs.SpecError as exc:
        raise PoolInvalid("retrievers", str(exc)) from None
    for spec in first + second:
        if spec.get("model") and (problem := retriever_specs.model_problem(spec["model"])):
            raise PoolInvalid("encoder" if spec["kind"] == "dense" else "rerankers", problem)
    return specs


def poolable_runs(campaign):
    """The runs a campaign's pool may take: of its collection, submitted to it or the organisers' own (imported,
    retrievers: no track); never a run submitted to another campaign (as create_pool rules)."""
    track = campaign_track(campaign)
    return Run.objects.filter(collection=track.collection, track__in=["", campaign.name])


def pairable_pools(campaign, collection_id):
    """The pools whose rankings a campaign's pair items may come from: of the collection, the campaign's own or an
    organiser's pool of no campaign; never another campaign's (its order is that campaign's runs', as poolable_runs
    rules)."""
    return Pool.objects.filter(collection_id=collection_id).filter(
        Q(campaigns__isnull=True) | Q(campaigns=campaign)).distinct()


def _chosen(campaign, runs, topics, only_ranked):
    """(track, runs, topic rows) checked against the campaign: runs it may pool, topics of its own."""
    track = campaign_track(campaign)
    run_ids = list(dict.fromkeys(int(r) for r in runs))
    found = {r.pk: r for r in poolable_runs(campaign).filter(pk__in=run_ids)}
    missing = [r for r in run_ids if r not in found]
    if missing:
        raise PoolInvalid("runs", f"campaign {campaign.name!r} has no runs with ids {missing} (runs of its "
                                  "collection, submitted to it or imported by organisers)")
    own = track.topics.all()
    if topics:
        wanted = list(dict.fromkeys(topics))
        rows = {t.external_id: t for t in own.filter(external_id__in=wanted)}
        outside = [t for t in wanted if t not in rows]
        if outside:
            raise PoolInvalid("topics", f"not topics of campaign {campaign.name!r}: {', '.join(outside[:10])}")
        chosen = [rows[t] for t in wanted]
    else:
        chosen = list(own.order_by("external_id"))
    if only_ranked and run_ids:
        ranked = set(RunEntry.objects.filter(run_id__in=run_ids, topic__in=chosen).values_list("topic_id", flat=True))
        chosen = [t for t in chosen if t.pk in ranked]
    if not chosen:
        raise PoolInvalid("topics", "no topics to pool: the runs chosen rank none of the campaign's topics")
    return track, [found[r] for r in run_ids], chosen


def new_pool(*, campaign, name, runs=(), retrievers=(), strategy=Pool.Strategy.UNION, depth=20, per_topic=None,
             fusion="rrf", topics=(), only_ranked=True, created_by=None) -> Pool:
    """Define a pool of the campaign's runs and/or retrievers over its topics, add it to the campaign and queue its
    build; PoolInvalid names the input at fault. `topics` are external ids (empty: all the campaign's; with
    `only_ranked`, those the chosen runs rank)."""
    from assessments.services.pooling import PoolError, define_pool
    from assessments.tasks import queue_build

    if not runs and not retrievers:
        raise PoolInvalid("runs", "choose runs or retrievers to pool")
    if depth < 1 or (per_topic is not None and per_topic < 1):
        raise PoolInvalid("depth", "depth and the per-topic cut are at least 1")
    with transaction.atomic():
        if Pool.objects.filter(name=name).exists():
            raise PoolInvalid("name", f"a pool named {name!r} already exists")
        track, run_rows, chosen = _chosen(campaign, runs, topics, only_ranked and not retrievers)
        try:
            pool = define_pool(
                name=name, collection=track.collection, topics=chosen, runs=run_rows, retrievers=list(retrievers),
                strategy=strategy, depth=depth, per_topic=per_topic, fusion_method=fusion, created_by=created_by,
            )
        except PoolError as exc:
            raise PoolInvalid("strategy", str(exc)) from None
        campaign.pools.add(pool)
        queue_build(pool.pk)
    return pool


@dataclass
class Preview:
    """What a pool of runs will hold: candidates per topic, and how much the runs' tops overlap."""

    depth: int
    per_topic: int | None
    topics: list = field(default_factory=list)  # [(external id, title, union size, candidates)]
    runs: list = field(default_factory=list)  # [(name, passages within depth, unique to it)]
    overlap: list = field(default_factory=list)  # [(run a, run b, mean Jaccard over topics both rank)]
    retrievers: list = field(default_factory=list)
    retriever_depth: int = 0  # the most candidates a topic the retrievers can add (depth × first-stage retrievers)

    @property
    def candidates(self) -> int:
        return sum(n for *_, n in self.topics)

    @property
    def from_runs(self) -> int:
        """The candidates the runs bring (per topic their union, cut at per_topic)."""
        return sum(min(union, self.per_topic) if self.per_topic else union for _, _, union, _ in self.topics)

    @property
    def largest(self) -> int:
        return max((n for *_, n in self.topics), default=0)


def preview(*, campaign, runs=(), retrievers=(), depth=20, per_topic=None, topics=(), only_ranked=True) -> Preview:
    """The candidates per topic a pool of these runs would have, and the runs' overlap within `depth` (one query).

    Retrievers' candidates are known only once they have run: the preview names them and counts what they can add
    at most (`depth` a topic each); with retrievers every chosen topic is pooled, as new_pool does.
    """
    result = Preview(depth=depth, per_topic=per_topic, retrievers=list(retrievers))
    if not runs and not retrievers:
        return result
    try:
        first, _ = retriever_specs.split(list(retrievers))
    except retriever_specs.SpecError as exc:
        raise PoolInvalid("retrievers", str(exc)) from None
    result.retriever_depth = depth * len(first)  # each first-stage retriever brings at most `depth` a topic
    _, run_rows, chosen = _chosen(campaign, runs, topics, only_ranked and not retrievers)  # as new_pool chooses
    names = run_labels(run_rows)  # owner/name where teams share a name
    tops = defaultdict(lambda: defaultdict(set))  # topic -> run -> passages
    rows = RunEntry.objects.filter(run__in=run_rows, topic__in=chosen, rank__lte=depth).values_list(
        "topic_id", "run_id", "passage_id")
    for topic_id, run_id, passage_id in rows.iterator(chunk_size=5000):
        tops[topic_id][run_id].add(passage_id)
    owners = defaultdict(lambda: defaultdict(int))  # topic -> passage -> runs having it
    for topic_id, by_run in tops.items():
        for passages in by_run.values():
            for p in passages:
                owners[topic_id][p] += 1
    for topic in chosen:
        union = len(owners[topic.pk])
        most = union + result.retriever_depth  # retrievers' finds, some already in the runs' union: an upper bound
        result.topics.append((topic.external_id, topic.title, union, min(most, per_topic) if per_topic else most))
    for run in run_rows:
        within = sum(len(tops[t][run.pk]) for t in tops)
        unique = sum(1 for t in tops for p in tops[t][run.pk] if owners[t][p] == 1)
        result.runs.append((names[run.pk], within, unique))
    for a, b in combinations(run_rows, 2):
        scores = []
        for by_run in tops.values():
            if by_run[a.pk] and by_run[b.pk]:
                scores.append(len(by_run[a.pk] & by_run[b.pk]) / len(by_run[a.pk] | by_run[b.pk]))
        result.overlap.append((names[a.pk], names[b.pk], sum(scores) / len(scores) if scores else None, len(scores)))
    return result


def forced_choice_items(*, campaign, pool, run, n):
    """The forced-choice items of one of the campaign's pools (as manage.py make_study_items --kind choice): per
    plot topic its ground truth and n − 1 hard negatives from `run` (a Run id of the pool's runs, or one our
    retrievers made for it); PoolInvalid names the input at fault. Returns the items."""
    from assessments import studies

    found = campaign.pools.filter(name=pool).first()
    if found is None:
        raise PoolInvalid("pool", f"no pool {pool!r} in campaign {campaign.name!r}")
    allowed = set(found.runs.values_list("pk", flat=True)) | set((found.params or {}).get("built", {}).get("runs", []))
    if run not in allowed:
        raise PoolInvalid("run", "choose one of the pool's runs")
    try:
        return studies.make_forced_choice_items(found, Run.objects.get(pk=run), n=n)
    except studies.StudyError as exc:
        raise PoolInvalid("run", str(exc)) from None


def pair_items(*, campaign, pool, sources, first, second, depth):
    """The pair-rating items of one of the campaign's pools from two rankings (as manage.py make_study_items --kind
    pair --runs / --pools): `sources` "runs" (`first`, `second`: Run ids the campaign may pool) or "pools" (names of
    pairable_pools), paired rank by rank down to `depth`; PoolInvalid names the input at fault. Returns the
    items."""
    from assessments import studies

    found = _own_pool(campaign, pool)
    if sources == "runs":
        allowed = {r.pk: r for r in poolable_runs(campaign).filter(pk__in=[first, second])}
        picked = [allowed.get(first), allowed.get(second)]
    elif sources == "pools":
        named = {p.name: p for p in pairable_pools(campaign, found.collection_id).filter(name__in=[first, second])}
        picked = [named.get(first), named.get(second)]
    else:
        raise PoolInvalid("sources", "two runs, or two pools")
    if None in picked:
        raise PoolInvalid(sources, f"choose two {sources} of collection {found.collection.name!r}")
    try:
        return studies.make_ranked_pair_items(found, *picked, depth=depth)
    except studies.StudyError as exc:
        field, _, message = str(exc).partition(": ")
        if field not in ("sources", "depth"):
            field, message = "pool", str(exc)
        raise PoolInvalid(sources if field == "sources" else field, message) from None


def study_runs(pool) -> list:
    """The runs a pool's forced-choice negatives may come from: its runs and those our retrievers made for it, each
    with its `label` (owner/name where teams share a name)."""
    ids = set(pool.runs.values_list("pk", flat=True)) | set((pool.params or {}).get("built", {}).get("runs", []))
    runs = list(Run.objects.filter(pk__in=ids).select_related("owner").order_by("name"))
    labels = run_labels(runs)
    for run in runs:
        run.label = labels[run.pk]
    return runs


def _own_pool(campaign, name) -> Pool:
    found = campaign.pools.filter(name=name).first() if name else None
    if found is None:
        raise PoolInvalid("pool", f"no pool {str(name)[:100]!r} in campaign {campaign.name!r}")
    return found


def rename_pool(*, campaign, pool, name) -> Pool:
    """Give one of the campaign's pools a new name (a slug, unique among pools); PoolInvalid names the input.
    Nothing refers to a pool by its name but people: units, candidates, study items and machine jobs hold its id."""
    from django.core.exceptions import ValidationError
    from django.core.validators import validate_slug

    name = (name or "").strip()
    try:
        validate_slug(name)
    except ValidationError:
        raise PoolInvalid("name", "a pool's name is letters, digits, hyphens and underscores") from None
    if len(name) > Pool._meta.get_field("name").max_length:
        raise PoolInvalid("name", f"a pool's name has at most {Pool._meta.get_field('name').max_length} characters")
    with transaction.atomic():
        found = _own_pool(campaign, pool)
        if found.name != name and Pool.objects.filter(name=name).exists():
            raise PoolInvalid("name", f"a pool named {name!r} already exists")
        Pool.objects.filter(pk=found.pk).update(name=name)
    found.name = name
    return found


@dataclass
class PoolDeletion:
    """What deleting a pool takes with it, counted, and the judgements that forbid it."""

    pool: Pool
    candidates: int = 0
    sources: int = 0  # the runs' ranks behind the candidates
    study_items: int = 0
    units: int = 0  # assessors' units of work on the pool (plot labelling, forced choice, pairs)
    judgements: int = 0  # labels made in its campaigns on its candidates or study items
    other_campaigns: list = field(default_factory=list)

    @property
    def allowed(self) -> bool:
        return self.judgements == 0

    @property
    def refusal(self) -> str:
        return (f"pool {self.pool.name!r} cannot be deleted: {self.judgements:,} judgement"
                f"{'s' if self.judgements != 1 else ''} of its campaigns are about its candidates or study items "
                "(the labels would lose the candidates they were made on)")

    @property
    def goes_with_it(self) -> str:
        parts = [f"{self.candidates:,} candidates", f"{self.sources:,} run ranks behind them",
                 f"{self.study_items:,} study items", f"{self.units:,} units of work"]
        also = f"; it leaves campaigns {', '.join(self.other_campaigns)} too" if self.other_campaigns else ""
        return ", ".join(parts) + also


def pool_deletion(*, campaign, pool) -> PoolDeletion:
    """What deleting one of the campaign's pools would remove (reading only)."""
    from django.db.models import Exists, OuterRef, Q

    from annotation.models import Assignment
    from assessments.models import CandidateSource, Judgement, PoolCandidate, StudyItem

    found = _own_pool(campaign, pool)
    campaigns = list(found.campaigns.order_by("name").values_list("pk", "name"))
    on_candidates = Exists(PoolCandidate.objects.filter(
        pool=found, topic_id=OuterRef("topic_id"), passage_id=OuterRef("passage_id")))
    on_items = Q(item__in=StudyItem.objects.filter(pool=found).values("key")) & ~Q(item="")
    return PoolDeletion(
        pool=found,
        candidates=PoolCandidate.objects.filter(pool=found).count(),
        sources=CandidateSource.objects.filter(candidate__pool=found).count(),
        study_items=StudyItem.objects.filter(pool=found).count(),
        units=Assignment.objects.filter(pool=found).count(),
        judgements=Judgement.objects.filter(campaign_id__in=[pk for pk, _ in campaigns]).filter(
            on_candidates | on_items).count(),
        other_campaigns=[name for pk, name in campaigns if pk != campaign.pk],
    )


def delete_pool(*, campaign, pool) -> PoolDeletion:
    """Delete one of the campaign's pools with what goes with it (PoolDeletion, counted); PoolInvalid("pool") when
    judgements are about its candidates or study items, saying so."""
    with transaction.atomic():
        Pool.objects.select_for_update().filter(pk=_own_pool(campaign, pool).pk).first()  # one deletion at a time
        counted = pool_deletion(campaign=campaign, pool=pool)
        if not counted.allowed:
            raise PoolInvalid("pool", counted.refusal)
        counted.pool.delete()
    return counted
