"""Pools from our retrievers (BM25, dense, cross-encoder ensembles): runs saved, fused or re-ranked, provenance kept."""

import logging

import pytest
from django.core.management import CommandError, call_command

from assessments.models import CandidateSource, Pool, PoolCandidate, Run, RunEntry, Topic
from assessments.services.pooling import PoolError, assemble_pool, define_pool, pool_jobs
from retrieval import fusion
from retrieval.models import Job, Passage
from tests import factories
from tests.retrieval.fixtures import eager_celery, index_dir, tiny_cross_encoders, tiny_encoder  # noqa: F401
from tests.retrieval.tiny_models import cranfield_documents, cranfield_queries

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_celery")]


@pytest.fixture
def cranfield(index_dir):  # noqa: F811
    coll = factories.collection("cran")
    Passage.objects.bulk_create(Passage(collection=coll, external_id=i, text=t) for i, t in cranfield_documents(150))
    topics = [
        Topic.objects.create(collection=coll, external_id=str(n), kind=Topic.Kind.ADHOC, text=text)
        for n, text in enumerate(cranfield_queries(4), start=1)
    ]
    return coll, topics


def ranking(pool, topic):
    return list(PoolCandidate.objects.filter(pool=pool, topic=topic).order_by("rank").values_list("passage_id", flat=True))


def top(run, topic, k):
    return list(RunEntry.objects.filter(run=run, topic=topic, rank__lte=k).order_by("rank").values_list("passage_id", "score"))


def test_each_retriever_is_saved_as_a_run_and_the_union_keeps_provenance(cranfield, tiny_encoder):  # noqa: F811
    coll, topics = cranfield
    pool = define_pool(name="u", collection=coll, topics=topics, retrievers=["bm25", f"dense:{tiny_encoder}"], depth=5)
    assert assemble_pool(pool.pk).status == Pool.Status.READY

    bm25, dense = Run.objects.get(name="bm25"), Run.objects.get(name__startswith="dense-tiny-encoder")
    assert bm25.source == Run.Source.RETRIEVER and bm25.retriever["kind"] == "bm25" and bm25.retriever["depth"] == 100
    assert dense.retriever["model"] == tiny_encoder and dense.retriever["pooling"] == "auto"
    assert RunEntry.objects.filter(run=dense, topic=topics[0]).count() == 100
    for topic in topics:
        expected = {pid for pid, _ in top(bm25, topic, 5)} | {pid for pid, _ in top(dense, topic, 5)}
        assert set(ranking(pool, topic)) == expected
    best = PoolCandidate.objects.get(pool=pool, topic=topics[0], rank=1)
    assert {s.run.name for s in best.sources.all()} <= {"bm25", dense.name}
    assert all(s.rank <= 5 for s in CandidateSource.objects.filter(candidate__pool=pool))


def test_an_rrf_pool_keeps_the_fused_top_n(cranfield, tiny_encoder):  # noqa: F811
    coll, topics = cranfield
    upload = factories.run(coll, "upload", {topics[0]: list(Passage.objects.filter(collection=coll)[:8])})
    pool = define_pool(
        name="f", collection=coll, topics=topics, runs=[upload], retrievers=["bm25", f"dense:{tiny_encoder}"],
        strategy=Pool.Strategy.RRF, depth=10, per_topic=6,
    )
    assemble_pool(pool.pk)
    bm25, dense = Run.objects.get(name="bm25"), Run.objects.get(name__startswith="dense-")
    fused_run = Run.objects.get(name__startswith="rrf-")
    assert fused_run.name == f"rrf-bm25+{dense.name}+upload" and fused_run.retriever["k"] == 60
    expected = dict(fusion.rrf([top(upload, topics[0], 10), top(bm25, topics[0], 10), top(dense, topics[0], 10)]))
    assert dict(top(fused_run, topics[0], 100)) == pytest.approx(expected)
    assert ranking(pool, topics[0]) == [pid for pid, _ in top(fused_run, topics[0], 6)]
    scores = list(PoolCandidate.objects.filter(pool=pool, topic=topics[0]).order_by("rank").values_list("score", flat=True))
    assert scores == sorted(scores, reverse=True) and len(scores) == 6


