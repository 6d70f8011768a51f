"""Real Celery workers on a real broker (CELERY_BROKER_URL, Redis in CI): pools from retrievers, a killed worker.

The second test runs the worker as a separate process on the test database (PostgreSQL, or SQLite
when SQLITE_TEST_NAME puts the test database in a file), kills it with SIGKILL in the middle of a
sharded encoding job, starts it again under the same node name, and checks that the job and the
pool waiting on it finish with nothing duplicated. It kills the worker at two moments: holding a
shard, and (PostgreSQL, held there by a row lock) after it took a shard's message from the broker
but before it claimed the shard, when the database says nothing of it.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection, transaction

from assessments.models import CandidateSource, Pool, PoolCandidate, Run, RunEntry, Topic
from assessments.services.pooling import define_pool
from retrieval.models import Index, Job, Passage, Shard
from tests import factories
from tests.retrieval.fixtures import minilm, thread_worker_of, tiny_encoder  # noqa: F401
from tests.retrieval.tiny_models import cranfield_documents, cranfield_queries

pytestmark = [
    pytest.mark.worker,
    pytest.mark.skipif(not os.environ.get("CELERY_BROKER_URL"), reason="needs CELERY_BROKER_URL (a real broker)"),
]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def shared_index_dir(settings, tmp_path, monkeypatch):
    """An index folder that this process and worker subprocesses agree on (through the environment)."""
    folder = tmp_path / "indexes"
    settings.RETRIEVAL_INDEX_DIR = folder
    monkeypatch.setenv("RETRIEVAL_INDEX_DIR", str(folder))
    return folder


def cranfield_pool(name, documents, topics, retrievers, **fields):
    coll = factories.collection(f"cran-{name}")
    Passage.objects.bulk_create(Passage(collection=coll, external_id=i, text=t) for i, t in cranfield_documents(documents))
    chosen = [
        Topic.objects.create(collection=coll, external_id=str(n), kind=Topic.Kind.ADHOC, text=text)
        for n, text in enumerate(cranfield_queries(topics), start=1)
    ]
    return define_pool(name=name, collection=coll, topics=chosen, retrievers=retrievers, **fields)


def wait_for(condition, timeout, what, explain=None):
    """Wait until condition() holds; on a time-out, fail saying what, and explain() (the state, a log) when given."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}" + (f"\n{explain()}" if explain else ""))


def assert_nothing_duplicated(pool):
    for job in Job.objects.filter(kind=Job.Kind.ENCODE):
        assert job.status == Job.Status.DONE and job.shards_done == job.shard_count
        assert job.shards.filter(status=Shard.Status.DONE).count() == job.shard_count
        manifest = json.loads((job.index.path / "manifest.json").read_text())
        assert manifest["count"] == Passage.objects.filter(collection=pool.collection).count()
        import numpy as np

        ids = np.load(job.index.path / "ids.npy")
        assert len(ids) == len(set(ids.tolist())) == manifest["count"]
    for run in Run.objects.filter(source=Run.Source.RETRIEVER):
        per_topic = RunEntry.objects.filter(run=run).values_list("topic_id", "rank")
        assert len(per_topic) == len(set(per_topic))
    pairs = list(PoolCandidate.objects.filter(pool=pool).values_list("topic_id", "passage_id"))
    assert len(pairs) == len(set(pairs))
    sources = list(CandidateSource.objects.filter(candidate__pool=pool).values_list("candidate_id", "run_id"))
    assert len(sources) == len(set(sources))


@pytest.fixture
def thread_worker(transactional_db, shared_index_dir):
    from config.celery import app

    with thread_worker_of(app, concurrency=2, queues=["default", "gpu"], perform_ping_check=False, loglevel="WARNING",
                          shutdown_timeout=60):
        yield app


def test_a_worker_builds_a_pool_with_bm25_dense_and_fusion(thread_worker, tiny_encoder):  # noqa: F811
    from assessments.tasks import build_pool

    pool = cranfield_pool(
        "worker-rrf", 120, 3, ["bm25", f"dense:{tiny_encoder}"], strategy=Pool.Strategy.RRF, depth=10, per_topic=5
    )
    assert thread_worker.conf.task_always_eager is False
    build_pool.delay(pool.pk)
    build_pool.delay(pool.pk)  # delivered twice: must not duplicate anything
    wait_for(lambda: Pool.objects.get(pk=pool.pk).status in (Pool.Status.READY, Pool.Status.FAILED), 600, "the pool")
    pool.refresh_from_db()
    assert pool.status == Pool.Status.READY, pool.error
    assert PoolCandidate.objects.filter(pool=pool).count() == 15
    assert Index.objects.filter(status=Index.Status.READY).count() == 2
    assert_nothing_duplicated(pool)


def database_url():
    settings = connection.settings_dict
    if connection.vendor == "postgresql":
        auth = settings["USER"] + (f":{settings['PASSWORD']}" if settings["PASSWORD"] else "")
        return f"postgres://{auth}@{settings['HOST'] or '127.0.0.1'}:{settings['PORT'] or 5432}/{settings['NAME']}"
    if connection.vendor == "sqlite" and not connection.is_in_memory_db():
        return f"sqlite:///{settings['NAME']}"
    return None


def start_worker_process(node, log):
    env = dict(
        os.environ, DATABASE_URL=database_url(), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", RETRIEVAL_SHARD_SIZE="8"
    )
    command = [
        sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "default,gpu", "-P", "solo", "-n", node,
        "--without-heartbeat", "--without-mingle", "--without-gossip", "--loglevel", "INFO",
    ]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


