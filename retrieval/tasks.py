"""Celery tasks of the retrieval workers. GPU work is named gpu_* and routed to the "gpu" queue (settings).

Tasks take ids and re-read state; a retried or re-delivered task duplicates nothing (see
retrieval.services.jobs). Acknowledged late, so a worker that dies mid-shard loses no work; retried
only on the named transient errors (database connection trouble, network timeouts), with backoff
(retrieval.services.background.retrying, the policy of every task).
A worker starting under a node name re-sends what a dead worker of that name held or may have lost.

This module is imported by every process that loads the Celery app (the web process too), so it
imports nothing heavy: torch, transformers, faiss and bm25s are loaded inside the work itself.
"""

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown

from retrieval.services import jobs
from retrieval.services.background import retrying

def _run(task, shard_id: int) -> dict:
    delivery = getattr(task.request, "delivery_info", None) or {}
    hostname, redelivered = task.request.hostname or "", bool(delivery.get("redelivered"))

    def attempt_work():
        try:
            return jobs.run_shard(shard_id, worker=hostname, redelivered=redelivered)
        except jobs.TRANSIENT_ERRORS:
            jobs.release(shard_id)
            raise

    def give_up(exc):
        jobs.fail_shard(shard_id, exc)
        return {"shard": shard_id, "status": "failed", "error": jobs.describe(exc)}

    return retrying(task, attempt_work, give_up)


@shared_task(bind=True, acks_late=True, name="retrieval.tasks.run_shard")
def run_shard(self, shard_id: int) -> dict:
    """Do one CPU shard (BM25 indexing or BM25 search) on the default queue."""
    return _run(self, shard_id)


@shared_task(bind=True, acks_late=True, name="retrieval.tasks.gpu_run_shard")
def gpu_run_shard(self, shard_id: int) -> dict:
    """Do one GPU shard (encoding passages, dense search, cross-encoder re-ranking) on the gpu queue."""
    return _run(self, shard_id)


@shared_task(bind=True, acks_late=True, name="retrieval.tasks.finish_job")
def finish_job(self, job_id: int) -> dict:
    """Finish a job whose shards are all in (assemble the FAISS index, mark the index ready), then its callbacks."""

    def give_up(exc):
        jobs.fail_job(job_id, f"finishing failed: {jobs.describe(exc)}")
        return {"job": job_id, "status": "failed"}

    return retrying(self, lambda: jobs.finish(job_id, worker=self.request.hostname or ""), give_up)


@shared_task(acks_late=True, name="retrieval.tasks.resume_job")
def resume_job(job_id: int) -> dict:
    """Start a failed or stuck job again (what the admin's "resume" does)."""
    job = jobs.resume(job_id)
    return {"job": job.pk, "status": job.status}


@worker_ready.connect
def recover_orphaned_work(sender=None, **kwargs):
    """On start, record the node's new life and re-send what a previous worker of this node name held or lost."""
    hostname = getattr(sender, "hostname", "") or ""
    try:
        jobs.worker_started(hostname)
    except Exception:  # noqa: BLE001 — a worker must start even when the database is not there yet
        jobs.logger.exception("could not recover the work of %s", hostname)


@worker_shutdown.connect
def record_clean_stop(sender=None, **kwargs):
    """After a warm shutdown (unacknowledged messages are back in the broker), the next start has nothing to re-send."""
    hostname = getattr(sender, "hostname", "") or ""
    try:
        jobs.worker_stopped(hostname)
    except Exception:  # noqa: BLE001 — stopping must not fail; the next start then re-sends (harmless twice)
        jobs.logger.exception("could not record that %s stopped", hostname)
