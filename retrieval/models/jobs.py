"""Retrieval work: persisted indexes, and jobs split into shards that any number of workers take.

A job (build a BM25 index, encode a collection, search, re-rank) is a set of shards. A worker
claims a shard with a conditional UPDATE, does it, and stores its outcome; the last shard in
moves the job to FINISHING, and one worker finishes it (e.g. assembles the FAISS index). Every
step can run twice without harm, progress is stored on the job, and a failed job keeps why.
"""

from pathlib import Path

from django.db import models
from django.db.models import Count, Q, Sum
from django.utils import timezone

from retrieval.models.background import BackgroundJob
from retrieval.models.corpus import Collection


class Index(models.Model):
    """A persisted index of a collection: BM25 (bm25s folder) or dense (an encoder's embeddings and FAISS files)."""

    class Kind(models.TextChoices):
        BM25 = "bm25", "BM25"
        DENSE = "dense", "Dense (encoder + FAISS)"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="indexes")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    key = models.CharField(max_length=64, help_text="Hash of the configuration; one index per configuration.")
    config = models.JSONField(default=dict, help_text="BM25 parameters, or the encoder (model, pooling, prefixes).")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    folder = models.CharField(max_length=300, help_text="Folder under RETRIEVAL_INDEX_DIR.")
    passage_count = models.PositiveIntegerField(default=0)
    last_passage_id = models.BigIntegerField(null=True, blank=True, help_text="Highest passage id indexed.")
    dimension = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    built_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["collection", "kind", "created_at"]
        verbose_name_plural = "indexes"
        constraints = [models.UniqueConstraint(fields=["collection", "kind", "key"], name="unique_index_config")]

    def __str__(self):
        label = self.config.get("model", "") if self.kind == self.Kind.DENSE else "bm25"
        return f"{self.collection.name} {self.kind} {label}".strip()

    @property
    def path(self) -> Path:
        from retrieval.storage import index_root

        return index_root() / self.folder


class Job(BackgroundJob):
    """Work on a collection split into shards; its progress (shards, passages/s, ETA) and errors are kept here.

    Its life is every background job's (retrieval.models.background), with FINISHING between the last shard in
    and done: one worker's finishing step (e.g. assembling the FAISS index)."""

    class Kind(models.TextChoices):
        BM25_INDEX = "bm25-index", "Build a BM25 index"
        ENCODE = "encode", "Encode passages (dense index)"
        SEARCH = "search", "Search"
        RERANK = "rerank", "Re-rank with cross-encoders"

    job_kind = "retrieval"

    kind = models.CharField(max_length=20, choices=Kind.choices)
    key = models.CharField(max_length=64, help_text="Hash of the inputs: the same inputs make the same job.")
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="jobs")
    index = models.ForeignKey(Index, on_delete=models.CASCADE, related_name="jobs", null=True, blank=True)
    gpu = models.BooleanField(default=False, help_text="Its shards run on the gpu queue.")
    params = models.JSONField(default=dict, blank=True)
    shard_count = models.PositiveIntegerField(default=0)
    shards_done = models.PositiveIntegerField(default=0)
    callbacks = models.JSONField(default=list, blank=True, help_text="Celery tasks [name, args] sent when it ends.")
    finisher = models.CharField(max_length=200, blank=True, help_text="Worker that claimed the finishing step.")

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["kind", "key"], name="unique_job_inputs")]

    def __str__(self):
        return f"{self.get_kind_display()} #{self.pk} ({self.collection.name})"

    def progress_counts(self) -> list[str]:
        return [f"shards {self.shards_done}/{self.shard_count}", f"items {self.items_done:,}/{self.items_total:,}"]

    def status_extra(self) -> dict:
        return {"shards": self.shard_count, "shards_done": self.shards_done, "collection": self.collection_id}

    def refresh_progress(self) -> None:
        """Recount shards and items done (one query); the rate counts items done since the job (re)started."""
        since = Q(finished_at__gte=self.started_at) if self.started_at else Q(pk__in=[])
        totals = self.shards.aggregate(
            done_count=Count("pk", filter=Q(status=Shard.Status.DONE)),
            done_items=Sum("items", filter=Q(status=Shard.Status.DONE)),
            recent=Sum("items", filter=Q(status=Shard.Status.DONE) & since),
        )
        self.shards_done, self.items_done = totals["done_count"], totals["done_items"] or 0
        if self.started_at:
            elapsed = (timezone.now() - self.started_at).total_seconds()
            self.rate = (totals["recent"] or 0) / elapsed if elapsed > 0 and totals["recent"] else None
        Job.objects.filter(pk=self.pk).update(
            shards_done=self.shards_done, items_done=self.items_done, rate=self.rate, updated_at=timezone.now()
        )


class Shard(models.Model):
    """One piece of a job (a range of passages, a slice of queries) that one worker claims and does."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="shards")
    number = models.PositiveIntegerField()
    params = models.JSONField(default=dict, blank=True, help_text="The passage id range or query slice.")
    items = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    worker = models.CharField(max_length=200, blank=True, help_text="Celery node that holds or did the shard.")
    attempts = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True, help_text="Time the shard's work took.")
    error = models.TextField(blank=True)
    result = models.JSONField(null=True, blank=True, help_text="Rankings of a search or re-ranking shard.")

    class Meta:
        ordering = ["job", "number"]
        constraints = [models.UniqueConstraint(fields=["job", "number"], name="unique_shard_number")]

    def __str__(self):
        return f"job {self.job_id} shard {self.number}"


class WorkerNode(models.Model):
    """A Celery worker node name's latest life: when it started, and when it stopped cleanly (None: running, or died).

    A node that starts while its previous life has no stop recorded knows that life died (SIGKILL,
    out of memory, machine lost): messages it had taken from the broker but not yet acknowledged,
    and of which the database knows nothing, are sent again (retrieval.services.jobs.worker_started).
    """

    name = models.CharField(max_length=200, unique=True)
    started_at = models.DateTimeField()
    stopped_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name
