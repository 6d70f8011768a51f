"""The qualification's worked examples (issue 30, item 3): stored as a campaign setting through the settings
service (checked: the campaign's topics but not its qualification topics, passages of its collection, grades of
its scale), shown to an assessor on a page before their qualification units start (a not-started qualification
unit opens the examples first), with the grade expected and why, blind (no run name)."""

import pytest
from django.urls import reverse

from annotation.models import Assignment, Campaign
from annotation.services import qualification
from annotation.services.assignment import assign_campaign
from annotation.services.campaign_settings import change_settings
from annotation.services.errors import ServiceError
from assessments.models import Qrel, QrelSet
from retrieval.models import Passage
from tests import factories
from tests.annotation.test_campaign_settings import adhoc_campaign, grade

pytestmark = pytest.mark.django_db

EXAMPLE = {"topic": "401", "passage": "D1-1", "grade": 1, "explanation": "It names the proposal and the place."}


def qualifying_campaign():
    """The ad hoc campaign of tests.annotation.test_campaign_settings with topic 402 a qualification topic (gold
    grade 1 for D2-0), assigned to ann and bob; its example passage is ranked by a run with a secret name."""
    campaign, topics = adhoc_campaign(assessors=("ann", "bob"))
    gold = QrelSet.objects.create(name="gold", collection=topics[0].collection)
    Qrel.objects.create(qrel_set=gold, topic=topics[1], passage=Passage.objects.get(external_id="D2-0"), grade=1)
    Assignment.objects.filter(campaign=campaign).delete()  # given out again, 402 as every assessor's qualification
    assign_campaign(campaign, ["ann", "bob"], qualification_topics=["402"], qualification_gold="gold")
    factories.run(topics[0].collection, "secret-run-x", {topics[0]: [Passage.objects.get(external_id="D1-1")]})
    return Campaign.objects.get(pk=campaign.pk), topics


def set_examples(campaign, examples):
    preview = change_settings(campaign, worked_examples=examples)
    return change_settings(campaign, worked_examples=examples, confirm=preview.digest)


def test_examples_are_a_setting_said_before_it_is_applied():
    campaign, _ = qualifying_campaign()
    preview = change_settings(campaign, worked_examples=[EXAMPLE])
    assert preview.effects == ["1 worked example shown to assessors before their qualification; 2 assessors with "
                               "qualification units not started see it first"]
    assert qualification.worked_examples(Campaign.objects.get(pk=campaign.pk)) == []
    set_examples(campaign, [EXAMPLE])
    [shown] = qualification.worked_examples(campaign)
    assert (shown.topic.external_id, shown.passage.external_id, shown.grade, shown.label, shown.explanation) == (
        "401", "D1-1", 1, "Relevant", EXAMPLE["explanation"])


@pytest.mark.parametrize("change, message", [
    ({"topic": "402"}, "example 1: topic '402' is a qualification topic"),
    ({"topic": "999"}, "example 1: topic '999' is not one of this campaign's"),
    ({"passage": "nope"}, "example 1: passage 'nope' is not in collection"),
    ({"grade": 3}, "example 1: grade 3 is not one of the scale's (0, 1)"),
    ({"explanation": " "}, "example 1: give the explanation"),
])
def test_a_bad_example_is_refused_naming_the_field_and_the_example(change, message):
    campaign, _ = qualifying_campaign()
    with pytest.raises(ServiceError) as caught:
        change_settings(campaign, worked_examples=[{**EXAMPLE, **change}])
    assert caught.value.field == "worked_examples" and caught.value.message.startswith(message)


def test_a_scale_that_drops_an_examples_grade_is_refused_while_the_example_stands():
    campaign, _ = qualifying_campaign()
    set_examples(campaign, [EXAMPLE])
    with pytest.raises(ServiceError) as caught:
        change_settings(campaign, grade_scale=[[2, "High"], [0, "Not relevant"]])
    assert caught.value.field == "worked_examples"


def login(client, username):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username=username))


def test_the_assessor_reads_the_examples_before_the_qualification_and_no_run_name(client):
    campaign, _ = qualifying_campaign()
    set_examples(campaign, [EXAMPLE])
    login(client, "ann")
    queue = client.get(reverse("annotation:home")).content.decode()
    assert reverse("annotation:qualification_examples", args=[campaign.name]) in queue
    unit = Assignment.objects.get(campaign=campaign, assessor__username="ann", qualification=True)
    response = client.get(reverse("annotation:unit", args=[unit.token]))
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:qualification_examples", args=[campaign.name])
    page = client.get(response["Location"]).content.decode()
    assert "1 · Relevant" in page and EXAMPLE["explanation"] in page and "Text 1 1." in page
    assert "secret-run-x" not in page
    assert f'{reverse("annotation:unit", args=[unit.token])}?examples=read' in page
    assert client.get(reverse("annotation:unit", args=[unit.token]) + "?examples=read").status_code == 200


def test_once_started_the_qualification_unit_opens_directly(client):
    campaign, topics = qualifying_campaign()
    set_examples(campaign, [EXAMPLE])
    grade(campaign, "ann", topics[1], 1)  # marks the unit in progress
    login(client, "ann")
    unit = Assignment.objects.get(campaign=campaign, assessor__username="ann", qualification=True)
    assert client.get(reverse("annotation:unit", args=[unit.token])).status_code == 200


def test_without_examples_nothing_changes_and_others_get_404(client):
    campaign, _ = qualifying_campaign()
    login(client, "ann")
    unit = Assignment.objects.get(campaign=campaign, assessor__username="ann", qualification=True)
    assert client.get(reverse("annotation:unit", args=[unit.token])).status_code == 200
    client.force_login(factories.user("stranger"))
    assert client.get(reverse("annotation:qualification_examples", args=[campaign.name])).status_code == 404
    assert client.get(reverse("annotation:qualification_examples", args=["no-such"])).status_code == 404
