"""Building pools from runs and retrievers. Rebuilding with the same inputs gives the same pool.

A pool's inputs: its topics, its runs (uploaded or imported), `params["retrievers"]` (retriever
specs, see retrieval.specs: `bm25`, `dense[:MODEL]`, `rerank:MODEL`…), the strategy, the depth k
and the per-topic cap N. Strategies:

- union (TREC depth-k pooling): every passage some run ranks within k, ordered by its best
  rank, then by how many runs brought it, then by passage id.
- rrf (fused top-N): the runs' top-k fused by reciprocal rank fusion (k=60), or CombSUM /
  CombMNZ with `params["fusion"]` and `params["normalisation"]` (min-max or z-score); the
  fused ranking is stored as a run too.
- rerank (seed 002 §2.3): the union of the runs' top-k re-scored by the ensemble of the
  `rerank:` cross-encoders (each model's scores min-max normalised, then averaged), best first.

Each first-stage retriever's output is stored as a Run (source RETRIEVER; in Run.retriever the spec
with every parameter filled in, the passage fields it indexed and its depth) ranked to max(k, 100),
so it can be evaluated like any other run; a re-ranking is stored as a run too. Retrieval runs as
jobs on the workers (retrieval.services): assemble_pool starts what is missing and returns; each
job, when it ends, sends the build task again, which carries on from where things stand. Run
eagerly (no broker) it all happens inside the first call. Candidates keep their provenance: every
run that had the passage within k, at which rank and score (and the re-ranking run's rank).
"""

from collections import defaultdict

from django.db import transaction
from django.utils import timezone

from assessments.models import CandidateSource, Pool, PoolCandidate, Run, RunEntry, Topic
from retrieval import fusion, services as retrieval
from retrieval import specs as retriever_specs
from retrieval.bulk import insert_rows
from retrieval.models import Job, Passage
from retrieval.storage import config_key

BUILD_TASK = "assessments.tasks.build_pool"
MIN_RUN_DEPTH = 100  # retriever runs are ranked at least this deep, so they are worth evaluating
MAX_RUN_NAME = 100


class PoolError(ValueError):
    """A pool that cannot be built as asked; the message says why."""


# --- defining a pool --------------------------------------------------------------------------------------


def define_pool(*, name, collection, topics, runs=(), retrievers=(), strategy=Pool.Strategy.UNION, depth=20,
                per_topic=None, fusion_method="rrf", normalisation="minmax", rrf_k=fusion.RRF_K,
                created_by=None) -> Pool:
    """Create the pool `name`, or set an existing one's inputs to these; the build is separate (assemble_pool, run by the Celery task build_pool)."""
    first, rerankers = _parse(retrievers)
    _check_strategy(name, strategy, runs or first, rerankers, fusion_method, normalisation)
    params = {"retrievers": list(retrievers)}
    if strategy == Pool.Strategy.RRF:
        params.update(fusion=fusion_method, normalisation=normalisation, rrf_k=rrf_k)
    if strategy == Pool.Strategy.RERANK:
        params.update(normalisation=normalisation)
    with transaction.atomic():
        pool, created = Pool.objects.select_for_update().get_or_create(
            name=name, defaults={"collection": collection, "created_by": created_by}
        )
        if pool.collection_id != collection.pk:
            raise PoolError(f"pool {name!r} exists over collection {pool.collection.name!r}, not {collection.name!r}")
        pool.strategy, pool.depth, pool.per_topic, pool.status = strategy, depth, per_topic, Pool.Status.PENDING
        pool.params = {**params, **({"built": pool.params["built"]} if "built" in pool.params else {})}
        pool.save()
        pool.topics.set(topics)
        pool.runs.set(runs)
    return pool


def _parse(texts):
    try:
        return retriever_specs.split(texts)
    except retriever_specs.SpecError as exc:
        raise PoolError(str(exc)) from None


def _check_strategy(name, strategy, first_stage, rerankers, fusion_method="rrf", normalisation="minmax"):
    if strategy not in Pool.Strategy.values:
        raise PoolError(f"pool {name}: unknown strategy {strategy!r}; use union, rrf or rerank")
    if strategy == Pool.Strategy.RERANK and not rerankers:
        raise PoolError(f"pool {name}: strategy 'rerank' needs at least one re-ranker (rerank:MODEL)")
    if rerankers and strategy != Pool.Strategy.RERANK:
        raise PoolError(f"pool {name}: re-rankers are only used by strategy 'rerank' (not {strategy!r})")
    if not first_stage:
        raise PoolError(f"pool {name}: no runs selected (and no retrievers)")
    if fusion_method not in fusion.METHODS:
        raise PoolError(f"pool {name}: unknown fusion {fusion_method!r}; use rrf, combsum or combmnz")
    if normalisation not in fusion.NORMALISATIONS:
        raise PoolError(f"pool {name}: unknown normalisation {normalisation!r}; use minmax or zscore")


