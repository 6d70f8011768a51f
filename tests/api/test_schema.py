"""The OpenAPI schema (/api/schema/), the documentation page (/api/docs/), and schemathesis against the schema."""

import os
from urllib.parse import quote

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.config import SchemathesisConfig

from annotation.services.campaigns import create_pool
from annotation.services.submissions import upload_run
from config import api_urls
from tests.api.helpers import page

load_all_checks()
# A request the schema allows may still be refused for what only the database or the file can tell: a campaign,
# pool or run name that does not exist, a run file whose lines are wrong, a query parameter with a NUL, qrels of a
# campaign that has no labels yet. Those refusals are 400s that say what is wrong (the response schema check holds
# every 4xx body to its documented shape), so positive data may get a 400 or a 413 beside the default answers.
CONFIG = SchemathesisConfig.from_dict({"checks": {"positive_data_acceptance": {
    "expected-statuses": ["2xx", "400", "401", "403", "404", "409", "413", "429"],
}}})
DOCUMENT = SchemaGenerator(patterns=api_urls.schema_patterns).get_schema(request=None, public=True)
schema = schemathesis.openapi.from_dict(DOCUMENT, config=CONFIG)
schema.app = WSGIHandler()  # the checks' own probes (no token, a wrong one, other methods) reach the same app


@pytest.mark.django_db
def test_the_schema_is_served_and_valid_openapi():
    response = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    document = response.json()
    validate_schema(document)
    assert document["components"]["securitySchemes"]["tokenAuth"] == {
        "type": "apiKey", "in": "header", "name": "Authorization",
        "description": "`Token <key>`, the key printed by `manage.py issue_token`.",
    }
    assert "/api/runs/" in document["paths"] and "/api/qrels/" in document["paths"]


@pytest.mark.django_db
def test_the_documentation_page_lists_every_operation_without_outside_assets():
    response = APIClient().get("/api/docs/", HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Upload a run" in html and "Download qrels" in html
    assert "cdn" not in html.lower() and "https://" not in html.replace("https://www.django-rest-framework.org", "")
    operations = APIClient().get("/api/docs/", HTTP_ACCEPT="application/json").json()["operations"]
    assert ("POST", "/api/runs/") in {(o["method"], o["path"]) for o in operations}


@pytest.fixture
def wsgi_app():
    """The app schemathesis calls (schema.app), keeping the test's database connection open across requests (as
    the test client does)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield schema.app
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def fuzz_world(adhoc, outline, keys):
    """Both campaigns with runs of both participants, and a pool: something for every endpoint to find."""
    from django.contrib.auth import get_user_model

    team_a, team_b = (get_user_model().objects.get(username=name) for name in ("team-a", "team-b"))
    a1 = upload_run(campaign=adhoc, owner=team_a, data=b"301 Q0 d1 1 1 a1\n")
    b1 = upload_run(campaign=adhoc, owner=team_b, data=b"302 Q0 d2 1 1 b1\n")
    upload_run(campaign=outline, owner=team_a, data=page().encode())
    create_pool(campaign=adhoc, name="p1", runs=[a1.pk, b1.pk])
    return keys


# CI runs the same examples every time (derandomized: a failure is the code's, never the draw's). To search
# wider, PJ_FUZZ_EXAMPLES=200 runs that many random examples per operation and role.
EXPLORING = bool(os.environ.get("PJ_FUZZ_EXAMPLES"))
FUZZ_EXAMPLES = int(os.environ.get("PJ_FUZZ_EXAMPLES") or 10)
ALL_CHECKS = CHECKS.get_all()  # every check of the installed schemathesis (load_all_checks above)


@pytest.fixture(params=["organiser", "participant_a"])
def role_key(request, fuzz_world):
    """The key of a token of each role the API serves (the assessor's pages have no token)."""
    return fuzz_world[request.param]


@pytest.mark.django_db
@schema.parametrize()
@settings(max_examples=FUZZ_EXAMPLES, derandomize=not EXPLORING, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
def test_the_api_gives_no_server_error_to_anything_the_schema_allows(case, role_key, wsgi_app):
    case.call_and_validate(headers={"Authorization": f"Token {role_key}"}, checks=ALL_CHECKS)


# Every operation with an id in its path (the schema's integer path parameters), and ids drawn from all of
# Unicode's digits: "²", "①", "٣" pass str.isdigit() but not int(), which gave 500s (issue 31, finding 5).
ID_OPERATIONS = [
    (method.upper(), path) for path, operations in DOCUMENT["paths"].items() for method, operation in operations.items()
    if any(p["in"] == "path" and p["schema"].get("type") == "integer" for p in operation.get("parameters", []))
]
UNICODE_DIGITS = st.text(st.characters(categories=["Nd", "No"]), min_size=1, max_size=25)


@pytest.mark.django_db
@pytest.mark.parametrize("method, path", ID_OPERATIONS)
@given(text=UNICODE_DIGITS)
@settings(max_examples=FUZZ_EXAMPLES * 3, derandomize=not EXPLORING, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
def test_ids_drawn_from_every_unicode_digit_name_no_row_and_give_no_500(method, path, role_key, text):
    assert ID_OPERATIONS, "the schema names no operation with an id"
    url = path.replace("{name}", "adhoc")
    for parameter in ("{id}", "{pk}"):
        url = url.replace(parameter, quote(text, safe=""))
    response = APIClient().generic(method, url, HTTP_AUTHORIZATION=f"Token {role_key}")
    assert response.status_code < 500, (method, url, response.status_code)
    if not (text.isascii() and text.isdigit()):  # never a row: int() reads "٣" as 3, an id does not
        assert response.status_code in (403, 404), (method, url, response.status_code)
