"""GET /api/campaigns/<name>/agreement/: the agreement report for organisers, as JSON, CSV or text."""

import json

import pytest
from rest_framework.test import APIClient
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from annotation.reports.agreement import campaign_report
from annotation.models import Campaign
from annotation.services.tokens import issue_token
from assessments.models import Layer, Topic
from retrieval.models import Passage
from annotation.roles import Role, ensure_groups
from tests import factories
from tests.api.test_schema import schema, wsgi_app  # noqa: F401  (the schema and the WSGI app fixture)

URL = "/api/campaigns/adhoc/agreement/"


@pytest.fixture
def judged(adhoc, keys):
    """Two assessors grade d1-d4 of topic 301 in campaign 'adhoc' (plot grades, as ad hoc topics are graded)."""
    topic = Topic.objects.get(external_id="301")
    passages = [Passage.objects.get(external_id=f"d{n}") for n in range(1, 5)]
    pool = factories.pool(topic.collection, [topic], [])
    adhoc.pools.add(pool)
    for name, grades in (("ann", [2, 1, 0, 2]), ("bob", [2, 0, 0, 1])):
        user = factories.user(name)
        factories.assignment(user, topic, campaign=adhoc, pool=pool)
        for passage, grade in zip(passages, grades):
            factories.judgement(user, topic, passage, layer=Layer.PLOT_GRADE, value=grade, campaign=adhoc)
        factories.judgement(user, topic, passages[0], layer=Layer.PLOT_SPANS, value=[[0, 4 if name == "ann" else 2]],
                            campaign=adhoc)
    return adhoc


@pytest.mark.django_db
def test_an_organiser_gets_the_report_as_json(judged, organiser):
    response = organiser.get(URL)
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    body = response.json()
    assert body == json.loads(json.dumps(campaign_report(judged)))
    grade = body["layers"][0]
    assert (grade["layer"], grade["level"], grade["units"], grade["assessors"]) == ("plot_grade", "ordinal", 4, 2)
    assert grade["pairs"][0]["confusion"]["matrix"] == [[1, 0, 0], [1, 0, 0], [0, 1, 1]]


@pytest.mark.django_db
def test_csv_and_text_formats(judged, organiser):
    csv_response = organiser.get(URL, {"format": "csv"})
    assert csv_response.status_code == 200 and csv_response["Content-Type"].startswith("text/csv")
    assert csv_response.content.decode().splitlines()[1].startswith("layer,plot_grade,ordinal,,,,4,2,")
    text = organiser.get(URL, {"format": "text", "topic": "301", "layer": ["plot_grade"]})
    assert text.status_code == 200 and text["Content-Type"].startswith("text/plain")
    assert "Agreement in campaign adhoc (adhoc, topic 301)" in text.content.decode()


@pytest.mark.django_db
def test_a_bad_topic_or_layer_is_a_json_400_whatever_the_format(judged, organiser):
    response = organiser.get(URL, {"topic": "999", "format": "csv"})
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "No report: topic: campaign 'adhoc' has no assigned topic '999'"}
    response = organiser.get(URL, {"layer": "gr4de"})
    assert response.status_code == 400 and "layer" in response.json()


@pytest.mark.django_db
def test_an_unknown_campaign_is_404(judged, organiser):
    assert organiser.get("/api/campaigns/nope/agreement/").status_code == 404


@pytest.mark.django_db
def test_a_token_limited_to_another_campaign_gets_404(judged):
    factories.campaign("other", Campaign.Task.ADHOC)
    factories.user("boss-other").groups.add(ensure_groups()[Role.ORGANISER])
    _, key = issue_token(username="boss-other", role="organiser", campaign="other")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get(URL).status_code == 404
    assert client.get("/api/campaigns/other/agreement/").status_code == 200


@pytest.mark.django_db
def test_participants_may_not_read_agreement(judged, team_a):
    assert team_a.get(URL).status_code == 403


@pytest.mark.django_db
def test_options_is_json_even_when_csv_is_asked(judged, organiser):
    response = organiser.options(URL + "?format=csv")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert response.json()["name"] == "Campaign Agreement"


@pytest.mark.django_db
def test_the_report_conforms_to_the_schema(judged, keys, wsgi_app):
    operation = schema["/api/campaigns/{name}/agreement/"]["GET"]
    for query in ({}, {"format": "csv"}, {"format": "text"}, {"topic": "301"}):
        case = operation.Case(path_parameters={"name": "adhoc"}, query=query)
        response = case.call_and_validate(
            app=wsgi_app, headers={"Authorization": f"Token {keys['organiser']}"},
            checks=[not_a_server_error, status_code_conformance, content_type_conformance,
                    response_schema_conformance],
        )
        assert response.status_code == 200
