"""What the pages show is what the exports give, for labels made as assessors make them (the save path, several
assessors, changes, a cleared label) and settled as organisers settle them (adjudication, by more than one
organiser): ad hoc qrels (export_qrels, /api/qrels/) beside the adjudication page, nugget scores (export_nugget_scores,
the results page) beside it, and the dashboard's counts beside the labels the pages hold."""

import json
import uuid
from io import StringIO
from itertools import count

import pytest
from django.core.management import call_command

from annotation.models import Assignment, Track
from annotation.reports.results import nugget_evaluation
from annotation.roles import Role, ensure_groups
from annotation.services.adjudication import disagreements, set_final_label
from annotation.services.assignment import assign_campaign
from assessments.models import Topic
from tests import factories
from tests.annotation.adhoc_setup import adhoc_world
from tests.annotation.nuggets_setup import RUNS, TOPIC, nuggets_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def save(client):
    """save(user, unit, **change): the change posted by `user` through the judging page's save, seconds apart."""
    seconds = count(1)

    def post(user, unit, **fields):
        second = next(seconds)
        client.force_login(user)
        body = {"change_id": str(uuid.uuid4()), "client_time": f"2026-01-05T10:{second // 60:02d}:{second % 60:02d}Z",
                "client_seq": second, "session_id": "tab", "active_ms": 3000, **fields}
        response = client.post(f"/a/{unit.token}/save", json.dumps(body), content_type="application/json")
        assert response.status_code == 200, response.content
        return response.json()

    return post


def organisers(*names):
    groups = ensure_groups()
    made = []
    for name in names:
        user = factories.user(name, is_staff=True)
        user.groups.add(groups[Role.ORGANISER])
        made.append(user)
    return made


