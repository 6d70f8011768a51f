"""Pool building through a real Celery worker on a real broker (CELERY_BROKER_URL, e.g. Redis in CI)."""

import os
import pytest

from assessments.models import CandidateSource, Pool, PoolCandidate
from assessments.tasks import build_pool
from tests import factories
from tests.retrieval.fixtures import thread_worker_of

pytestmark = [
    pytest.mark.worker,
    pytest.mark.skipif(not os.environ.get("CELERY_BROKER_URL"), reason="needs CELERY_BROKER_URL (a real broker)"),
]


@pytest.fixture
def worker(transactional_db):
    from config.celery import app

    with thread_worker_of(app, concurrency=2, perform_ping_check=False, loglevel="WARNING", shutdown_timeout=30):
        yield app


def test_a_worker_builds_a_pool_sent_through_the_broker(worker):
    coll = factories.collection()
    t1 = factories.topic(coll, "1")
    a, b, c = (factories.passage(coll, x) for x in "abc")
    run1, run2 = factories.run(coll, "r1", {t1: [a, b]}), factories.run(coll, "r2", {t1: [c, a]})
    pool = factories.pool(coll, [t1], [run1, run2], depth=5)

    assert worker.conf.task_always_eager is False
    first = build_pool.delay(pool.pk)
    second = build_pool.delay(pool.pk)  # delivered twice: must not duplicate anything

    assert first.get(timeout=60)["status"] == "ready"
    assert second.get(timeout=60)["candidates"] == 3
    assert Pool.objects.get(pk=pool.pk).status == Pool.Status.READY
    assert PoolCandidate.objects.filter(pool=pool).count() == 3
    assert CandidateSource.objects.filter(candidate__pool=pool).count() == 4
