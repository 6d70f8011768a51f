"""Saving from the plot pages: one change stored once, under the assessor, with its active time; bad input is 400 naming the field."""

import json
import uuid
from itertools import count

import pytest
from django.urls import reverse

from annotation.models import Assignment
from assessments.models import Judgement, JudgementChange, Layer
from tests import factories
from tests.annotation import plot_setup as ps

pytestmark = pytest.mark.django_db


@pytest.fixture
def topic(tmp_path):
    # An emoji before the words: offsets are counted in characters (code points), as Python counts them.
    return ps.load_query(tmp_path, text="🐕 After the beating the dog understands who holds the power.", lines=ps.EXCERPT)


@pytest.fixture
def pooled(topic):
    return ps.plot_pool(topic, size=4)


@pytest.fixture
def assignment(topic, pooled):
    return ps.assign(factories.user("judge"), topic, pooled[0], ps.campaign())


@pytest.fixture
def post(client):
    seq = count(1)

    def send(assignment, **fields):
        body = {"change_id": str(uuid.uuid4()), "client_time": "2024-05-01T12:00:00.000Z", "client_seq": next(seq),
                "session_id": "tab-1", "active_ms": 1500}
        body.update(fields)
        return client.post(reverse("annotation:save", args=[assignment.token]), json.dumps(body),
                           content_type="application/json")

    return send


def test_a_grade_and_spans_are_stored_with_the_active_time(client, assignment, pooled, post):
    _, picked = pooled
    client.force_login(assignment.assessor)
    response = post(assignment, layer="plot_grade", passage=picked[0].pk, value=2)
    assert response.status_code == 200, response.content
    assert response.json()["left"] == 3
    response = post(assignment, layer="plot_spans", passage=picked[0].pk, value=[[10, 20], [2, 7], [6, 9]])
    assert response.status_code == 200
    grade = Judgement.objects.get(layer=Layer.PLOT_GRADE, assessor=assignment.assessor)
    assert (grade.value, grade.grade, grade.passage_id) == (2, 2, picked[0].pk)
    spans = Judgement.objects.get(layer=Layer.PLOT_SPANS, assessor=assignment.assessor)
    assert spans.value == [[2, 9], [10, 20]]  # sorted, overlapping spans joined
    assert assignment.topic.text[2:9] == "After t"
    assert list(JudgementChange.objects.values_list("active_ms", flat=True)) == [1500, 1500]
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.IN_PROGRESS


def test_a_resent_change_is_stored_once(client, assignment, pooled, post):
    _, picked = pooled
    client.force_login(assignment.assessor)
    change = str(uuid.uuid4())
    first = post(assignment, change_id=change, layer="plot_grade", passage=picked[1].pk, value=1)
    again = post(assignment, change_id=change, layer="plot_grade", passage=picked[1].pk, value=1)
    assert first.json()["duplicate"] is False and again.json()["duplicate"] is True
    assert JudgementChange.objects.count() == 1


def test_grading_every_candidate_finishes_the_assignment(client, assignment, pooled, post):
    _, picked = pooled
    client.force_login(assignment.assessor)
    for p in picked:
        response = post(assignment, layer="plot_grade", passage=p.pk, value=0)
    assert response.json()["left"] == 0 and response.json()["status"] == "done"


@pytest.mark.parametrize("fields, field", [
    ({"layer": "facet", "value": []}, "layer"),
    ({"layer": "plot_grade", "value": 7}, "value"),
    ({"layer": "plot_grade", "value": True}, "value"),
    ({"layer": "plot_grade", "value": 1, "passage": 10**9}, "passage"),
    ({"layer": "plot_spans", "value": [[5, 2]]}, "value[0]"),
    ({"layer": "plot_spans", "value": [[0, 10_000]]}, "value[0]"),
    ({"layer": "plot_spans", "value": "0-4"}, "value"),
    ({"layer": "plot_grade", "value": 1, "active_ms": -5}, "active_ms"),
    ({"layer": "plot_grade", "value": 1, "active_ms": "fast"}, "active_ms"),
    ({"layer": "plot_grade", "value": 1, "client_time": "yesterday"}, "client_time"),
    ({"layer": "plot_grade", "value": 1, "change_id": "x"}, "change_id"),
])
def test_bad_changes_are_refused_with_the_field(client, assignment, pooled, post, fields, field):
    _, picked = pooled
    client.force_login(assignment.assessor)
    fields = {"passage": picked[0].pk, **fields}
    response = post(assignment, **fields)
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert not JudgementChange.objects.exists()


