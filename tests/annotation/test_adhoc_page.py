"""The ad hoc judging page (issue 27): a topic statement (title as the query, description, narrative) and its pooled
documents graded on the campaign's scale (layer `grade`), with evidence spans (layer `evidence`) inside the text;
no plot wording; the qrels say what the page showed."""

import json
import uuid

import pytest
from django.core.management import call_command

from annotation.models import Assignment
from assessments.models import Judgement, JudgementChange, Layer
from tests import factories
from tests.annotation.adhoc_setup import DOCUMENTS, NARRATIVE, adhoc_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(client):
    user = factories.user("grader")
    client.force_login(user)
    return adhoc_world(user)


def save(client, unit, **fields):
    body = {"change_id": str(uuid.uuid4()), "client_time": "2026-01-05T10:00:00Z", "client_seq": 1,
            "session_id": "tab", "active_ms": 4000, **fields}
    return client.post(f"/a/{unit.token}/save", json.dumps(body), content_type="application/json")


def page_state(response):
    html = response.content.decode()
    start = html.index('id="adhoc-data"')
    start = html.index(">", start) + 1
    return json.loads(html[start:html.index("</script>", start)])


def test_an_adhoc_campaigns_unit_is_an_adhoc_unit(world):
    assert world["unit"].kind == Assignment.Kind.ADHOC


