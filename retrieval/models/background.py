"""Background work: THE life of a job, shared by every kind (retrieval jobs, machine jobs, data imports, what comes
next).

An abstract model, not one table: each kind keeps its own table with its own inputs and results (a retrieval job's
shards, a machine job's source and spend, an import's files and problems), so its queries and constraints stay
plain, and the apps keep pointing one way (annotation → assessments → retrieval: the base lives in the lowest
app). What every kind shares is here: the statuses, progress (items, rate, time left), the errors, who started it
and when; retrieval.services.background is the one service (claim, progress, end, queue, the JSON status).
"""

from datetime import timedelta

from django.conf import settings
from django.db import models


class JobStatus(models.TextChoices):
    """The life of a job: queued → running (→ finishing, a sharded job's last step) → done, failed or stopped."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    FINISHING = "finishing", "Finishing"
    DONE = "done", "Done"
    STOPPED = "stopped", "Stopped (resume to go on)"
    FAILED = "failed", "Failed"


ACTIVE = (JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.FINISHING)
ENDED = (JobStatus.DONE, JobStatus.FAILED, JobStatus.STOPPED)


class BackgroundJobQuerySet(models.QuerySet):
    def active(self):
        """Jobs queued or under way."""
        return self.filter(status__in=ACTIVE)

    def unfinished(self):
        """Jobs not done (queued, running, finishing, stopped or failed: what resume may start again)."""
        return self.exclude(status=JobStatus.DONE)


class BackgroundJob(models.Model):
    """A piece of background work: status, items done of a total, rate, what it is doing, why it failed, who started
    it."""

    Status = JobStatus
    job_kind = ""  # its name in the one progress endpoint, /jobs/<job_kind>/<id>/ (retrieval.services.background)

    status = models.CharField(max_length=20, choices=JobStatus.choices, default=JobStatus.QUEUED)
    items_total = models.PositiveBigIntegerField(default=0, help_text="Items to process (passages, pairs, lines...).")
    items_done = models.PositiveBigIntegerField(default=0)
    rate = models.FloatField(null=True, blank=True, help_text="Items per second since the job (re)started.")
    message = models.TextField(blank=True, help_text="What it is doing, or why it stopped.")
    error = models.TextField(blank=True, help_text="Why it failed.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        help_text="Who started it (empty: a command, a worker or another job).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    restarts = models.PositiveSmallIntegerField(
        default=0, help_text="Times it was taken again from a worker that stopped while running it (killed, perhaps "
                             "for memory): at retrieval.services.background.MAX_RESTARTS it fails for good.")

    objects = BackgroundJobQuerySet.as_manager()

    class Meta:
        abstract = True

    @property
    def finished(self) -> bool:
        """Ended: done, failed, or stopped until someone resumes it (a page stops following it)."""
        return self.status in ENDED

    @property
    def eta_seconds(self) -> float | None:
        """Seconds left at the current rate, or None when there is no rate yet."""
        if self.status == JobStatus.DONE:
            return 0.0
        if not self.rate:
            return None
        return max(0.0, (self.items_total - self.items_done) / self.rate)

    def kind_label(self) -> str:
        display = getattr(self, "get_kind_display", None)
        return display() if display else self._meta.verbose_name

    def progress_counts(self) -> list[str]:
        """The counts a kind shows in its progress line (items done of the total, unless it says more)."""
        return [f"{self.items_done:,}/{self.items_total:,}"]

    def progress_line(self) -> str:
        """One line for people: status, counts, rate, time left, what it is doing, error."""
        parts = [f"{self.kind_label().lower()} #{self.pk}: {self.status}", *self.progress_counts()]
        if self.rate:
            parts.append(f"{self.rate:,.2f}/s" if self.rate < 10 else f"{self.rate:,.1f}/s")
        eta = self.eta_seconds
        if eta and self.status in ACTIVE:
            parts.append(f"ETA {timedelta(seconds=round(eta))}")
        if self.message:
            parts.append(self.message)
        if self.error:
            parts.append(f"error: {self.error.splitlines()[0][:200]}")
        return ", ".join(parts)

    def status_extra(self) -> dict:
        """What a kind adds to its JSON status (retrieval.services.background.status_of)."""
        return {}

    def task_name(self) -> str:
        """The Celery task (its registered name) that runs the job, given its id (background.queue_job)."""
        raise NotImplementedError(f"{type(self).__name__} is run by its shards' tasks, not one task")
