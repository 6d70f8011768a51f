"""Adjudication of nugget banks (issue 29, item 8): two assessors wrote different banks for a topic; the adjudication
page shows both side by side, and the organiser takes one whole or ticks nuggets from both; the adjudicated bank is
then the topic's bank (topic_banks), its ids kept where they mean one text."""

import pytest
from django.urls import reverse

from annotation.roles import Role, ensure_groups
from annotation.services.adjudication import AdjudicationInvalid, disagreements, set_final_bank
from annotation.services.assignment import assign_campaign
from assessments.models import Judgement, JudgementChange, Layer
from assessments.services import nuggets
from assessments.services.judging import record_judgement
from tests import factories
from tests.annotation.nuggets_setup import nuggets_world
from tests.annotation.test_data_browser import disagreement_keys

pytestmark = pytest.mark.django_db


def nugget(nid, text, importance="okay"):
    return {"id": nid, "text": text, "importance": importance, "origin": "assessor"}


AMY = [nugget("n1", "Vicarious trauma is indirect exposure", "vital"), nugget("n2", "Self-care helps", "vital")]
BEN = [nugget("n1", "Vicarious  trauma is indirect exposure", "vital"), nugget("n2", "Therapists are at risk")]


@pytest.fixture
def world():
    groups = ensure_groups()
    found = nuggets_world()
    campaign = found["campaign"]
    amy, ben = factories.user("amy"), factories.user("ben")
    assign_campaign(campaign, ["amy", "ben"], overlap=2, stage="create")
    topic = next(iter(nuggets.topic_banks(campaign.pk).values())).topic
    for who, bank in ((amy, AMY), (ben, BEN)):
        record_judgement(campaign_id=campaign.pk, assessor=who, layer=Layer.NUGGETS, value=bank, topic=topic)
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(groups[Role.ORGANISER])
    found.update(amy=amy, ben=ben, organiser=organiser, topic=topic)
    return found


def test_two_different_banks_are_listed_side_by_side(world):
    found = disagreements(world["campaign"], layer="nuggets")
    assert found.total == 1 and found.per_layer == {"nuggets": 1}
    (item,) = found.items
    assert item.topic == world["topic"] and item.passage is None and item.final is None
    assert item.banks == [("amy", AMY), ("ben", BEN)]
    assert item.labels == [("amy", "2 nuggets, 2 vital"), ("ben", "2 nuggets, 1 vital")]
    key = Judgement.make_key(Layer.NUGGETS, world["topic"].pk, None, campaign_id=world["campaign"].pk)
    assert key in disagreement_keys(world["campaign"])  # the data browser's disagreement filter


def test_banks_that_differ_only_in_order_or_spacing_agree(world):
    record_judgement(campaign_id=world["campaign"].pk, assessor=world["ben"], layer=Layer.NUGGETS,
                     value=[AMY[1], {**AMY[0], "text": "Vicarious trauma  is indirect exposure"}], topic=world["topic"])
    assert disagreements(world["campaign"], layer="nuggets").total == 0


def test_taking_one_bank_makes_it_the_topics_bank(world):
    recorded = set_final_bank(world["campaign"], world["organiser"], world["topic"], take="ben")
    assert recorded.change.source == JudgementChange.Source.ADJUDICATION
    bank = nuggets.topic_banks(world["campaign"].pk)[world["topic"].pk]
    assert bank.adjudicated and bank.value == BEN
    (item,) = disagreements(world["campaign"], layer="nuggets").items
    assert item.final == "2 nuggets, 1 vital" and item.final_bank == BEN


def test_a_merge_keeps_ids_that_mean_one_text_and_gives_a_clash_a_new_one(world):
    keep = ["amy/n1", "amy/n2", "ben/n1", "ben/n2"]  # ben/n1 is amy/n1's text: kept once
    set_final_bank(world["campaign"], world["organiser"], world["topic"], keep=keep, importance={"ben/n2": "vital"})
    bank = nuggets.topic_banks(world["campaign"].pk)[world["topic"].pk].value
    assert [(n["text"], n["importance"]) for n in bank] == [
        (AMY[0]["text"], "vital"), (AMY[1]["text"], "vital"), (BEN[1]["text"], "vital")]
    used = {n["id"] for row in Judgement.objects.filter(layer=Layer.NUGGETS, adjudicated=False)
            .values_list("value", flat=True) for n in row}
    assert [n["id"] for n in bank][:2] == ["n1", "n2"] and bank[2]["id"] not in used  # n2 meant another text


