"""Nugget banks and nugget assignments (the nuggetizer's files) uploaded on a nuggets campaign's Data page: imported as
a background job by the services of manage.py import_nuggets / import_nugget_assignments, with the commands'
summary; a bad file lists its problems (file:line: field) and stores nothing; only a nuggets campaign offers the
kinds, only to organisers; uploaded text is shown escaped."""

import gzip
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import DataImport
from annotation.roles import Role, ensure_groups
from annotation.services.campaigns import create_campaign
from annotation.services.nuggets import import_answers_file
from assessments.models import Judgement, JudgementChange, Layer, Topic
from assessments.services import nuggets
from retrieval.models import Collection
from tests import factories
from tests.annotation.test_console_topics_documents import problems
from tests.assessments.test_nuggets import ANSWERS, ASSIGNMENTS, D, NUGGETS, T1, T2, assignment
from tests.browser.console_steps import organiser_account

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/campaigns/rag24/data/"
# baseline answered T1 only: the nuggetizer's line of its empty answer to T2 is left out, and the summary says so
UNANSWERED = json.dumps({"qid": T2, "run_id": "baseline", "answer_text": "", "nuggets": [
    {"text": "Bone density decreases with age", "importance": "vital", "assignment": "not_support"}]})


@pytest.fixture
def rag(tmp_path):
    coll = factories.collection("msmarco-v21", kind=Collection.Kind.DOCUMENTS)
    factories.topic(coll, T1, kind=Topic.Kind.ADHOC, title="what is vicarious trauma and how can it be coped with")
    factories.topic(coll, T2, kind=Topic.Kind.ADHOC, title="how bone density changes")
    for docid in D:
        factories.passage(coll, docid)
    campaign = create_campaign(name="rag24", task="nuggets", topics=[T1, T2])
    path = tmp_path / "answers.jsonl"
    path.write_text(ANSWERS)
    import_answers_file(campaign, path)
    return campaign


@pytest.fixture
def organiser(client):
    client.force_login(organiser_account())


def post(client, kind, name, content, url=URL):
    return client.post(url, {"kind": kind, "files": [SimpleUploadedFile(name, content)]})


def stored(campaign):
    """(topic, nugget texts) of each bank, and (item, value) of each support label, of the campaign."""
    banks = {Topic.objects.get(pk=pk).external_id: [n["text"] for n in j.value]
             for pk, j in nuggets.topic_banks(campaign.pk).items()}
    labels = sorted(Judgement.objects.filter(layer=Layer.NUGGET_SUPPORT).values_list("item", "value"))
    return banks, labels


def without_imports(snapshot):
    return {k: v for k, v in snapshot.items() if not k.startswith("annotation.DataImport")}


@pytest.mark.parametrize("packed", [False, True])
def test_banks_then_assignments_import_as_the_commands_do(client, organiser, rag, packed):
    page = client.get(URL).content.decode()
    assert '<option value="nuggets">' in page and '<option value="nugget-assignments">' in page
    pack = gzip.compress if packed else (lambda data: data)
    suffix = ".jsonl.gz" if packed else ".jsonl"

    response = post(client, "nuggets", "nuggets" + suffix, pack(NUGGETS.encode()))
    assert response.status_code == 302, response.content.decode()[-3000:]
    done = DataImport.objects.get()
    assert (done.kind, done.status, done.campaign) == ("nuggets", DataImport.Status.DONE, rag)
    assert done.summary == "Imported 6 nuggets of 2 topics."  # import_nuggets prints the same
    banks, _ = stored(rag)
    assert banks == {T1: ["Vicarious trauma is indirect exposure to trauma", "Coping includes self-care",
                          "Supervision helps", "It affects therapists"],
                     T2: ["Bone density decreases with age", "Exercise slows bone loss"]}
    bank = Judgement.objects.get(layer=Layer.NUGGETS, topic__external_id=T1)
    assert bank.assessor.username == "imported-nuggets"
    assert bank.changes.get().source == JudgementChange.Source.IMPORT
    assert "Imported 6 nuggets of 2 topics." in client.get(response["Location"]).content.decode()

    response = post(client, "nugget-assignments", "assignments" + suffix,
                    pack((ASSIGNMENTS + UNANSWERED + "\n").encode()))
    assert response.status_code == 302, response.content.decode()[-3000:]
    done = DataImport.objects.first()
    assert (done.kind, done.status) == ("nugget-assignments", DataImport.Status.DONE), done.problems
    assert done.summary == (
        "Imported 10 nugget labels of 3 answers as 'imported-assignments'; left out 1 lines of topics their run did "
        f"not answer (the nuggetizer's empty answers: such a topic scores 0): {T2} baseline.")
    _, labels = stored(rag)
    assert len(labels) == 10 and {value for _, value in labels} == {"support", "partial_support", "not_support"}
    assert set(Judgement.objects.filter(layer=Layer.NUGGET_SUPPORT).values_list("assessor__username", flat=True)) == {
        "imported-assignments"}
    page = client.get(f"/data/imports/{done.pk}/").content.decode()
    assert "left out 1 lines of topics their run did not answer" in page


