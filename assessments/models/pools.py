"""Pools: the candidates per topic that assessors judge, with the runs that brought each one."""

from django.conf import settings
from django.db import models

from assessments.models.counting import related_count
from assessments.models.runs import Run
from assessments.models.topics import Topic
from retrieval.models import Collection, Passage


class PoolQuerySet(models.QuerySet):
    def with_counts(self):
        """Annotate candidate, topic and (uploaded) run counts, one query: each a subquery, so the count of a pool
        is the size of its own rows, never a product of its candidates, topics and runs. Pool.run_total adds the
        runs our retrievers made for it."""
        return self.annotate(
            candidate_count=related_count(PoolCandidate, "pool_id"),
            topic_count=related_count(Pool.topics.through, "pool_id"),
            run_count=related_count(Pool.runs.through, "pool_id"),
        )


class Pool(models.Model):
    """A selection of candidates per topic, built from runs by a strategy."""

    class Strategy(models.TextChoices):
        UNION = "union", "Depth-k union (TREC)"
        RRF = "rrf", "Reciprocal rank fusion, top N"
        RERANK = "rerank", "Re-ranked union, top N"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        BUILDING = "building", "Building"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    name = models.SlugField(max_length=100, unique=True)
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="pools")
    topics = models.ManyToManyField(Topic, related_name="pools")
    runs = models.ManyToManyField(Run, related_name="pools", blank=True)
    strategy = models.CharField(max_length=20, choices=Strategy.choices, default=Strategy.UNION)
    depth = models.PositiveIntegerField(default=20, help_text="How deep into each run to look.")
    per_topic = models.PositiveIntegerField(null=True, blank=True, help_text="At most this many candidates a topic.")
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="pools"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    built_at = models.DateTimeField(null=True, blank=True)

    objects = PoolQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return self.name

    @property
    def run_total(self) -> int:
        """The runs the pool is made of: once built, every run that fed it (uploaded runs and the runs our retrievers
        made); before, its uploaded runs (with_counts' run_count) and one run per first-stage retriever."""
        built = (self.params or {}).get("built")
        if built is not None:
            return len(built.get("runs", []))
        from retrieval import specs  # noqa: PLC0415 (retrieval's spec parser, only for a pool not built yet)

        try:
            first, _ = specs.split(list((self.params or {}).get("retrievers", [])))
        except specs.SpecError:
            first = []
        uploaded = self.run_count if hasattr(self, "run_count") else self.runs.count()
        return uploaded + len(first)


class PoolCandidate(models.Model):
    """A passage to judge for a topic of a pool; `rank` is its place in the pool's order for that topic."""

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="candidates")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="pool_candidates")
    passage = models.ForeignKey(Passage, on_delete=models.CASCADE, related_name="pool_candidates")
    rank = models.PositiveIntegerField()
    score = models.FloatField(null=True, blank=True)
    runs = models.ManyToManyField(Run, through="CandidateSource", related_name="pool_candidates")

    class Meta:
        ordering = ["pool", "topic", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["pool", "topic", "passage"], name="unique_pool_candidate"),
            models.UniqueConstraint(fields=["pool", "topic", "rank"], name="unique_pool_candidate_rank"),
        ]

    def __str__(self):
        return f"{self.pool.name} {self.topic.external_id} {self.passage.external_id}"


class CandidateSource(models.Model):
    """Provenance: run `run` had the candidate's passage at `rank` for the candidate's topic."""

    candidate = models.ForeignKey(PoolCandidate, on_delete=models.CASCADE, related_name="sources")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="candidate_sources")
    rank = models.PositiveIntegerField()
    score = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["candidate", "rank"]
        constraints = [models.UniqueConstraint(fields=["candidate", "run"], name="unique_candidate_source")]

    def __str__(self):
        return f"{self.run.name}@{self.rank}"
