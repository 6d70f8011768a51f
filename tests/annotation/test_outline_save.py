"""The save endpoint: JSON changes of the outline page, stored once each, checked, only by the assignment's assessor."""

import json
import uuid

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment
from assessments.models import Judgement, JudgementChange, Layer
from tests import factories

pytestmark = pytest.mark.django_db


def test_it_stores_a_change_under_the_run_and_the_session(client, assignment, article, save):
    topic, run, passages = article
    client.force_login(assignment.assessor)
    response = save(assignment, "facet", passages[0], [{"facet": "tqa2:L_0001/T_1", "relevance": "should"}])
    assert response.status_code == 200
    assert response.json()["ok"] is True and response.json()["duplicate"] is False
    change = JudgementChange.objects.get()
    assert change.run_ids == ["guir"] and change.session_id == "page-1" and change.source == "web"
    assert change.client_seq == 1 and change.client_time.isoformat() == "2024-05-01T12:00:00+00:00"
    judgement = Judgement.objects.get()
    assert (judgement.assessor, judgement.topic, judgement.passage, judgement.grade) == (
        assignment.assessor, topic, passages[0], 2)


def test_a_resent_change_is_stored_once(client, assignment, article, save):
    passages = article[2]
    client.force_login(assignment.assessor)
    change_id = str(uuid.uuid4())
    first = save(assignment, "notes", passages[0], "once", change_id=change_id)
    again = save(assignment, "notes", passages[0], "once", change_id=change_id)
    assert first.status_code == again.status_code == 200
    assert first.json()["duplicate"] is False and again.json()["duplicate"] is True
    assert JudgementChange.objects.count() == 1


def test_a_transition_is_keyed_on_the_pair(client, assignment, article, save):
    passages = article[2]
    client.force_login(assignment.assessor)
    assert save(assignment, "transition", passages[0], "coherent", pair=passages[1]).status_code == 200
    judgement = Judgement.objects.get(layer=Layer.TRANSITION)
    assert (judgement.passage, judgement.passage2, judgement.value) == (passages[0], passages[1], "coherent")


@pytest.mark.parametrize("overrides, field", [
    ({"value": [{"facet": "nope", "relevance": "must"}]}, "value[0].facet"),
    ({"value": [{"facet": "other", "relevance": "sort-of"}]}, "value[0].relevance"),
    ({"value": "must"}, "value"),
    ({"layer": "rating"}, "layer"),
    ({"change_id": "not-a-uuid"}, "change_id"),
    ({"client_time": "yesterday"}, "client_time"),
    ({"client_time": "2024-05-01T12:00:00"}, "client_time"),
    ({"client_seq": -1}, "client_seq"),
    ({"passage": 999999}, "passage"),
    ({"passage2": 1}, "passage2"),
])
def test_bad_values_are_refused_with_the_field(client, assignment, article, save, overrides, field):
    passages = article[2]
    client.force_login(assignment.assessor)
    response = save(assignment, "facet", passages[0], [{"facet": "other", "relevance": "must"}], **overrides)
    assert response.status_code == 400
    assert response.json()["field"] == field and response.json()["message"]
    assert not JudgementChange.objects.exists()


def test_a_passage_of_another_article_is_refused(client, assignment, article, save):
    topic = article[0]
    stranger = factories.passage(topic.collection, "f" * 40)
    client.force_login(assignment.assessor)
    response = save(assignment, "notes", stranger, "hello")
    assert response.status_code == 400 and response.json()["field"] == "passage"


def test_a_transition_needs_two_passages_of_the_article(client, assignment, article, save):
    passages = article[2]
    client.force_login(assignment.assessor)
    response = save(assignment, "transition", passages[0], "same")
    assert response.status_code == 400 and response.json()["field"] == "passage2"
    response = save(assignment, "transition", passages[0], "same", pair=passages[0])
    assert response.status_code == 400 and response.json()["field"] == "passage2"


def test_a_body_that_is_not_json_is_refused(client, assignment):
    client.force_login(assignment.assessor)
    response = client.post(reverse("annotation:save", args=[assignment.token]), "{oops", content_type="application/json")
    assert response.status_code == 400 and response.json()["field"] == "body"


def test_another_assessor_gets_404_and_nothing_is_stored(client, assignment, article, save):
    client.force_login(factories.user("someone-else"))
    assert save(assignment, "notes", article[2][0], "mine now").status_code == 404
    assert not JudgementChange.objects.exists()


