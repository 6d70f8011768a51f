"""Practice labels: what an assessor labels in a qualification unit is their answer to the qualification, scored
against the gold, not one of the campaign's relevance judgements. The qrels (export_qrels, /api/qrels/), the run
evaluation on the results page, the agreement figures, the dashboard and adjudication all leave them out; an
assessor's labels of a topic they also hold a formal unit of count (one label per passage and assessor)."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from annotation.models import Assignment
from annotation.reports.agreement import campaign_report
from annotation.reports.dashboard import dashboard
from annotation.reports.results import evaluation
from annotation.roles import Role, ensure_groups
from annotation.services.adjudication import disagreements
from annotation.services.assignment import assign_campaign
from assessments.models import Qrel, QrelSet
from tests import factories
from tests.annotation.test_assignment import make_campaign

pytestmark = pytest.mark.django_db


def grade(campaign, user, topic, passage, relevance):
    factories.judgement(user, topic, passage, relevance=relevance, facet=f"{topic.external_id}/H1", campaign=campaign)


@pytest.fixture
def world():
    """Campaign "pr": topic pr-T0 formal (amy and ben, overlap 2), pr-T1 a qualification topic (gold: all MUST).
    On pr-T0 amy says MUST and ben CAN of p0; on the qualification topic amy says MUST and ben CAN of p0 too."""
    campaign, made, runs = make_campaign("pr", topics=2, runs=2, passages=2)
    (formal, formal_passages), (practice, practice_passages) = made
    gold = QrelSet.objects.create(name="pr-gold", collection=practice.collection)
    Qrel.objects.bulk_create(Qrel(qrel_set=gold, topic=practice, passage=p, grade=3) for p in practice_passages)
    amy, ben = factories.user("amy"), factories.user("ben")
    assign_campaign(campaign, ["amy", "ben"], overlap=2, qualification_topics=[practice.external_id],
                    qualification_gold="pr-gold")
    assert set(Assignment.objects.filter(topic=practice).values_list("qualification", flat=True)) == {True}
    for user, relevance in ((amy, "must"), (ben, "can")):
        grade(campaign, user, formal, formal_passages[0], relevance)
        grade(campaign, user, practice, practice_passages[0], relevance)
    return {"campaign": campaign, "formal": formal, "practice": practice, "users": (amy, ben), "runs": runs,
            "formal_passages": formal_passages, "practice_passages": practice_passages}


def export_qrels(*args):
    out = StringIO()
    call_command("export_qrels", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def organiser_client():
    user = factories.user("chief")
    user.groups.add(ensure_groups()[Role.ORGANISER])
    client = Client()
    client.force_login(user)
    return client


def api_qrels(client, **query):
    response = client.get("/api/qrels/", query)
    assert response.status_code == 200, response.content
    return b"".join(response.streaming_content).decode()


def topics_of(text):
    return {line.split()[0] for line in text.splitlines()}


def test_the_campaigns_qrels_leave_the_practice_labels_out(world):
    campaign = world["campaign"]
    for aggregate in ("majority", "max", "assessor:amy"):
        assert topics_of(export_qrels("--campaign", campaign.name, "--aggregate", aggregate)) == {"pr-T0"}
    api = api_qrels(organiser_client(), campaign=campaign.name, aggregate="max")
    assert api == export_qrels("--campaign", campaign.name, "--aggregate", "max") == "pr-T0 0 pr-T0-p0 3\n"


def test_every_human_label_of_the_collection_leaves_the_practice_labels_out_but_keeps_an_import(world):
    """Without a campaign the qrels are every human label of the collection: still no qualification answer; a label
    made outside any campaign (an import) on the same topic stays."""
    practice, passage = world["practice"], world["practice_passages"][1]
    factories.judgement(factories.user("importer"), practice, passage, relevance="should",
                        facet=f"{practice.external_id}/H1")
    expected = "pr-T0 0 pr-T0-p0 3\npr-T1 0 pr-T1-p1 2\n"
    assert export_qrels("--collection", "pr-coll", "--aggregate", "max") == expected
    assert api_qrels(organiser_client(), collection="pr-coll", aggregate="max") == expected


def test_a_formal_unit_of_the_practice_topic_counts_and_the_practice_answers_beside_it_do_not(world):
    """cat holds a formal unit of the qualification topic (given before it became one, say): cat's labels are the
    campaign's; amy and ben, who hold only qualification units of it, are still practising."""
    campaign, practice, passages = world["campaign"], world["practice"], world["practice_passages"]
    cat = factories.user("cat")
    factories.assignment(cat, practice, campaign=campaign, run=world["runs"][0], kind=Assignment.Kind.OUTLINE,
                         qualification=False, token="cat-formal")
    grade(campaign, cat, practice, passages[0], "should")
    assert export_qrels("--campaign", campaign.name, "--aggregate", "max") == (
        "pr-T0 0 pr-T0-p0 3\npr-T1 0 pr-T1-p0 2\n")
    # ben's article of the second run is a formal unit instead: his one label of p0 is the one that formal page
    # shows too, and it counts
    Assignment.objects.filter(assessor=world["users"][1], topic=practice, run=world["runs"][1]).update(
        qualification=False)
    assert export_qrels("--campaign", campaign.name, "--aggregate", "assessor:ben") == (
        "pr-T0 0 pr-T0-p0 1\npr-T1 0 pr-T1-p0 1\n")
    keys = {(item.layer, item.topic.external_id) for item in disagreements(campaign).items}
    assert ("relevance", "pr-T1") in keys  # cat SHOULD, ben CAN: a disagreement of formal labels, adjudicable


def test_agreement_and_the_dashboard_count_no_practice_label(world):
    campaign = world["campaign"]
    entry = next(layer for layer in campaign_report(campaign)["layers"] if layer["layer"] == "relevance")
    assert entry["units"] == 1  # pr-T0's p0 only: the qualification answers are no unit
    assert [topic["topic"] for topic in entry["topics"]] == ["pr-T0"]
    charts = {chart["id"]: chart for chart in dashboard(campaign)["charts"]}
    assert charts["per-assessor"]["table"]["rows"] == [["amy", "1"], ["ben", "1"]]
    assert {(item.layer, item.topic.external_id) for item in disagreements(campaign).items} == {("relevance", "pr-T0")}


def test_the_results_page_evaluates_against_the_formal_labels_only(world):
    result = evaluation(world["campaign"])
    assert "error" not in result, result
    assert result["topics"] == 1 and result["qrels_lines"] == 1
