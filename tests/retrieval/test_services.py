"""Indexes, searches and re-rankings as sharded jobs (eager Celery): idempotent, resumable, with stored progress."""

import json
from datetime import timedelta

import numpy as np
import pytest
from celery import shared_task
from django.db import OperationalError
from django.utils import timezone

from retrieval import services
from retrieval.encoders import Encoder, EncoderSpec
from retrieval.lexical import BM25Index
from retrieval.models import Index, Job, Passage, Shard, WorkerNode
from retrieval.services import jobs, work
from retrieval.specs import parse
from tests import factories
from tests.retrieval.tiny_models import cranfield_documents, cranfield_queries

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_celery")]

CALLS = []


@shared_task(name="tests.retrieval.record_callback")
def record_callback(*args):
    CALLS.append(args)


@pytest.fixture
def cranfield(index_dir):
    """A collection of 120 Cranfield documents."""
    coll = factories.collection("cran-small")
    Passage.objects.bulk_create(Passage(collection=coll, external_id=i, text=t) for i, t in cranfield_documents(120))
    return coll


@pytest.fixture
def dense(tiny_encoder):
    return parse(f"dense:{tiny_encoder}")


QUERIES = [(str(n), text) for n, text in enumerate(cranfield_queries(6), start=1)]


def test_a_bm25_index_is_built_once_and_searched(cranfield):
    job = services.ensure_index(cranfield, parse("bm25"))
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.shards_done == job.shard_count == 1
    index = services.index_for(cranfield, parse("bm25"))
    assert index.status == Index.Status.READY and index.passage_count == 120 and index.path.is_dir()
    assert services.ensure_index(cranfield, parse("bm25")) is None  # ready and current: nothing to do

    search = services.ensure_search(cranfield, parse("bm25"), QUERIES, k=10)
    found = services.results(search)
    rows = list(Passage.objects.filter(collection=cranfield).order_by("pk").values_list("pk", "text"))
    direct = BM25Index.build([pk for pk, _ in rows], [text for _, text in rows]).search([t for _, t in QUERIES], 10)
    assert [found[key] for key, _ in QUERIES] == direct


def test_dense_encoding_is_split_into_shards_and_the_faiss_index_assembled(cranfield, dense, tiny_encoder):
    job = services.ensure_index(cranfield, dense, shard_size=25)
    job.refresh_from_db()
    assert job.status == Job.Status.DONE
    assert (job.shard_count, job.shards_done, job.items_total, job.items_done) == (5, 5, 120, 120)
    assert job.rate and job.eta_seconds == 0 and "shards 5/5" in job.progress_line()
    index = job.index
    index.refresh_from_db()
    assert index.status == Index.Status.READY and index.dimension == 32
    manifest = json.loads((index.path / "manifest.json").read_text())
    assert manifest["count"] == 120 and len(manifest["shards"]) == 5
    assert (index.path / "faiss-flat.index").exists()

    found = services.results(services.ensure_search(cranfield, dense, QUERIES, k=5))
    encoder = Encoder(EncoderSpec(tiny_encoder), device="cpu")
    rows = list(Passage.objects.filter(collection=cranfield).order_by("pk").values_list("pk", "text"))
    scores = encoder.encode_queries([t for _, t in QUERIES]) @ encoder.encode_passages([t for _, t in rows]).T
    for (key, _), row in zip(QUERIES, scores):
        assert [pid for pid, _ in found[key]] == [rows[i][0] for i in np.argsort(-row)[:5]]


def test_an_hnsw_index_is_built_from_the_stored_embeddings_without_encoding_again(cranfield, dense):
    services.ensure_index(cranfield, dense)
    hnsw = {**dense, "index": "hnsw"}
    assert services.ensure_index(cranfield, hnsw) is None  # same encoder: the embeddings are there
    found = services.results(services.ensure_search(cranfield, hnsw, QUERIES, k=3))
    exact = services.results(services.ensure_search(cranfield, dense, QUERIES, k=3))
    assert (services.index_for(cranfield, dense).path / "faiss-hnsw32-200.index").exists()
    assert [found[k][0][0] for k, _ in QUERIES] == [exact[k][0][0] for k, _ in QUERIES]