def export_qrels(*args):
    out = StringIO()
    call_command("export_qrels", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def adhoc(save):
    """Two assessors grade one document 3 and 1 on the ad hoc page (ben first gave 2, then changed it)."""
    amy, ben = factories.user("amy"), factories.user("ben")
    world = adhoc_world(amy)
    ben_unit = factories.assignment(ben, world["topic"], pool=world["pool"], campaign=world["campaign"])
    document = world["documents"][0]
    save(amy, world["unit"], layer="grade", passage=document.pk, value=3)
    save(ben, ben_unit, layer="grade", passage=document.pk, value=2)
    save(ben, ben_unit, layer="grade", passage=document.pk, value=1)
    return {**world, "document": document, "users": (amy, ben), "ben_unit": ben_unit}


@pytest.mark.parametrize("first, second", [(3, 1), (0, 2)])
def test_an_adjudication_changed_by_a_second_organiser_is_the_final_grade_in_the_qrels_as_on_the_page(
        client, adhoc, first, second):
    campaign, topic, document = adhoc["campaign"], adhoc["topic"], adhoc["document"]
    org1, org2 = organisers("org1", "org2")
    set_final_label(campaign, org1, layer="grade", topic=topic, passage=document, label=str(first))
    set_final_label(campaign, org2, layer="grade", topic=topic, passage=document, label=str(second))

    (item,) = disagreements(campaign).items
    assert item.final.split()[0] == str(second)  # the page: the label set last (with its name on the scale)
    assert (item.final, item.choices[-1]) == (dict(item.choices)[str(second)], ("0", "0 Irrelevant"))
    client.force_login(org1)
    page = client.get(f"/campaigns/{campaign.name}/adjudication/").content.decode()
    assert f'<div class="final">{item.final}</div>' in page  # the scale's names, and a choice among its grades
    assert f'<option value="{second}">{item.final}</option>' in page and 'type="number"' not in page
    line = f"301 0 {document.external_id} {second}\n"
    assert export_qrels("--campaign", campaign.name, "--aggregate", "adjudicated") == line
    client.force_login(org1)
    response = client.get("/api/qrels/", {"aggregate": "adjudicated"})
    assert b"".join(response.streaming_content).decode() == line
    download = client.get(f"/campaigns/{campaign.name}/results/qrels/", {"aggregate": "adjudicated"})
    assert b"".join(download.streaming_content).decode() == line
    # the first organiser settles it again: theirs is now the last
    set_final_label(campaign, org1, layer="grade", topic=topic, passage=document, label=str(first))
    assert disagreements(campaign).items[0].final.split()[0] == str(first)
    assert export_qrels("--campaign", campaign.name, "--aggregate", "adjudicated") == (
        f"301 0 {document.external_id} {first}\n")


def test_the_assessors_latest_grades_are_the_qrels_and_no_adjudication_counts_outside_adjudicated(adhoc):
    campaign, document = adhoc["campaign"], adhoc["document"]
    (org,) = organisers("org")
    set_final_label(campaign, org, layer="grade", topic=adhoc["topic"], passage=document, label="0")
    assert export_qrels("--campaign", campaign.name, "--aggregate", "assessor:ben") == f"301 0 {document.external_id} 1\n"
    assert export_qrels("--campaign", campaign.name, "--aggregate", "max") == f"301 0 {document.external_id} 3\n"


@pytest.fixture
def rag(save):
    """A nuggets campaign judged by three assessors on the first run's answer: on the first nugget amy says support,
    ben not_support, cat support and then clears it; on the second, amy support, ben and cat partial support."""
    users = [factories.user(name) for name in ("amy", "ben", "cat")]
    world = nuggets_world()
    campaign = world["campaign"]
    assign_campaign(campaign, [u.username for u in users], overlap=3)
    run = world["answers"][RUNS[0]].run
    units = {u.username: Assignment.objects.get(campaign=campaign, assessor=u, run=run) for u in users}
    n1, n2 = (nugget["id"] for nugget in world["bank"][:2])
    for user, labels in zip(users, (("support", "support"), ("not_support", "partial_support"),
                                    ("support", "partial_support"))):
        for nugget, value in zip((n1, n2), labels):
            save(user, units[user.username], layer="nugget_support", nugget=nugget, value=value)
    save(users[2], units["cat"], layer="nugget_support", nugget=n1, value=None)
    return {**world, "item": f"{world['answers'][RUNS[0]].pk}:{n1}", "topic": Topic.objects.get(external_id=TOPIC)}


def test_a_nugget_support_adjudicated_twice_scores_with_the_last_final_label_as_the_page_shows(client, rag):
    campaign = rag["campaign"]
    org1, org2 = organisers("org1", "org2")
    shown = {i.item: i for i in disagreements(campaign, layer="nugget_support").items}
    assert dict(shown[rag["item"]].labels) == {"amy": "support", "ben": "no support"}  # cat's cleared label is gone
    set_final_label(campaign, org1, layer="nugget_support", topic=rag["topic"], passage=None, item=rag["item"],
                    label="not_support")
    set_final_label(campaign, org2, layer="nugget_support", topic=rag["topic"], passage=None, item=rag["item"],
                    label="support")

    shown = {i.item: i for i in disagreements(campaign, layer="nugget_support").items}
    assert shown[rag["item"]].final == "support"
    # n1 support 1 (the final label), n2 partial 0.5 (ben and cat), the other two nuggets unlabelled: all 1.5 / 4
    out = StringIO()
    call_command("export_nugget_scores", "--campaign", campaign.name, stdout=out)
    exported = json.loads(out.getvalue())["runs"][RUNS[0]]
    assert exported["all"] == pytest.approx(1.5 / 4) and exported["strict_all"] == pytest.approx(1 / 4)
    page = {row[0]: row[1:] for row in nugget_evaluation(campaign)["rows"]}
    assert page[RUNS[0]][0] == pytest.approx(exported["all"])


def test_the_dashboard_counts_no_cleared_evidence_as_a_label(save, adhoc):
    from annotation.reports.dashboard import dashboard
    from assessments.exporters.adhoc import adhoc_records

    amy, ben = adhoc["users"]
    document = adhoc["document"]
    save(amy, adhoc["unit"], layer="evidence", passage=document.pk, value=[[0, 9]])
    save(ben, adhoc["ben_unit"], layer="evidence", passage=document.pk, value=[[0, 9]])
    save(ben, adhoc["ben_unit"], layer="evidence", passage=document.pk, value=[])  # the page: the span taken out
    records = {r["assessor"]: r for r in adhoc_records(adhoc["campaign"].pk)}
    assert records["amy"]["evidence"] and records["ben"]["evidence"] == []
    charts = {chart["id"]: chart for chart in dashboard(adhoc["campaign"])["charts"]}
    assert charts["per-assessor"]["table"]["rows"] == [["amy", "2"], ["ben", "1"]]  # a grade each, amy's evidence


def test_a_nugget_taken_out_of_the_bank_leaves_agreement_as_it_leaves_adjudication_and_the_scores(rag):
    from annotation.reports.agreement import campaign_report
    from assessments.models import Layer
    from assessments.services import nuggets
    from assessments.services.judging import record_judgement

    campaign, topic = rag["campaign"], rag["topic"]
    entry = campaign_report(campaign, layers=["nugget_support"])["layers"][0]
    assert entry["units"] == 2  # n1 (amy support, ben not) and n2 (three assessors)
    bank = nuggets.topic_banks(campaign.pk)[topic.pk]
    n1 = rag["item"].split(":")[1]
    record_judgement(campaign_id=campaign.pk, assessor=bank.assessor, layer=Layer.NUGGETS, topic=topic,
                     value=[n for n in bank.value if n["id"] != n1])  # the bank edited: n1 taken out
    assert rag["item"] not in {i.item for i in disagreements(campaign, layer="nugget_support").items}
    entry = campaign_report(campaign, layers=["nugget_support"])["layers"][0]
    assert entry["units"] == 1 and entry["assessors"] == 3  # n2 only, as the adjudication page and the scores

def test_a_citation_adjudicated_twice_scores_with_the_last_final_label_as_the_page_shows(rag):
    from assessments.evaluation.nuggets import nugget_scores
    from assessments.models import Layer
    from assessments.services import nuggets
    from assessments.services.judging import record_judgement
    from retrieval.models import Passage

    campaign, topic = rag["campaign"], rag["topic"]
    answer = rag["answers"][RUNS[1]]  # one sentence, citing one passage
    (cited,) = Passage.objects.filter(citations__sentence__answer=answer)
    item = nuggets.citation_item(answer.pk, 0)
    amy, ben = (Assignment.objects.filter(campaign=campaign, assessor__username=n).first().assessor
                for n in ("amy", "ben"))
    for who, value in ((amy, "full"), (ben, "none")):
        record_judgement(campaign_id=campaign.pk, assessor=who, layer=Layer.CITATION_SUPPORT, value=value,
                         topic=topic, passage=cited, item=item)
    org1, org2 = organisers("org1", "org2")
    for org, label in ((org1, "none"), (org2, "full")):
        set_final_label(campaign, org, layer="citation_support", topic=topic, passage=cited, item=item, label=label)
    (shown,) = disagreements(campaign, layer="citation_support").items
    assert shown.final == "full support"
    assert nugget_scores(campaign.pk)["runs"][RUNS[1]]["citation_precision"] == 1.0


@pytest.mark.parametrize("scale, refused, kept", [({}, "7", "2"), ({"grade_scale": "binary"}, "2", "1")])
def test_an_adjudicated_grade_is_one_of_the_campaigns_scale_as_the_page_offers(adhoc, scale, refused, kept):
    from annotation.services.adjudication import AdjudicationInvalid

    campaign, topic, document = adhoc["campaign"], adhoc["topic"], adhoc["document"]
    campaign.settings = scale
    campaign.save()
    (org,) = organisers("org")
    with pytest.raises(AdjudicationInvalid) as refusal:
        set_final_label(campaign, org, layer="grade", topic=topic, passage=document, label=refused)
    assert refusal.value.field == "label" and "expected one of" in refusal.value.message
    assert disagreements(campaign).items[0].final is None
    set_final_label(campaign, org, layer="grade", topic=topic, passage=document, label=kept)
    assert export_qrels("--campaign", campaign.name, "--aggregate", "adjudicated") == (
        f"301 0 {document.external_id} {kept}\n")


def test_the_dashboards_kept_agreement_follows_a_bank_edited_by_someone_not_assigned(rag):
    from annotation.reports.dashboard import agreement
    from assessments.models import Layer
    from assessments.services import nuggets
    from assessments.services.judging import record_judgement

    campaign, topic = rag["campaign"], rag["topic"]

    def units():
        return next(e for e in agreement(campaign)["layers"] if e["layer"] == "nugget_support")["units"]

    assert units() == 2
    bank = nuggets.topic_banks(campaign.pk)[topic.pk]  # the imported bank: its user has no unit
    n1 = rag["item"].split(":")[1]
    record_judgement(campaign_id=campaign.pk, assessor=bank.assessor, layer=Layer.NUGGETS, topic=topic,
                     value=[n for n in bank.value if n["id"] != n1])
    assert units() == 1


def test_an_imported_label_that_decides_a_score_is_a_voice_on_the_adjudication_page(client, save):
    from annotation.services.nuggets import import_assignments_file
    from assessments.evaluation.nuggets import nugget_scores
    from tests.annotation.nuggets_setup import BANK, _file
    from tests.assessments.test_nuggets import assignment

    amy = factories.user("amy")
    world = nuggets_world(amy)
    campaign, unit = world["campaign"], world["units"][RUNS[0]]
    n1 = world["bank"][0]["id"]
    save(amy, unit, layer="nugget_support", nugget=n1, value="support")
    import_assignments_file(campaign, _file(assignment(TOPIC, RUNS[0], (*BANK[0], "not_support")) + "\n"))
    assert nugget_scores(campaign.pk)["runs"][RUNS[0]]["all"] == 0.0  # a tie of the two: the lower
    (shown,) = disagreements(campaign).items
    assert shown.item == f"{world['answers'][RUNS[0]].pk}:{n1}"
    assert shown.labels == [("amy", "support"), ("imported-assignments", "no support")]
    (org,) = organisers("org")
    set_final_label(campaign, org, layer="nugget_support", topic=Topic.objects.get(external_id=TOPIC), passage=None,
                    item=shown.item, label="support")
    assert nugget_scores(campaign.pk)["runs"][RUNS[0]]["all"] == 0.25  # one vital nugget of four, supported


def test_an_ad_hoc_results_page_offers_no_car_level_for_its_qrels(client, adhoc):
    """Page or section level is CAR's (a heading's qrels); an ad hoc campaign's qrels have one level, as downloaded."""
    (org,) = organisers("org")
    client.force_login(org)
    page = client.get(f"/campaigns/{adhoc['campaign'].name}/results/").content.decode()
    assert 'id="qrels-form"' in page and 'id="qrels-level"' not in page


def test_the_results_pages_run_evaluation_downloads_as_the_page_shows_it(client, adhoc):
    """The table of runs against the current qrels is downloadable, the same numbers as the page; a bad aggregate is a
    400 naming it."""
    from annotation.reports.results import evaluation

    campaign = _two_runs_scored(client, adhoc)
    found = evaluation(campaign, aggregate="max")
    assert "error" not in found, found
    page = client.get(f"/campaigns/{campaign.name}/results/", {"aggregate": "max"}).content.decode()
    assert "evaluation/?aggregate=max" in page
    response = client.get(f"/campaigns/{campaign.name}/results/evaluation/", {"aggregate": "max"})
    assert response.status_code == 200 and "max" in response["Content-Disposition"]
    lines = [line for line in response.content.decode().splitlines() if not line.startswith("#")]
    assert lines[0].split("\t") == ["run", *found["measures"]]
    assert [line.split("\t")[0] for line in lines[1:]] == [row[0] for row in found["rows"]]
    for line, row in zip(lines[1:], found["rows"]):
        assert line.split("\t")[1:] == ["" if v is None else f"{v:.4f}" for v in row[1:]]
        assert f"{row[1]:.4f}" in page
    bad = client.get(f"/campaigns/{campaign.name}/results/evaluation/", {"aggregate": "median"})
    assert bad.status_code == 400 and "aggregate" in bad.content.decode()


def _two_runs_scored(client, adhoc):
    """The ad hoc campaign with two runs of its pool on its track, an organiser signed in."""
    (org,) = organisers("org")
    client.force_login(org)
    campaign, topic, docs = adhoc["campaign"], adhoc["topic"], adhoc["documents"]
    for name, ranking in (("run-a", docs), ("run-b", docs[::-1])):
        adhoc["pool"].runs.add(factories.run(topic.collection, name, {topic: ranking}))
    campaign.pools.add(adhoc["pool"])
    Track.objects.create(campaign=campaign, collection=topic.collection).topics.set([topic])
    return campaign


def test_each_runs_per_topic_scores_are_one_click_away_and_the_leaderboard_holds_every_run(client, adhoc):
    """Issue 39 item 2: a run's per-topic scores in trec_eval's -q layout (measure topic value), linked from its
    row; one leaderboard file (run measure topic value) of every run; the same numbers as the table."""
    from annotation.reports.results import evaluation

    campaign = _two_runs_scored(client, adhoc)
    found = evaluation(campaign, aggregate="max")
    page = client.get(f"/campaigns/{campaign.name}/results/", {"aggregate": "max"}).content.decode()
    assert page.count('class="per-topic"') == 2 and 'id="download-leaderboard"' in page
    url = f"/campaigns/{campaign.name}/results/evaluation/"
    board = client.get(url, {"aggregate": "max", "layout": "leaderboard"}).content.decode().splitlines()
    rows = [line.split("\t") for line in board]
    assert {r[0] for r in rows} == {"run-a", "run-b"} and {r[2] for r in rows} == {adhoc["topic"].external_id, "all"}
    one = client.get(url, {"aggregate": "max", "layout": "trec_eval", "run": "run-a"})
    assert one.status_code == 200
    lines = [line.split("\t") for line in one.content.decode().splitlines()]
    table = dict(zip(found["measures"], next(r for r in found["rows"] if r[0] == "run-a")[1:]))
    for measure, topic, value in lines:
        if topic.strip() == "all" and measure.strip() in table and table[measure.strip()] is not None:
            assert value == f"{table[measure.strip()]:.4f}"
    assert [r[1:] for r in rows if r[0] == "run-a"] == [[m.strip(), t, v] for m, t, v in lines]
    bad = client.get(url, {"aggregate": "max", "layout": "trec_eval", "run": "nope"})
    assert bad.status_code == 400 and "run" in bad.content.decode()
    assert client.get(url, {"layout": "xml"}).status_code == 400
