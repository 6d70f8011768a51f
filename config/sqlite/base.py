"""Django's SQLite backend, waiting for a table lock of a shared cache as SQLite waits for a locked file.

SQLite's busy timeout (OPTIONS["timeout"]) makes a statement wait while another connection holds the database
file. Connections to one *shared-cache* database (the tests' in-memory database, `file:memorydb_default?mode=
memory&cache=shared`, which a live server's threads and the background thread all open) do not lock the file:
they lock tables, and a statement that meets another connection's table lock fails at once with
SQLITE_LOCKED_SHAREDCACHE, "database table is locked", whatever the timeout. That is how an import's last write
failed while the import's page read the same row (CI, 2 Dec 2026: the job stayed "Running" and the browser test
waited for "Done" in vain). SQLite's own answer is sqlite3_unlock_notify, which Python does not offer; so a
statement that meets such a lock is run again, after a pause that doubles up to 50 ms, until the busy timeout
has passed, and only then is the error raised. Nothing else changes; other errors are raised at once.

One thread at a time uses a connection's cursors. Django hands the tests' in-memory connection to a live server's
request threads, so two requests can run on one SQLite connection at once. A statement that calls our Python SQL
function holds the connection's mutex and waits for the GIL, while another thread holds the GIL and waits for that
mutex (the sqlite3 module reads column names and values without letting the GIL go): both hang for good, and with
them the whole test process (a fresh-clone make test, 7 Dec 2026: two concurrent saves, the suite stopped at 98%).
So each connection has a lock, taken around every call of a cursor into SQLite (execute, executemany, fetches).
Waiting for it lets the GIL go. A connection that one thread uses, as every connection outside the tests, always
finds it free.

Each connection also has one SQL function of ours, json_sorted_union(a, b): the sorted union of two JSON arrays of
text, written as Django's JSONField writes a list (json.dumps), so a row an SQL statement wrote reads and exports
byte for byte as one the ORM wrote (a judgement's runs: assessments.services.judging._two_statements_sql).
"""

import json
import sqlite3
import threading
import time

from django.db.backends.sqlite3 import base

SQLITE_LOCKED_SHAREDCACHE = getattr(sqlite3, "SQLITE_LOCKED_SHAREDCACHE", 6 | (1 << 8))
lock_waits = 0  # statements that met a shared-cache table lock (tests/config/test_sqlite_backend.py)


def _shared_cache_lock(exc: sqlite3.OperationalError) -> bool:
    return getattr(exc, "sqlite_errorcode", None) == SQLITE_LOCKED_SHAREDCACHE


class WaitingCursor(base.SQLiteCursorWrapper):
    timeout = 5.0  # set from the connection's busy timeout
    one_at_a_time = threading.RLock()  # the connection's own lock, set by DatabaseWrapper.create_cursor

    def _waiting(self, run, *args):
        global lock_waits
        deadline, pause, waited = None, 0.001, False
        while True:
            try:
                with self.one_at_a_time:
                    return run(*args)
            except sqlite3.OperationalError as exc:
                if not _shared_cache_lock(exc):
                    raise
                now = time.monotonic()
                deadline = deadline or now + self.timeout
                if now >= deadline:
                    raise
                if not waited:
                    waited = True
                    lock_waits += 1
                time.sleep(min(pause, deadline - now))
                pause = min(pause * 2, 0.05)

    def execute(self, query, params=None):
        return self._waiting(super().execute, query, params)

    def executemany(self, query, param_list):
        param_list = list(param_list)  # run again, it must be read again
        return self._waiting(super().executemany, query, param_list)

    def fetchone(self):
        with self.one_at_a_time:
            return super().fetchone()

    def fetchmany(self, size=None):
        with self.one_at_a_time:
            return super().fetchmany(self.arraysize if size is None else size)

    def fetchall(self):
        with self.one_at_a_time:
            return super().fetchall()

    def __next__(self):
        with self.one_at_a_time:
            return super().__next__()


def json_sorted_union(a, b):
    """The sorted union of two JSON arrays of text (anything else counts as an empty one), as JSONField writes it."""
    items = set()
    for text in (a, b):
        try:
            value = json.loads(text) if text is not None else []
        except ValueError:
            value = []
        if isinstance(value, list):
            items.update(str(item) for item in value)
    return json.dumps(sorted(items))


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        connection = super().get_new_connection(conn_params)
        connection.create_function("json_sorted_union", 2, json_sorted_union, deterministic=True)
        self.one_at_a_time = threading.RLock()  # this connection's: see the module's docstring
        return connection

    def create_cursor(self, name=None):
        cursor = self.connection.cursor(factory=WaitingCursor)
        cursor.timeout = float(self.settings_dict.get("OPTIONS", {}).get("timeout", 5))
        cursor.one_at_a_time = self.one_at_a_time
        return cursor
