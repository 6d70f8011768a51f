"""Building pools from runs. Rebuilding with the same inputs gives the same pool."""

from collections import defaultdict

from django.db import transaction
from django.utils import timezone

from assessments.models import CandidateSource, Pool, PoolCandidate, RunEntry


class PoolError(ValueError):
    """A pool that cannot be built as asked; the message says why."""


def build_pool(pool_id: int) -> Pool:
    """(Re)build a pool's candidates from its runs; safe to run twice (the old candidates are replaced whole).

    Strategy `union` (TREC depth-k pooling): every passage a run ranks within `depth` for
    a topic, ordered by its best rank, then by how many runs brought it, then by passage
    id; at most `per_topic` a topic. Other strategies need retrievers (retrieval issue).
    """
    with transaction.atomic():
        pool = Pool.objects.select_for_update().get(pk=pool_id)
        if pool.strategy != Pool.Strategy.UNION:
            raise PoolError(f"pool {pool.name}: strategy {pool.strategy!r} is not available yet; use 'union'")
        topics = list(pool.topics.all())
        runs = list(pool.runs.all())
        if not topics:
            raise PoolError(f"pool {pool.name}: no topics selected")
        if not runs:
            raise PoolError(f"pool {pool.name}: no runs selected")

        found = defaultdict(dict)  # topic id -> passage id -> [(rank, run id, score)]
        entries = RunEntry.objects.filter(run__in=runs, topic__in=topics, rank__lte=pool.depth).values_list(
            "topic_id", "passage_id", "run_id", "rank", "score"
        )
        for topic_id, passage_id, run_id, rank, score in entries.iterator(chunk_size=5000):
            found[topic_id].setdefault(passage_id, []).append((rank, run_id, score))

        PoolCandidate.objects.filter(pool=pool).delete()
        candidates, sources = [], []
        for topic in topics:
            ordered = sorted(found[topic.pk].items(), key=lambda kv: (min(r for r, _, _ in kv[1]), -len(kv[1]), kv[0]))
            if pool.per_topic:
                ordered = ordered[: pool.per_topic]
            for position, (passage_id, hits) in enumerate(ordered, start=1):
                candidate = PoolCandidate(pool=pool, topic=topic, passage_id=passage_id, rank=position)
                candidates.append(candidate)
                sources.append((candidate, hits))
        PoolCandidate.objects.bulk_create(candidates, batch_size=1000)
        CandidateSource.objects.bulk_create(
            [
                CandidateSource(candidate=candidate, run_id=run_id, rank=rank, score=score)
                for candidate, hits in sources
                for rank, run_id, score in hits
            ],
            batch_size=1000,
        )
        pool.status, pool.error, pool.built_at = Pool.Status.READY, "", timezone.now()
        pool.save(update_fields=["status", "error", "built_at"])
    return pool


def mark_pool_failed(pool_id: int, error: str) -> None:
    """Record why a build failed, so the organiser sees it."""
    Pool.objects.filter(pk=pool_id).update(status=Pool.Status.FAILED, error=error[:5000])
