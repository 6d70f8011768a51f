"""The nugget support page (issue 29, part 2): a unit per answer of a nuggets campaign; the page shows the topic, the
answer's sentences with their citations (the cited passages' titles and texts) and the topic's nuggets with their
keys; a label saves as a nugget_support judgement keyed '<answer id>:<nugget id>'; the run is never on the page;
bad values and nuggets outside the bank are 400s naming the field; the unit is done when every nugget is labelled."""

import json
import uuid

import pytest

from annotation.models import Assignment
from annotation.services.assignment import AssignmentError, assign_campaign
from annotation.services.campaigns import create_campaign
from assessments.models import Judgement, Layer
from assessments.services import nuggets
from tests import factories
from tests.annotation.nuggets_setup import DOCS, QUERY, RUNS, SENTENCES, nuggets_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(client):
    user = factories.user("nuggeteer")
    client.force_login(user)
    return nuggets_world(user)


def save(client, unit, seq=1, **fields):
    body = {"change_id": str(uuid.uuid4()), "client_time": f"2026-01-05T10:00:{seq:02d}Z", "client_seq": seq,
            "session_id": "tab", "active_ms": 3000, **fields}
    return client.post(f"/a/{unit.token}/save", json.dumps(body), content_type="application/json")


def page_state(html):
    start = html.index('id="nugget-data"')
    start = html.index(">", start) + 1
    return json.loads(html[start:html.index("</script>", start)])


def test_assign_campaign_makes_a_nugget_support_unit_per_answer(world):
    units = world["units"]
    assert {u.kind for u in units.values()} == {Assignment.Kind.NUGGET_SUPPORT}
    assert {u.run.name for u in units.values()} == set(RUNS)
    assert Assignment.objects.filter(campaign=world["campaign"]).count() == 2
    assign_campaign(world["campaign"], ["nuggeteer"])  # again: nothing new
    assert Assignment.objects.filter(campaign=world["campaign"]).count() == 2


def test_a_nuggets_campaign_without_answers_has_nothing_to_assign(db):
    factories.user("someone")
    coll = factories.collection("empty-rag")
    factories.topic(coll, "q1", kind="adhoc", title="q")
    campaign = create_campaign(name="no-answers", task="nuggets", topics=["q1"])
    with pytest.raises(AssignmentError) as exc:
        assign_campaign(campaign, ["someone"])
    assert exc.value.field == "campaign" and "no answers" in exc.value.message


