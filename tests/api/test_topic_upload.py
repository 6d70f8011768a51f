"""POST /api/campaigns/NAME/topics/: an organiser uploads an ad hoc campaign's topics (issue 27: the command, the
console's data page and the API all take topic files). Checked whole; every problem listed; nothing stored."""

import gzip

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from assessments.models import Topic

pytestmark = pytest.mark.django_db

URL = "/api/campaigns/adhoc/topics/"
ROBUST = b"""<top>
<num> Number: 401
<title> foreign minorities, Germany

<desc> Description:
What language and cultural differences impede the integration of foreign minorities in Germany?

<narr> Narrative:
A relevant document will focus on the causes of the lack of integration in a significant way.
</top>
<top>
<num> Number: 402
<title> behavioral genetics

<desc> Description:
What is happening in the field of behavioral genetics?
</top>
"""


def upload(client, data, name="topics.401-402.txt", **fields):
    return client.post(URL, {"file": SimpleUploadedFile(name, data), **fields}, format="multipart")


@pytest.mark.parametrize("data, name", [(ROBUST, "topics.txt"), (gzip.compress(ROBUST), "topics.txt.gz")])
def test_an_organiser_uploads_trec_topics_and_they_join_the_campaign(organiser, adhoc, data, name):
    response = upload(organiser, data, name)
    assert response.status_code == 201, response.content
    assert response.json() == {"summary": "Imported 2 topics into web.", "added_to_campaign": 2}
    topic = Topic.objects.get(collection__name="web", external_id="401")
    assert topic.title == "foreign minorities, Germany"
    assert topic.metadata["narrative"].startswith("A relevant document will focus")
    listed = [t["id"] for t in organiser.get(URL).json()]
    assert {"401", "402"} <= set(listed)
    again = upload(organiser, ROBUST)
    assert again.status_code == 400 and "already" in again.content.decode()
    assert upload(organiser, ROBUST, update="true").status_code == 201


def test_a_bad_topics_file_lists_its_problems_and_stores_nothing(organiser, adhoc):
    before = Topic.objects.count()
    response = upload(organiser, b"<top>\n<num> Number: 401\n<title> unclosed\n<top>\n<title> no number\n</top>\n")
    assert response.status_code == 400
    body = response.json()
    assert body["detail"].startswith("The topics file was rejected, nothing was stored")
    assert all(p["line"] for p in body["problems"]), body
    assert Topic.objects.count() == before


def test_json_topics_with_a_lone_surrogate_are_a_400_naming_the_line_not_a_500(organiser, adhoc):
    """JSON's "\\ud800" decodes to text that cannot be encoded: it was stored as is, a UnicodeEncodeError and a 500."""
    organiser.raise_request_exception = False
    response = upload(organiser, b'{"qid": "901", "text": "ok"}\n{"qid": "902", "text": "a\\ud800b"}\n', "t.jsonl")
    assert response.status_code == 400, response.content
    assert response.json()["problems"] == [
        {"line": 2, "field": None, "message": "invalid JSON: a lone surrogate (\\ud800), which is not text at column 26"}]
    assert not Topic.objects.filter(external_id__in=["901", "902"]).exists()


def test_a_token_for_one_campaign_updates_no_topic_of_another(organiser, adhoc, web):
    """A token made with --campaign acts on that campaign only; with update=true its topic upload rewrote (and took
    into its campaign) a topic of the collection that only another campaign judges."""
    from rest_framework.test import APIClient

    from annotation.models import Campaign
    from annotation.services.campaigns import create_campaign
    from annotation.services.tokens import issue_token

    create_campaign(name="other", task="adhoc", topics=["303"])
    scoped = APIClient()
    scoped.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(username='boss', role='organiser', campaign='adhoc')[1]}")
    response = upload(scoped, b"301\tnew 301 title\n303\tnew 303 title\n", "t.tsv", update="true")
    assert response.status_code == 400, response.content
    assert response.json()["problems"] == [{"line": 2, "field": "id", "message": (
        "topic '303' is not a topic of campaign 'adhoc': a token for it changes no topic outside it")}]
    assert Topic.objects.get(external_id="303").title == "Topic 303"
    assert not Campaign.objects.get(name="adhoc").track.topics.filter(external_id="303").exists()
    assert upload(scoped, b"301\tnew 301 title\n", "t.tsv", update="true").status_code == 201
    assert Topic.objects.get(external_id="301").title == "new 301 title"
    assert upload(organiser, b"303\tnew 303 title\n", "t.tsv", update="true").status_code == 201  # unscoped may


def test_a_participant_may_not_upload_topics(team_a, adhoc):
    assert upload(team_a, ROBUST).status_code == 403
    assert not Topic.objects.filter(external_id="401").exists()


def test_an_outline_campaign_takes_no_topic_file(organiser, outline):
    response = organiser.post("/api/campaigns/car-y3/topics/", {"file": SimpleUploadedFile("t.txt", ROBUST)},
                              format="multipart")
    assert response.status_code == 400 and "campaign" in response.json()["detail"]


def test_a_bad_format_is_a_400_naming_it(organiser, adhoc):
    response = upload(organiser, ROBUST, format="sgml")
    assert response.status_code == 400 and response.json()["problems"][0]["field"] == "format"



def test_the_lookups_of_an_uploads_ids_are_batched(organiser, adhoc, monkeypatch):
    """Each lookup of the imported ids was one `IN (...)` over all of them: 70,000 topics were past PostgreSQL's
    65,535 parameters, which psycopg refused (OperationalError) and the site then called an outage ("the database
    is unreachable… retry": a 503). With the batch made 50, no query of an upload, a campaign token's check and an
    update of 300 topics reads more than 50 ids (on SQLite before: 300 in one query)."""
    from django.db import connection
    from rest_framework.test import APIClient

    from annotation.models import Campaign
    from annotation.services.tokens import issue_token
    from config import ids

    monkeypatch.setattr(ids, "LOOKUP_BATCH", 50)
    scoped = APIClient()  # a campaign's token checks every topic against the campaign's own: one more lookup
    scoped.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(username='boss', role='organiser', campaign='adhoc')[1]}")
    body = "".join(f"{1000 + i}\ttopic {i}\n" for i in range(300)).encode()
    most = []

    def count(execute, sql, params, many, context):
        if not many and sql.lstrip().upper().startswith("SELECT"):
            most.append((len(params or ()), sql[:200]))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        assert upload(scoped, body, "many.tsv").status_code == 201
        assert upload(scoped, body.replace(b"\ttopic ", b"\tnew "), "many.tsv", update="true").status_code == 201
    assert max(most)[0] <= 50 + 5, max(most)
    assert Topic.objects.filter(title__startswith="new ").count() == 300
    assert Campaign.objects.get(name="adhoc").track.topics.filter(external_id__startswith="1").count() == 300
