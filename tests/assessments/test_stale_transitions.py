"""A transition into a removed passage no longer counts (issue 32, item 1): the assessor labels 1→2, then removes
2; the page then shows 1→3 unlabelled, and the Y3 files, agreement, the dashboard and adjudication no longer hold
1→2. The rule (Judgement.objects.without_stale_transitions): a transition counts where its two passages are
consecutive and kept in some article of the topic under the assessor's own removals in the campaign. The history
keeps every change."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.reports.dashboard import dashboard
from annotation.services.adjudication import disagreements
from assessments.agreement.judgements import layer_ratings
from assessments.models import Judgement, JudgementChange, Layer
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def article():
    coll = factories.collection("car")
    topic = factories.topic(coll, "tqa2:L_0001", facets=[("tqa2:L_0001/T_1", "One")])
    p = [factories.passage(coll, f"p{i}") for i in range(1, 5)]
    run = factories.run(coll, "r1", {topic: p})
    ann, bob = factories.user("ann"), factories.user("bob")
    campaign, _ = factories.assigned_campaign(topic, (ann, bob), run=run, name="c1")
    return {"coll": coll, "topic": topic, "p": p, "campaign": campaign, "ann": ann, "bob": bob, "run": run}


def label(a, user, layer, value, first, second=None):
    return factories.judgement(user, a["topic"], a["p"][first], layer=layer, value=value, campaign=a["campaign"],
                               passage2=a["p"][second] if second is not None else None)


def pairs(queryset):
    return sorted((j.assessor.username, j.passage.external_id, j.passage2.external_id)
                  for j in queryset.filter(layer=Layer.TRANSITION).without_stale_transitions())


def test_removing_the_second_passage_ends_the_pairs_transition_and_keeping_it_again_brings_it_back(article):
    a = article
    label(a, a["ann"], "transition", "same", 0, 1)
    assert pairs(Judgement.objects.all()) == [("ann", "p1", "p2")]
    label(a, a["ann"], "removal", True, 1)
    assert pairs(Judgement.objects.all()) == []
    assert Judgement.objects.filter(layer=Layer.TRANSITION).count() == 1  # kept, just not counted
    label(a, a["ann"], "removal", False, 1)
    assert pairs(Judgement.objects.all()) == [("ann", "p1", "p2")]


def test_a_pair_over_a_removed_passage_counts_while_it_stays_removed(article):
    a = article
    label(a, a["ann"], "removal", True, 1)
    label(a, a["ann"], "transition", "coherent", 0, 2)  # 1→3, as the page shows it with 2 removed
    assert pairs(Judgement.objects.all()) == [("ann", "p1", "p3")]
    label(a, a["ann"], "removal", False, 1)
    assert pairs(Judgement.objects.all()) == []


def test_removing_the_first_passage_ends_it_too_and_another_assessors_removal_does_not(article):
    a = article
    label(a, a["ann"], "transition", "same", 0, 1)
    label(a, a["bob"], "transition", "switch", 0, 1)
    label(a, a["bob"], "removal", True, 0)
    assert pairs(Judgement.objects.all()) == [("ann", "p1", "p2")]


def test_a_pair_consecutive_in_another_article_of_the_topic_still_counts(article):
    a = article
    factories.run(a["coll"], "r2", {a["topic"]: [a["p"][0], a["p"][2]]})
    label(a, a["ann"], "transition", "same", 0, 2)
    assert pairs(Judgement.objects.all()) == [("ann", "p1", "p3")]
    other = factories.campaign("c2")  # a removal elsewhere changes nothing
    factories.judgement(a["ann"], a["topic"], a["p"][0], layer="removal", value=True, campaign=other)
    assert pairs(Judgement.objects.all()) == [("ann", "p1", "p3")]


def test_the_y3_files_the_dashboard_agreement_and_adjudication_leave_the_stale_transition_out(article, tmp_path):
    a = article
    for user, value in ((a["ann"], "same"), (a["bob"], "switch")):
        label(a, user, "transition", value, 0, 1)
    label(a, a["ann"], "removal", True, 1)
    label(a, a["bob"], "removal", True, 1)
    call_command("export_car_assessments", "--out", str(tmp_path), stdout=StringIO())
    for path in tmp_path.glob("*.json"):
        assert json.loads(path.read_text())["transition_label_state"] == [], path.name
    board = dashboard(a["campaign"])
    charts = {chart["id"]: chart for chart in board["charts"]}
    assert [bar["total"] for bar in charts["transitions"]["bars"]] == [0, 0]
    assert per_assessor(charts) == {"ann": 1, "bob": 1}  # the removals; not the transitions
    assert layer_ratings(Judgement.objects.in_campaign(a["campaign"]), "transition", {}) == []
    assert disagreements(a["campaign"], layer="transition").total == 0
    assert JudgementChange.objects.filter(layer=Layer.TRANSITION).count() == 2  # the history keeps everything


def per_assessor(charts):
    chart = charts["per-assessor"]
    return {label: int(value) for label, value in chart["table"]["rows"]}


def test_before_the_removal_they_do_hold_it(article, tmp_path):
    a = article
    for user, value in ((a["ann"], "same"), (a["bob"], "switch")):
        label(a, user, "transition", value, 0, 1)
    charts = {chart["id"]: chart for chart in dashboard(a["campaign"])["charts"]}
    assert [bar["total"] for bar in charts["transitions"]["bars"]] == [1, 1]
    assert per_assessor(charts) == {"ann": 1, "bob": 1}
    assert disagreements(a["campaign"], layer="transition").total == 1
    call_command("export_car_assessments", "--out", str(tmp_path), stdout=StringIO())
    states = [json.loads(p.read_text())["transition_label_state"] for p in sorted(tmp_path.glob("*.json"))]
    assert [len(s) for s in states] == [1, 1]


def test_without_an_article_holding_both_passages_only_the_removals_decide(article):
    """Labels imported from Y3 files whose runs were never loaded: nothing says the pair is not consecutive."""
    a = article
    stray = factories.passage(a["coll"], "p9")
    factories.judgement(a["ann"], a["topic"], a["p"][0], passage2=stray, layer="transition", value="same",
                        campaign=a["campaign"])
    assert pairs(Judgement.objects.all()) == [("ann", "p1", "p9")]
    factories.judgement(a["ann"], a["topic"], stray, layer="removal", value=True, campaign=a["campaign"])
    assert pairs(Judgement.objects.all()) == []
