"""A statement that meets another connection's table lock in the tests' shared-cache SQLite database waits for
it, as a statement meeting a locked file waits out SQLite's busy timeout (config/sqlite/base.py). Without that an
import's last write failed while its page read the same row, and the import stayed "Running" (CI, 2 Dec 2026)."""

import json
import threading

import pytest
from django.db import connection, connections

from annotation.models import Campaign
from config.sqlite import base as sqlite_backend
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)


def shared_cache():
    return connection.vendor == "sqlite" and "cache=shared" in str(connection.settings_dict["NAME"])


def test_a_write_waits_for_another_connections_read_of_the_table():
    if not shared_cache():
        pytest.skip("only a shared-cache SQLite database locks tables (the tests' in-memory database)")
    campaign = factories.campaign("locked-row")
    reading, done = threading.Event(), threading.Event()
    waits_before = sqlite_backend.lock_waits
    problems = []

    def reader():  # another thread: its own connection, reading the table and holding the read open
        try:
            with connections["default"].cursor() as cursor:
                cursor.execute("SELECT id FROM annotation_campaign UNION ALL SELECT id FROM annotation_campaign")
                cursor.fetchone()  # the statement is not at its end: the table stays read-locked
                reading.set()
                done.wait(60)  # a guard: the write below ends it
        except Exception as exc:  # noqa: BLE001
            problems.append(exc)
        finally:
            reading.set()
            connections.close_all()

    thread = threading.Thread(target=reader)
    thread.start()
    assert reading.wait(60)

    def release_once_the_write_waits():
        while sqlite_backend.lock_waits == waits_before and thread.is_alive():
            threading.Event().wait(0.005)
        done.set()

    releaser = threading.Thread(target=release_once_the_write_waits)
    releaser.start()
    try:
        Campaign.objects.filter(pk=campaign.pk).update(name="written")  # met the read lock, waited, then wrote
    finally:
        done.set()
        releaser.join(60)
        thread.join(60)
    assert not problems
    assert sqlite_backend.lock_waits == waits_before + 1
    assert Campaign.objects.get(pk=campaign.pk).name == "written"


def test_other_errors_are_raised_at_once():
    from django.db.utils import OperationalError

    if connection.vendor != "sqlite":
        pytest.skip("SQLite's backend")
    with pytest.raises(OperationalError, match="no such table"), connection.cursor() as cursor:
        cursor.execute("SELECT * FROM no_such_table")


def test_json_sorted_union_writes_a_list_as_the_orm_does():
    """A judgement's runs written by SQL (the SQLite save) must read and export byte for byte as the ORM's."""
    from config.sqlite.base import json_sorted_union

    assert json_sorted_union('["guir", "\\u00fcnh"]', '["Guir", "guir"]') == json.dumps(["Guir", "guir", "ünh"])
    assert json_sorted_union(None, '["b", "a"]') == '["a", "b"]'
    assert json_sorted_union('{"not": "a list"}', "[]") == "[]"
