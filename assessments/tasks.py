"""Celery tasks of the test collection. They take ids, re-read state and can run twice without harm."""

from celery import shared_task

from assessments.services.pooling import PoolError, build_pool as build_pool_now, mark_pool_failed


@shared_task(acks_late=True)
def build_pool(pool_id: int) -> dict:
    """Build (or rebuild) a pool's candidates; a build error is stored on the pool, not retried."""
    try:
        pool = build_pool_now(pool_id)
    except PoolError as exc:
        mark_pool_failed(pool_id, str(exc))
        return {"pool": pool_id, "status": "failed", "error": str(exc)}
    return {"pool": pool.pk, "status": pool.status, "candidates": pool.candidates.count()}
