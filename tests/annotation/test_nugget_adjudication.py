"""Adjudication of nugget support (issue 29, item 8): two assessors disagree on a nugget of an answer; the
adjudication page lists it with the nugget's text and the answer (never the run), offers support / partial / no
support, and the final label, an adjudicated judgement, is the one the run's nugget scores use."""

import pytest
from django.urls import reverse

from annotation.roles import Role, ensure_groups
from annotation.services.adjudication import AdjudicationInvalid, disagreements, set_final_label
from annotation.services.assignment import assign_campaign
from assessments.evaluation.nuggets import nugget_scores
from assessments.models import Judgement, JudgementChange, Layer
from assessments.services import nuggets
from assessments.services.judging import record_judgement
from tests import factories
from tests.annotation.nuggets_setup import BANK, RUNS, SENTENCES, nuggets_world
from tests.annotation.test_data_browser import disagreement_keys

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    groups = ensure_groups()
    found = nuggets_world()
    campaign = found["campaign"]
    amy, ben = factories.user("amy"), factories.user("ben")
    assign_campaign(campaign, ["amy", "ben"], overlap=2)
    answer = found["answers"][RUNS[0]]
    first = found["bank"][0]["id"]
    for who in (amy, ben):
        for nugget in found["bank"]:
            value = "not_support" if (who is ben and nugget["id"] == first) else "support"
            record_judgement(campaign_id=campaign.pk, assessor=who, layer=Layer.NUGGET_SUPPORT, value=value,
                             topic=answer.topic, item=nuggets.support_item(answer.pk, nugget["id"]))
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(groups[Role.ORGANISER])
    found.update(amy=amy, ben=ben, organiser=organiser, answer=answer, item=nuggets.support_item(answer.pk, first))
    return found


def run_all(campaign):
    (name,) = [n for n in nugget_scores(campaign.pk)["runs"] if RUNS[0] in n]
    return nugget_scores(campaign.pk)["runs"][name]["all"]


def test_the_page_lists_the_disagreement_and_the_final_label_sets_the_score(client, world):
    campaign, answer = world["campaign"], world["answer"]
    found = disagreements(campaign, layer="nugget_support")
    assert found.total == 1 and found.per_layer == {"nugget_support": 1}
    (item,) = found.items
    assert item.item == world["item"] and item.nugget["text"] == BANK[0][0] and item.passage is None
    assert item.labels == [("amy", "support"), ("ben", "no support")] and item.final is None
    assert run_all(campaign) == 0.75  # a tie takes the lower label: no support
    keys = set(Judgement.objects.filter(layer=Layer.NUGGET_SUPPORT, item=world["item"]).values_list("key", flat=True))
    assert disagreement_keys(campaign) == sorted(keys)  # the data browser's "disagreement" filter

    url = reverse("annotation:adjudication", args=[campaign.name])
    client.force_login(world["organiser"])
    page = client.get(url).content.decode()
    assert BANK[0][0] in page and SENTENCES[RUNS[0]][0][0][:40] in page
    assert 'aria-label="final nugget support"' in page and 'value="partial_support"' in page
    assert RUNS[0] not in page and RUNS[1] not in page
    assert f'name="item" value="{world["item"]}"' in page

    response = client.post(url, {"layer": "nugget_support", "topic": answer.topic.pk, "item": world["item"],
                                 "label": "support"})
    assert response.status_code == 302
    final = Judgement.objects.get(assessor=world["organiser"], layer=Layer.NUGGET_SUPPORT, item=world["item"])
    assert final.adjudicated and final.value == "support"
    assert final.changes.get().source == JudgementChange.Source.ADJUDICATION
    assert run_all(campaign) == 1.0  # the adjudicated label decides
    assert disagreements(campaign, layer="nugget_support").items[0].final == "support"

    client.post(url, {"layer": "nugget_support", "topic": answer.topic.pk, "item": world["item"],
                      "label": "partial_support"})
    assert run_all(campaign) == pytest.approx((0.5 + 3) / 4)


def test_bad_nugget_final_labels_name_the_field(client, world):
    campaign, answer, organiser = world["campaign"], world["answer"], world["organiser"]
    topic = answer.topic
    for kwargs, field in (
        (dict(item=world["item"], label="maybe"), "label"),
        (dict(item=f"{answer.pk}:nope", label="support"), "item"),
        (dict(item="999999:n1", label="support"), "item"),
        (dict(item="bad item", label="support"), "item"),
    ):
        with pytest.raises(AdjudicationInvalid) as raised:
            set_final_label(campaign, organiser, layer="nugget_support", topic=topic, passage=None, **kwargs)
        assert raised.value.field == field
    with pytest.raises(AdjudicationInvalid) as raised:
        set_final_label(campaign, world["amy"], layer="nugget_support", topic=topic, passage=None,
                        item=world["item"], label="support")
    assert raised.value.field == "assessor"
    client.force_login(organiser)
    response = client.post(reverse("annotation:adjudication", args=[campaign.name]),
                           {"layer": "nugget_support", "topic": topic.pk, "item": world["item"], "label": "maybe"})
    assert response.status_code == 400 and 'data-field="label"' in response.content.decode()
