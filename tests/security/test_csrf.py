"""CSRF: every state-changing request from a browser session needs the CSRF token.

Every non-admin URL of the site is POSTed without a token by a signed-in user who could otherwise use it, and
must get 403; the admin is sampled (sign-in, add, delete). The REST API is exempt only for token
authentication (no cookies): in a browser session its POSTs and DELETEs need the token too.
"""

import json

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.security.conftest import ROLES
from tests.security.test_url_matrix import ADMIN_PREFIX, BODIES, TABLE, fill, routes

# Who may use each route (the first role in the matrix with a 2xx or 3xx answer), so the 403 is the CSRF check's.
ROLE_ORDER = ("assessor", "participant", "organiser", "superuser", "anonymous")


def site_routes():
    """Every route but the admin's (sampled below) and the API's (session writes checked below; token ones carry
    no cookie to forge)."""
    return sorted(route for route in routes() if not route.startswith((ADMIN_PREFIX, "api/")))


def signed_in(people, role, csrf=True):
    client = Client(enforce_csrf_checks=csrf)
    if role != "anonymous":
        client.force_login(people[role])
    return client


def views(patterns=None):
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            yield from views(pattern.url_patterns)
        elif isinstance(pattern, URLPattern):
            yield pattern


def test_no_page_turns_the_csrf_check_off():
    """DRF's views are exempt from the middleware and check CSRF themselves for session authentication."""
    exempt = [
        str(p.pattern) for p in views()
        if getattr(p.callback, "csrf_exempt", False) and not hasattr(p.callback, "cls")
    ]
    assert exempt == []


@pytest.mark.django_db
@pytest.mark.parametrize("route", site_routes())
def test_a_post_without_the_token_is_refused(world, people, route):
    url = TABLE[route][next(iter(TABLE[route]))][0]
    statuses = TABLE[route].get("POST", next(iter(TABLE[route].values())))[1]
    role = next((r for r in ROLE_ORDER if 200 <= statuses[ROLES.index(r)] < 400), "anonymous")
    body = BODIES.get(route, lambda world: "{}")(world)
    kwargs = {"content_type": "application/json"} if isinstance(body, str) else {}
    response = signed_in(people, role).post(fill(url, world), body, **kwargs)
    assert response.status_code == 403, (route, role, response.status_code)


@pytest.mark.django_db
def test_the_same_save_with_the_token_is_stored(world, people):
    """The control for the test above: the refusal is the CSRF check's, not the endpoint's."""
    client = signed_in(people, "assessor")
    client.get(f"/a/{world['token']}/")
    token = client.cookies["csrftoken"].value
    body = BODIES["a/<str:token>/save"](world)
    response = client.post(f"/a/{world['token']}/save", body, content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 200, response.content
    assert response.json()["ok"] is True


@pytest.mark.django_db
@pytest.mark.parametrize("url, role", [
    ("admin:login", "anonymous"), ("admin:annotation_campaign_add", "organiser"),
    ("admin:annotation_campaign_delete", "organiser"), ("admin:logout", "organiser"),
])
def test_admin_posts_without_the_token_are_refused(world, people, url, role):
    args = [world["outline_campaign"].pk] if url.endswith("_delete") else []
    response = signed_in(people, role).post(reverse(url, args=args), {"post": "yes", "name": "x"})
    assert response.status_code == 403


@pytest.mark.django_db
def test_api_writes_in_a_browser_session_need_the_token(world, people):
    client = signed_in(people, "participant")
    response = client.delete(f"/api/runs/{world['run']}/")
    assert response.status_code == 403
    assert "CSRF" in json.loads(response.content)["detail"]
    response = client.post("/api/pools/", {"name": "x"}, content_type="application/json")
    assert response.status_code == 403
