"""Django's PostgreSQL backend (psycopg 3) with a health check that costs no round trip.

With CONN_HEALTH_CHECKS, Django checks a kept connection before a request's first statement, and its check is a
`SELECT 1`: one more round trip to PostgreSQL in every request. A save is five statements, so that was a sixth:
`benchmarks/bench_save_cpu.py --server` (through gunicorn, one worker), 26 Nov 2026: 3.21 ms of CPU a save in all
(web process, PostgreSQL, Redis) without the round trip against 3.43 ms with it.

What the check must catch is a connection the server has ended: PostgreSQL restarted, or an administrator
terminated the backend. Either way the server sends its last message and closes the socket, so an idle
connection's socket becomes readable; a healthy idle one has nothing to read. So: a connection psycopg knows is
closed or broken is unusable; one whose socket has nothing to read is usable; one with something to read (the
server's goodbye, or a harmless notice) gets Django's `SELECT 1`, which decides.
"""

import select

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self):
        connection = self.connection
        if connection is None or connection.closed or connection.broken:
            return False
        try:
            readable, _, _ = select.select([connection.fileno()], [], [], 0)
        except (OSError, ValueError):  # the socket is gone
            return False
        return not readable or super().is_usable()
