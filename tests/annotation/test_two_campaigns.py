"""Two campaigns on one pool (plot labels and forced choice) with the same assessors: each one's reports, reviews,
adjudication and exports are its own (issue 14). Everything is judged through the pages' save endpoint."""

import json
import uuid
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Assignment, Review
from annotation.reports.agreement import campaign_report
from annotation.reports.dashboard import dashboard
from annotation.roles import Role, ensure_groups
from annotation.services import review as reviews
from annotation.services.adjudication import disagreements
from annotation.services.assignment import assign_campaign
from annotation.services.audit import change_rows
from assessments.models import Judgement, Layer
from tests import factories
from tests.annotation import plot_setup as ps

pytestmark = pytest.mark.django_db


def post(client, assignment, **change):
    body = {"change_id": str(uuid.uuid4()), "client_time": "2024-05-01T12:00:00.000Z", "session_id": "t", **change}
    response = client.post(reverse("annotation:save", args=[assignment.token]), json.dumps(body),
                           content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
def two(tmp_path, client):
    """Campaigns plot-labels and plot-choice on one pool; ann and bob in both; a reviewer; all judged."""
    groups = ensure_groups()
    topic = ps.load_query(tmp_path, lines=ps.EXCERPT)
    pool, picked = ps.plot_pool(topic, size=6)
    ps.choice_item(pool, topic, picked[:3], answer=picked[0])
    labels, choice = ps.campaign("plot-labels"), ps.campaign("plot-choice", mode="choice")
    ann, bob = factories.user("ann"), factories.user("bob")
    factories.user("rita").groups.add(groups[Role.REVIEWER])
    for camp in (labels, choice):
        camp.pools.add(pool)
        assign_campaign(camp, ["ann", "bob"], overlap=2)
    for who, grades, pick in ((ann, [2, 2, 1, 0, 0, 0], picked[0]), (bob, [2, 0, 1, 1, 0, 0], picked[1])):
        client.force_login(who)
        unit = Assignment.objects.get(campaign=labels, assessor=who)
        for passage, grade in zip(picked, grades):
            last = post(client, unit, layer="plot_grade", passage=passage.pk, value=grade)
        post(client, unit, layer="plot_spans", passage=picked[0].pk, value=[[0, 5]])
        assert last["status"] == "done" and last["progress"]["complete"]
        unit = Assignment.objects.get(campaign=choice, assessor=who)
        answer = post(client, unit, layer="choice", item=ps.handle(unit, "choice-1"), value=pick.external_id)
        assert answer["status"] == "done" and answer["progress"] == {
            "total": 1, "done": 1, "left": 0, "complete": True, "percent": 100,
        }
    return labels, choice, pool, picked, ann, bob


def test_agreement_counts_each_campaigns_own_labels(two):
    labels, choice, *_ = two
    layers_of = {c.name: {entry["layer"] for entry in campaign_report(c)["layers"] if entry["units"]}
                 for c in (labels, choice)}
    assert "plot_grade" in layers_of["plot-labels"] and "choice" not in layers_of["plot-labels"]
    assert layers_of["plot-choice"] == {"choice"}


def test_a_review_samples_the_batch_it_reviews_and_shows_what_was_chosen(two):
    labels, choice, _, picked, ann, _ = two
    choice_review = Review.objects.get(assignment__campaign=choice, assignment__assessor=ann)
    assert choice_review.items.count() == 1  # the batch is one forced-choice item, not the pool's 6 candidates
    (shown,) = reviews.review_items(choice_review)
    assert shown["labels"][0].startswith(f"chose {picked[0].external_id}")
    label_review = Review.objects.get(assignment__campaign=labels, assignment__assessor=ann)
    said = [entry["labels"] for entry in reviews.review_items(label_review)]
    assert len(said) == 6 and all(any(text.startswith("grade ") for text in s) for s in said)


def test_adjudication_and_dashboards_are_per_campaign(two):
    labels, choice, *_ = two
    assert disagreements(labels).per_layer == {"plot_grade": 2}
    assert disagreements(choice).per_layer == {}
    charts = {c.name: {chart["id"]: chart for chart in dashboard(c)["charts"] if chart} for c in (labels, choice)}
    assert charts["plot-labels"] != charts["plot-choice"]


def test_exports_and_the_audit_are_per_campaign(two):
    labels, choice, pool, picked, *_ = two
    out = StringIO()
    call_command("export_qrels", "--pool", pool.name, "--campaign", labels.name, stdout=out)
    assert len(out.getvalue().splitlines()) == 6
    out = StringIO()
    call_command("export_qrels", "--pool", pool.name, "--campaign", choice.name, stdout=out)
    assert out.getvalue() == ""  # a forced choice is no grade: no qrels line
    assert {row["layer"] for row in change_rows(campaign=labels)} == {"plot_grade", "plot_spans"}
    assert {row["layer"] for row in change_rows(campaign=choice)} == {"choice"}


def test_one_assessor_keeps_separate_labels_in_two_labelling_campaigns(two, client):
    labels, _, pool, picked, ann, _ = two
    again = ps.campaign("plot-labels-2")
    again.pools.add(pool)
    assign_campaign(again, ["ann"])
    client.force_login(ann)
    unit = Assignment.objects.get(campaign=again, assessor=ann)
    answer = post(client, unit, layer="plot_grade", passage=picked[0].pk, value=0)
    assert answer["progress"]["done"] == 1 and answer["status"] == "in_progress"  # nothing borrowed from the first
    grades = dict(Judgement.objects.filter(assessor=ann, layer=Layer.PLOT_GRADE, passage=picked[0])
                  .values_list("campaign_id", "value"))
    assert grades == {labels.pk: 2, again.pk: 0}
