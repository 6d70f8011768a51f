"""Fixtures for the assessor pages: a small CAR-like article with untrusted text, its assessor, and a saver."""

import json
import uuid
from itertools import count

import pytest
from django.urls import reverse

from tests import factories

EVIL = '<script>alert("x")</script>'


@pytest.fixture
def article():
    """A topic with two facets and a run's article of four passages; every text could be markup."""
    coll = factories.collection("car")
    topic = factories.topic(
        coll, "tqa2:L_0001", title=f"Water {EVIL}",
        facets=[("tqa2:L_0001/T_1", f"Droughts {EVIL}"), ("tqa2:L_0001/T_2", "Water scarcity")],
    )
    passages = [factories.passage(coll, f"{i:040x}", text=f"Passage {i} {EVIL}") for i in range(1, 5)]
    run = factories.run(coll, "guir", {topic: passages})
    return topic, run, passages


@pytest.fixture
def assessor():
    return factories.user("judge")


@pytest.fixture
def assignment(article, assessor):
    topic, run, _ = article
    return factories.assignment(assessor, topic, run=run)


@pytest.fixture
def save(client):
    """save(assignment, layer, passage, value, pair=None, **overrides) posts one change as the page would."""
    seq = count(1)

    def post(assignment, layer, passage, value, /, *, pair=None, **overrides):
        body = {
            "change_id": str(uuid.uuid4()), "layer": layer, "passage": passage.pk, "value": value,
            "client_time": "2024-05-01T12:00:00.000Z", "client_seq": next(seq), "session_id": "page-1",
        }
        if pair is not None:
            body["passage2"] = pair.pk
        body.update(overrides)
        return client.post(
            reverse("annotation:save", args=[assignment.token]), json.dumps(body), content_type="application/json"
        )

    return post


def page_state(response):
    """The data the outline page renders into itself (the json_script block)."""
    html = response.content.decode()
    start = html.index('<script id="outline-data" type="application/json">') + len('<script id="outline-data" type="application/json">')
    return json.loads(html[start : html.index("</script>", start)])


@pytest.fixture
def organiser(client):
    """A signed-in organiser ("boss", staff, in the organiser group); a test file may define its own."""
    from django.contrib.auth.models import Group

    from annotation.roles import Role, ensure_groups

    ensure_groups()
    user = factories.user("boss", is_staff=True)
    user.groups.add(Group.objects.get(name=Role.ORGANISER))
    client.force_login(user)
    return user
