"""Depth-k union pooling: candidates with provenance, deterministic, safe to rebuild."""

import pytest

from assessments.models import CandidateSource, Pool, PoolCandidate
from assessments.services.pooling import PoolError, assemble_pool
from assessments.tasks import build_pool as build_pool_task
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_runs():
    coll = factories.collection()
    t1, t2 = factories.topic(coll, "1"), factories.topic(coll, "2")
    a, b, c, d = (factories.passage(coll, x) for x in "abcd")
    run1 = factories.run(coll, "r1", {t1: [a, b, c], t2: [d]})
    run2 = factories.run(coll, "r2", {t1: [c, a, d]})
    return coll, (t1, t2), (run1, run2), (a, b, c, d)


def ranking(pool, topic):
    return list(PoolCandidate.objects.filter(pool=pool, topic=topic).order_by("rank").values_list("passage__external_id", flat=True))


def test_it_pools_the_union_of_the_runs_to_depth_k(two_runs):
    coll, (t1, t2), runs, _ = two_runs
    pool = factories.pool(coll, [t1, t2], runs, depth=2)
    assemble_pool(pool.pk)

    # depth 2: r1 gives a@1 b@2, r2 gives c@1 a@2; a is best at rank 1 with two runs, then c@1, then b@2.
    assert ranking(pool, t1) == ["a", "c", "b"]
    assert ranking(pool, t2) == ["d"]
    pool.refresh_from_db()
    assert pool.status == Pool.Status.READY and pool.built_at is not None


def test_each_candidate_remembers_which_runs_brought_it_at_which_rank(two_runs):
    coll, (t1, _), runs, (a, *_) = two_runs
    pool = factories.pool(coll, [t1], runs, depth=3)
    assemble_pool(pool.pk)
    candidate = PoolCandidate.objects.get(pool=pool, passage=a)
    assert sorted(candidate.sources.values_list("run__name", "rank")) == [("r1", 1), ("r2", 2)]


def test_the_per_topic_cap_keeps_the_best_candidates(two_runs):
    coll, (t1, _), runs, _ = two_runs
    pool = factories.pool(coll, [t1], runs, depth=10, per_topic=2)
    assemble_pool(pool.pk)
    assert ranking(pool, t1) == ["a", "c"]


def test_rebuilding_gives_the_same_pool_and_duplicates_nothing(two_runs):
    coll, topics, runs, _ = two_runs
    pool = factories.pool(coll, topics, runs, depth=3)
    assemble_pool(pool.pk)
    first = list(PoolCandidate.objects.filter(pool=pool).values_list("topic_id", "passage_id", "rank"))
    assemble_pool(pool.pk)
    assert list(PoolCandidate.objects.filter(pool=pool).values_list("topic_id", "passage_id", "rank")) == first
    assert CandidateSource.objects.filter(candidate__pool=pool).count() == 7


def test_a_pool_without_runs_fails_with_a_reason(two_runs):
    coll, topics, _, _ = two_runs
    pool = factories.pool(coll, topics, [])
    with pytest.raises(PoolError, match="no runs selected"):
        assemble_pool(pool.pk)


def test_the_task_stores_why_a_build_failed(two_runs):
    coll, topics, _, _ = two_runs
    pool = factories.pool(coll, topics, [])
    result = build_pool_task.apply(args=[pool.pk]).get()
    pool.refresh_from_db()
    assert result["status"] == "failed"
    assert pool.status == Pool.Status.FAILED and "no runs selected" in pool.error
