"""POST /api/campaigns/NAME/answers/: a participant uploads generated answers (TREC RAG) to a nuggets campaign, as
runs are uploaded: checked whole, every problem listed, nothing stored; the token scoped to its campaign."""

import gzip
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotation.services.campaigns import create_campaign
from annotation.services.tokens import issue_token
from assessments.models import Answer, Run

pytestmark = pytest.mark.django_db

URL = "/api/campaigns/rag/answers/"
User = get_user_model()


def answers(run_id, *topics):
    return "".join(json.dumps({
        "run_id": run_id, "topic_id": qid, "topic": f"What is {qid}?", "references": ["d1", "d2"],
        "response_length": 9, "answer": [{"text": f"An answer to {qid}.", "citations": [1, 0]}],
    }) + "\n" for qid in topics).encode()


@pytest.fixture
def rag(web):
    return create_campaign(name="rag", task="nuggets", topics=["301", "302"])


def upload(client, data, name="answers.jsonl"):
    return client.post(URL, {"file": SimpleUploadedFile(name, data)}, format="multipart")


@pytest.mark.parametrize("packed", [False, True])
def test_a_participant_uploads_answers_as_their_run(rag, team_a, packed):
    data = answers("rag-a", "301", "302")
    response = upload(team_a, gzip.compress(data) if packed else data)
    assert response.status_code == 201, response.content
    assert response.json()["answers"] == 2 and response.json()["runs"] == ["rag-a"]
    run = Run.objects.get(name="rag-a")
    assert (run.owner.username, run.source, run.track) == ("team-a", "uploaded", "rag")
    assert Answer.objects.filter(run=run, campaign_id=rag.pk).count() == 2
    again = upload(team_a, answers("rag-a", "301"))
    assert again.status_code == 400 and "you already have a run named 'rag-a'" in again.content.decode()
    listed = team_a.get("/api/runs/?campaign=rag").json()["results"]  # not "topics 0, entries 0" (issue 39, 12)
    assert [(r["name"], r["topic_count"], r["entry_count"], r["answer_count"]) for r in listed] == [("rag-a", 2, 2, 2)]


def test_a_bad_answers_file_is_a_400_listing_every_problem(rag, team_a):
    bad = answers("rag-a", "301", "303").replace(b"[1, 0]", b"[2]", 1)
    response = upload(team_a, bad + b"not json\n")
    assert response.status_code == 400
    body = response.json()
    assert body["detail"].startswith("The answers file was rejected, nothing was stored")
    assert {(p["line"], p["field"]) for p in body["problems"]} == {
        (1, "answer[0].citations[0]"), (2, "topic_id"), (3, "line")}
    assert not Run.objects.exists() and not Answer.objects.exists()


def test_a_token_of_another_campaign_is_refused(rag, adhoc):
    key = issue_token(username="team-a", role="participant", campaign="adhoc")[1]
    scoped = APIClient()
    scoped.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    response = upload(scoped, answers("rag-a", "301"))
    assert response.status_code == 403
    assert not Run.objects.exists()


def test_a_campaign_of_another_task_takes_no_answers(adhoc, organiser):
    response = organiser.post("/api/campaigns/adhoc/answers/", {"file": SimpleUploadedFile("a", answers("x", "301"))},
                              format="multipart")
    assert response.status_code == 400 and response.json()["detail"].startswith("campaign:")


def test_the_run_limit_counts_the_files_runs(rag, team_a):
    rag.track.max_runs = 1
    rag.track.save()
    response = upload(team_a, answers("one", "301") + answers("two", "301"))
    assert response.status_code == 409
    assert not Run.objects.exists()


@pytest.mark.parametrize("bad, named", [
    (b'"An answer to 302.\\u0000"', "NUL"),  # PostgreSQL text cannot hold it: was a 500
    (b'"An answer to 302.\\ud800"', "surrogate"),
])
def test_unstorable_text_in_an_answer_is_a_400_naming_its_line(rag, team_a, bad, named):
    data = answers("rag-a", "301", "302").replace(b'"An answer to 302."', bad)
    response = upload(team_a, data)
    assert response.status_code == 400, response.content
    problems = response.json()["problems"]
    assert [p["line"] for p in problems] == [2] and named in json.dumps(problems)
    assert not Run.objects.exists() and not Answer.objects.exists()


class Counted(io.BytesIO):
    """An upload that remembers how far it was read."""

    most = 0

    def read(self, size=-1):
        data = super().read(size)
        self.most = max(self.most, self.tell())
        return data


def test_a_file_past_the_run_limit_is_refused_where_its_extra_run_starts_not_read_whole(rag, team_a):
    """Answers were parsed whole before the run limit was checked (100 MB unpacked held 350 MB): now reading stops
    at the first line of a run the owner may not add, and the 409 names it."""
    from annotation.services.nuggets import upload_answers
    from annotation.services.submissions import RunLimitReached

    rag.track.max_runs = 1
    rag.track.save()
    body = answers("one", "301") + answers("two", "301") + answers("three", "302") * 40_000  # about 8 MB more
    stream = Counted(body)
    stream.size = len(body)
    with pytest.raises(RunLimitReached, match=r"the file brings 2 or more \(line 2 starts run number 2\)"):
        upload_answers(campaign=rag, owner=User.objects.get(username="team-a"), file=stream, filename="a.jsonl")
    assert stream.most < len(body) // 10
    assert not Run.objects.exists()


def test_an_owner_at_the_run_limit_is_refused_before_the_file_is_read(rag, team_a):
    rag.track.max_runs = 1
    rag.track.save()
    assert upload(team_a, answers("one", "301")).status_code == 201
    response = upload(team_a, b"not even json\n")
    assert response.status_code == 409 and "the most allowed (1)" in response.content.decode()
