"""Pre-labels: no machine label reaches an assessor unless the campaign turns them on; then the blind calibration
share never shows one, and every change records whether its item showed one (the server's own rule)."""

import json
import re
import uuid
from itertools import count

import pytest
from django.urls import reverse

from annotation.services import plot, prelabels
from assessments.models import JudgementChange, MachineLabel, MachineLabelSource
from tests import factories
from tests.annotation import plot_setup as ps

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(tmp_path):
    """A plot assignment of six candidates, and an annotator that labelled all but the last."""
    topic = ps.load_query(tmp_path, lines=ps.EXCERPT)
    pool, picked = ps.plot_pool(topic, size=6)
    source = MachineLabelSource.objects.create(name="annotator", kind="classifier", collection=topic.collection,
                                               model="minilm", grades=[0, 1], status="ready")
    for n, passage in enumerate(picked[:-1]):
        MachineLabel.objects.create(source=source, topic=topic, passage=passage, grade=n % 2, score=0.1 + n / 10)
    camp = ps.campaign(name="plot-prelabels")
    assignment = ps.assign(factories.user("judge"), topic, pool, camp)
    return assignment, picked, source


def turn_on(assignment, source, share):
    campaign = assignment.campaign
    campaign.settings = {**campaign.settings, "show_machine_labels": True, "machine_source": source.pk,
                         "blind_share": share}
    campaign.save()


@pytest.fixture
def post(client):
    seq = count(1)

    def send(assignment, **fields):
        body = {"change_id": str(uuid.uuid4()), "client_time": "2024-05-01T12:00:00.000Z", "client_seq": next(seq),
                "session_id": "tab-1"}
        body.update(fields)
        return client.post(reverse("annotation:save", args=[assignment.token]), json.dumps(body),
                           content_type="application/json")

    return send


def page_json(html):
    return json.loads(re.search(r'<script id="plot-data" type="application/json">(.*?)</script>', html, re.S).group(1))


def test_with_pre_labels_off_nothing_of_the_machine_reaches_the_page_and_changes_record_nothing(client, setup, post):
    assignment, picked, _ = setup
    client.force_login(assignment.assessor)

    html = client.get(reverse("annotation:unit", args=[assignment.token])).content.decode()

    assert "Machine suggestion" not in html and "machine" not in json.dumps(page_json(html))
    assert post(assignment, layer="plot_grade", passage=picked[0].pk, value=2).status_code == 200
    assert JudgementChange.objects.get().machine_shown is None


def test_with_pre_labels_on_the_blind_share_shows_none_and_each_change_says_whether_one_was_shown(client, setup, post):
    assignment, picked, source = setup
    labelled = {p.pk for p in picked[:-1]}
    # The blind share is a hash of (campaign, topic, passage) ids, which differ from run to run on PostgreSQL (its
    # sequences go on): take the first share that puts this topic's items on both sides (one half, most runs).
    for share in (0.5, 0.3, 0.7, 0.2, 0.8, 0.1, 0.9):
        turn_on(assignment, source, share)
        rule = prelabels.prelabels(assignment.campaign)
        blind = {p.pk for p in picked if rule.blind(assignment.topic_id, p.pk)}
        if 0 < len(blind & labelled) < len(labelled):
            break
    assert 0 < len(blind & labelled) < len(labelled)  # this topic's items fall on both sides of the share
    client.force_login(assignment.assessor)

    html = client.get(reverse("annotation:unit", args=[assignment.token])).content.decode()

    state = page_json(html)
    assert set(map(int, state["machine"])) == labelled - blind
    assert html.count('data-role="machine-label"') == len(labelled - blind)
    for pid in labelled - blind:
        assert state["machine"][str(pid)]["text"] in ("likely relevant", "likely not relevant")
    for passage in picked:
        assert post(assignment, layer="plot_grade", passage=passage.pk, value=1).status_code == 200
    shown = dict(JudgementChange.objects.values_list("judgement__passage_id", "machine_shown"))
    assert shown == {p.pk: p.pk in labelled - blind for p in picked}


def test_the_blind_items_are_the_same_for_everyone_and_about_the_share_asked():
    rule = prelabels.Prelabels(on=True, campaign_id=7, source_id=1, blind_share=0.2)
    picks = [rule.blind(t, p) for t in range(40) for p in range(50)]
    assert 0.17 < sum(picks) / len(picks) < 0.23
    assert picks == [rule.blind(t, p) for t in range(40) for p in range(50)]
    assert not any(prelabels.Prelabels(on=True, campaign_id=7, blind_share=0).blind(t, 1) for t in range(100))
    assert all(prelabels.Prelabels(on=True, campaign_id=7, blind_share=1).blind(t, 1) for t in range(100))


@pytest.mark.parametrize("values, message", [
    ({"show_machine_labels": "yes"}, "show_machine_labels: expected true or false"),
    ({"show_machine_labels": True}, "machine_source: expected the id of a machine label source"),
    ({"show_machine_labels": True, "machine_source": 999999}, "machine_source: there is no machine label source"),
    ({"show_machine_labels": True, "machine_source": 1, "blind_share": 2}, "blind_share: expected a share from 0 to 1"),
])
def test_a_bad_setting_is_named_on_the_page_and_refuses_saves(client, setup, post, values, message):
    assignment, picked, _ = setup
    assignment.campaign.settings = values
    assignment.campaign.save()
    client.force_login(assignment.assessor)
    page = client.get(reverse("annotation:unit", args=[assignment.token]))
    assert page.status_code == 409 and message in page.content.decode()
    refused = post(assignment, layer="plot_grade", passage=picked[0].pk, value=1)
    assert refused.status_code == 400 and message in refused.json()["message"]
    with pytest.raises(plot.SettingsInvalid):
        plot.plot_page(assignment)


@pytest.mark.parametrize("values", [
    {"show_machine_labels": True, "blind_share": 0},  # pre-labels
    {"judging_order": "machine"},  # the order its scores give
])
def test_another_campaigns_source_stored_behind_the_checks_is_never_used(client, setup, post, values):
    """The settings' writers refuse another campaign's machine_source (usable_by); one stored before that check, or
    through the admin's raw settings, is refused where it is read: the page says so, nothing of it is shown."""
    from annotation.services import judging_order

    assignment, picked, source = setup
    source.campaign_id = factories.campaign("other-campaign").pk
    source.save()
    assignment.campaign.settings = {**values, "machine_source": source.pk}
    assignment.campaign.save()
    client.force_login(assignment.assessor)
    page = client.get(reverse("annotation:unit", args=[assignment.token]))
    assert page.status_code == 409 and "machine_source" in page.content.decode()
    if "judging_order" in values:  # the order only serves: a label saved meanwhile is the assessor's own
        with pytest.raises(judging_order.OrderSettingsInvalid, match="machine_source"):
            judging_order.settings_of(assignment.campaign)
    else:  # a change records whether a pre-label was shown: refused while that cannot be told
        refused = post(assignment, layer="plot_grade", passage=picked[0].pk, value=1)
        assert refused.status_code == 400 and "machine_source" in refused.json()["message"]
        with pytest.raises(prelabels.PrelabelsInvalid, match="this campaign may use"):
            prelabels.prelabels(assignment.campaign)
    source.campaign_id = None  # a source made for no campaign is usable by any
    source.save()
    assert client.get(reverse("annotation:unit", args=[assignment.token])).status_code == 200
