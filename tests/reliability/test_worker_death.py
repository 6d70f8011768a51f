"""A worker node that starts after its previous life died sends again the queued work of every app (eager Celery).

The dead worker may have taken a message from the broker without a trace in the database (with Redis it comes
back only after the visibility timeout, an hour). Retrieval shards are covered in tests/retrieval (services and
the real-worker kill test); here the other apps' work started by a message: data imports and machine jobs.
"""

import io

import pytest

from annotation.models import DataImport
from annotation.services.data_imports import Upload, start_import
from assessments.models import MachineJob, MachineLabelSource
from retrieval.services import jobs
from tests import factories
from tests.retrieval.fixtures import eager_celery  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_celery")]


def queued_import():
    """An import whose message was sent and never run (outside a committed transaction nothing is sent here)."""
    data_import = start_import(kind="trec-run", uploads=[Upload("r.run", io.BytesIO(b"1 Q0 d 1 1 r\n"))],
                               collection="web", options={"create_missing": True})
    assert data_import.status == DataImport.Status.QUEUED
    return data_import


def machine_jobs():
    source = MachineLabelSource.objects.create(name="annotator-1", kind="classifier", collection=factories.collection("web"),
                                               status="ready", grades=[0, 1])
    queued = MachineJob.objects.create(source=source, kind="label")
    running = MachineJob.objects.create(source=source, kind="label", status="running")  # a live worker's, fresh news
    return queued, running


def test_after_a_death_queued_imports_and_machine_jobs_are_sent_again_and_a_live_workers_job_is_left_alone(
    django_capture_on_commit_callbacks,
):
    jobs.worker_started("cpu1@host")
    data_import = queued_import()
    queued, running = machine_jobs()

    # no clean stop recorded: the previous life died (a worker runs this outside any transaction: sent at once)
    with django_capture_on_commit_callbacks(execute=True) as sent:
        jobs.worker_started("cpu1@host")
    assert len(sent) == 2  # the queued import and the queued machine job; the running one goes by apply_async

    data_import.refresh_from_db()
    assert data_import.status == DataImport.Status.DONE, data_import.problems
    queued.refresh_from_db()
    assert queued.status not in (MachineJob.Status.QUEUED, MachineJob.Status.RUNNING)  # claimed and run (it ends)
    running.refresh_from_db()
    assert running.status == MachineJob.Status.RUNNING and running.started_at is None  # not claimed: its lease holds


def test_after_a_clean_stop_nothing_is_sent_again(django_capture_on_commit_callbacks):
    jobs.worker_started("cpu1@host")
    data_import = queued_import()
    queued, _ = machine_jobs()
    jobs.worker_stopped("cpu1@host")

    with django_capture_on_commit_callbacks(execute=True) as sent:
        jobs.worker_started("cpu1@host")
    assert sent == []

    data_import.refresh_from_db()
    queued.refresh_from_db()
    assert data_import.status == DataImport.Status.QUEUED and queued.status == MachineJob.Status.QUEUED
