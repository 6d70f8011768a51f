"""Adjudication: disagreements per layer side by side, final labels through record_judgement, qrels that use them."""

import re
from io import StringIO
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.services import adjudication
from annotation.services.adjudication import AdjudicationInvalid, disagreements, set_final_label
from annotation.services.assignment import assign_campaign
from annotation.roles import Role, ensure_groups
from assessments.models import Judgement, JudgementChange, Layer
from tests import factories
from tests.annotation.test_assignment import make_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup():
    """Two assessors on one topic of two passages: they disagree on the first passage and on the transition."""
    groups = ensure_groups()
    campaign, made, runs = make_campaign("adj", topics=1, runs=1, passages=2)
    topic, (p1, p2) = made[0]
    a, b = factories.user("amy"), factories.user("<b>ben</b>")
    assign_campaign(campaign, ["amy", "<b>ben</b>"], overlap=2)
    facet = f"{topic.external_id}/H1"
    for who, grade, transition in ((a, "must", "same"), (b, "can", "switch")):
        factories.judgement(who, topic, p1, relevance=grade, facet=facet, campaign=campaign)
        factories.judgement(who, topic, p2, relevance="should", facet=facet, campaign=campaign)
        factories.judgement(who, topic, p1, passage2=p2, layer=Layer.TRANSITION, value=transition, campaign=campaign)
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(groups[Role.ORGANISER])
    return campaign, topic, p1, p2, a, b, organiser


