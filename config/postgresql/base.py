"""Django's PostgreSQL backend (psycopg 3) with a health check that costs no round trip.

With CONN_HEALTH_CHECKS, Django checks a kept connection before a request's first statement, and its check is a
`SELECT 1`: one more round trip to PostgreSQL in every request. A save was five statements, so that was a sixth:
`benchmarks/bench_save_cpu.py --server --saves 100 --pages 10 --rounds 40`, 26 Nov 2026: 0.944 of the CPU a save
costs the machine (web process, PostgreSQL, Redis) without the round trip, 0.959 of a page load's.

What the check must catch is a connection the server has ended: PostgreSQL restarted, or an administrator
terminated the backend. Either way the server sends its last message and closes the socket, so an idle
connection's socket becomes readable; a healthy idle one has nothing to read. So: a connection psycopg knows is
closed or broken is unusable; one whose socket has nothing to read is usable; one with something to read (the
server's goodbye, or a harmless notice) gets Django's `SELECT 1`, which decides. (poll, not select: a process
with more than 1024 files open still gets an answer.)
"""

import select

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self):
        connection = self.connection
        if connection is None or connection.closed or connection.broken:
            return False
        try:
            poller = select.poll()
            poller.register(connection.fileno(), select.POLLIN)
            events = poller.poll(0)
        except (OSError, ValueError):  # the socket is gone
            return False
        return not events or super().is_usable()
