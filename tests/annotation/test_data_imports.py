"""Imports started from the console: the importers' own checks, a job claimed once, topics joining the campaign,
progress through the cache."""

import io

import pytest

from annotation.models import Campaign, DataImport, DataImportFile
from annotation.services import data_imports
from annotation.services.campaigns import create_campaign
from annotation.services.data_imports import ImportInvalid, Upload, progress_of, progress_reporter, start_import
from assessments.models import QrelSet, Run, Topic
from retrieval.models import Passage
from tests import factories
from tests.factories import DATA

pytestmark = pytest.mark.django_db(transaction=True)

RUN = DATA / "car-y3" / "runs" / "guir-tqa-water-distribution.json"


def upload(path):
    return Upload(path.name, io.BytesIO(path.read_bytes()), path.stat().st_size)


def test_car_runs_join_the_campaign_with_the_topics_they_bring():
    factories.collection("car-y3")
    factories.topic(factories.collection("other"), "x")
    campaign = create_campaign(name="car2", task="outline", topics=["x"], collection="other")
    done = start_import(kind="car-runs", uploads=[upload(RUN)], options={"create_topics": True}, campaign=campaign)
    done.refresh_from_db()
    # The campaign's collection decides where the runs go, whatever the form said.
    assert done.status == DataImport.Status.DONE and done.collection == "other", done.problems
    assert Run.objects.get().collection.name == "other"
    assert set(campaign.track.topics.values_list("external_id", flat=True)) == {"x", "tqa:water%20distribution"}
    assert "1 topics added to campaign 'car2'" in done.summary
    assert bytes(DataImportFile.objects.get().content) == b""


def test_an_import_is_claimed_once():
    done = start_import(kind="trec-run", uploads=[Upload("r.run", io.BytesIO(b"1 Q0 d 1 1 r\n"))],
                        collection="web", options={"create_missing": True})
    done.refresh_from_db()
    assert done.status == DataImport.Status.DONE
    assert data_imports.run_import(done.pk) is None  # a second delivery does nothing
    assert Run.objects.count() == 1


def test_form_level_problems_are_refused_before_anything_is_stored():
    with pytest.raises(ImportInvalid) as caught:
        start_import(kind="trec-run", uploads=[], collection="web")
    assert caught.value.field == "files"
    with pytest.raises(ImportInvalid) as caught:
        start_import(kind="trec-run", uploads=[Upload("r", io.BytesIO(b"x"))])
    assert caught.value.field == "collection"
    with pytest.raises(ImportInvalid) as caught:
        start_import(kind="book", uploads=[Upload("b.txt", io.BytesIO(b"x"))])
    assert caught.value.field == "title"
    two = [Upload("a", io.BytesIO(b"x")), Upload("b", io.BytesIO(b"y"))]
    with pytest.raises(ImportInvalid):
        start_import(kind="qrels", uploads=two, collection="web")
    assert not DataImport.objects.exists()


def test_a_file_over_the_upload_limit_is_refused(settings):
    settings.API_MAX_UPLOAD_BYTES = 10
    with pytest.raises(ImportInvalid) as caught:
        start_import(kind="qrels", uploads=[Upload("q", io.BytesIO(b"1 0 d 1\n" * 3), 24)], collection="web")
    assert caught.value.message == "q has 24 bytes; at most 10 bytes a file are taken"


@pytest.mark.parametrize("said", [True, False])
def test_documents_in_many_files_are_held_to_one_imports_total_and_count(settings, said):
    """Documents come as many files: 50 of 20 MB were a gigabyte stored from one request. Together they hold no
    more than one file may unpack to, whether the request said the sizes or not; and at most MAX_FILES files."""
    settings.API_MAX_UPLOAD_BYTES, settings.API_MAX_UNCOMPRESSED_BYTES = 100, 250
    files = [Upload(f"d{i}.jsonl", io.BytesIO(b"x" * 90), 90 if said else None) for i in range(3)]
    with pytest.raises(ImportInvalid) as caught:
        start_import(kind="documents", uploads=files, collection="web")
    assert caught.value.field == "files" and "at most 250 bytes are taken at once" in caught.value.message
    many = [Upload(f"d{i}.jsonl", io.BytesIO(b"x"), 1) for i in range(data_imports.MAX_FILES + 1)]
    with pytest.raises(ImportInvalid) as caught:
        start_import(kind="documents", uploads=many, collection="web")
    assert caught.value.message == f"at most {data_imports.MAX_FILES} files at once"
    assert not DataImport.objects.exists() and not DataImportFile.objects.exists()