# --- building ---------------------------------------------------------------------------------------------


def assemble_pool(pool_id: int, *, resume: bool = True) -> Pool:
    """(Re)build a pool; safe to run twice (the old candidates are replaced whole).

    Returns the pool READY, or BUILDING while retrieval jobs run on the workers (each job sends
    this build again when it ends). With `resume`, failed jobs are started again; without it (as
    sent by a job that failed) the pool fails with the job's reason.
    """
    pool = Pool.objects.select_related("collection").get(pk=pool_id)
    if not resume and pool.status == Pool.Status.READY:
        return pool  # a job's callback after the pool was assembled: nothing to rebuild (define_pool resets it)
    topics = list(pool.topics.order_by("pk"))
    runs = list(pool.runs.order_by("pk"))
    first, rerankers = _parse(pool.params.get("retrievers", []))
    if not topics:
        raise PoolError(f"pool {pool.name}: no topics selected")
    _check_strategy(pool.name, pool.strategy, runs or first, rerankers, pool.params.get("fusion", "rrf"),
                    pool.params.get("normalisation", "minmax"))
    started = timezone.now()
    Pool.objects.filter(pk=pool.pk).exclude(status=Pool.Status.BUILDING).update(status=Pool.Status.BUILDING, error="")

    made, waiting = [], []
    for spec in first:
        run, job = _retriever_run(pool, spec, topics, resume)
        made.append(run)
        if job is not None:
            waiting.append(job)
    if waiting:
        return _still_building(pool, waiting)
    final = None
    if pool.strategy == Pool.Strategy.RERANK:
        final, job = _rerank_run(pool, rerankers, topics, [*runs, *made], resume)
        if job is not None:
            return _still_building(pool, [job])
    elif pool.strategy == Pool.Strategy.RRF:
        final = _fused_run(pool, topics, [*runs, *made])
    with transaction.atomic():  # assembled once: the first build to get here holds the row, later ones see READY
        pool = Pool.objects.select_for_update().get(pk=pool.pk)
        if pool.status == Pool.Status.READY and pool.built_at and pool.built_at >= started:
            return pool  # built meanwhile from the same inputs (by a job's callback, run eagerly inside this call)
        return _compose(pool.pk, topics, [*runs, *made], final)


def mark_pool_failed(pool_id: int, error: str) -> None:
    """Record why a build failed, so the organiser sees it."""
    Pool.objects.filter(pk=pool_id).update(status=Pool.Status.FAILED, error=error[:5000])


def pool_jobs(pool: Pool):
    """The retrieval jobs a pool's build has asked for (newest first): the ids its build remembered, one query."""
    pool.refresh_from_db(fields=["params"])
    return list(Job.objects.defer("params").filter(pk__in=pool.params.get("jobs", [])).order_by("-pk"))


def _remember(pool, job):
    """Keep the id of a job the build waits for on the pool (pool_jobs reads them back)."""
    if job is None:
        return job
    with transaction.atomic():
        locked = Pool.objects.select_for_update().get(pk=pool.pk)
        if job.pk not in locked.params.get("jobs", []):
            locked.params = {**locked.params, "jobs": [*locked.params.get("jobs", []), job.pk]}
            Pool.objects.filter(pk=pool.pk).update(params=locked.params)
    return job


def query_text(topic: Topic) -> str:
    """What retrievers are asked for a topic: an outline's title and headings, else the query text or title."""
    if topic.kind == Topic.Kind.OUTLINE:
        headings = [facet.heading for facet in topic.facets.all()]
        return " ".join([topic.title, *headings]).strip() or topic.external_id
    return topic.text or topic.title or topic.external_id


def _callback(pool):
    return [BUILD_TASK, [pool.pk, False]]


def _still_building(pool, jobs):
    failed = [job for job in jobs if job.status == Job.Status.FAILED]
    if failed:
        job = failed[0]
        reason = job.error.splitlines()[0] if job.error else "failed"
        raise PoolError(f"pool {pool.name}: {job.get_kind_display().lower()} job #{job.pk} failed: {reason}")
    pool.refresh_from_db()
    return pool


