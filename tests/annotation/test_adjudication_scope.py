"""A final label settles what a campaign's assessors said: the adjudication page refuses a passage (or a transition's
second passage) nobody of the campaign labelled on that topic, a passage of another collection above all, which
would otherwise reach the campaign's qrels as an adjudicated line."""

import pytest
from django.urls import reverse

from assessments.models import Judgement
from tests import factories
from tests.annotation.test_adjudication import qrels, setup  # noqa: F401 (the fixture)

pytestmark = pytest.mark.django_db


def test_the_page_refuses_a_passage_nobody_of_the_campaign_labelled(client, setup):  # noqa: F811
    campaign, topic, p1, p2, a, b, organiser = setup
    elsewhere = factories.passage(factories.collection("elsewhere"), "FOREIGN-DOC", text="Another collection.")
    unjudged = factories.passage(topic.collection, "NEVER-JUDGED", text="Never pooled.")
    client.force_login(organiser)
    url = reverse("annotation:adjudication", args=[campaign.name])
    before = Judgement.objects.count()
    for passage in (elsewhere, unjudged):
        response = client.post(url, {"layer": "relevance", "topic": topic.pk, "passage": passage.pk,
                                     "label": "removed"})
        assert response.status_code == 400 and "passage: no assessor of campaign" in response.content.decode()
        response = client.post(url, {"layer": "transition", "topic": topic.pk, "passage": p1.pk,
                                     "passage2": passage.pk, "label": "coherent"})
        assert response.status_code == 400 and "passage2: no assessor of campaign" in response.content.decode()
    assert Judgement.objects.count() == before
    assert "FOREIGN-DOC" not in qrels("--aggregate", "adjudicated")[0]
    done = client.post(url, {"layer": "relevance", "topic": topic.pk, "passage": p1.pk, "label": "removed"})
    assert done.status_code == 302