def test_progress_goes_through_the_cache_as_a_bar_or_a_wrapped_iterable():
    progress = progress_reporter(7)
    assert list(progress([1, 2, 3], desc="reading")) == [1, 2, 3]
    assert {k: v for k, v in progress_of(7).items() if k != "rate"} == {"desc": "reading", "done": 3, "total": 3}
    bar = progress(total=10, desc="writing")
    bar.update(4)
    bar.close()
    assert {k: v for k, v in progress_of(7).items() if k != "rate"} == {"desc": "writing", "done": 4, "total": 10}


def test_plot_queries_need_their_book_first(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"query_id": "q1", "book": "nope", "query": "x"}\n')
    failed = start_import(kind="plot-queries", uploads=[upload(path)])
    failed.refresh_from_db()
    assert failed.status == DataImport.Status.FAILED and not Topic.objects.exists()
    assert failed.problems == [{"source": "q.jsonl", "line": 1, "field": "book",
                                "message": failed.problems[0]["message"]}]
    assert "unknown book 'nope'" in failed.problems[0]["message"]


def test_runs_and_qrels_from_an_upload_keep_the_uploaded_files_name_not_the_servers_path():
    factories.collection("car-y3")
    start_import(kind="car-runs", uploads=[upload(RUN)], collection="car-y3", options={"create_topics": True})
    start_import(kind="trec-run", uploads=[Upload("team-a.run", io.BytesIO(b"1 Q0 d 1 1 r\n"))],
                 collection="web", options={"create_missing": True})
    start_import(kind="qrels", uploads=[Upload("judged.qrels", io.BytesIO(b"1 0 d 1\n"))],
                 collection="web", options={"create_missing": True})
    assert sorted(Run.objects.values_list("source_file", flat=True)) == [RUN.name, "team-a.run"]
    assert list(QrelSet.objects.values_list("source_file", flat=True)) == ["judged.qrels"]


def test_a_run_uploaded_for_a_campaign_is_submitted_to_it_and_scored_on_its_results(client):
    """Issue 39 items 2 and 3: a run uploaded on the campaign's Data page had no campaign and no owner, `GET
    /api/runs/?campaign=` left it out, and the results page scored only the pools' runs, not the runs submitted to
    the campaign (over the API or on the page)."""
    from annotation.reports.results import campaign_runs
    from annotation.roles import Role, ensure_groups
    from django.contrib.auth.models import Group

    ensure_groups()
    boss = factories.user("boss", is_staff=True)
    boss.groups.add(Group.objects.get(name=Role.ORGANISER))
    web = factories.collection("web")
    factories.topic(web, "1", kind=Topic.Kind.ADHOC)
    campaign = create_campaign(name="adhoc-a", task="adhoc", topics=["1"], collection="web")
    create_campaign(name="adhoc-b", task="adhoc", topics=["1"], collection="web")
    done = start_import(kind="trec-run", uploads=[Upload("mine.run", io.BytesIO(b"1 Q0 d 1 1 mine\n"))],
                        collection="web", options={"create_missing": True}, campaign=campaign, user=boss)
    done.refresh_from_db()
    assert done.status == DataImport.Status.DONE, done.problems
    run = Run.objects.get(name="mine")
    assert (run.track, run.owner) == ("adhoc-a", boss)
    client.force_login(boss)
    listed = client.get("/api/runs/", {"campaign": "adhoc-a"}).json()
    names = [r["name"] for r in listed.get("results", listed)]
    assert names == ["mine"]
    other = client.get("/api/runs/", {"campaign": "adhoc-b"}).json()
    assert [r["name"] for r in other.get("results", other)] == []
    assert [r.name for r in campaign_runs(campaign)] == ["mine"]  # no pool yet: the submitted run is the campaign's
    assert campaign_runs(Campaign.objects.get(name="adhoc-b")) == []


def test_an_uploaded_document_file_has_the_unpacked_limit_a_run_has(settings):
    """Issue 38 item 3: the upload limits every kind has for runs, for documents too (the command has none)."""
    settings.API_MAX_UNCOMPRESSED_BYTES = 2_000_000
    text = "".join(f'{{"id": "d{n}", "contents": "words {n} of a document"}}\n' for n in range(80_000))  # 3.6 MB
    import gzip

    packed = gzip.compress(text.encode())  # a plain file is held to the upload's own size limit
    done = start_import(kind="documents", uploads=[Upload("docs.jsonl.gz", io.BytesIO(packed))], collection="web")
    done.refresh_from_db()
    assert done.status == DataImport.Status.FAILED
    assert "docs.jsonl.gz:file: the file unpacks to more than 2,000,000 bytes" in done.error, done.error
    assert not Passage.objects.exists()
