"""The OpenAPI schema (/api/schema/), the documentation page (/api/docs/), and schemathesis against the schema."""

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema
from hypothesis import HealthCheck, settings
from rest_framework.test import APIClient
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from annotation.services.campaigns import create_pool
from annotation.services.submissions import upload_run
from config import api_urls
from tests.api.helpers import page

schema = schemathesis.openapi.from_dict(
    SchemaGenerator(patterns=api_urls.schema_patterns).get_schema(request=None, public=True)
)


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
    """Django's WSGI application, keeping the test's database connection open across requests (as the test
    client does)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield WSGIHandler()
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


@pytest.mark.django_db
@schema.parametrize()
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_the_api_gives_no_server_error_to_anything_the_schema_allows(case, fuzz_world, wsgi_app):
    case.call_and_validate(
        app=wsgi_app, headers={"Authorization": f"Token {fuzz_world['organiser']}"},
        checks=[not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance],
    )