def test_asking_again_gives_the_same_job_and_doing_a_shard_again_duplicates_nothing(cranfield, dense):
    job = services.ensure_index(cranfield, dense, shard_size=50)
    assert services.ensure_search(cranfield, dense, QUERIES, k=5) == services.ensure_search(cranfield, dense, QUERIES, 5)
    shard = job.shards.first()
    assert jobs.run_shard(shard.pk, worker="w2")["status"] == "skipped"  # done already
    # a re-delivered message (the broker thinks the first worker died) does the shard again, in place
    Shard.objects.filter(pk=shard.pk).update(status=Shard.Status.RUNNING, worker="w1")
    assert jobs.run_shard(shard.pk, worker="w2", redelivered=True)["status"] == "done"
    files = sorted(p.name for p in (job.index.path / f"job-{job.pk}").iterdir())
    assert files == ["00000.ids.npy", "00000.npy", "00001.ids.npy", "00001.npy", "00002.ids.npy", "00002.npy"]
    assert jobs.finish(job.pk)["status"] == Job.Status.DONE  # finishing twice is harmless too
    assert Job.objects.filter(kind=Job.Kind.ENCODE).count() == 1


def test_a_failed_shard_fails_the_job_with_the_reason_and_resume_finishes_it(cranfield, dense, monkeypatch):
    real_run = work.EncodeWork.run

    def broken(job, shard, beat):
        if shard.number == 2:
            raise RuntimeError("GPU fell off the bus")
        return real_run(job, shard, beat)

    monkeypatch.setattr(work.EncodeWork, "run", staticmethod(broken))
    CALLS.clear()
    job = services.ensure_index(cranfield, dense, shard_size=30, callback=["tests.retrieval.record_callback", [7]])
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.error.startswith("shard 3 of 4 failed: RuntimeError: GPU fell off the bus")
    assert "GPU fell off the bus" in job.shards.get(number=2).error
    assert job.shards_done == 3 and CALLS == [(7,)]  # the callback hears of the failure

    monkeypatch.setattr(work.EncodeWork, "run", staticmethod(real_run))
    job = services.resume(job.pk)
    assert job.status == Job.Status.DONE and job.shards_done == 4 and not job.error
    assert CALLS == [(7,), (7,)]
    assert job.shards.get(number=0).attempts == 1  # done shards are not redone
    assert json.loads((job.index.path / "manifest.json").read_text())["count"] == 120


def test_transient_errors_are_retried_and_others_are_not(cranfield, monkeypatch):
    real_run = work.BM25IndexWork.run
    failures = []

    def flaky(job, shard, beat):
        if len(failures) < 2:
            failures.append(1)
            raise OperationalError("database is locked")
        return real_run(job, shard, beat)

    monkeypatch.setattr(work.BM25IndexWork, "run", staticmethod(flaky))
    job = services.ensure_index(cranfield, parse("bm25"))
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.shards.get().attempts == 3


def test_a_restarted_worker_resends_the_shards_its_previous_life_held(cranfield, dense):
    job = services.ensure_index(cranfield, dense, shard_size=40, start_now=False)
    first, second, third = job.shards.order_by("number")
    jobs.run_shard(first.pk, worker="gpu1@host")
    Shard.objects.filter(pk=second.pk).update(status=Shard.Status.RUNNING, worker="gpu1@host")  # died holding it
    assert jobs.run_shard(second.pk, worker="gpu2@host")["status"] == "skipped"  # not stale yet: left alone
    assert services.recover_worker("gpu1@host") == [second.pk]
    jobs.run_shard(third.pk, worker="gpu2@host")
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.shards_done == 3


def test_a_worker_that_died_before_claiming_is_made_good_on_its_next_start_and_a_clean_stop_sends_nothing(
    cranfield, dense
):
    """A dead life may have taken messages the database knows nothing of: its next start re-sends pending shards and
    the callbacks of jobs that ended meanwhile. After a clean stop (messages back in the broker) nothing is sent."""
    CALLS.clear()
    assert jobs.worker_started("gpu1@host") == []  # first life
    job = services.ensure_index(cranfield, dense, shard_size=40, start_now=False)
    ended = Job.objects.create(kind=Job.Kind.SEARCH, key="ended", collection=cranfield, status=Job.Status.DONE,
                               finished_at=timezone.now(), callbacks=[["tests.retrieval.record_callback", [7]]])
    Job.objects.create(kind=Job.Kind.SEARCH, key="before", collection=cranfield, status=Job.Status.DONE,
                       finished_at=timezone.now() - timedelta(days=1), callbacks=[["tests.retrieval.record_callback", [6]]])
    first = job.shards.order_by("number").first()
    jobs.run_shard(first.pk, worker="gpu1@host")  # then it took shard 2's message and died before claiming it

    jobs.worker_stopped("gpu2@host")  # another node's stop is not this one's
    jobs.worker_started("gpu1@host")
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.shards_done == 3
    assert CALLS == [(7,)]
    assert WorkerNode.objects.get(name="gpu1@host").stopped_at is None

    CALLS.clear()
    again = services.ensure_index(cranfield, parse("bm25"), start_now=False)
    jobs.worker_stopped("gpu1@host")
    jobs.worker_started("gpu1@host")  # after a clean stop: its messages are in the broker, nothing to re-send
    assert again.shards.get().status == Shard.Status.PENDING and CALLS == []
    node = WorkerNode.objects.get(name="gpu1@host")
    assert node.stopped_at is None and node.started_at > ended.created_at


