"""Qualification: known answers, the threshold, locked formal work, attempts and retakes."""

import pytest
from django.urls import reverse

from annotation.services import qualification
from annotation.services.assignment import assign_campaign
from annotation.models import Campaign, Assignment, QualificationResult
from annotation.services.changes import mark
from annotation.services.queue import next_assignment
from assessments.models import Layer, Qrel, QrelSet
from tests import factories
from tests.annotation.test_assignment import make_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup():
    """Two formal topics and a qualification topic of ten passages, all MUST in the gold set."""
    campaign, made, runs = make_campaign("q", topics=3, runs=1, passages=10)
    qual_topic, qual_passages = made[2]
    gold = QrelSet.objects.create(name="q-gold", collection=qual_topic.collection)
    Qrel.objects.bulk_create(Qrel(qrel_set=gold, topic=qual_topic, passage=p, grade=3) for p in qual_passages)
    judge = factories.user("judge")
    assign_campaign(campaign, ["judge"], qualification_topics=[qual_topic.external_id], qualification_gold="q-gold")
    unit = Assignment.objects.get(qualification=True)
    return campaign, judge, unit, qual_topic, qual_passages


def answer(judge, topic, passages, right):
    """MUST for the first `right` passages, CAN for the rest (in campaign "q")."""
    campaign = Campaign.objects.get(name="q")
    for i, p in enumerate(passages):
        factories.judgement(judge, topic, p, relevance="must" if i < right else "can", facet=f"{topic.external_id}/H1",
                            campaign=campaign)


def test_nine_of_ten_passes_at_the_default_threshold(setup):
    campaign, judge, unit, topic, passages = setup
    answer(judge, topic, passages, right=9)
    mark(unit, True, reason='test: marked done')
    result = QualificationResult.objects.get()
    assert (result.items, result.correct, result.score, result.passed) == (10, 9, 0.9, True)
    assert qualification.locked_campaign_ids(judge) == set()


def test_a_removed_passage_answers_0_and_an_unjudged_one_is_wrong(setup):
    campaign, judge, unit, topic, passages = setup
    answer(judge, topic, passages[:8], right=8)
    factories.judgement(judge, topic, passages[8], layer=Layer.REMOVAL, value=True, campaign=campaign)
    mark(unit, True, reason='test: marked done')
    assert QualificationResult.objects.get().correct == 8


def test_formal_work_is_locked_until_the_assessor_passes(client, setup):
    campaign, judge, unit, topic, passages = setup
    formal = Assignment.objects.filter(qualification=False).first()
    assert qualification.is_locked(formal)
    assert next_assignment(judge) == unit
    client.force_login(judge)
    assert client.get(reverse("annotation:unit", args=[formal.token])).status_code == 302
    response = client.post(reverse("annotation:mark", args=[formal.token]), '{"done": true}', content_type="application/json")
    assert response.status_code == 403 and "qualification first" in response.json()["message"]


def test_after_the_last_failed_attempt_the_assessor_is_told_and_an_organiser_can_allow_a_retake(client, setup):
    campaign, judge, unit, topic, passages = setup
    answer(judge, topic, passages, right=5)
    mark(unit, True, reason='test: marked done')
    unit.refresh_from_db()
    assert unit.status == Assignment.Status.REVISE  # attempt 1 of 2 failed: back for a retake
    mark(unit, True, reason='test: marked done')
    unit.refresh_from_db()
    assert unit.status == Assignment.Status.DONE
    assert [r.score for r in QualificationResult.objects.order_by("attempt")] == [0.5, 0.5]
    client.force_login(judge)
    page = client.get(reverse("annotation:home")).content.decode()
    assert "Qualification: 50% right (90% needed), and no attempts left. Ask an organiser for a retake." in page
    assert next_assignment(judge) is None

    campaign.qualification_attempts = 3
    campaign.save()
    client.get(reverse("annotation:home"))
    unit.refresh_from_db()
    assert unit.status == Assignment.Status.DONE  # a GET changes nothing
    assert qualification.grant_retakes(campaign) == 1  # what saving the campaign in the admin does
    unit.refresh_from_db()
    assert unit.status == Assignment.Status.REVISE
    answer(judge, topic, passages, right=10)
    mark(unit, True, reason='test: marked done')
    assert QualificationResult.objects.get(attempt=3).passed
    assert not qualification.is_locked(Assignment.objects.filter(qualification=False).first())


def test_a_campaign_without_qualification_topics_locks_nothing(setup):
    other, _, _ = make_campaign("plain", topics=1, runs=1)
    assign_campaign(other, ["judge"])
    state = qualification.standing(other, factories.user("someone"))
    assert state.passed and state.message == ""
