"""A GET never writes: every page and API GET of the URL matrix, as every role, leaves the database as it was
(sessions and sign-in times aside). The world has work in every state, including an article that labels made
elsewhere completed (the old `/next/` marked it done on the way) and a qualification retake not yet granted."""

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth import get_user_model

from annotation.models import Assignment
from annotation.services import changes
from assessments.models import Layer
from tests import factories
from tests.conftest import part_of_module_rows, rows_made_once_per_module
from tests.security.conftest import ROLES, make_people, make_world
from tests.security.test_url_matrix import TABLE, fill, request

pytestmark = pytest.mark.django_db


def snapshot():
    """Every row of the project's models and of the users (sign-in times left out), as plain values."""
    rows = {}
    for label in ("retrieval", "assessments", "annotation"):
        for model in apps.get_app_config(label).get_models():
            rows[model._meta.label] = list(model.objects.order_by("pk").values())
    rows["users"] = list(get_user_model().objects.order_by("pk").values(
        "pk", "username", "is_active", "is_staff", "is_superuser", "password"))
    rows["groups"] = sorted(get_user_model().groups.through.objects.values_list("user_id", "group_id"))
    return rows


def people_and_busy_world():
    """The URL matrix's world, with the assessor's work in progress and a second article complete but not done."""
    people = make_people()
    world = make_world(people)
    first = world["assignment"]
    p1, p2, *_ = world["passages"]
    changes.mark(first, True, reason="checked the rest elsewhere")  # done, reviewed (the world opened a review)
    second_run = factories.run(first.run.collection, "second", {first.topic: [p1, p2]})
    second = factories.assignment(people["assessor"], first.topic, campaign=first.campaign, run=second_run, position=1)
    for p in (p1, p2):  # complete through labels made outside the pages: still "to do"
        factories.judgement(people["assessor"], first.topic, p, relevance="must", facet="general",
                            campaign=first.campaign)
    factories.judgement(people["assessor"], first.topic, p1, passage2=p2, layer=Layer.TRANSITION, value="same",
                        campaign=first.campaign)
    assert second.status == Assignment.Status.TODO and changes.progress(second).complete
    return {"people": people, "busy_world": world}


# Made once for the module's tests: a test that finds a GET writing fails, and its writes are rolled back after it.
shared = rows_made_once_per_module("shared", people_and_busy_world)
people = part_of_module_rows("people")
busy_world = part_of_module_rows("busy_world")


def read(response):
    """The whole body. A streamed one is read to its end (its server-side cursor ends with it) but not closed:
    closing sends request_finished, which closes the test's database connection on PostgreSQL."""
    if response.streaming:
        return b"".join(response.streaming_content)
    return response.content


GETS = [(route, role) for route, methods in TABLE.items() if "GET" in methods for role in ROLES]


@pytest.mark.parametrize("route, role", GETS, ids=[f"/{r} {who}" for r, who in GETS])
def test_a_get_changes_nothing(busy_world, client_for, route, role):
    url = TABLE[route]["GET"][0]
    before = snapshot()
    client = client_for(role)
    read(request(client, "GET", route, fill(url, busy_world), busy_world))
    if route == "next/":  # also after an article, the way the pages move on
        read(client.get(f"/next/?after={busy_world['token']}"))
    assert snapshot() == before, f"GET {url} as {role} wrote to the database"


def test_the_admin_lists_change_nothing(busy_world, client_for):
    client = client_for("superuser")
    before = snapshot()
    for model in admin.site._registry:
        meta = model._meta
        read(client.get(f"/admin/{meta.app_label}/{meta.model_name}/"))
    assert snapshot() == before
