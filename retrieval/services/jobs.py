"""The life of a sharded retrieval job: created once for its inputs, its shards claimed and done by any workers,
finished once. What every kind of background job shares (statuses, progress, queueing by task name, the JSON
status) is retrieval.services.background's; the shards are this module's.

- create(): get-or-create by (kind, hash of the inputs); the shards are planned in the same
  transaction, so a job never exists without them, and asking twice gives the same job.
- start(): enqueue the pending shards (or the finishing step when every shard is in). Call it
  outside any transaction: a worker must see the rows it is sent.
- run_shard(): claim with a conditional UPDATE (PENDING, or RUNNING with a stale heartbeat, or
  RUNNING when the broker says the message is a redelivery); zero rows means someone else has
  it. A shard's output replaces rather than adds (files renamed into place, one result per
  shard), so doing a shard twice duplicates nothing. The last shard in moves the job to
  FINISHING with another conditional UPDATE; that worker enqueues finish().
- Errors: the TRANSIENT_ERRORS propagate so the task can retry; any other error fails the
  shard and the job, with the reason stored, and tells the job's callbacks. So does a shard claimed
  MAX_ATTEMPTS times (its workers kept dying on it). resume() puts the failed (and orphaned) shards
  back to PENDING, with their attempts from zero, and starts the job again.
"""

import logging
import time
import traceback
from datetime import timedelta

from django.db import transaction
from django.db.models import F, Q
from django.dispatch import Signal
from django.utils import timezone

from retrieval.models import Job, Shard, WorkerNode
from retrieval.services import background, work
from retrieval.services.background import TRANSIENT_ERRORS

logger = logging.getLogger("retrieval.jobs")

# The tasks (retrieval/tasks.py) are sent by their registered names (background.send): this module imports no
# tasks module, which imports it.
RUN_SHARD = "retrieval.tasks.run_shard"
GPU_RUN_SHARD = "retrieval.tasks.gpu_run_shard"
FINISH_JOB = "retrieval.tasks.finish_job"
LEASE = timedelta(minutes=10)  # a RUNNING shard with no heartbeat for this long may be taken over
HEARTBEAT_SECONDS = 10
MAX_ATTEMPTS = 10  # claims of one shard (deaths and transient retries alike) before it fails

# Sent (hostname, since) when a worker node starts after its previous life died: the work of other apps that a
# message starts (machine jobs, data imports) connects here to send again what is still queued, whose message
# the dead worker may have taken.
node_died = Signal()


def create(*, kind, key, collection, params, index=None, callback=None) -> tuple[Job, bool]:
    """The job for these inputs, made with its shards if new; `callback` ([task name, args]) is added to it."""
    with transaction.atomic():
        job, created = Job.objects.get_or_create(
            kind=kind, key=key,
            defaults={"collection": collection, "index": index, "params": params, "gpu": work.uses_gpu(kind, params)},
        )
        if created:
            plan = work.handler(kind).plan(job)
            Shard.objects.bulk_create(
                [Shard(job=job, number=n, params=p, items=items) for n, (p, items) in enumerate(plan)], batch_size=1000
            )
            job.shard_count, job.items_total = len(plan), sum(items for _, items in plan)
            job.save(update_fields=["shard_count", "items_total"])
        if callback:
            add_callback(job, callback)
    return job, created


def add_callback(job: Job, callback) -> None:
    """Remember to send `callback` ([task name, args]) when the job ends; once per distinct callback."""
    callback = [callback[0], list(callback[1])]
    with transaction.atomic():
        locked = Job.objects.select_for_update().get(pk=job.pk)
        if callback not in locked.callbacks:
            locked.callbacks = [*locked.callbacks, callback]
            locked.save(update_fields=["callbacks"])
        job.callbacks = locked.callbacks


