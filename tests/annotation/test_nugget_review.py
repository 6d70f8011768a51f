"""Review of nugget units (issue 29, item 8): a finished nugget support unit opens a review whose items are its
(answer, nugget) labels, shown with the nugget's text and the label in words; a nugget creation unit's one item is
the assessor's bank."""

import pytest
from django.urls import reverse

from annotation.models import Assignment, Review
from annotation.roles import Role, ensure_groups
from annotation.services import review as reviews
from annotation.units import nugget_creation as nugget_creation_unit
from annotation.services.assignment import assign_campaign
from annotation.services.changes import mark
from assessments.models import Layer
from assessments.services import nuggets
from assessments.services.judging import record_judgement
from tests import factories
from tests.annotation.nuggets_setup import BANK, RUNS, nuggets_world, reviewed_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return reviewed_world()


def test_a_finished_nugget_support_unit_opens_a_review_of_its_labels_in_words(client, world):
    unit, answer = world["units"][RUNS[0]], world["answers"][RUNS[0]]
    values = ["support", "partial_support", "not_support", "support"]
    for nugget, value in zip(world["bank"], values):
        record_judgement(campaign_id=world["campaign"].pk, assessor=world["judge"], layer=Layer.NUGGET_SUPPORT,
                         value=value, topic=unit.topic, item=nuggets.support_item(answer.pk, nugget["id"]))
    mark(unit, True, reason="test: marked done")

    review = Review.objects.get(assignment=unit)
    assert review.reviewer == world["reviewer"]
    items = list(review.items.order_by("position"))
    assert [i.item for i in items] == [nuggets.support_item(answer.pk, n["id"]) for n in world["bank"]]
    assert [i.labels for i in items] == [{"nugget_support": v} for v in values]
    said = [entry["labels"] for entry in reviews.review_items(review)]
    assert said[0] == [f"nugget “{BANK[0][0]}” (vital): supported by the answer"]
    assert said[1] == [f"nugget “{BANK[1][0]}” (vital): partly supported by the answer"]
    assert said[2] == [f"nugget “{BANK[2][0]}” (okay): not supported by the answer"]

    client.force_login(world["reviewer"])
    html = client.get(reverse("annotation:review", args=[review.pk])).content.decode()
    assert "partly supported by the answer" in html and BANK[1][0] in html
    response = client.post(reverse("annotation:review", args=[review.pk]),
                           {f"correct-{i.pk}": "right" for i in items})
    assert response.status_code in (200, 302)
    assert Review.objects.get(pk=review.pk).status == Review.Status.PASSED


def test_a_finished_nugget_creation_unit_is_reviewed_on_its_bank(db):
    reviewer = factories.user("nugget-reviewer")
    reviewer.groups.add(ensure_groups()[Role.REVIEWER])
    campaign = nuggets_world()["campaign"]
    writer = factories.user("nugget-writer")
    assign_campaign(campaign, ["nugget-writer"], stage="create")
    unit = Assignment.objects.get(campaign=campaign, assessor=writer, kind=Assignment.Kind.NUGGET_CREATION)
    bank = [{"id": "n1", "text": "Vicarious trauma is second-hand", "importance": "vital", "origin": "assessor"}]
    record_judgement(campaign_id=campaign.pk, assessor=writer, layer=Layer.NUGGETS, value=bank, topic=unit.topic)
    mark(unit, True, reason="test: marked done")

    review = Review.objects.get(assignment=unit)
    (item,) = review.items.all()
    assert item.item == nugget_creation_unit.BANK_ITEM and item.labels == {"nuggets": bank}
    assert reviews.review_items(review)[0]["labels"] == ["nugget 1 (vital): Vicarious trauma is second-hand"]