def _settle(job, resume):
    """None when `job` is done; else the job (resumed first when it failed and `resume` is asked)."""
    if job is None or job.status == Job.Status.DONE:
        return None
    if job.status == Job.Status.FAILED and resume:
        job = retrieval.resume(job.pk)
        return None if job.status == Job.Status.DONE else job
    return job


def _retriever_run(pool, spec, topics, resume):
    """The spec's run with entries for every topic, or the job still making them."""
    fields = retriever_specs.fields_for(spec, pool.collection)
    config = {**spec, "fields": fields, "depth": max(pool.depth, MIN_RUN_DEPTH)}
    context = retriever_specs.context_for(spec, pool.collection)
    if context:  # recorded where the index adds book sentences around each chunk (other runs keep their config)
        config["context"] = context
    run = _run_for(pool.collection, retriever_specs.label(spec), config)
    missing = _topics_without_entries(run, topics)
    if not missing:
        return run, None
    try:
        job = _settle(_remember(pool, retrieval.ensure_index(pool.collection, spec, callback=_callback(pool))), resume)
        if job is not None:
            return run, job
        queries = [(str(t.pk), query_text(t)) for t in missing]
        job = _remember(pool, retrieval.ensure_search(pool.collection, spec, queries, config["depth"],
                                                      callback=_callback(pool)))
    except (retriever_specs.SpecError, retrieval.NotReady, ValueError) as exc:
        raise PoolError(f"pool {pool.name}: {exc}") from None
    pending = _settle(job, resume)
    if pending is not None:
        return run, pending
    _save_rankings(run, {int(key): ranking for key, ranking in retrieval.results(job).items()})
    return run, None


def _rerank_run(pool, rerankers, topics, runs, resume):
    """The ensemble re-ranking of the runs' top-k union, stored as a run; or the job still scoring it."""
    normalisation = pool.params.get("normalisation", "minmax")
    found = _entries(runs, topics, pool.depth)
    config = {
        "kind": "rerank", "models": [{"model": r["model"], "max_length": r["max_length"]} for r in rerankers],
        "normalisation": normalisation, "depth": pool.depth, "over": sorted(r.name for r in runs),
        "fields": pool.collection.indexed_fields,
    }
    label = "rerank-" + "+".join(retriever_specs.model_label(r["model"]) for r in rerankers)
    run = _run_for(pool.collection, label[:80], config)
    missing = _topics_without_entries(run, topics)
    items = [(str(t.pk), query_text(t), sorted(found[t.pk])) for t in missing if found[t.pk]]
    if not items:
        return run, None
    job = _remember(pool, retrieval.ensure_rerank(
        pool.collection, rerankers, items, normalisation=normalisation, callback=_callback(pool)
    ))
    pending = _settle(job, resume)
    if pending is not None:
        return run, pending
    scored = retrieval.results(job)
    _save_rankings(run, {int(key): [(pid, score) for pid, score in value["ranking"]] for key, value in scored.items()})
    return run, None


def _fused_run(pool, topics, runs):
    """The runs' top-k fused (RRF, CombSUM or CombMNZ), stored as a run ranked to the full fused list."""
    method = pool.params.get("fusion", "rrf")
    config = {"kind": "fusion", "method": method, "depth": pool.depth, "over": sorted(r.name for r in runs)}
    if method == "rrf":
        config["k"] = pool.params.get("rrf_k", fusion.RRF_K)
    else:
        config["normalisation"] = pool.params.get("normalisation", "minmax")
    run = _run_for(pool.collection, f"{method}-" + "+".join(config["over"])[:76], config)
    missing = _topics_without_entries(run, topics)
    found = _entries(runs, missing, pool.depth)
    rankings = {}
    for topic in missing:
        fused = fusion.fuse(
            _per_run(found[topic.pk], runs), method, k=config.get("k", fusion.RRF_K),
            normalisation=config.get("normalisation", "minmax"),
        )
        if fused:
            rankings[topic.pk] = fused
    _save_rankings(run, rankings)
    return run


def _per_run(hits, runs):
    """One topic's hits {passage id: [(rank, run id, score)]} as one ranking per run; a missing score counts as −rank."""
    rankings = []
    for source in runs:
        ranked = sorted((rank, pid, score) for pid, at in hits.items() for rank, run_id, score in at if run_id == source.pk)
        rankings.append([(pid, score if score is not None else -rank) for rank, pid, score in ranked])
    return rankings