def test_combmnz_fusion_is_chosen_by_a_parameter(cranfield):
    coll, topics = cranfield
    pool = define_pool(
        name="mnz", collection=coll, topics=topics[:1], retrievers=["bm25", "bm25:k1=0.5,b=0.3"],
        strategy=Pool.Strategy.RRF, fusion_method="combmnz", normalisation="zscore", depth=10, per_topic=4,
    )
    assemble_pool(pool.pk)
    runs = [Run.objects.get(name="bm25"), Run.objects.get(name="bm25-k1-0.5-b-0.3")]
    fused_run = Run.objects.get(name="combmnz-bm25+bm25-k1-0.5-b-0.3")
    expected = dict(fusion.combmnz([top(r, topics[0], 10) for r in runs], "zscore"))
    assert dict(top(fused_run, topics[0], 100)) == pytest.approx(expected)
    assert ranking(pool, topics[0]) == [pid for pid, _ in top(fused_run, topics[0], 4)]


def test_a_rerank_pool_rescores_the_union_with_the_ensemble_and_keeps_the_top_n(
    cranfield, tiny_encoder, tiny_cross_encoders  # noqa: F811
):
    coll, topics = cranfield
    retrievers = ["bm25", f"dense:{tiny_encoder}", *(f"rerank:{path}" for path in tiny_cross_encoders)]
    pool = define_pool(
        name="r", collection=coll, topics=topics[:2], retrievers=retrievers, strategy=Pool.Strategy.RERANK,
        depth=6, per_topic=3,
    )
    assemble_pool(pool.pk)
    reranked = Run.objects.get(name__startswith="rerank-")
    assert reranked.retriever["over"] == sorted(["bm25", Run.objects.get(name__startswith="dense-").name])
    for topic in topics[:2]:
        union = {pid for run in Run.objects.exclude(pk=reranked.pk) for pid, _ in top(run, topic, 6)}
        assert {pid for pid, _ in top(reranked, topic, 100)} == union
        assert ranking(pool, topic) == [pid for pid, _ in top(reranked, topic, 3)]
    first = PoolCandidate.objects.get(pool=pool, topic=topics[0], rank=1)
    assert reranked.name in {s.run.name for s in first.sources.all()}
    assert Job.objects.get(kind=Job.Kind.RERANK).params["models"][0]["model"] == tiny_cross_encoders[0]


def test_rebuilding_gives_the_same_pool_and_redoes_no_retrieval(cranfield, tiny_encoder):  # noqa: F811
    coll, topics = cranfield
    pool = define_pool(name="again", collection=coll, topics=topics, retrievers=["bm25", f"dense:{tiny_encoder}"],
                       strategy=Pool.Strategy.RRF, depth=8, per_topic=5)
    assemble_pool(pool.pk)
    first = list(PoolCandidate.objects.filter(pool=pool).values_list("topic_id", "passage_id", "rank", "score"))
    counts = (Job.objects.count(), RunEntry.objects.count(), CandidateSource.objects.count())
    assemble_pool(pool.pk)
    assert list(PoolCandidate.objects.filter(pool=pool).values_list("topic_id", "passage_id", "rank", "score")) == first
    assert (Job.objects.count(), RunEntry.objects.count(), CandidateSource.objects.count()) == counts
    other = define_pool(name="other", collection=coll, topics=topics[:2], retrievers=["bm25"], depth=3)
    assemble_pool(other.pk)
    assert RunEntry.objects.count() == counts[1]  # the bm25 run already ranks these topics: reused
    assert {job.kind for job in pool_jobs(pool)} == {Job.Kind.BM25_INDEX, Job.Kind.ENCODE, Job.Kind.SEARCH}


