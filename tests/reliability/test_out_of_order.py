"""The same label changed from two tabs, arriving out of order and twice, through the page's save endpoint:
the history keeps every change once, the current value is the latest by the assessor's own clock."""

import pytest
from django.utils import timezone
from django.urls import reverse

from assessments.models import Judgement, JudgementChange
from tests.annotation.conftest import page_state

FACET = "tqa2:L_0001/T_1"


def facet(relevance):
    return [{"facet": FACET, "relevance": relevance}]


@pytest.mark.django_db
def test_a_late_older_change_is_kept_in_the_history_but_does_not_become_current(client, assignment, article, save):
    client.force_login(assignment.assessor)
    passage = article[2][0]
    newer = save(assignment, "facet", passage, facet("must"), client_time="2024-05-01T12:00:10.000Z",
                 session_id="tab-a", client_seq=7)
    older = save(assignment, "facet", passage, facet("can"), client_time="2024-05-01T12:00:05.000Z",
                 session_id="tab-b", client_seq=3)
    assert newer.json()["current"] is True
    assert older.status_code == 200 and older.json()["current"] is False
    judgement = Judgement.objects.get(assessor=assignment.assessor, layer="facet", passage=passage)
    assert judgement.value == facet("must")
    history = judgement.changes.order_by("client_time")
    assert [(c.session_id, c.value) for c in history] == [("tab-b", facet("can")), ("tab-a", facet("must"))]
    state = page_state(client.get(reverse("annotation:unit", args=[assignment.token])))
    assert state["labels"]["facets"][str(passage.pk)] == facet("must")


@pytest.mark.django_db
def test_the_same_change_sent_twice_out_of_order_is_stored_once(client, assignment, article, save):
    client.force_login(assignment.assessor)
    passage = article[2][0]
    first = {"change_id": "6f1c1a52-61a3-4a77-9a39-1b0cf1a0e001", "client_time": "2024-05-01T12:00:01.000Z"}
    second = {"change_id": "6f1c1a52-61a3-4a77-9a39-1b0cf1a0e002", "client_time": "2024-05-01T12:00:02.000Z"}
    assert save(assignment, "notes", passage, "two", **second).json()["duplicate"] is False
    assert save(assignment, "notes", passage, "one", **first).json()["current"] is False
    again = save(assignment, "notes", passage, "two", **second).json()
    assert again["duplicate"] is True and again["current"] is True
    assert save(assignment, "notes", passage, "one", **first).json()["duplicate"] is True
    assert JudgementChange.objects.filter(assessor=assignment.assessor).count() == 2
    assert Judgement.objects.get(assessor=assignment.assessor, layer="notes").value == "two"


@pytest.mark.django_db
def test_equal_clock_times_from_two_tabs_are_ordered_by_the_counter(client, assignment, article, save):
    client.force_login(assignment.assessor)
    passage = article[2][0]
    same = "2024-05-01T12:00:00.000Z"
    save(assignment, "notes", passage, "later", client_time=same, client_seq=9, session_id="tab-a")
    save(assignment, "notes", passage, "earlier", client_time=same, client_seq=4, session_id="tab-b")
    assert Judgement.objects.get(assessor=assignment.assessor, layer="notes").value == "later"


@pytest.mark.django_db
def test_a_client_clock_far_in_the_future_does_not_pin_the_label(client, assignment, article, save):
    """A change sent with a clock hours ahead is taken at the server's time: the assessor's next change wins. One
    years ahead is refused, naming client_time (the window: assessments.services.judging.checked_client_time)."""
    from datetime import timedelta

    from assessments.models import Judgement

    client.force_login(assignment.assessor)
    passage = article[2][0]
    refused = save(assignment, "notes", passage, "from a broken clock", client_time="2099-01-01T00:00:00.000Z")
    assert refused.status_code == 400 and refused.json()["field"] == "client_time"
    ahead = (timezone.now() + timedelta(hours=20)).isoformat()
    assert save(assignment, "notes", passage, "from a clock ahead", client_time=ahead).status_code == 200
    later = save(assignment, "notes", passage, "the fix", client_time=timezone.now().isoformat())
    assert later.json()["current"] is True
    assert Judgement.objects.get(layer="notes").value == "the fix"