def start(job: Job) -> None:
    """Send the job's pending shards to the workers, or its finishing step when every shard is in."""
    job.refresh_from_db()
    if job.status in (Job.Status.DONE, Job.Status.FAILED):
        return
    pending = list(job.shards.filter(status=Shard.Status.PENDING).values_list("pk", flat=True))
    if not pending and not job.shards.exclude(status=Shard.Status.DONE).exists():
        job.refresh_progress()
        maybe_finish(job, worker="")
        return
    task = GPU_RUN_SHARD if job.gpu else RUN_SHARD
    for shard_id in pending:
        background.send(task, shard_id)


class Heartbeat:
    """Called while a shard works: now and then records that its worker is alive."""

    def __init__(self, shard_id, every=HEARTBEAT_SECONDS):
        self.shard_id, self.every, self.last = shard_id, every, time.monotonic()

    def __call__(self, *_):
        now = time.monotonic()
        if now - self.last >= self.every:
            Shard.objects.filter(pk=self.shard_id, status=Shard.Status.RUNNING).update(heartbeat_at=timezone.now())
            self.last = now


def claim(shard_id: int, worker: str, redelivered: bool = False) -> bool:
    """Take a shard for `worker`; False when it is done or someone else holds it.

    A shard already claimed MAX_ATTEMPTS times without finishing (its workers died on it, or kept losing the
    database) is failed instead, with the reason, so that a shard that kills its worker (out of memory) does not
    take down every worker that restarts; resume() gives it MAX_ATTEMPTS more.
    """
    now = timezone.now()
    claimable = Q(status=Shard.Status.PENDING) | Q(status=Shard.Status.RUNNING, heartbeat_at__lt=now - LEASE)
    if redelivered:
        claimable |= Q(status=Shard.Status.RUNNING)
    claimed = Shard.objects.filter(claimable, pk=shard_id, attempts__lt=MAX_ATTEMPTS).update(
        status=Shard.Status.RUNNING, worker=worker[:200], attempts=F("attempts") + 1, started_at=now,
        heartbeat_at=now, error="",
    )
    if not claimed and Shard.objects.filter(claimable, pk=shard_id, attempts__gte=MAX_ATTEMPTS).exists():
        fail_shard(shard_id, ShardGaveUp(
            f"claimed {MAX_ATTEMPTS} times without finishing: each time its worker died (out of memory?) or lost "
            f"the database; see the workers' logs, then resume the job"
        ), only_if=claimable)
    return bool(claimed)


class ShardGaveUp(Exception):
    """A shard tried MAX_ATTEMPTS times."""


def run_shard(shard_id: int, worker: str = "", redelivered: bool = False, *, finish_here: bool = False) -> dict:
    """Do one shard if it can be claimed; store its outcome and move the job on.

    The last shard in sends the finishing step to a worker, or does it here with `finish_here`.
    """
    if not claim(shard_id, worker, redelivered):
        return {"shard": shard_id, "status": "skipped"}
    shard = Shard.objects.select_related("job__collection", "job__index").get(pk=shard_id)
    job = shard.job
    now = timezone.now()
    Job.objects.filter(pk=job.pk, status=Job.Status.QUEUED).update(status=Job.Status.RUNNING)
    Job.objects.filter(pk=job.pk, started_at__isnull=True).update(started_at=now)
    started = time.perf_counter()
    try:
        items, result = work.handler(job.kind).run(job, shard, Heartbeat(shard_id))
    except TRANSIENT_ERRORS:
        raise
    except Exception as exc:  # noqa: BLE001 — any other error is the job's failure, stored for people to read
        fail_shard(shard_id, exc)
        return {"shard": shard_id, "status": "failed", "error": describe(exc)}
    Shard.objects.filter(pk=shard_id, status=Shard.Status.RUNNING).update(
        status=Shard.Status.DONE, items=items, result=result, finished_at=timezone.now(),
        seconds=time.perf_counter() - started,
    )
    job.refresh_from_db()
    job.refresh_progress()
    logger.info("%s", job.progress_line())
    maybe_finish(job, worker, here=finish_here)
    return {"shard": shard_id, "status": "done", "items": items}


def release(shard_id: int) -> None:
    """Put a shard back to PENDING after a transient error, so the retry can claim it."""
    Shard.objects.filter(pk=shard_id, status=Shard.Status.RUNNING).update(status=Shard.Status.PENDING)


