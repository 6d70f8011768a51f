"""THE service of background work (retrieval.models.background.BackgroundJob): every kind's job is queued, claimed,
followed and ended here.

- queue() / queue_job(): THE way to queue work: the Celery task (by its registered name) is sent when the current
  transaction commits. With a broker the workers take it; without one (the demo: eager Celery) it runs in this
  process: while serving a web request, in the process's one background thread (BACKGROUND_THREADS, on unless
  turned off), so the request answers at once and the page follows the job's progress; elsewhere (commands,
  workers, the tests) at once, before queue() returns to its caller's caller.
- claim(): a conditional UPDATE moves a job to RUNNING; zero rows means another worker has it or it has ended.
- Progress: items done (and a kind's own counters) written to the job's row every few seconds, with the rate;
  live(): a tqdm-like `progress` for work that writes inside one transaction (an import), whose rows no one else
  sees until it commits: its steps go through the cache (CACHE_URL: shared by every process in production).
- end(): how a job ended (done, stopped at a limit, failed), with its last counts.
- status_of(): a job as the one JSON progress endpoint (/jobs/<kind>/<id>/) and the pages' one script show it.
- retrying(): THE retry policy of every task (retrieval shards and jobs, pool builds, data imports).
- resend_unfinished(): after a worker died (retrieval.services.jobs.node_died), queued work is sent again.

Tasks are sent by name (task_named), as a job's callbacks are: this module and retrieval.services.jobs import no
tasks module, so no tasks module and the service it calls import each other.
"""

import logging
import math
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta

from django.apps import apps
from django.conf import settings
from django.core.cache import cache
from django.core.signals import request_finished, request_started
from django.db import InterfaceError, OperationalError, connections, transaction
from django.db.models import F, Q
from django.utils import timezone

from retrieval.models.background import ACTIVE, BackgroundJob, JobStatus

logger = logging.getLogger("retrieval.background")

TRANSIENT_ERRORS = (OperationalError, InterfaceError, ConnectionError, TimeoutError)
LEASE = timedelta(minutes=10)  # a RUNNING job with no news for this long may be claimed again
MAX_RESTARTS = 2  # a job whose worker stopped under it this often is not taken a third time: it may be what kills it
WRITE_EVERY = 2.0  # seconds between writes of a job's progress to its row
LIVE_EVERY = 0.25  # seconds between writes of live progress to the cache
LIVE_TTL = 24 * 3600


MAX_RETRIES = 5  # transient errors retried this often, then the task gives up


# Retrying --------------------------------------------------------------------------------------------------------


def backoff(attempt: int) -> int:
    """Seconds before retry number `attempt` + 1 through the broker: 1, 2, 4 … at most 60."""
    return min(60, 2**attempt)


def retrying(task, work, give_up):
    """Run `work()` for a bound Celery task: THE retry policy of background work.

    Only TRANSIENT_ERRORS are retried (database or broker connection trouble, time-outs): through the broker with
    backoff, or, run eagerly (no broker: Celery cannot retry a propagating eager task), here after a short wait.
    After MAX_RETRIES the task gives up: `give_up(exc)` stores why (the job, pool or import failed) and its value is
    the task's. Any other error is the work's own to store and never retried. Celery's autoretry_for does not fit:
    the give-up must write the failure where the pages read it, and eager tasks must retry too."""
    attempt = task.request.retries
    while True:
        try:
            return work()
        except TRANSIENT_ERRORS as exc:
            if attempt >= MAX_RETRIES:
                return give_up(exc)
            if not task.request.is_eager:
                raise task.retry(exc=exc, countdown=backoff(attempt), max_retries=MAX_RETRIES) from exc
            time.sleep(min(2.0, 0.05 * 2**attempt))
            attempt += 1


# Queueing --------------------------------------------------------------------------------------------------------


def task_named(name: str):
    """The registered Celery task called `name` (every app's tasks module is imported first, as a worker does).

    Sending by name alone would go to the broker even when tasks run eagerly; a name that no app registers is a
    programming error, said as such.
    """
    from celery import current_app

    if name not in current_app.tasks:
        current_app.loader.import_default_modules()
    try:
        return current_app.tasks[name]
    except KeyError:
        raise LookupError(f"no Celery task named {name!r}") from None


