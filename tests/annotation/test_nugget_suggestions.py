"""LLM nugget suggestions on the creation page (issue 29, item 3), without a browser: the page's data holds them only
where the campaign's setting nugget_suggestions is on (changed through change_settings, nuggets campaigns only);
a bank keeps a taken suggestion as `suggested` beside the edited nugget, checked as 400s naming the field."""

import pytest

from annotation.models import Campaign
from annotation.services.campaign_settings import SettingsChangeInvalid, change_settings
from assessments.models import Judgement, Layer, MachineLabel, MachineLabelSource
from tests import factories
from tests.annotation.test_nugget_creation_page import page_state, world  # noqa: F401 — the creation unit
from tests.annotation.test_nugget_support_page import save

pytestmark = pytest.mark.django_db

SUGGESTED = [{"text": "Vicarious trauma is secondhand trauma", "importance": "vital"}]


def suggest(world, nuggets=SUGGESTED):  # noqa: F811
    campaign = world["campaign"]
    source = MachineLabelSource.objects.create(name="nugget-suggest:m", kind="nugget_suggest", model="m",
                                               collection=world["unit"].topic.collection, campaign_id=campaign.pk)
    MachineLabel.objects.create(source=source, topic=world["unit"].topic, grade=1, score=1.0, value=nuggets,
                                raw_answer="[...]")


def turn(campaign, on):
    preview = change_settings(campaign, nugget_suggestions=on)
    return change_settings(Campaign.objects.get(pk=campaign.pk), nugget_suggestions=on, confirm=preview.digest)


def test_the_pages_data_holds_suggestions_only_while_the_campaign_shows_them(client, world):  # noqa: F811
    suggest(world)
    url = f"/a/{world['unit'].token}/"
    html = client.get(url).content.decode()
    assert "suggestions" not in page_state(html) and SUGGESTED[0]["text"] not in html and 'id="suggestions"' not in html

    change = turn(world["campaign"], True)

    assert change.applied and "show the LLM's suggestions" in change.effects[0]
    html = client.get(url).content.decode()
    assert page_state(html)["suggestions"] == SUGGESTED and 'id="suggestions"' in html
    assert turn(world["campaign"], False).applied
    assert "suggestions" not in page_state(client.get(url).content.decode())


def test_on_without_a_suggestion_the_page_says_none_yet(client, world):  # noqa: F811
    turn(world["campaign"], True)
    assert page_state(client.get(f"/a/{world['unit'].token}/").content.decode())["suggestions"] == []


def test_the_setting_is_a_nuggets_campaigns_and_true_or_false(world):  # noqa: F811
    with pytest.raises(SettingsChangeInvalid) as error:
        change_settings(world["campaign"], nugget_suggestions="yes")
    assert error.value.field == "nugget_suggestions"
    coll = factories.collection("adhoc-coll")
    factories.topic(coll, "t1", kind="adhoc")
    from annotation.services.campaigns import create_campaign

    other = create_campaign(name="adhoc-one", task="adhoc", topics=["t1"], collection=coll.name)
    with pytest.raises(SettingsChangeInvalid, match="nuggets campaigns only"):
        change_settings(other, nugget_suggestions=True)


def test_a_taken_suggestion_is_kept_beside_its_edited_text(client, world):  # noqa: F811
    bank = [{"id": "n1", "text": "Secondhand trauma, heard from others", "importance": "okay", "origin": "machine",
             "suggested": SUGGESTED[0]}]
    assert save(client, world["unit"], layer="nuggets", value=bank).status_code == 200
    stored = Judgement.objects.get(layer=Layer.NUGGETS, assessor__username="writer").value
    assert stored == bank


@pytest.mark.parametrize("nugget, field", [
    ({"origin": "assessor", "suggested": SUGGESTED[0]}, "value[0].suggested"),
    ({"suggested": {"text": "x"}}, "value[0].suggested"),
    ({"suggested": {"text": "", "importance": "vital"}}, "value[0].suggested.text"),
    ({"suggested": {"text": "x", "importance": "high"}}, "value[0].suggested.importance"),
    ({"suggested": "x"}, "value[0].suggested"),
    ({"suggestion": SUGGESTED[0]}, "value[0]"),
])
def test_a_bad_suggested_is_a_400_naming_the_field(client, world, nugget, field):  # noqa: F811
    value = [{"id": "n1", "text": "A fact", "importance": "okay", "origin": "machine", **nugget}]
    response = save(client, world["unit"], layer="nuggets", value=value)
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field
    assert not Judgement.objects.filter(layer=Layer.NUGGETS, assessor__username="writer").exists()
