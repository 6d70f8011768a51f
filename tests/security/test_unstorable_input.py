"""No input gives a 500: NUL and lone surrogates in query parameters, form fields and saves, a facet given as a list
or an object, a choice of [] or {}, an unparseable client_time, JSON nested 100,000 deep — each a 400 naming the
field (issue 16)."""

import json
import uuid

import pytest
from django.urls import reverse

from annotation.models import Assignment
from tests.annotation import plot_setup as ps

pytestmark = pytest.mark.django_db


def change(**fields):
    return {"change_id": str(uuid.uuid4()), "client_time": "2024-05-01T12:00:00Z", "session_id": "s", **fields}


@pytest.mark.parametrize("url", ["/", "/next/", "/review/", "/campaigns/", "/studies/", "/accounts/login/"])
def test_nul_in_a_query_parameter_is_a_400_naming_it(client_for, world, url):
    response = client_for("organiser").get(url, {"topic": "a\x00b"})
    assert response.status_code == 400 and b"topic" in response.content


def test_nul_in_a_form_field_is_a_400(client_for, world):
    response = client_for("reviewer").post(f"/review/{world['review']}/", {"remark-1": "bad\x00"})
    assert response.status_code == 400 and b"remark-1" in response.content


@pytest.mark.parametrize("fields, field", [
    (dict(layer="notes", value="a\x00b"), "value"),
    (dict(layer="notes", value="lone \ud800 surrogate"), "value"),
    (dict(layer="facet", value=[{"facet": ["general"], "relevance": "must"}]), "value[0]"),
    (dict(layer="facet", value=[{"facet": {"x": 1}, "relevance": "must"}]), "value[0]"),
    (dict(layer="notes", value="x", client_time="2024-13-45T99:00:00Z"), "client_time"),
    (dict(layer="notes", value="x", session_id="s\x00"), "session_id"),
])
def test_bad_outline_saves_are_400s_naming_the_field(client_for, world, fields, field):
    body = change(passage=world["passages"][0].pk, **fields)
    response = client_for("assessor").post(
        f"/a/{world['token']}/save", json.dumps(body), content_type="application/json")
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field


def test_json_nested_100000_deep_is_a_400(client_for, world):
    body = "[" * 100_000 + "]" * 100_000
    response = client_for("assessor").post(f"/a/{world['token']}/save", body, content_type="application/json")
    assert response.status_code == 400 and response.json()["field"] == "body"


@pytest.mark.parametrize("value", [[], {}, ["d1"], 3])
def test_a_choice_that_is_not_a_candidate_id_is_a_400(client, tmp_path, value):
    topic = ps.load_query(tmp_path, lines=ps.EXCERPT)
    pool, picked = ps.plot_pool(topic, size=3)
    ps.choice_item(pool, topic, picked, answer=picked[0])
    unit = ps.assign(ps_user(), topic, pool, ps.campaign(mode="choice"))
    assert unit.kind == Assignment.Kind.CHOICE
    client.force_login(unit.assessor)
    response = client.post(reverse("annotation:save", args=[unit.token]),
                           json.dumps(change(layer="choice", item=ps.handle(unit, "choice-1"), value=value)),
                           content_type="application/json")
    assert response.status_code == 400 and response.json()["field"] == "value"


def ps_user():
    from tests import factories

    return factories.user("chooser")