_serving = threading.local()  # set while this thread serves a web request
_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()
_last: Future | None = None


def _request_started(**_):
    _serving.active = True


def _request_finished(**_):
    _serving.active = False


request_started.connect(_request_started, dispatch_uid="retrieval.background.request_started", weak=False)
request_finished.connect(_request_finished, dispatch_uid="retrieval.background.request_finished", weak=False)


def in_background_thread() -> bool:
    """Whether work sent now, without a broker, goes to this process's background thread: while serving a request,
    with BACKGROUND_THREADS on (a command, a worker and the tests' own calls run it at once)."""
    return getattr(settings, "BACKGROUND_THREADS", True) and getattr(_serving, "active", False)


def fail_orphans(before=None) -> int:
    """Without a broker a job runs in a web process's background thread, and no one takes it again when that
    process stops under it (killed, or restarted by runserver's reloader): it would read "Running" for ever. The
    first time a process hands its background thread work, every job still running or finishing with no news since
    before `before` (this process's start) is marked failed, saying why; resume starts it again. A job of another
    live process writes its progress every few seconds (WRITE_EVERY), and an import's row at its claim and end.
    Returns how many jobs it marked."""
    before = before or _PROCESS_STARTED
    now = timezone.now()
    marked = 0
    for model in kinds().values():
        marked += model.objects.filter(status__in=(JobStatus.RUNNING, JobStatus.FINISHING),
                                       updated_at__lt=before).update(
            status=JobStatus.FAILED, finished_at=now, updated_at=now, error=ORPHANED)
    if marked:
        logger.warning("%d background job(s) left running by a process that stopped were marked failed", marked)
    return marked


ORPHANED = ("the process running it stopped while it ran (killed, or restarted): nothing was kept of a step it had "
            "not finished. Resume it, or start it again.")


def _in_thread(function):
    try:
        function()
    except Exception:  # noqa: BLE001 — a thread has no one else to tell
        logger.exception("background housekeeping %s failed", function.__name__)
    finally:
        connections.close_all()


def _run_in_thread(task, args):
    try:
        task.apply(args=args, throw=True)
    except Exception:  # noqa: BLE001 — the task stored why on its job; a thread has no one else to tell
        logger.exception("background task %s%r failed", task.name, tuple(args))
    finally:
        connections.close_all()  # this thread's own connections


_PROCESS_STARTED = timezone.now()  # this module's import: the process's start, near enough


def _submit(task, args) -> Future:
    global _executor, _last
    with _executor_lock:
        if _executor is None:  # one thread: jobs run one after another, as on a single worker (SQLite-friendly)
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pooljudge-job")
            _executor.submit(_in_thread, fail_orphans)  # first, before this process's own jobs
        _last = _executor.submit(_run_in_thread, task, tuple(args))
        return _last


def wait_for_background(timeout: float = 60.0) -> None:
    """Wait until the background thread has run what it was given (tests; a command that must not exit before)."""
    last = _last
    if last is not None:
        last.result(timeout=timeout)


def send(name: str, *args, countdown: float | None = None) -> None:
    """Send the task `name` now (use queue() inside a transaction): to the broker, or without one to this process's
    background thread (see in_background_thread) or applied here at once."""
    task = task_named(name)
    if not task.app.conf.task_always_eager:
        task.apply_async(args=args, countdown=countdown) if countdown else task.delay(*args)
    elif in_background_thread():
        _submit(task, args)
    else:
        task.apply(args=args)


def queue(name: str, *args) -> None:
    """THE way to queue background work: the task `name` is sent when the current transaction commits (at once
    outside one), so that a worker sees the rows it is sent about."""
    transaction.on_commit(lambda: send(name, *args), robust=True)


def queue_job(job: BackgroundJob) -> None:
    """Queue a job's task (its kind's task_name) for the job's id."""
    queue(job.task_name(), job.pk)


# Claiming and ending ---------------------------------------------------------------------------------------------