def qrels(*args):
    out, err = StringIO(), StringIO()
    call_command("export_qrels", "--collection", "adj-coll", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_disagreements_are_listed_per_layer_with_who_said_what(setup):
    campaign, topic, p1, p2, a, b, _ = setup
    found = disagreements(campaign)
    assert found.per_layer == {"relevance": 1, "transition": 1}
    relevance = next(i for i in found.items if i.layer == "relevance")
    assert relevance.passage == p1 and relevance.labels == [("<b>ben</b>", "CAN"), ("amy", "MUST")]
    transition = next(i for i in found.items if i.layer == "transition")
    assert (transition.passage, transition.passage2) == (p1, p2)
    assert dict(transition.labels) == {"amy": "SAME TOPIC", "<b>ben</b>": "TOPIC SWITCH"}
    assert disagreements(campaign, layer="transition").total == 1
    assert disagreements(campaign, topic=topic.external_id).total == 2
    assert disagreements(campaign, topic="another").total == 0
    with pytest.raises(AdjudicationInvalid, match="layer: 'colour' is not one of"):
        disagreements(campaign, layer="colour")


def test_a_final_label_is_an_adjudicated_judgement_and_the_qrels_use_it(setup):
    campaign, topic, p1, p2, a, b, organiser = setup
    before, warning = qrels("--aggregate", "adjudicated")
    assert f"{topic.external_id} 0 {p1.external_id} 3" in before  # unresolved: majority of 3 and 1 (ties up)
    assert "warning: 1 lines have assessors who disagree" in warning

    set_final_label(campaign, organiser, layer="relevance", topic=topic, passage=p1, label="removed")

    after, warning = qrels("--aggregate", "adjudicated")
    assert after == f"{topic.external_id} 0 {p1.external_id} 0\n{topic.external_id} 0 {p2.external_id} 2\n"
    assert warning == ""
    assert qrels("--aggregate", "max")[0].splitlines()[0].endswith(" 3")  # nobody's vote
    assert qrels("--aggregate", "mean")[0].splitlines()[0].endswith(" 2")
    section, _ = qrels("--aggregate", "adjudicated", "--level", "section")
    assert f"{topic.external_id}/H1 0 {p1.external_id} 0" in section

    set_final_label(campaign, organiser, layer="relevance", topic=topic, passage=p1,
                    facet=f"{topic.external_id}/H2", relevance="should")
    assert qrels("--aggregate", "adjudicated")[0].splitlines()[0].endswith(" 2")  # the removal undone
    changes = JudgementChange.objects.filter(assessor=organiser).order_by("id")
    assert [c.source for c in changes] == [JudgementChange.Source.ADJUDICATION] * 3
    assert Judgement.objects.filter(assessor=organiser, adjudicated=True).count() == 2
    assert next(i for i in disagreements(campaign).items if i.layer == "relevance").final == "Second heading SHOULD"


def test_a_facet_set_after_another_organisers_removal_keeps_the_passage(setup):
    """Two organisers settle one passage: the label set last is final, a facet after a removal as a removal after a
    facet (the facet once lost to the other organiser's removal, whenever it was set)."""
    campaign, topic, p1, p2, a, b, organiser = setup
    other = factories.user("org2", is_staff=True)
    other.groups.add(ensure_groups()[Role.ORGANISER])
    set_final_label(campaign, organiser, layer="relevance", topic=topic, passage=p1, label="removed")
    assert qrels("--aggregate", "adjudicated")[0].splitlines()[0].endswith(" 0")
    set_final_label(campaign, other, layer="relevance", topic=topic, passage=p1,
                    facet=f"{topic.external_id}/H1", relevance="should")
    assert qrels("--aggregate", "adjudicated")[0].splitlines()[0].endswith(" 2")
    assert next(i for i in disagreements(campaign).items if i.layer == "relevance").final == "First heading SHOULD"
    set_final_label(campaign, organiser, layer="relevance", topic=topic, passage=p1, label="removed")
    assert qrels("--aggregate", "adjudicated")[0].splitlines()[0].endswith(" 0")
    assert next(i for i in disagreements(campaign).items if i.layer == "relevance").final == "removed"


def test_a_transition_is_adjudicated_too_and_bad_labels_name_the_field(setup):
    campaign, topic, p1, p2, a, b, organiser = setup
    set_final_label(campaign, organiser, layer="transition", topic=topic, passage=p1, passage2=p2, label="coherent")
    assert disagreements(campaign, layer="transition").items[0].final == "COHERENT TRANSITION"
    cases = [
        (dict(layer="transition", passage2=p2, label="redundant"), "label"),
        (dict(layer="transition", label="same"), "passage2"),
        (dict(layer="relevance", facet="nope", relevance="must"), "value"),
        (dict(layer="relevance", facet=f"{topic.external_id}/H1", relevance="trash"), "relevance"),
        (dict(layer="relevance"), "facet"),
        (dict(layer="plot_grade", label="x"), "label"),
    ]
    for kwargs, field in cases:
        with pytest.raises(AdjudicationInvalid) as error:
            set_final_label(campaign, organiser, topic=topic, passage=p1, **kwargs)
        assert error.value.field == field, kwargs


def test_an_organiser_who_judged_the_item_cannot_adjudicate_it(setup):
    campaign, topic, p1, p2, a, b, organiser = setup
    with pytest.raises(AdjudicationInvalid, match="you judged this item as an assessor") as error:
        set_final_label(campaign, a, layer="relevance", topic=topic, passage=p1, label="removed")
    assert error.value.field == "assessor"


def test_the_page_shows_labels_side_by_side_escaped_and_only_to_organisers(client, setup):
    campaign, topic, p1, p2, a, b, organiser = setup
    url = reverse("annotation:adjudication", args=["adj"])
    client.force_login(a)
    assert client.get(url).status_code == 404
    assert client.post(url, {"layer": "relevance"}).status_code == 404

    client.force_login(organiser)
    page = client.get(url).content.decode()
    assert "&lt;b&gt;ben&lt;/b&gt;" in page and "<b>ben</b>" not in page
    assert "2 items in disagreement" in page and 'name="csrfmiddlewaretoken"' in page
    response = client.post(url, {"layer": "relevance", "topic": topic.pk, "passage": "x"})
    assert response.status_code == 400 and "passage: expected a number" in response.content.decode()
    assert client.get(reverse("annotation:adjudication", args=["nope"])).status_code == 404


def test_the_layer_filter_offers_the_campaigns_own_layers(client, setup):
    """It listed all nine layers whatever the task (issue 39 item 9): an outline campaign's are its three."""
    campaign, *_, organiser = setup
    client.force_login(organiser)
    page = client.get(reverse("annotation:adjudication", args=[campaign.name])).content.decode()
    offered = re.findall(r'<option value="([a-z_]+)"', page.split('name="layer"', 1)[1].split("</select>", 1)[0])
    assert offered == ["relevance", "facet", "transition"]
    assert adjudication.layers_for(SimpleNamespace(task="nuggets")) == ("nugget_support", "citation_support", "nuggets")
    assert adjudication.layers_for(SimpleNamespace(task="adhoc")) == ("grade",)