def test_the_page_shows_the_topic_card_the_documents_and_the_dl_scale_and_no_plot_wording(client, world):
    response = client.get(f"/a/{world['unit'].token}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "wind farm proposals" in html and "Find reports of proposed wind farms." in html and NARRATIVE in html
    for _, title, _ in DOCUMENTS:
        assert title in html
    for name in ("Perfectly relevant", "Highly relevant", "Related", "Irrelevant"):
        assert name in html
    assert "plot" not in html.lower().replace("_plot_base", "").replace("plot.css", "")
    state = page_state(response)
    assert state["kind"] == "adhoc" and [s[0] for s in state["scale"]] == [3, 2, 1, 0]
    by_title = {d["title"]: d for d in state["documents"]}
    doc = by_title["Offshore wind proposals draw fire"]
    assert [doc["text"][a:b] for a, b in doc["terms"]] == ["proposals", "wind", "farms"]  # stemmed: farm, proposal


def test_grades_and_evidence_save_and_come_back_on_the_page(client, world):
    unit, doc = world["unit"], world["documents"][0]
    assert save(client, unit, layer="grade", passage=doc.pk, value=2).status_code == 200
    response = save(client, unit, layer="evidence", passage=doc.pk, value=[[20, 29], [0, 10], [5, 12]])
    assert response.status_code == 200, response.content
    evidence = Judgement.objects.get(layer=Layer.EVIDENCE)
    assert evidence.value == [[0, 12], [20, 29]]  # merged and sorted
    assert JudgementChange.objects.filter(layer=Layer.GRADE).get().active_ms == 4000  # the time on the document
    state = page_state(client.get(f"/a/{unit.token}/"))
    assert state["labels"]["grades"] == {str(doc.pk): 2}
    assert state["labels"]["evidence"] == {str(doc.pk): [[0, 12], [20, 29]]}
    assert Assignment.objects.get(pk=unit.pk).status == Assignment.Status.IN_PROGRESS


@pytest.mark.parametrize("fields, field", [
    (dict(layer="grade", value=4), "value"),  # not on the 0-3 scale
    (dict(layer="grade", value=True), "value"),
    (dict(layer="grade", value="2"), "value"),
    (dict(layer="evidence", value=[[0, 100_000]]), "value[0]"),  # past the document's end
    (dict(layer="evidence", value=[[5, 2]]), "value[0]"),
    (dict(layer="evidence", value="everything"), "value"),
    (dict(layer="plot_grade", value=1), "layer"),
])
def test_a_grade_off_the_scale_or_evidence_outside_the_document_is_a_400_naming_the_field(client, world, fields, field):
    response = save(client, world["unit"], passage=world["documents"][0].pk, **fields)
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field
    assert not Judgement.objects.exists()


def test_a_document_outside_the_pool_is_refused(client, world):
    other = factories.passage(world["collection"], "LA999", text="Elsewhere.")
    response = save(client, world["unit"], layer="grade", passage=other.pk, value=1)
    assert response.status_code == 400 and response.json()["field"] == "passage"


def test_grading_every_document_finishes_the_unit_and_the_qrels_hold_the_grades(client, world, tmp_path):
    unit = world["unit"]
    for doc, grade in zip(world["documents"], (2, 0, 3)):
        assert save(client, unit, layer="grade", passage=doc.pk, value=grade).status_code == 200
    assert Assignment.objects.get(pk=unit.pk).status == Assignment.Status.DONE
    out = tmp_path / "qrels.txt"
    call_command("export_qrels", "--campaign", world["campaign"].name, "--out", str(out))
    assert sorted(out.read_text().split("\n")[:-1]) == [
        "301 0 FBIS3-10082 3", "301 0 LA010189-0001 2", "301 0 LA010189-0002 0"]


@pytest.mark.parametrize("preset, values", [("binary", [1, 0]), ("robust", [2, 1, 0])])
def test_binary_and_robust_scales_are_one_setting_away(client, preset, values):
    user = factories.user("grader2")
    client.force_login(user)
    world = adhoc_world(user, settings={"grade_scale": preset})
    state = page_state(client.get(f"/a/{world['unit'].token}/"))
    assert [s[0] for s in state["scale"]] == values
    response = save(client, world["unit"], layer="grade", passage=world["documents"][0].pk, value=3)
    assert response.status_code == 400 and response.json()["field"] == "value"


def test_a_campaign_without_evidence_refuses_evidence(client):
    user = factories.user("grader3")
    client.force_login(user)
    world = adhoc_world(user, settings={"evidence": False})
    assert "Mark selection" not in client.get(f"/a/{world['unit'].token}/").content.decode()
    response = save(client, world["unit"], layer="evidence", passage=world["documents"][0].pk, value=[[0, 3]])
    assert response.status_code == 400 and response.json()["field"] == "layer"


def test_the_new_campaign_form_sets_the_scale_the_view_evidence_and_the_judging_order(client):
    from django.contrib.auth.models import Group

    from annotation.models import Campaign
    from annotation.roles import Role, ensure_groups

    adhoc_world(factories.user("someone"))
    ensure_groups()
    boss = factories.user("boss", is_staff=True)
    boss.groups.add(Group.objects.get(name=Role.ORGANISER))
    client.force_login(boss)
    response = client.post("/campaigns/new/", {
        "name": "robust-like", "task": "adhoc", "collection": "trec-news", "topics_from": "all", "overlap": 1,
        "qualification_threshold": 90, "qualification_attempts": 2, "review_sample_size": 10,
        "review_threshold": 95, "mode": "label", "context_sentences": 5, "choice_candidates": 20,
        "plot_scale": "1 Yes\n0 No", "grade_scale": "robust", "adhoc_view": "list", "judging_order": "maxmean",
    })
    assert response.status_code == 302, response.content.decode()[:3000]
    settings = Campaign.objects.get(name="robust-like").settings
    assert settings["grade_scale"] == "robust" and settings["adhoc_view"] == "list" and settings["evidence"] is False
    assert settings["judging_order"] == "maxmean"


def test_a_served_judging_order_gives_one_document_at_a_time_in_depth_order(client):
    user = factories.user("grader4")
    client.force_login(user)
    world = adhoc_world(user, settings={"judging_order": "depth"})
    unit = world["unit"]
    state = page_state(client.get(f"/a/{unit.token}/"))
    assert [d["id"] for d in state["documents"]] == [world["documents"][0].pk]  # rank 1 first
    assert state["ordered"]["total"] == 3 and state["ordered"]["waiting"]
    assert save(client, unit, layer="grade", passage=world["documents"][0].pk, value=1).status_code == 200
    state = page_state(client.get(f"/a/{unit.token}/"))
    assert [d["id"] for d in state["documents"]] == [d.pk for d in world["documents"][:2]]


def test_the_results_page_gives_the_json_assessments_with_evidence_and_time(client, world):
    from django.contrib.auth.models import Group

    from annotation.roles import Role, ensure_groups

    unit, (first, second, _) = world["unit"], world["documents"]
    save(client, unit, layer="grade", passage=first.pk, value=3)
    save(client, unit, layer="evidence", passage=first.pk, value=[[0, 9]])
    save(client, unit, layer="grade", passage=second.pk, value=0)
    ensure_groups()
    boss = factories.user("boss", is_staff=True)
    boss.groups.add(Group.objects.get(name=Role.ORGANISER))
    client.force_login(boss)
    response = client.get(f"/campaigns/{world['campaign'].name}/results/adhoc/")
    assert response.status_code == 200
    records = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert [(r["docid"], r["grade"], r["active_ms"], r["changes"]) for r in records] == [
        ("LA010189-0001", 3, 8000, 2), ("LA010189-0002", 0, 4000, 1)]
    assert records[0]["evidence"] == [{"start": 0, "end": 9, "text": "Fishermen"}]
    assert records[0]["assessor"] == "grader" and records[0]["topic"] == "301"


def test_when_to_stop_and_the_dashboard_count_an_adhoc_campaigns_grades(client, world):
    from annotation.reports.dashboard import dashboard
    from annotation.reports.stopping import stopping

    world["campaign"].settings = {"judging_order": "depth", "target_recall": 0.9}
    world["campaign"].save()
    unit = world["unit"]
    for doc, grade in zip(world["documents"][:2], (2, 0)):
        assert save(client, unit, layer="grade", passage=doc.pk, value=grade).status_code == 200
    report = stopping(world["campaign"])
    assert report["available"], report.get("note")
    (row,) = report["topics"]
    assert row["topic"] == "301" and row["candidates"] == 3 and row["judged"] == 2 and row["found"] == 1, row
    charts = {chart["id"]: chart for chart in dashboard(world["campaign"])["charts"]}
    assert charts["per-assessor"]["table"]["rows"] == [["grader", "2"]]


def test_two_pools_give_a_topic_two_units_told_apart_and_a_document_is_judged_once(client, world):
    """Two pools on a campaign gave two identical queue rows per topic (issue 39 item 10): each row now says which
    part of the topic it is (no pool's name: an organiser's, which may name a system), and a document in both
    parts, graded in one, counts as judged in the other."""
    from assessments.models import Pool, PoolCandidate

    first, (a, b, c) = world["unit"], world["documents"]
    other = Pool.objects.create(name="bm25-secret-pool", collection=world["collection"], status=Pool.Status.READY)
    other.topics.set([world["topic"]])
    PoolCandidate.objects.bulk_create([PoolCandidate(pool=other, topic=world["topic"], passage=c, rank=1),
                                       PoolCandidate(pool=other, topic=world["topic"], passage=a, rank=2)])
    second = factories.assignment(first.assessor, world["topic"], pool=other, campaign=world["campaign"],
                                  position=first.position + 1)
    assert save(client, first, layer="grade", passage=c.pk, value=2).status_code == 200
    home = client.get("/").content.decode()
    assert "part 1 of 2" in home and "part 2 of 2" in home and "bm25-secret-pool" not in home
    from annotation.services.queue import queue

    progress = {unit.pk: (unit.part, p.done, p.total) for unit, p in queue(first.assessor)}
    assert progress == {first.pk: ((1, 2), 1, 3), second.pk: ((2, 2), 1, 2)}