def test_anonymous_saves_are_refused_as_signed_out(client, assignment, article, save):
    response = save(assignment, "notes", article[2][0], "hello")
    assert response.status_code == 403 and response.json()["signed_out"] is True
    assert not JudgementChange.objects.exists()


def test_it_only_allows_post(client, assignment):
    client.force_login(assignment.assessor)
    assert client.get(reverse("annotation:save", args=[assignment.token])).status_code == 405


def test_it_is_csrf_protected(assignment, article):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(assignment.assessor)
    body = {"change_id": str(uuid.uuid4()), "layer": "notes", "passage": article[2][0].pk, "value": "x",
            "client_time": "2024-05-01T12:00:00Z", "client_seq": 1, "session_id": "s"}
    url = reverse("annotation:save", args=[assignment.token])
    assert strict.post(url, json.dumps(body), content_type="application/json").status_code == 403
    strict.get(reverse("annotation:unit", args=[assignment.token]))
    token = strict.cookies["csrftoken"].value
    response = strict.post(url, json.dumps(body), content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 200


def test_the_assignment_is_done_when_every_kept_passage_is_graded_and_every_asked_transition_labelled(
    client, assignment, article, save
):
    p1, p2, p3, p4 = article[2]
    client.force_login(assignment.assessor)
    grade = [{"facet": "other", "relevance": "can"}]
    for p in (p1, p2, p4):
        save(assignment, "facet", p, grade)
    save(assignment, "removal", p3, True)
    save(assignment, "transition", p1, "same", pair=p2)
    response = save(assignment, "transition", p2, "switch", pair=p3)  # p3 is removed: not asked
    assert response.json()["transitions_left"] == 1
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.IN_PROGRESS
    response = save(assignment, "transition", p2, "coherent", pair=p4)
    assert response.json() | {"passages_left": 0, "transitions_left": 0, "status": "done"} == response.json()
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.DONE and assignment.finished_at is not None


def test_the_assessor_can_mark_done_and_reopen(client, assignment):
    client.force_login(assignment.assessor)
    url = reverse("annotation:mark", args=[assignment.token])
    refused = client.post(url, {"done": True}, content_type="application/json")
    assert refused.status_code == 400 and refused.json()["field"] == "reason"  # nothing judged yet
    assert "not labelled yet" in refused.json()["message"]
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.TODO
    done = client.post(url, {"done": True, "reason": "the passages are in Welsh"}, content_type="application/json")
    assert done.json()["status"] == "done"
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.DONE and assignment.incomplete_reason == "the passages are in Welsh"
    reopen = reverse("annotation:reopen", args=[assignment.token])
    assert client.post(reopen, content_type="application/json").json()["status"] == "in_progress"
    assert client.post(url, {"done": False}, content_type="application/json").status_code == 400  # not a reopen
    assert client.post(url, {"done": "yes"}, content_type="application/json").status_code == 400
    client.force_login(factories.user("someone-else"))
    assert client.post(url, {"done": True}, content_type="application/json").status_code == 404


# A save and a page take the signed-in user from the row read with the assignment (config.auth.resolve_user): Django's
# own checks still hold there.

def test_a_save_after_the_password_changed_elsewhere_is_refused_as_signed_out(client, assignment, article, save):
    client.force_login(assignment.assessor)
    user = assignment.assessor
    user.set_password("a-new-password-0123")
    user.save()
    response = save(assignment, "notes", article[2][0], "hello")
    assert response.status_code == 403 and response.json()["signed_out"] is True
    assert not JudgementChange.objects.exists()


def test_a_save_by_a_deactivated_assessor_is_refused_as_signed_out(client, assignment, article, save):
    client.force_login(assignment.assessor)
    type(assignment.assessor).objects.filter(pk=assignment.assessor_id).update(is_active=False)
    response = save(assignment, "notes", article[2][0], "hello")
    assert response.status_code == 403 and response.json()["signed_out"] is True
    assert not JudgementChange.objects.exists()


def test_a_signed_in_user_saving_to_another_assessors_assignment_gets_404(client, assignment, article, save):
    client.force_login(factories.user("someone-else"))
    response = save(assignment, "notes", article[2][0], "hello")
    assert response.status_code == 404
    assert not JudgementChange.objects.exists()


def test_the_page_after_the_password_changed_elsewhere_goes_to_the_sign_in_page(client, assignment):
    client.force_login(assignment.assessor)
    url = reverse("annotation:unit", args=[assignment.token])
    assert client.get(url).status_code == 200
    assignment.assessor.set_password("a-new-password-0123")
    assignment.assessor.save()
    response = client.get(url)
    assert response.status_code == 302 and response.url.startswith(reverse("login"))
