"""THE progress endpoint of background work, GET /jobs/<kind>/<id>/: any kind of job as one JSON shape (status,
items done of the total, rate, time left, step, error, who started it), for organisers."""

import io

import pytest
from django.core.cache import cache

from annotation.models import DataImport
from annotation.services.data_imports import Upload, start_import
from assessments.models import MachineJob, MachineLabelSource
from assessments.services import machine
from retrieval.models import Job
from retrieval.services import background
from tests import factories

pytestmark = pytest.mark.django_db


def test_a_running_import_shows_its_live_step_and_who_started_it(client, organiser):
    running = DataImport.objects.create(kind=DataImport.Kind.QRELS, collection="web", status="running",
                                        created_by=organiser, file_names=["q.txt"])
    cache.set(background.live_key(running), {"desc": "qrels", "done": 30, "total": 120, "rate": 10.0}, 60)
    data = client.get(f"/jobs/import/{running.pk}/").json()
    keys = ("job", "kind", "id", "status", "label", "finished", "done", "total", "rate", "eta_seconds", "step",
            "created_by", "files")
    assert {k: data[k] for k in keys} == {
        "job": "import", "kind": "qrels", "id": running.pk, "status": "running", "label": "Running", "finished": False,
        "done": 30, "total": 120, "rate": 10.0, "eta_seconds": 9.0, "step": "qrels", "created_by": "boss",
        "files": ["q.txt"]}
    assert data["progress"] == {"done": 30, "total": 120, "desc": "qrels"}


def test_an_ended_job_shows_its_row_not_a_stale_step(client, organiser):
    failed = DataImport.objects.create(kind=DataImport.Kind.QRELS, collection="web", status="failed",
                                       error="1 problem; the first: q.txt:2:grade: 'x' is not an integer")
    cache.set(background.live_key(failed), {"desc": "qrels", "done": 1, "total": 2}, 60)
    data = client.get(f"/jobs/import/{failed.pk}/").json()
    assert data["finished"] is True and data["step"] == "" and data["done"] == 0
    assert data["error"].startswith("1 problem") and "error: 1 problem" in data["line"]


def test_a_failed_import_says_its_first_problem_with_file_line_and_field(client, organiser,
                                                                         django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        failed = start_import(kind="qrels", uploads=[Upload("q.txt", io.BytesIO(b"1 0 d1 1\n1 0 d2 x\n"))],
                              collection="web", options={"create_missing": True}, user=organiser)
    data = client.get(f"/jobs/import/{failed.pk}/").json()
    assert (data["status"], data["finished"], data["created_by"]) == ("failed", True, "boss")
    assert data["error"] == "1 problem; the first: q.txt:2:grade: 'x' is not an integer", data["problems"]


def test_a_retrieval_job_is_followed_at_the_same_address(client, organiser):
    coll = factories.collection("web")
    job = Job.objects.create(kind=Job.Kind.SEARCH, key="k", collection=coll, status="finishing", shard_count=4,
                             shards_done=4, items_total=40, items_done=40)
    data = client.get(f"/jobs/retrieval/{job.pk}/").json()
    assert (data["status"], data["label"], data["finished"], data["shards_done"]) == (
        "finishing", "Finishing", False, 4)
    assert "shards 4/4" in data["line"]


def test_a_machine_job_sent_from_a_page_records_who_started_it(client, organiser, django_capture_on_commit_callbacks):
    source = MachineLabelSource.objects.create(name="annotator-1", kind="classifier", status="ready", grades=[0, 1],
                                               collection=factories.collection("web"))
    job = MachineJob.objects.create(source=source, kind="label")
    with django_capture_on_commit_callbacks() as queued:  # queued, not run
        machine.send(job, user=organiser)
    assert len(queued) == 1
    data = client.get(f"/jobs/machine/{job.pk}/").json()
    assert (data["job"], data["kind"], data["status"], data["created_by"], data["source_name"]) == (
        "machine", "label", "queued", "boss", "annotator-1")


def test_an_unknown_kind_or_id_is_not_found_and_others_see_nothing(client, organiser):
    made = DataImport.objects.create(kind=DataImport.Kind.QRELS, collection="web")
    assert client.get("/jobs/nothing/1/").status_code == 404
    assert client.get(f"/jobs/import/{made.pk + 1}/").status_code == 404
    client.force_login(factories.user("judge"))
    assert client.get(f"/jobs/import/{made.pk}/").status_code == 404


def test_every_kind_of_background_job_is_listed_with_its_name():
    assert set(background.kinds()) == {"import", "machine", "retrieval"}
