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
