"""Settings come from the environment; production mode refuses to start without its secrets."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOOD_KEY = "k" * 20 + "-production-secret-key-0123456789abcdef"


def manage(*args, **env):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
    )


def test_it_refuses_to_start_in_production_mode_without_a_secret_key():
    result = manage("check", DJANGO_DEBUG="0", DJANGO_ALLOWED_HOSTS="judge.example.org")
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in result.stderr


def test_it_refuses_to_start_in_production_mode_without_allowed_hosts():
    result = manage("check", DJANGO_DEBUG="0", DJANGO_SECRET_KEY=GOOD_KEY)
    assert result.returncode != 0
    assert "DJANGO_ALLOWED_HOSTS must be set" in result.stderr


def test_it_rejects_a_debug_value_that_is_not_yes_or_no():
    result = manage("check", DJANGO_DEBUG="maybe")
    assert result.returncode != 0
    assert "DJANGO_DEBUG='maybe' is not a yes/no value" in result.stderr


def test_check_deploy_passes_in_production_mode():
    result = manage(
        "check", "--deploy", "--fail-level", "WARNING",
        DJANGO_DEBUG="0", DJANGO_SECRET_KEY=GOOD_KEY, DJANGO_ALLOWED_HOSTS="judge.example.org",
        CACHE_URL="redis://127.0.0.1:6379/9",
    )
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_warns_that_a_per_process_cache_multiplies_the_sign_in_tries():
    environment = {k: v for k, v in os.environ.items() if k != "CACHE_URL"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], cwd=ROOT, capture_output=True,
        text=True, timeout=120, env={**{k: v for k, v in environment.items() if not k.startswith("DJANGO_")},
                                     "DJANGO_DEBUG": "0", "DJANGO_SECRET_KEY": GOOD_KEY,
                                     "DJANGO_ALLOWED_HOSTS": "judge.example.org"},
    )
    assert result.returncode != 0
    assert "pooljudge.W001" in result.stderr and "set CACHE_URL" in result.stderr


def test_the_wsgi_entry_point_is_production_mode_by_default():
    code = "import config.wsgi"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True)
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in result.stderr


def test_database_url_selects_the_database(settings):
    import dj_database_url

    parsed = dj_database_url.parse("postgres://pj@127.0.0.1:5432/pooljudge")
    assert parsed["ENGINE"] == "django.db.backends.postgresql"
    expected = "postgresql" if os.environ.get("DATABASE_URL", "").startswith("postgres") else "sqlite"
    assert settings.DATABASES["default"]["ENGINE"].endswith(expected)


def test_without_a_broker_tasks_run_eagerly_in_process(settings):
    # The Celery app reads these settings (the tests' own eager switch lives in tests/conftest.py).
    assert settings.CELERY_TASK_ALWAYS_EAGER is (not os.environ.get("CELERY_BROKER_URL"))


@pytest.mark.django_db
def test_postgresql_plans_server_side_cursors_for_the_whole_result():
    """Streamed exports read their cursor to the end; PostgreSQL's default plans a cursor for its first 10%."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only (DATABASE_URL)")
    with connection.cursor() as cursor:
        cursor.execute("SHOW cursor_tuple_fraction")
        assert cursor.fetchone()[0] == "1"


@pytest.mark.django_db
def test_postgresql_binds_parameters_on_the_server_and_prepares_a_statement_run_again():
    """The save runs the same few statements many times a second: parsed and planned once per connection."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only (DATABASE_URL)")
    with connection.cursor() as cursor:
        for n in range(3):
            cursor.execute("SELECT %s::int + 40", [n])
            assert cursor.fetchone()[0] == n + 40
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        assert "SELECT $1::int + 40" in [row[0] for row in cursor.fetchall()]


@pytest.mark.parametrize(("value", "expected"), [("", "2"), ("0", "None"), ("7", "7")])
def test_database_prepare_threshold_sets_when_a_statement_is_prepared_and_0_turns_it_off(value, expected):
    code = "from django.conf import settings; print(settings.DATABASES['default']['OPTIONS']['prepare_threshold'])"
    result = manage("shell", "-c", code, DATABASE_URL="postgres://pj@127.0.0.1:5432/unused",
                    DATABASE_PREPARE_THRESHOLD=value)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == expected