def test_a_bad_nuggets_file_names_its_line_and_field_and_stores_nothing(client, organiser, rag):
    lines = NUGGETS.splitlines()
    bad = json.loads(lines[1])
    bad["nuggets"][1]["importance"] = "<b>crucial</b>"
    before = factories.db_snapshot()
    response = post(client, "nuggets", "<i>banks.jsonl", (lines[0] + "\n" + json.dumps(bad) + "\n").encode())
    assert response.status_code == 400
    listed = problems(response)
    assert [row[:3] for row in listed] == [("<i>banks.jsonl", 2, "nuggets[1].importance")], listed
    body = response.content.decode()
    assert "<b>crucial" not in body and "<i>banks" not in body and "&lt;b&gt;crucial&lt;/b&gt;" in body
    assert without_imports(factories.db_snapshot()) == without_imports(before)
    assert stored(rag) == ({}, [])
    failed = DataImport.objects.get()
    assert failed.status == DataImport.Status.FAILED and failed.problem_total == 1
    report = client.get(f"/data/imports/{failed.pk}/")
    assert report.status_code == 200 and problems(report) == listed


def test_a_bad_assignments_file_names_its_line_and_field_and_stores_nothing(client, organiser, rag):
    assert post(client, "nuggets", "nuggets.jsonl", NUGGETS.encode()).status_code == 302
    good = ASSIGNMENTS.splitlines()
    unknown = assignment(T1, "baseline", ("<script>alert(1)</script>", "vital", "support"))
    before = factories.db_snapshot()
    response = post(client, "nugget-assignments", "assign.jsonl.gz",
                    gzip.compress(("\n".join([good[0], good[1], unknown]) + "\n").encode()))
    assert response.status_code == 400
    listed = problems(response)
    assert [row[:3] for row in listed] == [("assign.jsonl.gz", 3, "nuggets[0].text")], listed
    assert "no nugget of topic" in listed[0][3]
    assert without_imports(factories.db_snapshot()) == without_imports(before)
    assert stored(rag)[1] == []
    failed = DataImport.objects.first()
    assert failed.kind == "nugget-assignments" and failed.status == DataImport.Status.FAILED


def test_only_a_nuggets_campaign_takes_nugget_files(client, organiser, rag):
    robust = factories.collection("robust", kind=Collection.Kind.DOCUMENTS)
    factories.topic(robust, "301", kind=Topic.Kind.ADHOC, title="Crime")
    create_campaign(name="adhoc", task="adhoc", topics=["301"], collection="robust")
    for url in ("/campaigns/adhoc/data/", "/data/"):
        page = client.get(url).content.decode()
        assert 'value="topics"' in page and 'value="nuggets"' not in page and 'value="nugget-assignments"' not in page
        for kind in ("nuggets", "nugget-assignments"):
            response = post(client, kind, "n.jsonl", NUGGETS.encode(), url=url)
            assert response.status_code == 400 and "is not one of the available choices" in response.content.decode()
    assert not DataImport.objects.exists() and stored(rag) == ({}, [])


def test_an_assessor_may_not_upload_nugget_files(client, rag):
    user = factories.user("judge")
    user.groups.add(ensure_groups()[Role.ASSESSOR])
    client.force_login(user)
    # the console is the organisers' (annotation.views.campaigns.organisers_only: 404 for everyone else)
    assert client.get(URL).status_code == 404
    assert post(client, "nuggets", "nuggets.jsonl", NUGGETS.encode()).status_code == 404
    assert not DataImport.objects.exists() and stored(rag) == ({}, [])


@pytest.mark.parametrize("packed", [False, True])
def test_answers_upload_on_the_data_page_as_the_uploaders_runs_of_the_campaign(client, organiser, rag, packed):
    """Issue 39 item 4: answers come in through the browser too, checked whole, line-numbered, atomic; the runs are
    the uploader's, of the campaign (its track), as a TREC run uploaded there is."""
    from assessments.models import Answer, Run
    from tests.assessments.test_nuggets import answer

    assert '<option value="answers">' in client.get(URL).content.decode()
    text = "\n".join([answer("team-x", T1, [D[0]], ("Vicarious trauma is secondhand trauma.", [0])),
                      answer("team-x", T2, [D[2]], ("Bones thin with age.", [0]), topic="how bone density changes")])
    data = gzip.compress(text.encode()) if packed else text.encode()
    response = post(client, "answers", "answers.jsonl.gz" if packed else "answers.jsonl", data)
    assert response.status_code == 302, response.content.decode()[-3000:]
    done = DataImport.objects.get()
    assert done.status == DataImport.Status.DONE and done.summary == "Imported 2 answers of 1 runs (team-x).", done.summary
    run = Run.objects.get(name="team-x")
    assert (run.track, run.owner_id) == ("rag24", int(client.session["_auth_user_id"]))
    assert Answer.objects.filter(run=run, campaign_id=rag.pk).count() == 2

    before = factories.db_snapshot()
    bad = "\n".join([answer("team-y", T1, [D[0]], ("Fine.", [0])),
                     answer("team-y", "no-such-topic", [D[0]], ("Lost.", [0])),
                     answer("team-y", T2, ["unknown-doc"], ("Cites nothing known.", [0]))])
    response = post(client, "answers", "<b>bad</b>.jsonl", bad.encode())
    assert response.status_code == 400
    assert [row[1:3] for row in problems(response)] == [(2, "topic_id"), (3, "references[0]")], problems(response)
    assert "<b>bad</b>" not in response.content.decode()
    assert without_imports(factories.db_snapshot()) == without_imports(before)
    assert not Run.objects.filter(name="team-y").exists()


def test_the_data_page_counts_a_run_of_answers_in_answers_not_zero_entries(client, organiser, rag):
    page = client.get(URL).content.decode()
    listed = page[page.index('id="run-list"'):page.index("</table>", page.index('id="run-list"'))]
    row = next(r for r in listed.split("<tr>") if ">ragnarok<" in r)
    assert '<td class="num">2</td><td class="num">2 answers</td>' in row, row