def test_a_retriever_that_fails_fails_the_pool_with_the_reason(cranfield, tmp_path):
    coll, topics = cranfield
    pool = define_pool(name="bad", collection=coll, topics=topics, retrievers=[f"dense:{tmp_path / 'no-such-model'}"])
    with pytest.raises(PoolError, match="no-such-model"):
        assemble_pool(pool.pk)
    call_command("build_pool", "--name", "bad2", "--collection", "cran", "--retrievers", "bm25", "--no-progress")
    from assessments.tasks import build_pool as task

    assert task.apply(args=[pool.pk]).get()["status"] == "failed"
    pool.refresh_from_db()
    assert pool.status == Pool.Status.FAILED and "no-such-model" in pool.error


@pytest.mark.parametrize("logging_set_up", ["as configured", "root at WARNING", "the jobs' logger disabled"])
def test_the_command_builds_a_fused_pool_and_says_so(cranfield, tiny_encoder, capsys, logging_set_up):  # noqa: F811
    """Its progress shows whatever the process's logging set-up: a site's LOG_LEVEL=WARNING, a Celery worker's
    set-up or a dictConfig that disabled the loggers it found (the PostgreSQL CI run of 27 Nov 2026 printed no
    progress line here, cause not found)."""
    coll, topics = cranfield
    root, jobs = logging.getLogger(), logging.getLogger("retrieval.jobs")
    before = root.level, jobs.disabled
    root.setLevel(logging.WARNING if logging_set_up == "root at WARNING" else root.level)
    jobs.disabled = logging_set_up == "the jobs' logger disabled"
    try:
        call_command(
            "build_pool", "--name", "cli", "--retrievers", "bm25", f"dense:{tiny_encoder}", "--strategy", "rrf",
            "--depth", "10", "--per-topic", "5", "--topics", "1", "2",
        )
    finally:
        root.setLevel(before[0])
        jobs.disabled = before[1]
    out = capsys.readouterr()
    pool = Pool.objects.get(name="cli")
    assert pool.status == Pool.Status.READY and pool.candidates.count() == 10
    assert "Pool cli ready: 10 candidates over 2 topics" in out.out
    assert "shards" in out.err  # job progress


def test_the_command_refuses_what_it_cannot_build(cranfield):
    with pytest.raises(CommandError, match="needs at least one re-ranker"):
        call_command("build_pool", "--name", "x", "--retrievers", "bm25", "--strategy", "rerank")
    with pytest.raises(CommandError, match="unknown retriever 'splade'"):
        call_command("build_pool", "--name", "x", "--retrievers", "splade")
    with pytest.raises(CommandError, match="no topics 99"):
        call_command("build_pool", "--name", "x", "--retrievers", "bm25", "--topics", "99")
    with pytest.raises(CommandError, match="no runs selected"):
        call_command("build_pool", "--name", "x")


def test_a_pools_run_count_includes_the_runs_our_retrievers_made(cranfield):
    """The campaign home said "Runs 0" beside a BM25 pool: its run was made by our retriever, not uploaded (issue 39
    item 12). Its counts are subqueries, each of its own rows."""
    coll, topics = cranfield
    upload = factories.run(coll, "upload", {topics[0]: list(Passage.objects.filter(collection=coll)[:8])})
    pool = define_pool(name="b", collection=coll, topics=topics, runs=[upload], retrievers=["bm25"], depth=3)
    assert Pool.objects.with_counts().get(pk=pool.pk).run_total == 2  # defined: one upload, one retriever to run
    assert assemble_pool(pool.pk).status == Pool.Status.READY
    counted = Pool.objects.with_counts().get(pk=pool.pk)
    assert counted.run_count == 1 and counted.run_total == 2  # the upload, and the run bm25 made
    assert counted.topic_count == 4 and counted.candidate_count == PoolCandidate.objects.filter(pool=pool).count() > 4
    only_bm25 = define_pool(name="c", collection=coll, topics=topics[:2], retrievers=["bm25"], depth=3)
    assemble_pool(only_bm25.pk)
    assert Pool.objects.with_counts().get(pk=only_bm25.pk).run_total == 1
