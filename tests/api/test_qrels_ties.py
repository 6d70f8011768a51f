"""Where majority sends a tie (issue 32, item 18): `ties` higher (the default) or lower, the same through
export_qrels --ties, GET /api/qrels/?ties= and the console's qrels download; a bad value is refused naming `ties`."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.roles import Role, ensure_groups
from assessments.models import Topic
from assessments.services.qrels import QrelsRequest, qrels_rows
from assessments.exporters.common import ExportFailed
from retrieval.models import Passage
from tests import factories
from tests.api.helpers import PARA

pytestmark = pytest.mark.django_db

PAGE = "tqa2:L_0001"
TIE = {"higher": f"{PAGE} 0 {PARA[0]} 2\n", "lower": f"{PAGE} 0 {PARA[0]} 1\n"}


@pytest.fixture
def tied(outline):
    """Two assessors of campaign car-y3 grade one paragraph 1 (CAN) and 2 (SHOULD): a tie."""
    topic = Topic.objects.get(external_id=PAGE)
    passage = Passage.objects.get(external_id=PARA[0])
    for name, relevance in (("ann", "can"), ("bob", "should")):
        factories.judgement(factories.user(name), topic, passage, relevance=relevance, facet=f"{PAGE}/T_0001",
                            campaign=outline)
    return outline


@pytest.fixture
def console(tied):
    client = Client()
    user = factories.user("chief")
    user.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(user)
    return client


def body(response):
    assert response.status_code == 200, response.content
    return b"".join(response.streaming_content).decode()


def export(*args):
    out = StringIO()
    call_command("export_qrels", "--collection", "car", *args, stdout=out)
    return out.getvalue()


def test_the_command_breaks_a_tie_each_way(tied):
    assert export() == export("--ties", "higher") == TIE["higher"]
    assert export("--ties", "lower") == TIE["lower"]
    assert export("--aggregate", "adjudicated", "--ties", "lower") == TIE["lower"]  # an unresolved line
    assert export("--aggregate", "max", "--ties", "lower") == TIE["higher"]  # ties are majority's alone
    with pytest.raises(CommandError, match="--ties: 'middle' is not one of higher, lower"):
        export("--ties", "middle")


def test_the_service_refuses_a_bad_value_naming_ties(tied):
    for request in (QrelsRequest(collection="car", ties="middle"),
                    QrelsRequest(collection="car", ties="middle", source="filled")):
        with pytest.raises(ExportFailed) as refused:
            list(qrels_rows(request))
        assert refused.value.field == "ties"


def test_the_api_breaks_a_tie_each_way(tied, organiser):
    assert body(organiser.get("/api/qrels/", {"collection": "car"})) == TIE["higher"]
    for ties, line in TIE.items():
        assert body(organiser.get("/api/qrels/", {"collection": "car", "ties": ties})) == line
    refused = organiser.get("/api/qrels/", {"collection": "car", "ties": "middle"})
    assert refused.status_code == 400 and "ties" in refused.json()


def test_the_console_download_breaks_a_tie_each_way_and_the_page_says_how(console):
    url = "/campaigns/car-y3/results/qrels/"
    assert body(console.get(url, {"level": "page", "aggregate": "majority"})) == TIE["higher"]
    for ties, line in TIE.items():
        response = console.get(url, {"level": "page", "aggregate": "majority", "ties": ties})
        assert body(response) == line
    assert response["Content-Disposition"] == 'attachment; filename="car-y3-page-majority-ties-lower.qrels"'
    refused = console.get(url, {"aggregate": "majority", "ties": "middle"})
    assert refused.status_code == 400 and "ties" in refused.content.decode()

    page = " ".join(console.get("/campaigns/car-y3/results/").content.decode().split())
    assert '<select name="ties" id="qrels-ties">' in page
    assert '<option value="higher" selected>the higher grade</option>' in page
    assert "(two assessors grading 1 and 2), that is a tie: it goes to the higher of the tied grades" in page
