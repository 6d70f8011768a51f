"""Nugget support waits for its topic's bank (found walking through the demo's cranfield-rag campaign): before the
topic's bank is settled (nugget_support.ready_banks: a creation unit marked done, or the organiser's adjudicated
bank) a support unit is listed as waiting and never next, its page says so with nothing to label, and a save or a
mark is a 409 naming the reason that stores nothing; once the bank is settled the unit is served as any other.
Citation support judges an answer's citations, not nuggets, and does not wait."""

import json

import pytest

from annotation.models import Assignment
from annotation.roles import Role, ensure_groups
from annotation.services import nugget_support, queue
from annotation.services.adjudication import set_final_bank
from annotation.services.assignment import assign_campaign
from assessments.models import Judgement, JudgementChange, Layer
from assessments.services.judging import record_judgement
from tests import factories
from tests.annotation.nuggets_setup import RUNS, nuggets_world
from tests.annotation.test_nugget_support_page import save

pytestmark = pytest.mark.django_db

WAITS = "waits for the topic&#x27;s nuggets"  # as the page escapes it
BANK = [{"id": "n1", "text": "Vicarious trauma is indirect exposure", "importance": "vital", "origin": "assessor"},
        {"id": "n2", "text": "Supervision helps", "importance": "okay", "origin": "assessor"}]


@pytest.fixture
def world(client):
    """The demo's shape: no bank imported; `writer` writes the topic's bank, `judge` labels both answers."""
    found = nuggets_world(bank=False)
    writer, judge = factories.user("writer"), factories.user("judge")
    assign_campaign(found["campaign"], ["writer"], stage="create")
    assign_campaign(found["campaign"], ["judge"], stage="support")
    found.update(writer=writer, judge=judge,
                 creation=Assignment.objects.get(campaign=found["campaign"], assessor=writer),
                 units={run: Assignment.objects.get(campaign=found["campaign"], assessor=judge, run__name=run)
                        for run in RUNS})
    client.force_login(judge)
    return found


def mark(client, unit, **body):
    return client.post(f"/a/{unit.token}/mark", json.dumps({"done": True, **body}), content_type="application/json")


def write_bank(client, world, *, done=True):
    """The writer saves the bank through the save path and (if `done`) marks the creation unit done."""
    client.force_login(world["writer"])
    assert save(client, world["creation"], layer="nuggets", value=BANK).status_code == 200
    if done:
        assert mark(client, world["creation"]).json()["status"] == "done"
    client.force_login(world["judge"])


def test_the_queue_lists_support_units_as_waiting_until_the_creation_unit_is_marked_done(client, world):
    html = client.get("/").content.decode()
    assert html.count("Nothing to label yet:</b> waits for the topic's nuggets") == 2 and html.count("status-waiting") == 2
    assert 'id="next-link"' not in html and "Everything in your queue is done" not in html
    assert "2 wait for their topic's nuggets" in html
    items = queue.queue(world["judge"])
    assert [a.waiting for a, _ in items] == [True, True]
    assert queue.next_assignment(world["judge"]) is None
    assert queue.counts(items).waiting == 2
    assert client.get("/next/").url.endswith("?queue")

    write_bank(client, world, done=False)  # a bank being written is not yet the topic's bank
    assert queue.next_assignment(world["judge"]) is None
    assert "Nothing to label yet:</b> waits for the topic's nuggets" in client.get("/").content.decode()

    write_bank(client, world)
    html = client.get("/").content.decode()
    assert "waits for the topic" not in html and "status-waiting" not in html and 'id="next-link"' in html
    assert "2 nuggets left" in html
    items = queue.queue(world["judge"])
    assert [a.waiting for a, _ in items] == [False, False] and queue.counts(items).waiting == 0
    assert queue.next_assignment(world["judge"]) in world["units"].values()


