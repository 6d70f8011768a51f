"""The workflow bugs of issue 14, each at its root: one stored status that every page, the queue, the header and
the API read; done only when complete or submitted incomplete with a reason; the admin validates like the
services; service errors name fields, not command-line flags."""

import json

import pytest
from django.urls import reverse

from annotation.models import Assignment, Campaign, Review
from annotation.roles import Role, ensure_groups
from annotation.services import review as reviews
from annotation.services.assignment import assign_campaign
from assessments.models import Pool
from tests import factories
from tests.annotation import plot_setup as ps

pytestmark = pytest.mark.django_db


def mark(client, assignment, **body):
    return client.post(reverse("annotation:mark", args=[assignment.token]), json.dumps(body),
                       content_type="application/json")


def test_reopening_a_done_article_shows_in_progress_everywhere_and_next_leaves_it(client, assignment, article, save):
    topic, run, passages = article
    client.force_login(assignment.assessor)
    for p in passages:
        save(assignment, "facet", p, [{"facet": "general", "relevance": "must"}])
    for a, b in zip(passages, passages[1:]):
        last = save(assignment, "transition", a, "same", pair=b)
    assert last.json()["status"] == "done"
    reopened = client.post(reverse("annotation:reopen", args=[assignment.token]))  # Shift R, confirmed
    assert reopened.json()["status"] == "in_progress"
    page = client.get(reverse("annotation:unit", args=[assignment.token])).content.decode()
    assert json.loads(page.split('id="outline-data" type="application/json">')[1].split("</script>")[0])["status"] \
        == "in_progress"
    home = client.get(reverse("annotation:home")).content.decode()
    assert "1 assignment for you, 0 done." in home and "In progress" in home
    client.get(reverse("annotation:next"), {"after": assignment.token})  # a GET: it must not finish the article
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.IN_PROGRESS


def test_incomplete_plot_work_needs_a_reason_and_the_reviewer_sees_it(client, tmp_path):
    ensure_groups()
    unit = ps.labelling(tmp_path, size=3, lines=ps.EXCERPT)
    unit.campaign.pools.add(unit.pool)
    reviewer = factories.user("rita")
    reviewer.groups.add(ensure_groups()[Role.REVIEWER])
    client.force_login(unit.assessor)
    refused = mark(client, unit, done=True)
    assert refused.status_code == 400 and refused.json() == {
        "field": "reason", "message": "3 candidates not labelled yet: finish them, or submit it incomplete and say why",
    }
    assert not Review.objects.exists()
    assert mark(client, unit, done=True, reason="the book excerpt ends early").json()["status"] == "done"
    review = Review.objects.get(assignment=unit)
    client.force_login(reviewer)
    page = client.get(reverse("annotation:review", args=[review.pk])).content.decode()
    assert "Submitted incomplete" in page and "the book excerpt ends early" in page
    assert len(reviews.review_items(review)) == 3


def test_the_admin_pool_form_keeps_topics_in_the_pools_collection(client, admin_user):
    car, web = factories.collection("car"), factories.collection("web")
    theirs = factories.topic(web, "301")
    client.force_login(admin_user)
    response = client.post(reverse("admin:assessments_pool_add"), {
        "name": "mixed", "collection": car.pk, "topics": [theirs.pk], "strategy": "union", "depth": 20,
        "params": "{}", "status": "pending",
    })
    assert response.status_code == 200 and not Pool.objects.filter(name="mixed").exists()
    assert "not of collection &#x27;car&#x27;: 301" in response.content.decode()


def test_the_admin_assignment_form_refuses_an_empty_article_and_says_what_a_duplicate_is(client, admin_user, article):
    topic, run, passages = article
    judge = factories.user("judge2")
    empty = factories.run(topic.collection, "empty", {})
    campaign = factories.campaign("c")
    client.force_login(admin_user)
    form = {"campaign": campaign.pk, "assessor": judge.pk, "topic": topic.pk, "position": 0, "status": "todo"}
    response = client.post(reverse("admin:annotation_assignment_add"), {**form, "run": empty.pk})
    assert response.status_code == 200 and "has no article for topic" in response.content.decode()
    response = client.post(reverse("admin:annotation_assignment_add"), {**form, "run": run.pk})
    assert response.status_code == 302
    assert Assignment.objects.get(assessor=judge).kind == Assignment.Kind.OUTLINE
    response = client.post(reverse("admin:annotation_assignment_add"), {**form, "run": run.pk})
    assert response.status_code == 200
    assert "judge2 already has topic &#x27;tqa2:L_0001&#x27; of run &#x27;guir&#x27; in this campaign" in \
        response.content.decode()


def test_an_export_error_names_the_field_not_a_command_line_flag(client, admin_user):
    factories.collection("empty")
    client.force_login(admin_user)
    response = client.get("/api/assessments/car-y3/", {"collection": "nope"})
    assert response.status_code == 400
    assert response.json() == {"detail": "Nothing was exported: no collection named 'nope'", "field": "collection"}


def test_assign_campaign_stores_each_units_kind(tmp_path):
    topic = ps.load_query(tmp_path, lines=ps.EXCERPT)
    pool, picked = ps.plot_pool(topic, size=3)
    ps.choice_item(pool, topic, picked, answer=picked[0])
    factories.user("ann")
    for name, mode, kind in (("l", "label", "plot_labels"), ("c", "choice", "choice")):
        camp = ps.campaign(name, mode=mode)
        assign_campaign(camp, ["ann"], pools=[pool])
        assert list(Assignment.objects.filter(campaign=camp).values_list("kind", flat=True)) == [kind]
    # a later change of the campaign's mode does not change what was given out
    Campaign.objects.filter(name="l").update(settings={"mode": "pair"})
    assert Assignment.objects.get(campaign__name="l").kind == Assignment.Kind.PLOT_LABELS