WAITING_UPDATES = (
    "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
    " AND wait_event_type = 'Lock' AND query ILIKE '%%UPDATE%%retrieval_shard%%'"
)
# a claim is the only UPDATE of a shard that sets its attempts (heartbeats and the end of a shard do not)
WAITING_CLAIMS = WAITING_UPDATES + " AND query ILIKE '%%attempts%%'"


def waiting(which: str) -> int:
    """How many other PostgreSQL sessions wait for a lock in an update of a shard (WAITING_UPDATES or _CLAIMS)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # in a transaction, pg_stat_activity is read once
        cursor.execute("SELECT count(*) " + which)
        return cursor.fetchone()[0]


class ShardInHand(Exception):
    """The worker held a shard when the pending ones were locked: let go, and try again between two shards."""


def hold_the_next_claim_and_kill(job, worker, explain, tries=50):
    """Lock the job's pending shards, so that the worker's next claim waits on them, and SIGKILL it there.

    Locking races the worker's claim of its next shard: a claim that commits while the SELECT ... FOR UPDATE
    runs leaves the row locked (PostgreSQL locks the newest version before it rechecks the WHERE) although
    it is RUNNING, and the worker then waits in that shard's heartbeat or end, never in a claim. So when it
    waits in an update that is not a claim, the locks are let go and taken again after a moment.
    """
    for _ in range(tries):
        try:
            with transaction.atomic():
                # The worker's next claim waits on these rows: it has the message, the database says nothing.
                list(Shard.objects.select_for_update(of=("self",)).filter(job=job, status=Shard.Status.PENDING).values_list("pk"))
                wait_for(lambda: waiting(WAITING_UPDATES), 300, "the worker to wait in its claim", explain)
                if not waiting(WAITING_CLAIMS):
                    raise ShardInHand
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait(30)
                with connection.cursor() as cursor:  # its server session would still run the claim: end it too,
                    # and wait (up to 30 s) until it has ended, before the lock goes
                    cursor.execute("SELECT pg_stat_clear_snapshot()")
                    cursor.execute("SELECT bool_and(pg_terminate_backend(pid, 30000)) " + WAITING_CLAIMS)
                    assert cursor.fetchone()[0], "the worker's server session did not end"
                return
        except ShardInHand:
            time.sleep(0.2)
    raise AssertionError(f"the worker waited on a shard it held each of {tries} times\n{explain()}")


def state(pool) -> str:
    """What the jobs and shards look like, for a failure message."""
    lines = [f"pool {pool.pk}: {Pool.objects.get(pk=pool.pk).status}"]
    for job in Job.objects.order_by("pk"):
        shards = ", ".join(f"{n}:{s}@{w or '-'}" for n, s, w in job.shards.order_by("number").values_list("number", "status", "worker"))
        lines.append(f"job {job.pk} {job.kind} {job.status} {job.shards_done}/{job.shard_count}: {shards}")
    return "\n".join(lines)


@pytest.mark.parametrize("moment", ["mid-shard", "before-claim"])
def test_killing_a_worker_mid_job_and_starting_it_again_finishes_the_job(
    moment, transactional_db, shared_index_dir, minilm, tmp_path  # noqa: F811
):
    """SIGKILL a worker holding a shard, or one that has taken a shard's message from the broker but not yet claimed
    the shard in the database (so nothing there says it held it), and start it again: the job and pool finish."""
    from assessments.tasks import build_pool

    if database_url() is None:
        pytest.skip("a worker process needs the test database in PostgreSQL or in a SQLite file (SQLITE_TEST_NAME)")
    if moment == "before-claim" and connection.vendor != "postgresql":
        pytest.skip("holds the worker before its claim with a PostgreSQL row lock")
    pool = cranfield_pool(
        f"worker-kill-{moment}", 96, 3, ["bm25", "dense"], strategy=Pool.Strategy.RRF, depth=10, per_topic=5,
    )
    log_path = tmp_path / "worker.log"

    def explain():
        return f"{state(pool)}\n{log_path.read_text()[-4000:]}"

    with open(log_path, "wb") as log:
        node = "gpu1@pooljudge-test"
        worker = start_worker_process(node, log)
        try:
            build_pool.delay(pool.pk)
            wait_for(lambda: Job.objects.filter(kind=Job.Kind.ENCODE, shards_done__gte=2).exists(), 600, "2 shards")
            job = Job.objects.get(kind=Job.Kind.ENCODE)
            if moment == "mid-shard":
                os.killpg(worker.pid, signal.SIGKILL)  # no warm shutdown: the shard in hand is lost with the process
            else:
                hold_the_next_claim_and_kill(job, worker, explain)
                assert not job.shards.filter(status=Shard.Status.RUNNING).exists(), state(pool)
            worker.wait(30)
            job.refresh_from_db()
            assert job.status != Job.Status.DONE and job.shards_done < job.shard_count, "killed too late"

            worker = start_worker_process(node, log)  # same node name: it takes back what it held
            built = (Pool.Status.READY, Pool.Status.FAILED)
            wait_for(lambda: Pool.objects.get(pk=pool.pk).status in built, 600, "pool", explain)
        finally:
            if worker.poll() is None:
                os.killpg(worker.pid, signal.SIGTERM)
                worker.wait(60)
    pool.refresh_from_db()
    assert pool.status == Pool.Status.READY, pool.error + log_path.read_text()[-3000:]
    job.refresh_from_db()
    assert job.shard_count == 12 and sum(job.shards.values_list("attempts", flat=True)) >= 12
    assert_nothing_duplicated(pool)
