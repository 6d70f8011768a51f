"""A campaign's `machine_source` (the pre-labels its assessors see, and the source whose scores order its queue: one
setting) is never another campaign's source, whichever way it is set: over the API with a token limited to the
campaign (in one change or in two: the source first while pre-labels are off, then pre-labels on), or on the
console's judging-order form."""

import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Campaign
from annotation.roles import Role, ensure_groups
from annotation.services.tokens import issue_token
from assessments.models import MachineLabel, MachineLabelSource
from tests import factories
from tests.annotation import plot_setup as ps

pytestmark = pytest.mark.django_db


@pytest.fixture
def two(tmp_path):
    """Plot campaign `ours` (an assessor's unit over a pool of six) and campaign `theirs`, whose annotator labelled
    every candidate of that pool; an organiser token limited to `ours`."""
    topic = ps.load_query(tmp_path, lines=ps.EXCERPT)
    pool, picked = ps.plot_pool(topic, size=6)
    ours = ps.campaign(name="ours")
    theirs = ps.campaign(name="theirs")
    source = MachineLabelSource.objects.create(name="their-annotator", kind="classifier", campaign_id=theirs.pk,
                                               collection=topic.collection, model="minilm", grades=[0, 1],
                                               status="ready")
    for passage in picked:
        MachineLabel.objects.create(source=source, topic=topic, passage=passage, grade=1, score=0.9)
    unit = ps.assign(factories.user("judge"), topic, pool, ours)
    factories.user("boss", is_staff=True).groups.add(ensure_groups()[Role.ORGANISER])
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(username='boss', role='organiser', campaign='ours')[1]}")
    return unit, source, api


def change(api, settings):
    """Preview then confirm a settings change of `ours`; the answer of the last step."""
    url = "/api/campaigns/ours/settings/"
    preview = api.post(url, {"settings": settings}, format="json")
    if preview.status_code != 200:
        return preview
    return api.post(url, {"settings": settings, "confirm": preview.json()["confirm"]}, format="json")


def shown_to_assessor(client, unit):
    client.force_login(unit.assessor)
    html = client.get(reverse("annotation:unit", args=[unit.token])).content.decode()
    state = json.loads(re.search(r'<script id="plot-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    return state.get("machine") or {}


def test_a_campaign_token_cannot_show_another_campaigns_labels_in_one_change(two):
    unit, source, api = two
    response = change(api, {"show_machine_labels": True, "machine_source": source.pk, "blind_share": 0})
    assert response.status_code == 400 and response.json()["field"] == "machine_source", response.content


def test_nor_in_two_changes_the_source_first_while_pre_labels_are_off(client, two):
    unit, source, api = two
    first = change(api, {"machine_source": source.pk, "blind_share": 0})
    second = change(api, {"show_machine_labels": True}) if first.status_code == 200 else first
    assert second.status_code == 400 and second.json()["field"] == "machine_source", second.content
    assert Campaign.objects.get(pk=unit.campaign_id).settings.get("show_machine_labels") is not True
    assert shown_to_assessor(client, unit) == {}


def test_the_judging_order_form_takes_no_other_campaigns_source(client, two):
    """The order's source is the pre-labels' source too: the form must not set what the settings refuse."""
    unit, source, _ = two
    campaign = unit.campaign
    own = MachineLabelSource.objects.create(name="our-annotator", kind="classifier", campaign_id=campaign.pk,
                                            collection=source.collection, model="minilm", grades=[0, 1], status="ready")
    campaign.settings = {**campaign.settings, "show_machine_labels": True, "machine_source": own.pk, "blind_share": 0}
    campaign.save()
    client.force_login(get_user_model().objects.get(username="boss"))
    response = client.post(reverse("annotation:console_judging_order", args=["ours"]),
                           {"judging_order": "machine", "machine_source": str(source.pk)})
    assert response.status_code == 400 and "machine_source" in response.content.decode()
    assert Campaign.objects.get(pk=campaign.pk).settings["machine_source"] == own.pk
    assert shown_to_assessor(client, unit) == {}


def test_the_judging_order_form_takes_the_campaigns_own_source(client, two):
    unit, source, _ = two
    source.campaign_id = unit.campaign_id
    source.save()
    client.force_login(get_user_model().objects.get(username="boss"))
    response = client.post(reverse("annotation:console_judging_order", args=["ours"]),
                           {"judging_order": "machine", "machine_source": str(source.pk)})
    assert response.status_code == 302
    assert Campaign.objects.get(pk=unit.campaign_id).settings["machine_source"] == source.pk


def test_a_source_made_for_no_campaign_is_taken_by_the_order_and_the_pre_labels_alike(client, two):
    """One rule (MachineLabelSource.objects.usable_by): the order form and the pre-labels both take a source made for
    no campaign; before, the order stored one that turning pre-labels on then refused."""
    unit, source, api = two
    source.campaign_id = None
    source.save()
    client.force_login(get_user_model().objects.get(username="boss"))
    response = client.post(reverse("annotation:console_judging_order", args=["ours"]),
                           {"judging_order": "machine", "machine_source": str(source.pk)})
    assert response.status_code == 302
    response = change(api, {"show_machine_labels": True, "blind_share": 0})
    assert response.status_code == 200, response.content
    assert shown_to_assessor(client, unit) != {}
    assert list(MachineLabelSource.objects.usable_by(unit.campaign_id)) == [source]
