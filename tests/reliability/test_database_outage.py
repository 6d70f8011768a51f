"""A database that cannot be reached: the save endpoint answers 503 with a JSON retry message, never a 500 page.

The outage is made with Django's own hook on the connection (execute_wrapper), which raises the driver-level
error Django raises when PostgreSQL is restarting; benchmarks/faults/pg_restart.py does it for real.
"""

import json
import uuid

import pytest
from django.db import InterfaceError, OperationalError, connection
from django.urls import reverse

from assessments.models import JudgementChange


def unreachable(error):
    def refuse(execute, sql, params, many, context):
        raise error("connection to server at \"127.0.0.1\", port 5432 failed: Connection refused")

    return refuse


def change(passage, **fields):
    return json.dumps({
        "change_id": str(uuid.uuid4()), "layer": "notes", "passage": passage.pk, "value": "kept",
        "client_time": "2024-05-01T12:00:00.000Z", "client_seq": 1, "session_id": "page-1", **fields,
    })


@pytest.mark.django_db
@pytest.mark.parametrize("error", [OperationalError, InterfaceError])
def test_a_save_during_an_outage_is_a_503_to_retry_and_the_retry_is_stored_once(client, assignment, article, error):
    client.force_login(assignment.assessor)
    body = change(article[2][0])
    url = reverse("annotation:save", args=[assignment.token])
    with connection.execute_wrapper(unreachable(error)):
        response = client.post(url, body, content_type="application/json")
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    assert response["Retry-After"] == "2"
    assert response.json() == {
        "retry": True, "message": "The database is unreachable for a moment; nothing was stored. Try again.",
    }
    assert JudgementChange.objects.count() == 0
    for _ in range(2):  # the outbox sends it again once the database is back (and maybe twice)
        assert client.post(url, body, content_type="application/json").status_code == 200
    assert JudgementChange.objects.count() == 1


@pytest.mark.django_db
def test_a_page_during_an_outage_is_a_plain_503(client, assignment):
    client.force_login(assignment.assessor)
    with connection.execute_wrapper(unreachable(OperationalError)):
        response = client.get(reverse("annotation:unit", args=[assignment.token]))
    assert response.status_code == 503
    assert response["Content-Type"].startswith("text/plain")
    assert b"nothing was stored" in response.content


@pytest.mark.django_db
def test_other_errors_stay_errors(client, assignment, article):
    client.raise_request_exception = True
    client.force_login(assignment.assessor)

    def broken(execute, sql, params, many, context):
        raise ZeroDivisionError("a bug, not an outage")

    with connection.execute_wrapper(broken), pytest.raises(ZeroDivisionError):
        client.post(reverse("annotation:save", args=[assignment.token]), change(article[2][0]),
                    content_type="application/json")


@pytest.mark.django_db
def test_too_many_parameters_is_no_outage_to_retry(client, assignment, article):
    """psycopg refuses a query of over 65,535 parameters with an OperationalError: it was answered as an outage,
    503 "unreachable for a moment… try again", which no retry mends. It is an error (a 500, logged)."""
    client.raise_request_exception = False
    client.force_login(assignment.assessor)

    def too_many(execute, sql, params, many, context):
        raise OperationalError("sending query and params failed: number of parameters must be between 0 and 65535")

    with connection.execute_wrapper(too_many):
        response = client.post(reverse("annotation:save", args=[assignment.token]), change(article[2][0]),
                               content_type="application/json")
    assert response.status_code == 500
    assert b"retry" not in response.content


@pytest.mark.django_db
def test_server_timing_reports_the_database_time_when_asked(client, assignment, settings):
    client.force_login(assignment.assessor)
    url = reverse("annotation:unit", args=[assignment.token])
    assert "Server-Timing" not in client.get(url)
    settings.SERVER_TIMING = True
    timing = client.get(url)["Server-Timing"]
    assert timing.startswith("db;dur=") and "queries" in timing and ", app;dur=" in timing