def maybe_finish(job: Job, worker: str, *, here: bool = False) -> None:
    """When every shard is in, one caller wins the move to FINISHING and sends the finishing step (or does it)."""
    if job.shards_done < job.shard_count:
        return
    moved = Job.objects.filter(pk=job.pk, status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).update(
        status=Job.Status.FINISHING, finisher=worker[:200]
    )
    if moved and here:
        finish(job.pk, worker)
    elif moved:
        background.send(FINISH_JOB, job.pk)


def finish(job_id: int, worker: str = "") -> dict:
    """The job's last step (e.g. assembling the FAISS index), then DONE and its callbacks; safe to repeat."""
    job = Job.objects.select_related("collection", "index").get(pk=job_id)
    if job.status != Job.Status.FINISHING:
        return {"job": job_id, "status": job.status}
    try:
        work.handler(job.kind).finish(job)
    except TRANSIENT_ERRORS:
        raise
    except Exception as exc:  # noqa: BLE001
        fail_job(job_id, f"finishing failed: {describe(exc)}", detail=traceback.format_exc())
        return {"job": job_id, "status": Job.Status.FAILED}
    job.refresh_progress()
    done = Job.objects.filter(pk=job_id, status=Job.Status.FINISHING).update(
        status=Job.Status.DONE, finished_at=timezone.now(), error=""
    )
    job.refresh_from_db()
    logger.info("%s", job.progress_line())
    if done:
        notify(job)
    return {"job": job_id, "status": job.status}


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip()


def fail_shard(shard_id: int, exc: BaseException, *, only_if: Q | None = None) -> None:
    """Store why a shard failed, fail its job, and tell the job's callbacks (when `only_if` is given: if it holds)."""
    detail = traceback.format_exc() if exc.__traceback__ else ""
    failed = Shard.objects.filter(only_if or Q(), pk=shard_id).update(
        status=Shard.Status.FAILED, error=(describe(exc) + "\n\n" + detail)[:20_000], finished_at=timezone.now()
    )
    if not failed:
        return
    shard = Shard.objects.get(pk=shard_id)
    logger.warning("job %s shard %s failed: %s", shard.job_id, shard.number, describe(exc))
    fail_job(shard.job_id, f"shard {shard.number + 1} of {shard.job.shard_count} failed: {describe(exc)}")


def fail_job(job_id: int, reason: str, detail: str = "") -> None:
    failed = Job.objects.filter(pk=job_id).exclude(status__in=[Job.Status.DONE, Job.Status.FAILED]).update(
        status=Job.Status.FAILED, error=(reason + ("\n\n" + detail if detail else ""))[:20_000],
        finished_at=timezone.now(),
    )
    if failed:
        notify(Job.objects.get(pk=job_id))


def notify(job: Job) -> None:
    """Send the job's callbacks (each a Celery task by name, with its args)."""
    for name, args in job.callbacks:
        background.send(name, *args)