def test_the_page_shows_the_topic_sentences_citations_and_nuggets_and_never_the_run(client, world):
    unit = world["units"][RUNS[0]]
    response = client.get(f"/a/{unit.token}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert QUERY in html
    for text, cites in SENTENCES[RUNS[0]]:
        assert text.replace("'", "&#x27;") in html
    for docid, title, text in DOCS[:2]:  # the cited passages, openable: title and text
        assert title in html and text in html and docid in html
    assert DOCS[2][1] not in html  # another answer's citation
    assert html.count('class="cite"') == 3  # [1]; [2] [1]
    for n, (docid, title, _) in enumerate(DOCS[:2], start=1):  # each listed with the [n] the answer writes
        assert f'<summary><span class="cited-refs">[{n}]</span> <span class="cited-title">{title}</span>' in html
    for nugget in world["bank"]:
        assert nugget["text"] in html
    for key, name in (("s", "Support"), ("p", "Partial support"), ("n", "No support")):
        assert f"<kbd>{key}</kbd> {name}" in html
    assert "Shift D" in html and "Shift R" in html
    for secret in (*RUNS, "secretrun"):
        assert secret not in html
    state = page_state(html)
    assert not {"run", "run_id", "run_name", "answer"} & set(state)  # answer ids would group one run's units
    assert [n["id"] for n in state["nuggets"]] == [n["id"] for n in world["bank"]]
    assert state["labels"] == {}
    home = client.get("/").content.decode()
    assert "Nugget support" in home and "secretrun" not in home


def test_labels_save_as_nugget_support_judgements_and_come_back(client, world):
    unit, answer = world["units"][RUNS[0]], world["answers"][RUNS[0]]
    first = world["bank"][0]["id"]
    response = save(client, unit, layer="nugget_support", nugget=first, value="partial_support")
    assert response.status_code == 200, response.content
    assert response.json()["progress"]["done"] == 1
    j = Judgement.objects.get(layer=Layer.NUGGET_SUPPORT)
    assert j.item == nuggets.support_item(answer.pk, first) and j.value == "partial_support"
    assert j.campaign_id == world["campaign"].pk and j.passage_id is None
    assert Assignment.objects.get(pk=unit.pk).status == Assignment.Status.IN_PROGRESS
    state = page_state(client.get(f"/a/{unit.token}/").content.decode())
    assert state["labels"] == {first: "partial_support"}
    other = page_state(client.get(f"/a/{world['units'][RUNS[1]].token}/").content.decode())
    assert other["labels"] == {}  # the other answer's unit: its own labels


@pytest.mark.parametrize("fields, field", [
    (dict(layer="nugget_support", value="supported"), "value"),
    (dict(layer="nugget_support", value=2), "value"),
    (dict(layer="nugget_support", value="support", nugget="n99"), "nugget"),
    (dict(layer="nugget_support", value="support", nugget=7), "nugget"),
    (dict(layer="nugget_support", value="support", nugget=None), "nugget"),
    (dict(layer="grade", value=1), "layer"),
])
def test_a_bad_value_or_a_nugget_outside_the_bank_is_a_400_naming_the_field(client, world, fields, field):
    unit = world["units"][RUNS[0]]
    fields.setdefault("nugget", world["bank"][0]["id"])
    response = save(client, unit, **fields)
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field
    assert not Judgement.objects.filter(layer=Layer.NUGGET_SUPPORT).exists()


def test_the_unit_is_done_when_every_nugget_is_labelled(client, world):
    unit = world["units"][RUNS[1]]
    values = ["not_support", "not_support", "partial_support", "support"]
    for seq, (nugget, value) in enumerate(zip(world["bank"], values), start=1):
        assert Assignment.objects.get(pk=unit.pk).status != Assignment.Status.DONE
        response = save(client, unit, seq=seq, layer="nugget_support", nugget=nugget["id"], value=value)
        assert response.status_code == 200
    assert response.json()["status"] == "done"
    assert Assignment.objects.get(pk=unit.pk).status == Assignment.Status.DONE
    assert Assignment.objects.get(pk=world["units"][RUNS[0]].pk).status == Assignment.Status.TODO


def test_someone_elses_unit_is_not_theirs_to_save(client, world):
    intruder = factories.user("intruder")
    client.force_login(intruder)
    response = save(client, world["units"][RUNS[0]], layer="nugget_support", nugget=world["bank"][0]["id"],
                    value="support")
    assert response.status_code == 404


def test_a_unit_made_for_a_nuggets_campaign_is_a_nugget_support_unit_whoever_makes_it(world):
    unit = world["units"][RUNS[0]]
    made = Assignment.objects.create(campaign=world["campaign"], assessor=factories.user("late"), topic=unit.topic,
                                     run=unit.run)
    assert made.kind == Assignment.Kind.NUGGET_SUPPORT


def test_run_ids_hold_the_answers_run_name_as_an_outlines_hold_its_articles(client, world):
    """Judgement.run_ids held run names for outlines and run primary keys for nuggets (issue 40 item 4): one meaning,
    names, on the judgement and its change; migration 0020 turns the keys stored before into names."""
    import importlib

    from django.apps import apps

    from assessments.models import JudgementChange

    unit, answer = world["units"][RUNS[0]], world["answers"][RUNS[0]]
    first = world["bank"][0]["id"]
    assert save(client, unit, layer="nugget_support", nugget=first, value="support").status_code == 200
    j = Judgement.objects.get(layer=Layer.NUGGET_SUPPORT)
    assert j.run_ids == [answer.run.name] == [RUNS[0]] and j.changes.get().run_ids == [RUNS[0]]

    Judgement.objects.filter(pk=j.pk).update(run_ids=[str(answer.run_id)])  # as stored before
    JudgementChange.objects.filter(judgement=j).update(run_ids=[str(answer.run_id)])
    migration = importlib.import_module("assessments.migrations.0020_run_ids_are_run_names")
    migration.keys_to_names(apps, None)
    j.refresh_from_db()
    assert j.run_ids == [RUNS[0]] and j.changes.get().run_ids == [RUNS[0]]