def _run_for(collection, label, config) -> Run:
    """The retriever run for `config`: named `label`, or `label-<hash>` when that name is taken by another config."""
    for name in (label, f"{label[: MAX_RUN_NAME - 9]}-{config_key(config)[:8]}"):
        run, created = Run.objects.get_or_create(
            collection=collection, name=name, owner=None, track="",  # the organisers' own (assessments.services.runs)
            defaults={"source": Run.Source.RETRIEVER, "retriever": config,
                      "description": f"Made by retriever {label} (see retriever for its settings)."},
        )
        if created or (run.source == Run.Source.RETRIEVER and run.retriever == config):
            return run
    raise PoolError(f"run names {label!r} and its hashed variant are taken by other runs")


def _topics_without_entries(run, topics):
    have = set(RunEntry.objects.filter(run=run, topic__in=topics).values_list("topic_id", flat=True).distinct())
    return [t for t in topics if t.pk not in have]


def _save_rankings(run, rankings: dict) -> None:
    """Store {topic id: [(passage id, score)…]} as the run's entries for topics it has none for yet.

    Ranks follow trec_eval's order (score descending, ties by external id descending), so the
    stored run and its TREC export evaluate alike.
    """
    wanted = {pid for ranking in rankings.values() for pid, _ in ranking}
    external = dict(Passage.objects.filter(pk__in=wanted).values_list("pk", "external_id")) if wanted else {}
    with transaction.atomic():
        Run.objects.select_for_update().filter(pk=run.pk).first()
        have = set(
            RunEntry.objects.filter(run=run, topic_id__in=list(rankings)).values_list("topic_id", flat=True).distinct()
        )
        entries = []
        for topic_id, ranking in rankings.items():
            if topic_id in have:
                continue
            ordered = sorted(ranking, key=lambda hit: (hit[1], external[hit[0]]), reverse=True)
            entries.extend((run.pk, topic_id, pid, rank, None if score is None else float(score))
                           for rank, (pid, score) in enumerate(ordered, start=1))
        # straight rows (COPY on PostgreSQL), no model instances: a retriever's run is topics × its depth (≥ 100) rows
        insert_rows(RunEntry, ["run_id", "topic_id", "passage_id", "rank", "score"], entries)


def _entries(runs, topics, depth):
    """topic id → passage id → [(rank, run id, score)] for the runs' entries within `depth`."""
    found = defaultdict(dict)
    rows = RunEntry.objects.filter(run__in=runs, topic__in=topics, rank__lte=depth).values_list(
        "topic_id", "passage_id", "run_id", "rank", "score"
    )
    for topic_id, passage_id, run_id, rank, score in rows.iterator(chunk_size=5000):
        found[topic_id].setdefault(passage_id, []).append((rank, run_id, score))
    return found


def _compose(pool_id, topics, runs, final) -> Pool:
    """Replace the pool's candidates with provenance: the union of the runs' top-k, or the top of `final`.

    `final` (strategies rrf and rerank) is the fused or re-ranked run; its order is the pool's order.
    """
    with transaction.atomic():
        pool = Pool.objects.select_for_update().get(pk=pool_id)
        found = _entries(runs, topics, pool.depth)
        ranked = _entries([final], topics, 2**31 - 1) if final else {}
        PoolCandidate.objects.filter(pool=pool).delete()
        candidates, sources = [], []
        for topic in topics:
            hits = found[topic.pk]
            if final is None:
                ordered = sorted(hits.items(), key=lambda kv: (min(r for r, _, _ in kv[1]), -len(kv[1]), kv[0]))
                ordered = [(pid, None) for pid, _ in ordered]
            else:
                at = ranked.get(topic.pk, {})
                ordered = [(pid, at[pid][0][2]) for pid in sorted(at, key=lambda pid: at[pid][0][0]) if pid in hits]
            if pool.per_topic:
                ordered = ordered[: pool.per_topic]
            for position, (passage_id, score) in enumerate(ordered, start=1):
                candidate = PoolCandidate(pool=pool, topic=topic, passage_id=passage_id, rank=position, score=score)
                candidates.append(candidate)
                extra = ranked.get(topic.pk, {}).get(passage_id, []) if final else []
                sources.append((candidate, hits.get(passage_id, []) + extra))
        PoolCandidate.objects.bulk_create(candidates, batch_size=1000)
        CandidateSource.objects.bulk_create(
            [
                CandidateSource(candidate=candidate, run_id=run_id, rank=rank, score=score)
                for candidate, found_at in sources
                for rank, run_id, score in found_at
            ],
            batch_size=1000,
        )
        built = {"runs": [r.pk for r in runs], "final_run": getattr(final, "pk", None)}
        pool.params = {**pool.params, "built": built}
        pool.status, pool.error, pool.built_at = Pool.Status.READY, "", timezone.now()
        pool.save(update_fields=["params", "status", "error", "built_at"])
    return pool
