"""GET /api/qrels/ and /api/assessments/car-y3/ (organisers): what export_qrels and export_car_assessments give."""

import io
import json
import zipfile

import pytest
from rest_framework.test import APIClient

from annotation.services.tokens import issue_token
from assessments.models import Qrel, QrelSet, Topic
from assessments.services.judging import record_judgement
from retrieval.models import Passage
from annotation.roles import Role, ensure_groups
from tests import factories

pytestmark = pytest.mark.django_db

PAGE = "tqa2:L_0001"


def text(response):
    """The body of a streamed text response."""
    assert response.status_code == 200, response
    return b"".join(response.streaming_content).decode()


@pytest.fixture
def judged(car):
    """Two assessors' facet judgements of two paragraphs of tqa2:L_0001; one paragraph removed by one of them."""
    topic = Topic.objects.get(external_id=PAGE)
    first, second = (Passage.objects.get(collection=car, external_id=f"{i:040x}") for i in (1, 2))
    for name, relevance in (("ann", "must"), ("bob", "can")):
        assessor = factories.user(name)
        record_judgement(assessor=assessor, layer="facet", topic=topic, passage=first,
                         value=[{"facet": f"{PAGE}/T_0001", "relevance": relevance}], run_ids=["teamA-1"])
    record_judgement(assessor=assessor, layer="removal", topic=topic, passage=second, value=True)
    return car


def test_qrels_of_the_judgements_with_the_export_qrels_options(judged, organiser):
    response = organiser.get("/api/qrels/", {"collection": "car", "aggregate": "max"})
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert text(response) == f"{PAGE} 0 {1:040x} 3\n{PAGE} 0 {2:040x} 0\n"
    one = text(organiser.get("/api/qrels/", {"assessor": "ann", "topic": [PAGE]}))
    assert one == f"{PAGE} 0 {1:040x} 3\n"
    section = text(organiser.get("/api/qrels/", {"collection": "car", "level": "section", "aggregate": "mean"}))
    assert f"{PAGE}/T_0001 0 {1:040x} 2\n" in section


def test_qrels_take_machine_labels_only_when_the_source_asks_for_them(judged, organiser):
    from assessments.models import MachineLabel, MachineLabelSource

    human = text(organiser.get("/api/qrels/", {"collection": "car"}))
    source = MachineLabelSource.objects.create(name="llm", kind="llm", collection=judged, model="m")
    topic = Topic.objects.get(external_id=PAGE)
    for n, grade in ((1, 0), (3, 2)):
        MachineLabel.objects.create(source=source, topic=topic, grade=grade,
                                    passage=Passage.objects.get(collection=judged, external_id=f"{n:040x}"))

    assert text(organiser.get("/api/qrels/", {"collection": "car"})) == human
    assert text(organiser.get("/api/qrels/", {"collection": "car", "source": "machine"})) == \
        f"{PAGE} 0 {1:040x} 0\n{PAGE} 0 {3:040x} 2\n"
    assert text(organiser.get("/api/qrels/", {"collection": "car", "source": "filled", "machine_source": "llm"})) == \
        human + f"{PAGE} 0 {3:040x} 2\n"
    refused = organiser.get("/api/qrels/", {"collection": "car", "source": "machine", "level": "section"})
    assert refused.status_code == 400 and refused.json()["field"] == "level"


def test_qrels_of_nothing_judged_are_an_empty_file(car, organiser):
    assert text(organiser.get("/api/qrels/", {"collection": "car"})) == ""


def test_qrels_of_a_stored_qrel_set(web, organiser):
    qrel_set = QrelSet.objects.create(name="official", collection=web)
    Qrel.objects.create(qrel_set=qrel_set, topic=Topic.objects.get(external_id="301"),
                        passage=Passage.objects.get(external_id="d1"), grade=2)
    assert text(organiser.get("/api/qrels/?qrel_set=official")) == "301 0 d1 2\n"


def test_qrels_of_one_campaign_as_export_qrels_campaign_gives_them(web, adhoc, organiser):
    """export_qrels --campaign has them; the API took no `campaign` and answered ?campaign=adhoc with every
    campaign's labels of the collection, silently."""
    from annotation.services.campaigns import create_campaign

    pilot = create_campaign(name="adhoc-pilot", task="adhoc", topics=["301"])
    topic = Topic.objects.get(external_id="301")
    for campaign, grade in ((adhoc, 0), (pilot, 2)):
        record_judgement(assessor=factories.user(f"judge-{campaign.name}"), layer="grade", value=grade, topic=topic,
                         passage=Passage.objects.get(external_id="d1"), campaign_id=campaign.pk)
    assert text(organiser.get("/api/qrels/", {"collection": "web", "campaign": "adhoc"})) == "301 0 d1 0\n"
    assert text(organiser.get("/api/qrels/", {"collection": "web", "campaign": "adhoc-pilot"})) == "301 0 d1 2\n"
    assert text(organiser.get("/api/qrels/", {"collection": "web", "aggregate": "max"})) == "301 0 d1 2\n"
    unknown = organiser.get("/api/qrels/", {"collection": "web", "campaign": "nope"})
    assert unknown.status_code == 400 and unknown.json() == {
        "detail": "Nothing was exported: no campaign named 'nope'", "field": "campaign"}


@pytest.mark.parametrize(
    "query, message",
    [
        ({"qrel_set": "nope"}, "no qrel set named 'nope'"),
        ({"collection": "nope"}, "no collection named 'nope'"),
        ({"topic": "nope", "collection": "car"}, "no topic 'nope'"),
    ],
)
def test_qrels_that_cannot_be_exported_are_400_saying_why(judged, organiser, query, message):
    response = organiser.get("/api/qrels/", query)
    assert response.status_code == 400
    assert message in response.json()["detail"]


@pytest.mark.parametrize(
    "query", [{"aggregate": "best"}, {"level": "chapter"}, {"qrel_set": "x", "level": "page"}, {"aggregate": "one"}]
)
def test_qrels_options_that_do_not_go_together_are_400(judged, organiser, query):
    assert organiser.get("/api/qrels/", query).status_code == 400


def test_y3_assessments_come_as_a_zip_of_one_file_per_topic_and_assessor(judged, organiser):
    response = organiser.get("/api/assessments/car-y3/", {"collection": "car"})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.getvalue()))
    names = sorted(archive.namelist())
    assert len(names) == 2 and all(name.endswith(".json") for name in names)
    doc = json.loads(archive.read(names[0]))
    assert doc["facet_state"][0][0] == {"query_id": PAGE, "paragraph_id": f"{1:040x}"}


def test_results_are_for_organisers_with_a_token_for_every_campaign(judged, team_a, adhoc):
    assert team_a.get("/api/qrels/").status_code == 403
    assert team_a.get("/api/assessments/car-y3/").status_code == 403
    scoped = APIClient()
    factories.user("boss2").groups.add(ensure_groups()[Role.ORGANISER])
    scoped.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(username='boss2', role='organiser', campaign='adhoc')[1]}")
    response = scoped.get("/api/qrels/", {"collection": "car"})
    assert response.status_code == 403
    assert response.json()["detail"] == "This needs an organiser token that is not limited to one campaign."
