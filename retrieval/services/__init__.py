"""Retrieval as jobs: indexes built, queries searched and candidates re-ranked by workers; results are passage ids.

Text in, ranked passage ids out: callers hand in query texts under keys of their own (strings)
and get back, per key, [(passage id, score)] best first. Nothing here knows topics or pools.

Every ensure_* function is idempotent: the same inputs give the same job (new, running, done or
failed), a new job is started at once, and `callback` ([Celery task name, args]) is sent when the
job ends, done or failed. Call them outside any transaction (workers must see the rows).
"""

from retrieval import specs as specs_module
from retrieval.models import Index, Job, Shard
from retrieval.services import jobs, work
from retrieval.services.jobs import TRANSIENT_ERRORS, recover_worker, resume, run_here, start
from retrieval.storage import config_key

__all__ = [
    "TRANSIENT_ERRORS", "NotReady", "ensure_index", "ensure_rerank", "ensure_search", "index_for", "is_current",
    "recover_worker", "rerank_here", "results", "resume", "run_here", "search_here", "start",
]


class NotReady(RuntimeError):
    """An index is needed that is not built (or not current) yet."""


def index_for(collection, spec: dict) -> Index:
    """The index row for a bm25 or dense spec (one per collection, configuration, indexed fields and book context), made
    if missing."""
    if spec["kind"] == "bm25":
        kind, config = Index.Kind.BM25, specs_module.bm25_part(spec)
    elif spec["kind"] == "dense":
        kind, config = Index.Kind.DENSE, specs_module.encoder_part(spec)
    else:
        raise ValueError(f"{spec['kind']} has no index")
    config["fields"] = specs_module.fields_for(spec, collection)
    context = specs_module.context_for(spec, collection)
    if context:  # absent when 0, so an index of passages without neighbours keeps its key
        config["context"] = context
    key = config_key(kind, config)
    index, _ = Index.objects.get_or_create(
        collection=collection, kind=kind, key=key,
        defaults={"config": config, "folder": f"{collection.pk}-{collection.name}/{kind}-{key[:16]}"},
    )
    return index


def is_current(index: Index, state: dict | None = None) -> bool:
    """Ready and built on the collection's present passages."""
    state = state or work.collection_state(index.collection_id)
    return (
        index.status == Index.Status.READY
        and index.passage_count == state["count"]
        and index.last_passage_id == state["last"]
    )


def ensure_index(collection, spec: dict, *, callback=None, shard_size=None, start_now=True) -> Job | None:
    """None when the spec's index is ready and current; else the job that builds it."""
    index = index_for(collection, spec)
    state = work.collection_state(collection.pk)
    if not state["count"]:
        raise ValueError(f"collection {collection.name} has no passages to index")
    if is_current(index, state):
        return None
    kind = Job.Kind.BM25_INDEX if index.kind == Index.Kind.BM25 else Job.Kind.ENCODE
    params = {"spec": spec, "state": state}
    if shard_size:
        params["shard_size"] = shard_size
    job, created = jobs.create(
        kind=kind, key=config_key(kind, index.pk, state), collection=collection, index=index, params=params,
        callback=callback,
    )
    if created and start_now:
        start(job)
        job.refresh_from_db()
    return job


def ensure_search(collection, spec: dict, queries, k: int, *, callback=None, start_now=True) -> Job:
    """The job ranking each (key, text) query's top `k` passages; the spec's index must be current (NotReady)."""
    index = index_for(collection, spec)
    if not is_current(index):
        raise NotReady(f"the {specs_module.label(spec)} index of {collection.name} is not built yet")
    queries = [[str(key), text or ""] for key, text in queries]
    params = {"spec": spec, "k": int(k), "queries": queries}
    key = config_key(Job.Kind.SEARCH, index.pk, index.passage_count, index.last_passage_id, spec, k, queries)
    job, created = jobs.create(
        kind=Job.Kind.SEARCH, key=key, collection=collection, index=index, params=params, callback=callback
    )
    if created and start_now:
        start(job)
        job.refresh_from_db()
    return job


def ensure_rerank(collection, rerankers: list[dict], items, *, normalisation="minmax", callback=None,
                  start_now=True) -> Job:
    """The job scoring each (key, query text, [passage ids]) with the ensemble of `rerankers` (rerank specs)."""
    if not rerankers:
        raise ValueError("no re-rankers given")
    models = [{"model": r["model"], "max_length": r.get("max_length", 512)} for r in rerankers]
    items = [[str(key), text or "", [int(pid) for pid in pids]] for key, text, pids in items]
    fields = collection.indexed_fields
    params = {"models": models, "normalisation": normalisation, "items": items, "fields": fields}
    key = config_key(Job.Kind.RERANK, collection.pk, models, normalisation, items, fields)
    job, created = jobs.create(kind=Job.Kind.RERANK, key=key, collection=collection, params=params, callback=callback)
    if created and start_now:
        start(job)
        job.refresh_from_db()
    return job


def results(job: Job) -> dict:
    """A finished search's {key: [(passage id, score)…]}, or a re-ranking's {key: {"ranking", "models"}}."""
    merged = {}
    for result in job.shards.filter(status=Shard.Status.DONE).order_by("number").values_list("result", flat=True):
        merged.update(result or {})
    if job.kind == Job.Kind.SEARCH:
        return {key: [(int(pid), float(score)) for pid, score in ranking] for key, ranking in merged.items()}
    return merged


def search_here(collection, spec: dict, queries, k: int) -> dict:
    """Build the index if needed and search, all in this process (scripts, benchmarks): {key: [(id, score)…]}."""
    job = ensure_index(collection, spec, start_now=False)
    if job is not None:
        _finished(run_here(job))
    return results(_finished(run_here(ensure_search(collection, spec, queries, k, start_now=False))))


def rerank_here(collection, rerankers, items, normalisation="minmax") -> dict:
    """Re-rank in this process: {key: {"ranking": [[id, score]…], "models": …}}."""
    job = ensure_rerank(collection, rerankers, items, normalisation=normalisation, start_now=False)
    return results(_finished(run_here(job)))


def _finished(job: Job) -> Job:
    if job.status == Job.Status.FAILED:
        raise RuntimeError(f"{job}: {job.error.splitlines()[0] if job.error else 'failed'}")
    return job