def claim(model, pk, *, statuses=(JobStatus.QUEUED,), stale: timedelta | None = None, redelivered=False,
          **fields) -> bool:
    """Move job `pk` of `model` to RUNNING for this caller, from `statuses`, or from RUNNING when the broker says
    the message came back (`redelivered`: its worker died) or when it has had no news for `stale`. False: another
    worker has it, or it has ended."""
    now = timezone.now()
    if model.objects.filter(pk=pk, status__in=list(statuses)).update(status=JobStatus.RUNNING, started_at=now,
                                                                     updated_at=now, **fields):
        return True
    if not redelivered and stale is None:
        return False
    # RUNNING, and its worker stopped under it (the broker sent it back) or it has had no news for `stale`: taken
    # again, up to MAX_RESTARTS times. A job that killed its worker (acknowledged late, it comes back) would kill
    # the next one, for ever; after that many it fails for good, saying why.
    orphaned = Q(status=JobStatus.RUNNING) if redelivered else Q(status=JobStatus.RUNNING, updated_at__lt=now - stale)
    if model.objects.filter(orphaned, pk=pk, restarts__gte=MAX_RESTARTS).update(
            status=JobStatus.FAILED, finished_at=now, updated_at=now, error=gave_up_after_restarts()):
        cache.delete(live_key(model(pk=pk)))
        return False
    return bool(model.objects.filter(orphaned, pk=pk).update(status=JobStatus.RUNNING, started_at=now, updated_at=now,
                                                             restarts=F("restarts") + 1, **fields))


def gave_up_after_restarts() -> str:
    return (f"its worker stopped while running it {MAX_RESTARTS + 1} times (killed, perhaps for memory, or its "
            "machine restarted): it is not tried again, so that it cannot stop the next worker too. Look at what it "
            "was given (a file's size or nesting), and start it again once that is fixed.")


def end(job: BackgroundJob, status, *, message: str = "", error: str = "", **fields) -> BackgroundJob:
    """Store how a job ended (done, stopped at a limit, failed) with its last counts; the job, re-read."""
    type(job).objects.filter(pk=job.pk).update(
        status=status, message=message[:2000], error=error[:20_000], finished_at=timezone.now(),
        items_done=job.items_done, rate=job.rate, updated_at=timezone.now(), **fields,
    )
    cache.delete(live_key(job))
    job.refresh_from_db()
    return job


def fail(job: BackgroundJob, error: str, **fields) -> BackgroundJob:
    return end(job, JobStatus.FAILED, error=error, **fields)


# Progress --------------------------------------------------------------------------------------------------------


class Progress:
    """Items done of a job, written to its row now and then with the rate; `listener(n)` hears every step (a
    command's progress bar). A kind's own counters (a machine job's errors, requests, tokens) are added by name:
    progress(1, errors=1)."""

    def __init__(self, job: BackgroundJob, listener=None, every: float = WRITE_EVERY):
        self.job, self.listener, self.every = job, listener, every
        self.started = time.monotonic()
        self.start_count = job.items_done
        self.last = 0.0
        self.counters: set[str] = set()

    def __call__(self, n: int = 1, *, message=None, **counts):
        job = self.job
        job.items_done += n
        for name, value in counts.items():
            setattr(job, name, getattr(job, name) + value)
            self.counters.add(name)
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
        done_here = job.items_done - self.start_count
        job.rate = done_here / elapsed if elapsed > 0 and done_here > 0 else None
        type(job).objects.filter(pk=job.pk).update(
            items_done=job.items_done, rate=job.rate, message=job.message[:2000], updated_at=timezone.now(),
            **{name: getattr(job, name) for name in self.counters},
        )
        self.last = now

    def set_total(self, total: int):
        self.job.items_total = total
        type(self.job).objects.filter(pk=self.job.pk).update(items_total=total)


def live_key(job: BackgroundJob) -> str:
    return f"pooljudge:job:{job.job_kind}:{job.pk}:progress"


def live_progress(job: BackgroundJob) -> dict:
    """{"desc", "done", "total", "rate"} of a job's step as its work last wrote it to the cache ({} when none)."""
    return cache.get(live_key(job)) or {}