def test_a_shard_whose_workers_keep_dying_on_it_fails_with_the_reason_and_resume_gives_it_another_go(cranfield, dense):
    job = services.ensure_index(cranfield, dense, shard_size=40, start_now=False)
    first, second, _ = job.shards.order_by("number")
    Shard.objects.filter(pk=first.pk).update(attempts=jobs.MAX_ATTEMPTS - 1)
    assert jobs.run_shard(first.pk, worker="gpu1@host")["status"] == "done"  # the last try may still finish

    Shard.objects.filter(pk=second.pk).update(status=Shard.Status.RUNNING, worker="gpu1@host",
                                              attempts=jobs.MAX_ATTEMPTS, heartbeat_at=timezone.now())
    assert jobs.run_shard(second.pk, worker="gpu2@host")["status"] == "skipped"
    assert Shard.objects.get(pk=second.pk).status == Shard.Status.RUNNING  # a live worker holds it: left alone

    Shard.objects.filter(pk=second.pk).update(status=Shard.Status.PENDING, worker="")  # its worker died (again)
    assert jobs.run_shard(second.pk, worker="gpu2@host")["status"] == "skipped"
    second.refresh_from_db()
    job.refresh_from_db()
    assert second.status == Shard.Status.FAILED and f"claimed {jobs.MAX_ATTEMPTS} times without finishing" in second.error
    assert job.status == Job.Status.FAILED and "shard 2 of 3 failed: ShardGaveUp: claimed" in job.error

    job = services.resume(job.pk)
    assert job.status == Job.Status.DONE and job.shards.get(pk=second.pk).attempts == 1


def test_a_changed_collection_makes_the_index_out_of_date(cranfield):
    services.ensure_index(cranfield, parse("bm25"))
    factories.passage(cranfield, "new", text="a new report on hypersonic flow")
    job = services.ensure_index(cranfield, parse("bm25"))
    assert job is not None and job.status == Job.Status.DONE
    assert services.index_for(cranfield, parse("bm25")).passage_count == 121


def test_searching_an_index_that_is_not_built_says_so(cranfield):
    with pytest.raises(services.NotReady, match="bm25 index of cran-small is not built"):
        services.ensure_search(cranfield, parse("bm25"), QUERIES, 5)
    with pytest.raises(ValueError, match="has no passages to index"):
        services.ensure_index(factories.collection("empty"), parse("bm25"))


def test_an_ensemble_of_cross_encoders_reranks_candidates(cranfield, tiny_cross_encoders):
    pids = list(Passage.objects.filter(collection=cranfield).order_by("pk").values_list("pk", flat=True)[:8])
    rerankers = [parse(f"rerank:{path}") for path in tiny_cross_encoders]
    out = services.rerank_here(cranfield, rerankers, [("q1", QUERIES[0][1], pids), ("q2", QUERIES[1][1], pids[:3])])
    assert sorted(pid for pid, _ in out["q1"]["ranking"]) == sorted(pids)
    assert len(out["q2"]["models"]) == 2 and len(out["q2"]["ranking"]) == 3
    job = Job.objects.get(kind=Job.Kind.RERANK)
    assert job.gpu and job.items_total == 11


def test_gpu_work_is_routed_to_the_gpu_queue():
    from config.celery import app

    route = app.amqp.router.route
    assert route({}, "retrieval.tasks.gpu_run_shard")["queue"].name == "gpu"
    assert route({}, "retrieval.tasks.run_shard")["queue"].name == "default"
    assert route({}, "retrieval.tasks.finish_job")["queue"].name == "default"


@pytest.mark.parametrize("given", ["99999999999999999999999", "0", "²"])
def test_resume_job_refuses_an_id_no_job_can_have(given):
    """int() took 99999999999999999999999, which the database could not compare: an OverflowError traceback."""
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match=f"argument ID: '{given}' is not a job id"):
        call_command("resume_job", given)
