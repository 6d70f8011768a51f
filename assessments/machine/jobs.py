"""A machine job's life (training, labelling, LLM requests) is every background job's (retrieval.services.background):
claimed once, its progress, spend and time left stored, ended with why. What is a machine job's own is here.

- claim(): from queued or stopped (resume: the limits were raised), or from running without news for LEASE;
  None when it has ended or someone else is on it.
- Progress: background.Progress; a machine job adds its errors, requests and tokens (progress(1, errors=1)).
- run_here_or_send(): what a command does: without a broker the work runs in this process, its bar fed directly;
  with one, the job is queued for the workers and the command follows its row until it ends.
"""

import time

from assessments.models import MachineJob
from retrieval.services import background
from retrieval.services.background import LEASE, Progress  # noqa: F401  (the machine modules import them from here)

FINISHED = (MachineJob.Status.DONE, MachineJob.Status.FAILED)


def claim(job_id: int) -> MachineJob | None:
    """The job, now running for this caller; None when it is finished or someone else is on it."""
    if not background.claim(MachineJob, job_id, statuses=(MachineJob.Status.QUEUED, MachineJob.Status.STOPPED),
                            stale=LEASE, message="", error=""):
        return None
    return MachineJob.objects.select_related("source").get(pk=job_id)


def end(job: MachineJob, status, *, message: str = "", error: str = "") -> MachineJob:
    """Store how the job ended (done, stopped at a limit, failed) with its last counts."""
    return background.end(job, status, message=message, error=error, errors=job.errors, requests=job.requests,
                          tokens=job.tokens)


def run_here_or_send(job: MachineJob, task, work, *, bar=None, poll: float = 1.0) -> MachineJob:
    """Run the job: here (`work(job_id, listener)`) when tasks run in-process, else by queueing it and following
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
    background.queue_job(job)
    seen = 0
    while True:
        job.refresh_from_db()
        if bar is not None:
            bar.total = job.items_total or bar.total
            if job.items_done > seen:
                bar.update(job.items_done - seen)
                seen = job.items_done
        if job.finished:
            return job
        time.sleep(poll)
