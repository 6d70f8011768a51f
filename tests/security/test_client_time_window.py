"""An assessor's clock (client_time) is kept inside a sane window on every path that stores a change (issue 31,
finding 2): not before 2000, not more than a day past the server's clock. A save at year 1 with a +14:00 zone was
stored as a date before the year 1 in UTC, answered 500, and then broke the audit, the Y3 export and campaign
deletion. Rows stored before the fix are clamped by a data migration."""

import importlib
import json
import uuid
from datetime import UTC, datetime, timedelta
from io import StringIO
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from assessments.models import Judgement, JudgementChange
from assessments.services.judging import EARLIEST_CLIENT_TIME, JudgementInvalid, record_judgement
from tests.assessments.test_import_car_assessments import TOPIC, P9, appendix_example, car, rejected, write  # noqa: F401
from tests.factories import db_snapshot

pytestmark = pytest.mark.django_db

OUT_OF_WINDOW = [
    "0001-01-01T00:00:00+14:00",  # the review's: before the year 1 in UTC
    "0001-01-01T00:00:00Z",
    "1999-12-31T23:59:59Z",
    "9999-12-31T23:59:59-14:00",  # after the year 9999 in UTC
    "2400-01-01T00:00:00Z",
]


def save(client, world, client_time):
    body = {"change_id": str(uuid.uuid4()), "client_time": client_time, "session_id": "s", "layer": "notes",
            "value": "x", "passage": world["passages"][0].pk}
    return client.post(f"/a/{world['token']}/save", json.dumps(body), content_type="application/json")


@pytest.mark.parametrize("client_time", OUT_OF_WINDOW)
def test_a_save_with_a_clock_outside_the_window_is_a_400_naming_client_time_and_stores_nothing(
        client_for, world, client_time):
    before = db_snapshot()
    response = save(client_for("assessor"), world, client_time)
    assert response.status_code == 400, response.content
    assert response.json()["field"] == "client_time"
    assert "clock" in response.json()["message"]
    assert db_snapshot() == before


def test_a_clock_ahead_within_a_day_is_taken_as_the_servers_now(client_for, world):
    ahead = (timezone.now() + timedelta(hours=3)).isoformat()
    response = save(client_for("assessor"), world, ahead)
    assert response.status_code == 200, response.content
    assert JudgementChange.objects.get().client_time <= timezone.now()


def test_the_window_starts_in_2000(client_for, world):
    assert save(client_for("assessor"), world, "2000-01-01T00:00:00Z").status_code == 200
    assert JudgementChange.objects.get().client_time == EARLIEST_CLIENT_TIME


def test_record_judgement_refuses_an_import_from_before_2000(world, people):
    with pytest.raises(JudgementInvalid, match="^client_time: "):
        record_judgement(assessor=people["assessor"], layer="notes", value="x", topic=world["topic"],
                         passage=world["passages"][0], source=JudgementChange.Source.IMPORT,
                         client_time=datetime(1999, 1, 1, tzinfo=UTC))


@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00+14:00", "1990-05-01T12:00:00Z", "9999-12-31T23:59:59-14:00"])
def test_a_y3_file_with_a_time_stamp_outside_the_window_imports_nothing_and_names_it(car, tmp_path, stamp):
    doc = appendix_example()
    doc["notes_state"][0][1][0]["time_stamp"] = stamp
    message = rejected(write(tmp_path, doc))
    assert "notes_state[0]" in message and "time_stamp" in message, message


def _store_bad_row(world, people):
    """A judgement and its change as a save stored them before the fix, written in SQL as the database kept them."""
    recorded = record_judgement(assessor=people["assessor"], layer="notes", value="x", topic=world["topic"],
                                passage=world["passages"][0], campaign_id=world["outline_campaign"].pk,
                                client_time=datetime(2024, 5, 1, tzinfo=UTC))
    bad = "0001-12-31 10:00:00+00 BC" if connection.vendor == "postgresql" else "0000-12-31 10:00:00"
    with connection.cursor() as cursor:
        for model, pk in ((Judgement, recorded.judgement.pk), (JudgementChange, recorded.change.pk)):
            cursor.execute(f"UPDATE {model._meta.db_table} SET client_time = %s WHERE id = %s", [bad, pk])
    return recorded


def test_the_migration_clamps_rows_stored_before_the_window_and_the_exports_read_them(world, people, tmp_path):
    recorded = _store_bad_row(world, people)
    migration = importlib.import_module("assessments.migrations.0012_clamp_client_times")
    migration.clamp(apps, SimpleNamespace(connection=connection))  # the schema editor's one attribute it reads
    assert JudgementChange.objects.get(pk=recorded.change.pk).client_time == EARLIEST_CLIENT_TIME
    assert Judgement.objects.get(pk=recorded.judgement.pk).client_time == EARLIEST_CLIENT_TIME
    call_command("export_audit", "--campaign", "car-y3", "--out", str(tmp_path / "audit.jsonl"))
    assert "2000-01-01T00:00:00Z" in (tmp_path / "audit.jsonl").read_text()
    call_command("export_car_assessments", "--out", str(tmp_path / "y3"), stdout=StringIO())