def resume(job_id: int, *, stale_only: bool = False) -> Job:
    """Start a failed or stuck job again: failed shards (and running ones, or only stale ones) go back to PENDING."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        if job.status == Job.Status.DONE:
            return job
        reset = Q(status=Shard.Status.FAILED)
        if stale_only:
            reset |= Q(status=Shard.Status.RUNNING, heartbeat_at__lt=timezone.now() - LEASE)
        else:
            reset |= Q(status=Shard.Status.RUNNING)
        job.shards.filter(reset).update(status=Shard.Status.PENDING, worker="", attempts=0)
        job.status, job.error, job.finisher, job.finished_at = Job.Status.QUEUED, "", "", None
        job.started_at = None
        job.save(update_fields=["status", "error", "finisher", "finished_at", "started_at"])
    start(job)
    job.refresh_from_db()
    return job


def worker_started(hostname: str) -> list[int]:
    """A worker node starts: record its new life, and re-send what its previous life held or may have lost.

    When the previous life of this node name has no clean stop recorded (worker_stopped), it died:
    besides the shards the database says it held, it may have taken messages from the broker that
    it never acknowledged nor claimed (with Redis they come back only after the visibility timeout,
    an hour). So every unfinished job's pending shards are sent again, and the callbacks of the jobs
    that ended while it lived, and node_died tells the other apps (their queued work is sent again).
    Sending twice is safe: a shard is claimed once, callbacks run twice without harm. Returns the ids
    of the shards it held.
    """
    if not hostname:
        return []
    now = timezone.now()
    with transaction.atomic():
        node, created = WorkerNode.objects.select_for_update().get_or_create(name=hostname[:200], defaults={"started_at": now})
        died_since = None if created or node.stopped_at is not None else node.started_at
        node.started_at, node.stopped_at = now, None
        node.save(update_fields=["started_at", "stopped_at"])
    held = recover_worker(hostname, died_since=died_since)
    if died_since is not None:
        for receiver, outcome in node_died.send_robust(sender=WorkerNode, hostname=hostname, since=died_since):
            if isinstance(outcome, Exception):
                logger.error("after %s died, %s failed: %s", hostname, getattr(receiver, "__qualname__", receiver),
                             describe(outcome), exc_info=outcome)
    return held


def worker_stopped(hostname: str) -> None:
    """A worker node stopped cleanly (warm shutdown: what it had not acknowledged went back to the broker)."""
    if hostname:
        WorkerNode.objects.filter(name=hostname[:200]).update(stopped_at=timezone.now())


def recover_worker(hostname: str, *, died_since=None) -> list[int]:
    """Re-send what the previous life of the node `hostname` held: running shards, finishing jobs.

    Node names are unique among live workers, so whatever a starting node is recorded as holding
    belongs to a process that died (killed, out of memory, machine lost). `died_since` (when that
    life started, where it is known to have died) also re-sends every unfinished job's pending
    shards and the callbacks of the jobs that ended since then (see worker_started).
    """
    if not hostname:
        return []
    held = list(Shard.objects.filter(status=Shard.Status.RUNNING, worker=hostname).values_list("pk", "job__gpu"))
    Shard.objects.filter(pk__in=[pk for pk, _ in held], status=Shard.Status.RUNNING).update(
        status=Shard.Status.PENDING, worker=""
    )
    finishing = list(Job.objects.filter(status=Job.Status.FINISHING, finisher=hostname).values_list("pk", flat=True))
    for job_id in finishing:
        background.send(FINISH_JOB, job_id)
    unfinished, ended = [], []
    if died_since is None:
        for shard_id, gpu in held:
            background.send(GPU_RUN_SHARD if gpu else RUN_SHARD, shard_id)
    else:
        unfinished = list(Job.objects.filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).order_by("pk"))
        for job in unfinished:  # its pending shards (the held ones among them), or its finishing step
            start(job)
        ended = list(Job.objects.filter(status__in=[Job.Status.DONE, Job.Status.FAILED], finished_at__gte=died_since)
                     .exclude(callbacks=[]).order_by("pk"))
        for job in ended:
            notify(job)
    if held or finishing or died_since is not None:
        logger.warning(
            "worker %s restarted%s: re-sent %d held shard(s), %d finishing job(s), the pending shards of %d unfinished "
            "job(s), the callbacks of %d ended job(s)", hostname, " after dying" if died_since is not None else "",
            len(held), len(finishing), len(unfinished), len(ended),
        )
    return [pk for pk, _ in held]


def run_here(job: Job) -> Job:
    """Do a job's pending shards and its finishing step in this process, without Celery (scripts, benchmarks)."""
    for shard_id in list(job.shards.filter(status=Shard.Status.PENDING).values_list("pk", flat=True)):
        run_shard(shard_id, worker="here", finish_here=True)
    job.refresh_from_db()
    if job.status in (Job.Status.QUEUED, Job.Status.RUNNING) and not job.shards.exclude(status=Shard.Status.DONE).exists():
        job.refresh_progress()
        maybe_finish(job, worker="here", here=True)
    elif job.status == Job.Status.FINISHING:
        finish(job.pk, worker="here")
    job.refresh_from_db()
    return job
