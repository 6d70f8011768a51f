"""A kept database connection is checked before a request uses it, without a round trip (config/postgresql/base.py):
a healthy one sends nothing; one the server has ended is found unusable and replaced, so the request succeeds."""

import time

import psycopg
import pytest
from django.conf import settings
from django.db import connection

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"), reason="PostgreSQL's backend"),
]


def other_session():
    params = connection.get_connection_params()
    return psycopg.connect(**{k: v for k, v in params.items() if k not in ("cursor_factory", "context", "prepare_threshold")},
                           autocommit=True)


def last_statement(admin, pid):
    admin.execute("SELECT pg_stat_clear_snapshot()")
    return admin.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()[0]


def test_a_healthy_connection_is_usable_and_the_check_sends_nothing():
    assert connection.vendor == "postgresql" and settings.DATABASES["default"]["CONN_HEALTH_CHECKS"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT 'the last statement'")
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with other_session() as admin:
        assert last_statement(admin, pid) == "SELECT pg_backend_pid()"
        for _ in range(3):
            assert connection.is_usable()
        assert last_statement(admin, pid) == "SELECT pg_backend_pid()"  # no SELECT 1 reached the server


def test_a_connection_the_server_ended_is_unusable_and_the_next_request_gets_a_new_one(client):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with other_session() as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,)).fetchone()[0]
    deadline = time.monotonic() + 10
    while connection.is_usable():  # the server's goodbye arrives at once; a moment for the kernel to deliver it
        assert time.monotonic() < deadline, "a terminated connection still looks usable"
        time.sleep(0.01)
    # What a request does: Django's check before the first statement closes it, and the request reconnects.
    connection.health_check_done = False
    connection.close_if_health_check_failed()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != pid


def test_something_to_read_on_a_healthy_connection_falls_back_to_select_1():
    with connection.cursor() as cursor:
        cursor.execute("LISTEN pj_health_check_test")
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with other_session() as admin:
        admin.execute("NOTIFY pj_health_check_test, 'hello'")
        deadline = time.monotonic() + 5
        while last_statement(admin, pid) != "SELECT 1":  # readable: Django's own check asks the server
            assert connection.is_usable()
            assert time.monotonic() < deadline, "a readable healthy connection did not get SELECT 1"
            time.sleep(0.01)
    assert connection.is_usable()
    with connection.cursor() as cursor:
        cursor.execute("UNLISTEN *")


def test_a_connection_on_a_file_descriptor_above_1024_is_checked_too(tmp_path):
    """select() cannot watch a descriptor above 1023; the check polls, so a busy process keeps its connection."""
    import resource

    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < 1200:
        pytest.skip("this process may not open 1,200 files")
    connection.close()
    held = [open(tmp_path / "held", "a") for _ in range(1100)]  # noqa: SIM115 (closed below)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        assert connection.connection.fileno() > 1024
        with other_session() as admin:
            last = last_statement(admin, pid)
            assert connection.is_usable()
            assert last_statement(admin, pid) == last  # usable, and no SELECT 1 sent
    finally:
        connection.close()
        for handle in held:
            handle.close()
