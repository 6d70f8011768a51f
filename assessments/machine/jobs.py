"""The life of a machine job (training, labelling, LLM requests): claimed once, its progress and time left stored.

- claim(): a conditional UPDATE moves the job from queued (or stopped, or running without news for LEASE) to
  running; zero rows means another worker has it or it is finished.
- Progress: counts items as the work goes and writes them, with the rate, to the job row at most every few
  seconds; a command's progress bar listens to the same counts.
- run_here_or_send(): what a command does: without a broker the work runs in this process, its bar fed directly;
  with one, the task goes to the workers and the command follows the job row until it ends.
"""

import time
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from assessments.models import MachineJob

LEASE = timedelta(minutes=10)
WRITE_EVERY = 2.0  # seconds between writes of the progress to the job row
FINISHED = (MachineJob.Status.DONE, MachineJob.Status.FAILED)


def claim(job_id: int) -> MachineJob | None:
    """The job, now running for this caller; None when it is finished or someone else is on it."""
    now = timezone.now()
    claimable = Q(status__in=[MachineJob.Status.QUEUED, MachineJob.Status.STOPPED]) | Q(
        status=MachineJob.Status.RUNNING, updated_at__lt=now - LEASE)
    if not MachineJob.objects.filter(claimable, pk=job_id).update(
            status=MachineJob.Status.RUNNING, started_at=now, updated_at=now, message="", error=""):
        return None
    return MachineJob.objects.select_related("source").get(pk=job_id)


def end(job: MachineJob, status, *, message: str = "", error: str = "") -> MachineJob:
    """Store how the job ended (done, stopped at a limit, failed) with its last counts."""
    MachineJob.objects.filter(pk=job.pk).update(
        status=status, message=message[:2000], error=error[:20_000], finished_at=timezone.now(),
        items_done=job.items_done, errors=job.errors, requests=job.requests, tokens=job.tokens, rate=job.rate,
    )
    job.refresh_from_db()
    return job


class Progress:
    """Items done of a job, written to its row now and then; `listener(n)` hears every step (a progress bar)."""

    def __init__(self, job: MachineJob, listener=None, every: float = WRITE_EVERY):
        self.job, self.listener, self.every = job, listener, every
        self.started = time.monotonic()
        self.start_count = job.items_done
        self.last = 0.0

    def __call__(self, n: int = 1, *, errors: int = 0, requests: int = 0, tokens: int = 0, message=None):
        job = self.job
        job.items_done += n
        job.errors += errors
        job.requests += requests
        job.tokens += tokens
        if message is not None:
            job.message = message
        if self.listener and n:
            self.listener(n)
        now = time.monotonic()
        if now - self.last >= self.every:
            self.write(now)

    def write(self, now=None):
        now = now or time.monotonic()
        job = self.job
        elapsed = now - self.started
        job.rate = (job.items_done - self.start_count) / elapsed if elapsed > 0 and job.items_done > self.start_count else None
        MachineJob.objects.filter(pk=job.pk).update(
            items_done=job.items_done, errors=job.errors, requests=job.requests, tokens=job.tokens, rate=job.rate,
            message=job.message[:2000], updated_at=timezone.now(),
        )
        self.last = now

    def set_total(self, total: int):
        self.job.items_total = total
        MachineJob.objects.filter(pk=self.job.pk).update(items_total=total)


def run_here_or_send(job: MachineJob, task, work, *, bar=None, poll: float = 1.0) -> MachineJob:
    """Run the job: here (`work(job_id, listener)`) when tasks run in-process, else by sending `task` and following
    the job row. `bar` (a tqdm, or None) shows items done and the time left either way."""
    if task.app.conf.task_always_eager:
        try:
            work(job.pk, listener=bar.update if bar is not None else None)
        except Exception:  # noqa: BLE001 — the work stored why it failed on the job; the caller reads it there
            job.refresh_from_db()
            if job.status != MachineJob.Status.FAILED:
                raise
        job.refresh_from_db()
        return job
    from django.db import transaction

    transaction.on_commit(lambda: task.delay(job.pk), robust=True)
    seen = 0
    while True:
        job.refresh_from_db()
        if bar is not None:
            bar.total = job.items_total or bar.total
            if job.items_done > seen:
                bar.update(job.items_done - seen)
                seen = job.items_done
        if job.status in FINISHED or job.status == MachineJob.Status.STOPPED:
            return job
        time.sleep(poll)

