"""Marking done and reopening are two actions (issue 32): a "mark done" request never reopens a finished unit, and
reopening is its own request (Shift R on the page, which asks first)."""

import json

import pytest
from django.urls import reverse

from annotation.models import Assignment
from tests.annotation.conftest import page_state

pytestmark = pytest.mark.django_db

MUST = [{"facet": "general", "relevance": "must"}]


def post(client, name, assignment, **body):
    return client.post(reverse(f"annotation:{name}", args=[assignment.token]), json.dumps(body),
                       content_type="application/json")


def finish(save, assignment, passages):
    for p in passages:
        save(assignment, "facet", p, MUST)
    for a, b in zip(passages, passages[1:]):
        last = save(assignment, "transition", a, "same", pair=b)
    assert last.json()["status"] == "done"


def test_marking_a_finished_article_done_again_leaves_it_done(client, assignment, article, save):
    client.force_login(assignment.assessor)
    finish(save, assignment, article[2])
    again = post(client, "mark", assignment, done=True)  # Shift D after the last label
    assert again.status_code == 200 and again.json()["status"] == "done"
    refused = post(client, "mark", assignment, done=False)  # the old toggle's reopen: not a mark's to do
    assert refused.status_code == 400 and refused.json()["field"] == "done"
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.DONE


def test_reopening_is_its_own_request(client, assignment, article, save):
    client.force_login(assignment.assessor)
    finish(save, assignment, article[2])
    reopened = post(client, "reopen", assignment)
    assert reopened.status_code == 200 and reopened.json()["status"] == "in_progress"
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.IN_PROGRESS
    assert post(client, "reopen", assignment).json()["status"] == "in_progress"  # not done: nothing to reopen
    assert client.get(reverse("annotation:reopen", args=[assignment.token])).status_code == 405


def test_labels_missing_marking_done_takes_a_reason(client, assignment, article, save):
    client.force_login(assignment.assessor)
    save(assignment, "facet", article[2][0], MUST)
    refused = post(client, "mark", assignment, done=True)
    assert refused.status_code == 400 and refused.json()["field"] == "reason"
    done = post(client, "mark", assignment, done=True, reason="the rest is in Welsh")
    assert done.json()["status"] == "done"
    assignment.refresh_from_db()
    assert assignment.incomplete_reason == "the rest is in Welsh"
    again = post(client, "mark", assignment, done=True)  # Shift D once more: done already, no new reason asked
    assert again.status_code == 200 and again.json()["status"] == "done"
    assignment.refresh_from_db()
    assert assignment.incomplete_reason == "the rest is in Welsh"


def test_the_page_offers_both_actions_with_their_own_keys(client, assignment):
    client.force_login(assignment.assessor)
    response = client.get(reverse("annotation:unit", args=[assignment.token]))
    html = response.content.decode()
    assert 'id="mark-done"' in html and 'id="reopen"' in html
    assert "<kbd>Shift D</kbd></dt><dd>mark done" in html and "<kbd>Shift R</kbd></dt><dd>reopen" in html
    assert page_state(response)["reopen_url"] == reverse("annotation:reopen", args=[assignment.token])