def test_a_candidate_of_another_pool_is_refused(client, assignment, topic, post):
    other_pool, others = ps.plot_pool(topic, size=8, name="other-pool")
    outside = next(p for p in others if not assignment.pool.candidates.filter(passage=p).exists())
    client.force_login(assignment.assessor)
    response = post(assignment, layer="plot_grade", passage=outside.pk, value=2)
    assert response.status_code == 400 and response.json()["field"] == "passage"


def test_another_assessor_gets_404_and_nothing_is_stored(client, assignment, pooled, post):
    _, picked = pooled
    client.force_login(factories.user("other"))
    assert post(assignment, layer="plot_grade", passage=picked[0].pk, value=2).status_code == 404
    assert not JudgementChange.objects.exists()


def test_a_forced_choice_is_keyed_on_the_item_and_names_the_chosen_passage(client, topic, pooled, post):
    pool, picked = pooled
    ps.choice_item(pool, topic, picked[:3], answer=picked[1])
    a = ps.assign(factories.user("judge"), topic, pool, ps.campaign(mode="choice"))
    client.force_login(a.assessor)
    item = ps.handle(a, "choice-1")  # the page's name of the item
    assert post(a, layer="choice", item="nope", value=picked[1].external_id).json()["field"] == "item"
    assert post(a, layer="choice", item="choice-1", value=picked[1].external_id).json()["field"] == "item"
    assert post(a, layer="choice", item=item, value=picked[3].external_id).json()["field"] == "value"
    assert post(a, layer="plot_grade", passage=picked[0].pk, value=1).json()["field"] == "layer"
    response = post(a, layer="choice", item=item, value=picked[1].external_id)
    assert response.status_code == 200 and response.json()["status"] == "done"
    judgement = Judgement.objects.get(layer=Layer.CHOICE)
    assert (judgement.topic_id, judgement.item, judgement.passage_id, judgement.value) == (
        topic.pk, "choice-1", None, picked[1].external_id)


def test_a_pair_rating_is_keyed_on_the_items_two_passages(client, topic, pooled, post):
    pool, picked = pooled
    ps.pair_item(pool, topic, picked[0], picked[2])
    a = ps.assign(factories.user("judge"), topic, pool, ps.campaign(mode="pair"))
    client.force_login(a.assessor)
    item = ps.handle(a, "pair-1")
    assert post(a, layer="rating", item=item, value=11).json()["field"] == "value"
    assert post(a, layer="rating", item=item, value=7).status_code == 200
    judgement = Judgement.objects.get(layer=Layer.RATING)
    assert (judgement.passage_id, judgement.passage2_id, judgement.item, judgement.value) == (
        picked[0].pk, picked[2].pk, "pair-1", 7)


def test_signed_out_saves_are_refused_as_signed_out_and_organisers_cannot_save(client, assignment, pooled, post):
    _, picked = pooled
    response = post(assignment, layer="plot_grade", passage=picked[0].pk, value=2)
    assert response.status_code == 403 and response.json()["signed_out"] is True
    assert client.get(reverse("annotation:unit", args=[assignment.token])).status_code == 302
    client.force_login(factories.user("boss", is_staff=True))
    assert post(assignment, layer="plot_grade", passage=picked[0].pk, value=2).status_code == 404
    assert not JudgementChange.objects.exists()


def test_a_save_takes_the_same_few_queries_however_large_the_pool(client, topic, post, django_assert_max_num_queries):
    pool, picked = ps.plot_pool(topic, size=40, name="big-pool")
    judge = factories.user("judge")
    assignment = ps.assign(judge, topic, pool, ps.campaign())
    client.force_login(judge)
    post(assignment, layer="plot_grade", passage=picked[0].pk, value=2)  # the session is read once
    with django_assert_max_num_queries(20):
        assert post(assignment, layer="plot_grade", passage=picked[1].pk, value=1).status_code == 200