@pytest.mark.parametrize("kwargs, field", [
    (dict(take="carol"), "take"),
    (dict(keep=["amy/n9"]), "keep"),
    (dict(keep=["nobody"]), "keep"),
    (dict(keep=[]), "keep"),
    (dict(keep=["amy/n1"], importance={"amy/n1": "crucial"}), "importance"),
])
def test_a_bad_pick_names_its_field_and_stores_nothing(world, kwargs, field):
    with pytest.raises(AdjudicationInvalid) as exc:
        set_final_bank(world["campaign"], world["organiser"], world["topic"], **kwargs)
    assert exc.value.field == field
    assert not Judgement.objects.filter(layer=Layer.NUGGETS, adjudicated=True).exists()


def test_an_organiser_who_wrote_a_bank_cannot_adjudicate_it(world):
    with pytest.raises(AdjudicationInvalid) as exc:
        set_final_bank(world["campaign"], world["amy"], world["topic"], take="ben")
    assert exc.value.field == "assessor"


def test_the_page_shows_both_banks_and_takes_a_merge(client, world):
    url = reverse("annotation:adjudication", args=[world["campaign"].name]) + "?layer=nuggets"
    client.force_login(world["organiser"])
    page = client.get(url).content.decode()
    for bank in (AMY, BEN):
        for n in bank:
            assert n["text"] in page
    assert "Take amy's bank" in page and 'value="ben/n2"' in page
    for run in ("secretrun-alpha", "secretrun-beta"):
        assert run not in page
    form = {"layer": "nuggets", "topic": world["topic"].pk, "keep": ["ben/n2", "amy/n1"], "importance-ben/n2": "okay"}
    assert client.post(url, form).status_code == 302
    bank = nuggets.topic_banks(world["campaign"].pk)[world["topic"].pk].value
    assert [n["text"] for n in bank] == [BEN[1]["text"], AMY[0]["text"]]
    refused = client.post(url, {"layer": "nuggets", "topic": world["topic"].pk, "keep": ["amy/zz"]})
    assert refused.status_code == 400 and 'data-field="keep"' in refused.content.decode()
    assert client.post(url, {"layer": "nuggets", "topic": "x", "take": "amy"}).status_code == 400


def test_a_nugget_taken_from_a_suggestion_keeps_it(world):
    suggested = {"id": "n7", "text": "Supervision helps a lot", "importance": "okay", "origin": "machine",
                 "suggested": {"text": "Supervision helps", "importance": "okay"}}
    record_judgement(campaign_id=world["campaign"].pk, assessor=world["amy"], layer=Layer.NUGGETS,
                     value=AMY + [suggested], topic=world["topic"])
    set_final_bank(world["campaign"], world["organiser"], world["topic"], keep=["amy/n7"])
    assert nuggets.topic_banks(world["campaign"].pk)[world["topic"].pk].value == [suggested]


def test_an_imported_bank_of_a_topic_whose_bank_was_adjudicated_is_refused(world, tmp_path):
    """import_nuggets says each line replaces its topic's bank, but the adjudicated bank stays the topic's
    (topic_banks): the import was stored, reported as done, and changed nothing the pages, scores or export_nuggets
    read."""
    import json

    from django.core.management import CommandError, call_command

    from tests.annotation.nuggets_setup import TOPIC

    set_final_bank(world["campaign"], world["organiser"], world["topic"], take="amy")
    path = tmp_path / "nuggets.jsonl"
    path.write_text(json.dumps({"qid": TOPIC, "query": "q", "nuggets": [{"text": "New", "importance": "vital"}]}) + "\n")
    before = Judgement.objects.filter(layer=Layer.NUGGETS).count()
    with pytest.raises(CommandError, match=f"nuggets.jsonl:1: qid: the bank of topic '{TOPIC}' was adjudicated"):
        call_command("import_nuggets", str(path), campaign=world["campaign"].name)
    assert Judgement.objects.filter(layer=Layer.NUGGETS).count() == before
    assert [n["text"] for n in nuggets.topic_banks(world["campaign"].pk)[world["topic"].pk].value] == \
        [n["text"] for n in AMY]


def test_a_clash_renumbered_by_a_merge_takes_no_id_a_support_label_names(world):
    """A support label names its nugget by id: a clash given the id of a nugget taken out earlier (n5 here, labelled,
    in no bank now) would hand that label to another text (nuggets.ids_in_use, as the importer and the creation
    page ask)."""
    answer = next(iter(world["answers"].values()))
    record_judgement(assessor=factories.user("judge"), layer=Layer.NUGGET_SUPPORT, value=nuggets.SUPPORT,
                     topic=world["topic"], item=nuggets.support_item(answer.pk, "n5"), campaign_id=world["campaign"].pk)
    set_final_bank(world["campaign"], world["organiser"], world["topic"], keep=["amy/n1", "amy/n2", "ben/n2"])
    bank = nuggets.topic_banks(world["campaign"].pk)[world["topic"].pk].value
    assert [n["id"] for n in bank] == ["n1", "n2", "n6"]