def test_the_page_before_the_bank_says_it_waits_and_offers_no_labels_and_after_shows_the_nuggets(client, world):
    unit = world["units"][RUNS[0]]
    response = client.get(f"/a/{unit.token}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert WAITS in html and 'id="waiting-note"' in html
    assert 'class="grade answer"' not in html and 'id="mark-done"' not in html
    assert 'data-action="mark"' not in html
    state = json.loads(html.split('id="nugget-data" type="application/json">', 1)[1].split("</script>", 1)[0])
    assert state["waiting"] is True and state["readonly"] is True and state["nuggets"] == []
    # Its top bar says it waits: no "0 of 0 nuggets labelled", no "Read-only" (what the page showed before).
    assert 'id="progress" aria-live="polite" hidden' in html and "Waiting for the topic's nuggets</div>" in html
    assert state["readonly_text"] == "Waiting for the topic's nuggets"
    # What it waits on comes first, before the topic and the answer; the side panel offers no count and no keys.
    assert html.index('id="waiting-note"') < html.index('id="topic-query"') < html.index('id="answer-head"')
    assert "has not finished the bank yet" in html and 'id="waiting-badge"' in html
    assert " 0 nuggets" not in html and "<dd>Support</dd>" not in html and "mark done" not in html
    # Nothing else is ready (both units wait): no "Next assignment" that would lead back to the queue.
    assert 'id="next-assignment"' not in html and 'id="none-ready"' in html and state["next_url"] is None
    assert Assignment.objects.get(pk=unit.pk).status == Assignment.Status.TODO  # a GET never writes

    write_bank(client, world)
    html = client.get(f"/a/{unit.token}/").content.decode()
    assert WAITS not in html and html.count('class="grade answer"') == 3 * len(BANK)
    assert 'id="progress" aria-live="polite">' in html and "All changes saved</div>" in html
    assert 'id="waiting-note"' not in html and "<dd>Support</dd>" in html and 'id="next-assignment"' in html
    for nugget in BANK:
        assert nugget["text"] in html


def test_a_save_or_a_mark_before_the_bank_is_a_409_naming_the_reason_and_stores_nothing(client, world):
    unit = world["units"][RUNS[0]]
    write_bank(client, world, done=False)  # the nugget exists in the bank being written, still not settled
    response = save(client, unit, layer="nugget_support", value="support", nugget="n1")
    assert response.status_code == 409, response.content
    assert response.json()["field"] == "nugget" and "waits for the topic's nuggets" in response.json()["message"]
    refused = mark(client, unit, reason="nothing to label")
    assert refused.status_code == 409 and refused.json()["field"] == "nugget"
    assert not Judgement.objects.filter(layer=Layer.NUGGET_SUPPORT).exists()
    assert Assignment.objects.get(pk=unit.pk).status == Assignment.Status.TODO

    write_bank(client, world)
    response = save(client, unit, seq=2, layer="nugget_support", value="support", nugget="n1")
    assert response.status_code == 200 and response.json()["status"] == "in_progress"


def test_a_reopened_creation_unit_makes_support_wait_again(client, world):
    write_bank(client, world)
    assert not nugget_support.waits(world["units"][RUNS[0]])
    client.force_login(world["writer"])
    assert client.post(f"/a/{world['creation'].token}/reopen").json()["status"] == "in_progress"
    assert nugget_support.waits(world["units"][RUNS[0]])


def test_an_imported_bank_with_no_creation_unit_is_ready_at_once(db):
    judge = factories.user("judge")
    found = nuggets_world(judge)
    unit = found["units"][RUNS[0]]
    assert not nugget_support.waits(unit)
    assert nugget_support.bank_of(unit) == found["bank"]


def test_with_two_creators_support_waits_for_both_or_for_the_organisers_bank(world):
    campaign, topic = world["campaign"], world["creation"].topic
    second = factories.user("second")
    assign_campaign(campaign, ["writer", "second"], overlap=2, stage="create")
    other = Assignment.objects.get(campaign=campaign, assessor=second, kind=Assignment.Kind.NUGGET_CREATION)
    for who, bank in ((world["writer"], BANK), (second, BANK[:1])):
        record_judgement(campaign_id=campaign.pk, assessor=who, layer=Layer.NUGGETS, value=bank, topic=topic,
                         source=JudgementChange.Source.WEB)
    Assignment.objects.filter(pk=world["creation"].pk).update(status=Assignment.Status.DONE)
    unit = world["units"][RUNS[0]]
    assert nugget_support.waits(unit)  # the second creator is still writing
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(ensure_groups()[Role.ORGANISER])
    set_final_bank(campaign, organiser, topic, take="writer")
    assert not nugget_support.waits(unit) and [n["id"] for n in nugget_support.bank_of(unit)] == ["n1", "n2"]
    assert other.status != Assignment.Status.DONE


def test_the_page_says_which_step_it_waits_on_without_naming_the_writers(client, world):
    unit = world["units"][RUNS[0]]
    assert nugget_support.waiting_on(unit) == {"step": "writers", "writers": 1, "finished": 0,
                                               "why": "The topic's nugget writer has not finished the bank yet."}
    factories.user("cowriter")
    assign_campaign(world["campaign"], ["writer", "cowriter"], overlap=2, stage="create")
    html = client.get(f"/a/{unit.token}/").content.decode()
    assert "writers are still at work: 0 of 2 finished" in html and "every writer marks their bank done" in html
    assert "cowriter" not in html and ">writer<" not in html  # counts only, no writer's name
    for creation in Assignment.objects.filter(kind=Assignment.Kind.NUGGET_CREATION):
        client.force_login(creation.assessor)
        assert mark(client, creation, reason="no facts in these answers").json()["status"] == "done"
    client.force_login(world["judge"])
    assert nugget_support.waiting_on(unit) == {"step": "empty", "writers": 2, "finished": 2,
                                               "why": "The topic's nugget writers finished without a nugget."}
    assert "finished without a nugget" in client.get(f"/a/{unit.token}/").content.decode()
    Assignment.objects.filter(kind=Assignment.Kind.NUGGET_CREATION).delete()
    assert nugget_support.waiting_on(unit)["step"] == "organiser"
    assert "no one is assigned to write them" in client.get(f"/a/{unit.token}/").content.decode()


def test_a_waiting_page_offers_the_next_ready_unit_never_another_waiting_one(client, world):
    assign_campaign(world["campaign"], ["judge"], stage="citations")  # a citation unit: ready at once
    ready = Assignment.objects.filter(kind=Assignment.Kind.CITATION_SUPPORT).order_by("position", "pk").first()
    for unit in world["units"].values():
        html = client.get(f"/a/{unit.token}/").content.decode()
        state = json.loads(html.split('id="nugget-data" type="application/json">', 1)[1].split("</script>", 1)[0])
        assert state["next_url"] == f"/a/{ready.token}/"
        assert html.count(f'href="/a/{ready.token}/"') == 2  # the top bar's button and the notice's
        others = [u.token for u in world["units"].values() if u != unit]
        assert not any(f"/a/{token}/" in html for token in others) and "/next/" not in html


def test_citation_support_does_not_wait_for_nuggets(client, world):
    assign_campaign(world["campaign"], ["judge"], stage="citations")
    unit = Assignment.objects.filter(campaign=world["campaign"], kind=Assignment.Kind.CITATION_SUPPORT).first()
    waiting = {a.pk: a.waiting for a, _ in queue.queue(world["judge"])}
    assert waiting[unit.pk] is False and list(waiting.values()).count(True) == 2  # the two nugget support units
    assert queue.next_assignment(world["judge"]).kind == Assignment.Kind.CITATION_SUPPORT
    html = client.get(f"/a/{unit.token}/").content.decode()
    assert WAITS not in html and 'class="grade answer"' in html


def test_the_dashboard_counts_the_units_that_wait(client, world):
    from annotation.reports.dashboard import dashboard

    summary = dashboard(world["campaign"])["summary"]
    assert summary["head"][-1] == "waiting for nuggets" and summary["waiting"] == 2
    assert {row[0]: row[-1] for row in summary["rows"]} == {"judge": 2, "writer": 0}
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(organiser)
    page = client.get(f"/campaigns/{world['campaign'].name}/dashboard/").content.decode()
    assert "(2 waiting for their topic's nuggets)" in page and "<th>waiting for nuggets</th>" in page
    write_bank(client, world)
    assert dashboard(world["campaign"])["summary"]["waiting"] == 0
