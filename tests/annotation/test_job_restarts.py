"""A job whose worker stops under it is taken again, but not for ever (issue 38 item 1): acknowledged late, an
import that killed its worker (22 GB for 900 KB of nested tags) came back and killed the next one, and the next.
After MAX_RESTARTS it fails for good and says why, on its row and on the progress endpoint the console reads."""

from datetime import timedelta

import pytest

from annotation.models import DataImport
from annotation.services import data_imports
from assessments.models import MachineJob, MachineLabelSource
from retrieval.services import background
from tests import factories

pytestmark = pytest.mark.django_db


def running_import():
    return DataImport.objects.create(kind=DataImport.Kind.QRELS, collection="web", status="running",
                                     file_names=["q.txt"])


def test_a_job_sent_back_by_the_broker_is_taken_again_then_fails_for_good(client, organiser):
    job = running_import()
    for restart in range(1, background.MAX_RESTARTS + 1):
        assert data_imports.claim(job.pk, redelivered=True)  # its worker died: taken again
        job.refresh_from_db()
        assert job.status == "running" and job.restarts == restart
    assert not data_imports.claim(job.pk, redelivered=True)  # the worker died once more: not again
    job.refresh_from_db()
    assert job.status == "failed" and job.finished_at is not None
    assert f"stopped while running it {background.MAX_RESTARTS + 1} times" in job.error
    assert not data_imports.claim(job.pk, redelivered=True)  # failed stays failed
    shown = client.get(f"/jobs/import/{job.pk}/").json()
    assert shown["status"] == "failed" and "not tried again" in shown["error"]


def test_a_queued_job_is_claimed_without_counting_a_restart():
    job = DataImport.objects.create(kind=DataImport.Kind.QRELS, collection="web")
    for _ in range(background.MAX_RESTARTS + 2):  # a task retried after a database error puts it back in the queue
        assert data_imports.claim(job.pk)
        DataImport.objects.filter(pk=job.pk).update(status="queued")
    job.refresh_from_db()
    assert job.restarts == 0
    assert not data_imports.claim(running_import().pk)  # running, not sent back: another worker has it


def test_a_stale_machine_job_fails_after_its_restarts_too():
    source = MachineLabelSource.objects.create(name="s", kind="llm", model="m", collection=factories.collection("web"))
    job = MachineJob.objects.create(source=source, kind="llm", status="running", restarts=background.MAX_RESTARTS)
    MachineJob.objects.filter(pk=job.pk).update(updated_at=job.updated_at - timedelta(hours=1))
    assert not background.claim(MachineJob, job.pk, stale=timedelta(minutes=10))
    job.refresh_from_db()
    assert job.status == "failed" and "not tried again" in job.error


def test_a_job_left_running_by_a_stopped_process_is_marked_failed_when_the_next_one_starts_its_thread(client, organiser):
    """Without a broker jobs run in a web process's background thread. A job that process was running when it was
    killed read "Running, 780,000 done" for ever; the next process's thread marks it failed, saying why, first."""
    orphan, live = running_import(), running_import()
    stopped = MachineJob.objects.create(
        source=MachineLabelSource.objects.create(name="s", kind="llm", model="m", collection=factories.collection("web")),
        kind="llm", status="running")
    started = live.updated_at - timedelta(seconds=1)  # the live job's last news came after the new process started
    for job in (orphan, stopped):
        type(job).objects.filter(pk=job.pk).update(updated_at=started - timedelta(minutes=5))
    assert background.fail_orphans(before=started) == 2
    for job in (orphan, stopped):
        job.refresh_from_db()
        assert job.status == "failed" and job.finished_at is not None and "process running it stopped" in job.error
    live.refresh_from_db()
    assert live.status == "running"
    shown = client.get(f"/jobs/import/{orphan.pk}/").json()
    assert shown["status"] == "failed" and "Resume it" in shown["error"]
    assert background.fail_orphans(before=started) == 0  # once marked, left alone


def test_the_background_thread_looks_for_orphans_before_its_first_job(monkeypatch):
    """The check runs in the thread, first: a request that starts the thread adds no statement of its own."""
    calls = []
    monkeypatch.setattr(background, "_executor", None)
    monkeypatch.setattr(background, "fail_orphans", lambda: calls.append("orphans"))
    monkeypatch.setattr(background, "_run_in_thread", lambda task, args: calls.append(task))
    background._submit("first job", ())
    background._submit("second job", ())
    background.wait_for_background(timeout=30)
    assert calls == ["orphans", "first job", "second job"]
    background._executor.shutdown(wait=True)
