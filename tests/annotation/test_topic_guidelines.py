"""Instructions per topic (issue 39 item 13): a campaign's setting topic_guidelines {topic id: text}, set on the
campaign's home, over the settings API or by change_settings, shown beside the topic's narrative on the ad hoc and
nugget pages, escaped; a topic not of the campaign or a bad value is refused naming the field."""

import pytest
from django.urls import reverse

from annotation.models import Assignment
from annotation.services.campaign_settings import SettingsChangeInvalid, change_settings
from tests import factories
from tests.annotation.adhoc_setup import adhoc_world
from tests.annotation.test_campaign_settings import adhoc_campaign, form_data, organiser

pytestmark = pytest.mark.django_db


def apply(campaign, **values):
    preview = change_settings(campaign, **values)
    return change_settings(campaign, confirm=preview.digest, **values)


def test_a_topics_instructions_are_shown_beside_its_narrative_escaped(client):
    judge = factories.user("judge")
    world = adhoc_world(judge)
    done = apply(world["campaign"], topic_guidelines={"301": "Count <b>proposals</b> only,\n  not farms built."})
    assert done.applied and done.effects == ["the instructions of topic 301 change on assessors' next page"]
    client.force_login(judge)
    html = client.get(f"/a/{world['unit'].token}/").content.decode()
    card = html[html.index('class="topic-card'):html.index("</section>", html.index('class="topic-card'))]
    assert 'id="topic-guidelines"' in card and "Count &lt;b&gt;proposals&lt;/b&gt; only, not farms built." in card
    apply(world["campaign"], topic_guidelines={})  # taken away
    assert 'id="topic-guidelines"' not in client.get(f"/a/{world['unit'].token}/").content.decode()


def test_the_nugget_pages_show_them_too(client):
    from tests.annotation.nuggets_setup import TOPIC, nuggets_world

    judge = factories.user("judge")
    world = nuggets_world(judge)
    apply(world["campaign"], topic_guidelines={TOPIC: "Coping means what helpers do themselves."})
    client.force_login(judge)
    unit = Assignment.objects.filter(assessor=judge).first()
    html = client.get(f"/a/{unit.token}/").content.decode()
    assert 'id="topic-guidelines"' in html and "Coping means what helpers do themselves." in html


def test_a_topic_not_of_the_campaign_or_a_bad_value_is_refused_naming_the_field():
    campaign, _ = adhoc_campaign()
    for value, field in (({"999": "x"}, "topic_guidelines.999"), ({"401": "x" * 4001}, "topic_guidelines.401"),
                         ({"401": 5}, "topic_guidelines.401"), ("401: x", "topic_guidelines"),
                         ({"401": "a\x00b"}, "topic_guidelines.401")):
        with pytest.raises(SettingsChangeInvalid) as caught:
            change_settings(campaign, topic_guidelines=value)
        assert caught.value.field == field, value
    assert "topic_guidelines" not in campaign.settings


def test_the_console_takes_a_line_a_topic_and_the_api_the_object(client):
    campaign, _ = adhoc_campaign()
    organiser(client)
    url = reverse("annotation:console_campaign_settings", args=[campaign.name])
    lines = "402: Reports only\n\n401: Proposals, not farms built"
    preview = client.post(url, form_data(campaign, topic_guidelines=lines))
    assert preview.status_code == 200, preview.context["settings_form"].errors
    assert "the instructions of topics 401, 402 change" in preview.content.decode()
    done = client.post(url, form_data(campaign, topic_guidelines=lines, confirm=preview.context["change"].digest))
    assert done.status_code == 302
    campaign.refresh_from_db()
    assert campaign.settings["topic_guidelines"] == {"401": "Proposals, not farms built", "402": "Reports only"}
    home = client.get(reverse("annotation:campaign_home", args=[campaign.name])).content.decode()
    assert "401: Proposals, not farms built\n402: Reports only" in home  # as the form shows it, in id order
    bad = client.post(url, form_data(campaign, topic_guidelines="401 no colon"))
    assert bad.status_code == 400 and "line 1: expected" in bad.content.decode()

    from rest_framework.test import APIClient

    from annotation.services.tokens import issue_token

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(username='boss', role='organiser')[1]}")
    answer = api.post(f"/api/campaigns/{campaign.name}/settings/", {"settings": {"topic_guidelines": {"77": "x"}}},
                      format="json")
    assert answer.status_code == 400 and answer.json()["field"] == "topic_guidelines.77"
