"""A statement that meets another connection's table lock in the tests' shared-cache SQLite database waits for
it, as a statement meeting a locked file waits out SQLite's busy timeout (config/sqlite/base.py). Without that an
import's last write failed while its page read the same row, and the import stayed "Running" (CI, 2 Dec 2026)."""

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.db import connection, connections

from annotation.models import Campaign
from config.sqlite import base as sqlite_backend
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]


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


ONE_CONNECTION_TWO_THREADS = """
import threading
import django
from django.conf import settings
settings.configure(DATABASES={"default": {"ENGINE": "config.sqlite", "NAME": ":memory:"}}, INSTALLED_APPS=[])
django.setup()
from django.db import connections
shared = connections["default"]  # one connection for both threads, as a live server's request threads get it
shared.inc_thread_sharing()
with shared.cursor() as cursor:
    cursor.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b TEXT)")
    cursor.executemany("INSERT INTO t (a, b) VALUES (%s, %s)", [(f'["x{i}"]', f'["y{i}"]') for i in range(2000)])

def writer():  # a statement that calls our Python SQL function on many rows
    for _ in range(200):
        with shared.cursor() as cursor:
            cursor.execute("UPDATE t SET a = json_sorted_union(a, b) WHERE (id % 7) = 0")

def reader():  # reads, whose column names and values the sqlite3 module takes without letting the GIL go
    for _ in range(3000):
        with shared.cursor() as cursor:
            cursor.execute("SELECT id, a, b FROM t WHERE id < 40")
            cursor.fetchall()

threads = [threading.Thread(target=writer), threading.Thread(target=reader)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print("both finished")
"""


def test_two_threads_on_one_connection_never_hang_on_our_sql_function():
    """Django gives a live server's request threads the tests' one in-memory connection. A statement calling
    json_sorted_union held the connection's mutex and waited for the GIL, while the other thread held the GIL and
    waited for the mutex: the whole process hung (a fresh-clone make test stopped at 98%, 7 Dec 2026). Without the
    connection's lock this script hangs within seconds (it ran out a 60 s limit; with the lock it ends in about
    1 s). It runs in a process of its own, so that a hang is a failure of this test, not of the suite; the limit is
    a guard, not a pace."""
    result = subprocess.run([sys.executable, "-c", ONE_CONNECTION_TWO_THREADS], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0 and "both finished" in result.stdout, result.stderr[-3000:]
