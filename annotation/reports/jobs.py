"""Background work an organiser should know about: imports, pool builds, retrieval and machine jobs running or failed
(the jobs' statuses are every background job's, retrieval.models.background: `active()` is queued or under way).

A failure is news for RECENT days, or until an organiser dismisses it (dismiss: a DismissedWork row).
"""

from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from annotation.data_imports import DataImport, DismissedWork
from annotation.services.errors import ServiceError
from config.ids import parse_id
from assessments.models import Pool
from retrieval.models import Job

RECENT = timedelta(days=7)  # failures older than this are no longer news
SHOWN = 20


def background_work() -> dict:
    """{"running": [...], "failed": [...]} of imports, pools and retrieval jobs, each {"what", "state", "detail",
    "url_name", "args"} (a few queries)."""
    since = timezone.now() - RECENT
    running, failed = [], []
    gone = {kind: set() for kind in DismissedWork.Kind}
    for kind, pk in DismissedWork.objects.values_list("kind", "object_id"):
        gone[kind].add(pk)
    for item in DataImport.objects.active()[:SHOWN]:
        running.append({"what": f"Import #{item.pk}: {item.get_kind_display()}", "state": item.get_status_display(),
                        "detail": ", ".join(item.file_names)[:120], "url_name": "annotation:console_import",
                        "args": [item.pk]})
    broken = DataImport.objects.filter(status=DataImport.Status.FAILED, finished_at__gte=since)
    for item in broken.exclude(pk__in=gone[DismissedWork.Kind.IMPORT])[:SHOWN]:
        failed.append({"what": f"Import #{item.pk}: {item.get_kind_display()}", "state": "Failed",
                       "detail": f"{', '.join(item.file_names)[:120]}: "
                                 f"{item.problem_total} problem{'s' if item.problem_total != 1 else ''}",
                       "url_name": "annotation:console_import", "args": [item.pk],
                       "dismiss": f"{DismissedWork.Kind.IMPORT}:{item.pk}"})
    for pool in Pool.objects.filter(status__in=[Pool.Status.PENDING, Pool.Status.BUILDING]).prefetch_related(
            "campaigns")[:SHOWN]:
        running.append(_pool(pool))
    for pool in Pool.objects.filter(status=Pool.Status.FAILED, created_at__gte=since).exclude(
            pk__in=gone[DismissedWork.Kind.POOL]).prefetch_related("campaigns")[:SHOWN]:
        failed.append({**_pool(pool), "dismiss": f"{DismissedWork.Kind.POOL}:{pool.pk}"})
    jobs = Job.objects.select_related("collection").defer("params", "callbacks")
    for job in jobs.active()[:SHOWN]:
        running.append({"what": str(job), "state": job.get_status_display(), "detail": job.progress_line(),
                        "url_name": "admin:retrieval_job_change", "args": [job.pk]})
    for job in jobs.filter(status=Job.Status.FAILED, updated_at__gte=since).exclude(
            pk__in=gone[DismissedWork.Kind.JOB])[:SHOWN]:
        failed.append({"what": str(job), "state": "Failed", "detail": (job.error or "").splitlines()[0][:200]
                       if job.error else "", "url_name": "admin:retrieval_job_change", "args": [job.pk],
                       "dismiss": f"{DismissedWork.Kind.JOB}:{job.pk}"})
    _machine_jobs(running, failed, since, gone[DismissedWork.Kind.MACHINE])
    for entry in running + failed:
        entry["url"] = reverse(entry.pop("url_name"), args=entry.pop("args"))
    return {"running": running, "failed": failed}


def _machine_jobs(running, failed, since, dismissed):
    """Training, labelling and LLM jobs (assessments.services.machine), linked to their campaign's Machine page."""
    from annotation.models import Campaign
    from assessments.models import MachineJob

    jobs = MachineJob.objects.select_related("source")
    busy = list(jobs.active()[:SHOWN])
    broken = list(jobs.filter(status=MachineJob.Status.FAILED, finished_at__gte=since).exclude(pk__in=dismissed)[:SHOWN])
    names = dict(Campaign.objects.filter(pk__in={j.source.campaign_id for j in busy + broken}).values_list("pk", "name"))
    for job, into in [(j, running) for j in busy] + [(j, failed) for j in broken]:
        entry = {"what": f"{job.get_kind_display()} #{job.pk}: {job.source.name}", "state": job.get_status_display(),
                 "detail": job.progress_line()[:200], "url_name": "admin:assessments_machinejob_change",
                 "args": [job.pk]}
        if job.source.campaign_id in names:
            entry.update(url_name="annotation:console_machine", args=[names[job.source.campaign_id]])
        if into is failed:
            entry["dismiss"] = f"{DismissedWork.Kind.MACHINE}:{job.pk}"
        into.append(entry)


def _pool(pool) -> dict:
    campaign = next(iter(pool.campaigns.all()), None)
    entry = {"what": f"Pool {pool.name}", "state": pool.get_status_display(), "detail": pool.error[:200],
             "url_name": "admin:assessments_pool_change", "args": [pool.pk]}
    if campaign is not None:
        entry.update(url_name="annotation:console_pools", args=[campaign.name])
    return entry


def dismiss(key: str, user) -> None:
    """Take a failure off the list: `key` is a failed entry's "dismiss" ("import:12"); ServiceError if it is none."""
    from assessments.models import MachineJob

    kind, _, raw = (key or "").partition(":")
    pk = parse_id(raw)
    models = {DismissedWork.Kind.IMPORT: (DataImport, DataImport.Status.FAILED), DismissedWork.Kind.POOL:
              (Pool, Pool.Status.FAILED), DismissedWork.Kind.JOB: (Job, Job.Status.FAILED),
              DismissedWork.Kind.MACHINE: (MachineJob, MachineJob.Status.FAILED)}
    if kind not in models or pk is None:
        raise ServiceError("dismiss", "say which failed work to dismiss")
    model, status = models[kind]
    if not model.objects.filter(pk=pk, status=status).exists():
        raise ServiceError("dismiss", "no such failed work")
    DismissedWork.objects.get_or_create(kind=kind, object_id=pk, defaults={"dismissed_by": user})
