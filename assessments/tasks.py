"""Celery tasks of the test collection. They take ids, re-read state and can run twice without harm."""

from celery import shared_task

from assessments.services.pooling import PoolError, assemble_pool, mark_pool_failed
from retrieval.services.background import retrying


@shared_task(bind=True, acks_late=True, name="assessments.tasks.build_pool")
def build_pool(self, pool_id: int, resume: bool = True) -> dict:
    """Build (or rebuild) a pool, or move its build on when a retrieval job it waits for has ended.

    A build error (bad inputs, a failed retrieval job) is stored on the pool, not retried; a
    transient error (database or broker connection) is retried with backoff (background.retrying).
    """
    def work():
        try:
            pool = assemble_pool(pool_id, resume=resume)
        except PoolError as exc:
            mark_pool_failed(pool_id, str(exc))
            return {"pool": pool_id, "status": "failed", "error": str(exc)}
        return {"pool": pool.pk, "status": pool.status, "candidates": pool.candidates.count()}

    def give_up(exc):
        mark_pool_failed(pool_id, f"gave up after a transient error: {exc}")
        return {"pool": pool_id, "status": "failed", "error": str(exc)}

    return retrying(self, work, give_up)


def queue_build(pool_id: int) -> None:
    """The one way to start a pool's build, queued as all background work is (retrieval.services.background.queue:
    sent when the current transaction commits; without a broker, in the web process's background thread while
    serving a request, else in-process before this returns to its caller's caller)."""
    from retrieval.services import background

    background.queue(build_pool.name, pool_id)


# Model-assisted assessment (issue 18). Training and labelling load models: gpu_* tasks go to the gpu queue
# (config.settings routes assessments.tasks.gpu_*), and run on the CPU where a worker has no GPU. A claimed or
# finished job is left alone, so a re-delivered task does nothing twice; any failure is stored on the job.


@shared_task(acks_late=True, name="assessments.tasks.gpu_train_annotator")
def gpu_train_annotator(job_id: int) -> dict:
    """Cross-validate and train an auto-annotator (assessments.machine.annotator.train)."""
    from assessments.machine import annotator

    metrics = annotator.train(job_id)
    return {"job": job_id, "kappa": metrics.get("kappa")}


@shared_task(acks_late=True, name="assessments.tasks.gpu_machine_label")
def gpu_machine_label(job_id: int) -> dict:
    """Label pool candidates with a trained annotator, in batches, resuming where a previous run stopped."""
    from assessments.machine import annotator

    return annotator.label(job_id)


@shared_task(acks_late=True, name="assessments.tasks.llm_judge")
def llm_judge(job_id: int) -> dict:
    """Ask an LLM endpoint for the labels of a job (rate limit, retries, spend cap; nothing asked twice)."""
    from assessments.machine import llm

    return llm.run(job_id)


@shared_task(acks_late=True, name="assessments.tasks.llm_nuggets")
def llm_nuggets(job_id: int) -> dict:
    """Ask an LLM endpoint for a nuggets campaign's nugget assignments or suggestions (the judge's limits)."""
    from assessments.machine import nuggets

    return nuggets.run(job_id)