@dataclass
class _Bar:
    """A tqdm-like bar (update, close) that writes its step to the cache now and then."""

    key: str
    total: int | None = None
    desc: str = ""
    done: int = 0
    started: float = field(default_factory=time.monotonic)
    last: float = 0.0

    def update(self, n=1):
        self.done += n
        self._write()

    def close(self):
        self._write(force=True)

    def _write(self, force=False):
        now = time.monotonic()
        if force or now - self.last >= LIVE_EVERY:
            self.last = now
            elapsed = now - self.started
            rate = self.done / elapsed if elapsed > 0 and self.done else None
            cache.set(self.key, {"desc": self.desc, "done": self.done, "total": self.total, "rate": rate}, LIVE_TTL)


def live(job: BackgroundJob):
    """A `progress` callable for the importers (as ImportCommand.progress: wraps an iterable, or returns a bar) that
    writes each step's progress to the cache, where status_of() finds it."""
    key = live_key(job)

    def progress(iterable=None, *, total=None, desc="", unit="it", **kwargs):
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)
        bar = _Bar(key, total=total, desc=desc)
        bar._write(force=True)
        if iterable is None:
            return bar

        def counted():
            for item in iterable:
                yield item
                bar.update(1)
            bar.close()

        return counted()

    return progress


# Reading ---------------------------------------------------------------------------------------------------------


def kinds() -> dict[str, type[BackgroundJob]]:
    """{job_kind: model} of every kind of background job the installed apps define."""
    return {model.job_kind: model for model in apps.get_models()
            if issubclass(model, BackgroundJob) and model.job_kind}


def find(kind: str, pk: int) -> BackgroundJob | None:
    model = kinds().get(kind)
    return None if model is None else model.objects.filter(pk=pk).first()


def _seconds(value):
    return None if value is None or not math.isfinite(value) else round(value, 1)


def status_of(job: BackgroundJob) -> dict:
    """A job as the progress endpoint, the pages and the API show it: status, items done of the total (the live step
    while it runs, if its work writes one), rate, time left, what it is doing, error, who started it."""
    step = live_progress(job) if job.status in ACTIVE else {}
    done = step.get("done", job.items_done) if step else job.items_done
    total = (step.get("total") or 0) if step else job.items_total
    rate = step.get("rate") if step else job.rate
    eta = (total - done) / rate if step and rate and total else job.eta_seconds
    line = job.progress_line()
    return {
        "job": job.job_kind, "id": job.pk, "kind": getattr(job, "kind", job.job_kind), "kind_label": job.kind_label(),
        "status": job.status,
        "label": job.get_status_display(), "finished": job.finished, "done": done, "total": total,
        "rate": rate, "eta_seconds": _seconds(eta), "step": step.get("desc", ""), "message": job.message,
        "error": job.error, "line": line,
        "progress": {"done": done, "total": total, "desc": step.get("desc") or line},
        "created_by": job.created_by.get_username() if job.created_by_id and job.created_by else None,
        "created_at": job.created_at, "started_at": job.started_at, "finished_at": job.finished_at,
        **job.status_extra(),
    }


# After a worker died ---------------------------------------------------------------------------------------------


def resend_unfinished(model, *, running_too: bool = False, lease: timedelta = LEASE) -> int:
    """Send `model`'s queued jobs again (a dead worker may have taken their message; a job is claimed once, so a
    second message does nothing). `running_too`: a running job is claimable once its lease has run out with no news,
    so its message is sent for then (a live worker's job writes its progress every few seconds and is left alone)."""
    statuses = [JobStatus.QUEUED, *([JobStatus.RUNNING] if running_too else [])]
    unfinished = list(model.objects.filter(status__in=statuses).order_by("pk"))
    now = timezone.now()
    for job in unfinished:
        if job.status == JobStatus.QUEUED:
            queue_job(job)
        else:  # a little after its lease runs out
            lease_left = math.ceil((job.updated_at + lease - now).total_seconds())
            send(job.task_name(), job.pk, countdown=max(0, lease_left) + 30)
    return len(unfinished)
