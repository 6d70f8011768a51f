"""Fault scenarios: PostgreSQL restarted, or web workers killed, while assessors are saving; every change must end
up stored exactly once and every judgement must hold its latest change.

    .venv/bin/python benchmarks/faults/pg_restart.py [--fault pg-restart|worker-kill] [--assessors 20]
        [--changes 60] [--down 4] [--kills 3] [--port 5440]

Runs a private PostgreSQL cluster (initdb into a temporary folder as the postgres user, its own port, so the
shared server is never touched), the production setup on it (gunicorn, 2 workers, DJANGO_DEBUG=0), and
N assessors (bench_load.py's HTTP client) that each send their changes through an outbox like the page's: a
change stays queued until the server answers 200, is retried after 503, 5xx or a dropped connection with the
same change_id, and one change in ten is sent twice on purpose (a retry whose answer was lost). Mid-run,
`pg-restart` stops the cluster (fast shutdown: connections cut), keeps it down for --down seconds, and starts it
again; `worker-kill` sends SIGKILL to a gunicorn worker --kills times, a second apart (the master starts a new
one; requests in flight on the killed worker are cut, perhaps after their transaction committed).

Prints what the clients saw while it was down (503s with the JSON retry message, other statuses, connection
errors) and checks the database afterwards: the changes stored equal the changes sent, none twice, none
missing, and every judgement's value is that of its latest change. Exit status 0 when that holds and no answer
was a 500.
"""

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import bench_load  # noqa: E402  (setup helpers: data, gunicorn, signing in)

PG_BIN = sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1] if Path("/usr/lib/postgresql").exists() else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assessors", type=int, default=20)
    parser.add_argument("--changes", type=int, default=60, help="Changes each assessor sends.")
    parser.add_argument("--down", type=float, default=4.0, help="Seconds the database stays down.")
    parser.add_argument("--port", type=int, default=5440, help="Port of the private PostgreSQL cluster.")
    parser.add_argument("--fault", choices=("pg-restart", "worker-kill"), default="pg-restart")
    parser.add_argument("--kills", type=int, default=3, help="worker-kill: how many workers are killed.")
    args = parser.parse_args(argv)
    if PG_BIN is None:
        raise SystemExit("needs PostgreSQL's server binaries under /usr/lib/postgresql/<version>/bin")

    folder = Path(tempfile.mkdtemp(prefix="pj-fault-pg-"))
    cluster = Cluster(folder / "data", args.port, folder)
    processes = []
    try:
        cluster.init()
        cluster.start()
        server = f"postgres://postgres@127.0.0.1:{args.port}"
        bench_load.recreate_database(server, "pj_fault")
        port = bench_load.free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_", "CACHE_"))}
        env.update(DJANGO_DEBUG="0", DJANGO_SECRET_KEY=uuid.uuid4().hex * 2, DJANGO_ALLOWED_HOSTS=bench_load.HOST,
                   LOGIN_THROTTLE_FAILURES="1000", PYTHONPATH=str(bench_load.ROOT),
                   DATABASE_URL=f"{server}/pj_fault", DJANGO_STATIC_ROOT=str(folder / "static"))
        people = bench_load.prepare(env, args.assessors)
        # Production mode serves the collected, hashed static files (the sign-in page is a 500 without them).
        bench_load.run([bench_load.PYTHON, "manage.py", "collectstatic", "--noinput", "-v", "0"], env)
        processes.append(bench_load.start(
            [str(bench_load.BIN / "gunicorn"), "config.wsgi", "-c", bench_load.GUNICORN_CONF,
             "-b", f"{bench_load.HOST}:{port}", "-w", "2", "--threads", "4", "--log-level", "warning", "--timeout", "60"],
            env, folder / "gunicorn.log"))
        bench_load.wait_for_port(port, processes[0], folder / "gunicorn.log")
        outcome = asyncio.run(scenario(f"http://{bench_load.HOST}:{port}", people, args, cluster, processes[0]))
        stored, stale = count_stored(env)
        return report(outcome, stored, stale, folder / "gunicorn.log")
    finally:
        for process in processes:
            bench_load.stop(process)
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


class Cluster:
    """A throwaway PostgreSQL cluster owned by the postgres user (initdb refuses to run as root)."""

    def __init__(self, data, port, folder):
        self.data, self.port, self.folder = data, port, folder

    def _as_postgres(self, *command):
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        return subprocess.run([*prefix, *command], capture_output=True, text=True, timeout=120)

    def init(self):
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres")
        result = self._as_postgres(str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth", "trust")
        if result.returncode:
            raise SystemExit(f"initdb failed: {result.stderr}")

    def pg_ctl(self, *args):
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1"
        return self._as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-o", options,
                                 "-l", str(self.folder / "postgres.log"), "-w", *args)

    def start(self):
        result = self.pg_ctl("start")
        if result.returncode:
            raise SystemExit(f"PostgreSQL did not start: {result.stderr}")

    def stop(self, mode="fast"):
        return self.pg_ctl("stop", "-m", mode)


async def scenario(base, people, args, cluster, master):
    """Every assessor sends its changes through an outbox while the fault happens."""
    assessors = [bench_load.Assessor(base, username, token) for username, token in people]
    setup = bench_load.Level(assessors=len(assessors))
    for a in assessors:
        await a.sign_in(setup)
        await a.open_page(setup)
    seen = Counter()
    sent = {}  # change_id → (assessor, body)
    phase = {"now": "before"}

    async def outbox(a):
        rng_pause = 0.03
        for n in range(args.changes):
            pid = a.passages[n % len(a.passages)]
            body = {
                "change_id": str(uuid.uuid4()), "layer": "notes", "passage": pid, "value": f"{a.username} #{n}",
                "client_time": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                "client_seq": n, "session_id": a.session_id,
            }
            sent[body["change_id"]] = (a.username, body)
            copies = 2 if n % 10 == 0 else 1  # an answer lost on the way: the page sends it again
            for _ in range(copies):
                while True:
                    status = await send(a, body)
                    seen[(phase["now"], status)] += 1
                    if status == 200:
                        break
                    await asyncio.sleep(0.5)
            await asyncio.sleep(rng_pause)

    async def fault():
        await asyncio.sleep(2.0)
        phase["now"] = "down"
        started = time.monotonic()
        if args.fault == "pg-restart":
            cluster.stop("fast")
            await asyncio.sleep(args.down)
            cluster.start()
        else:
            for _ in range(args.kills):
                workers = _children(master.pid)
                if workers:
                    os.kill(workers[0], signal.SIGKILL)
                    phase["killed"] = phase.get("killed", 0) + 1
                await asyncio.sleep(1.0)
        phase["now"] = "after"
        return time.monotonic() - started

    started = time.monotonic()
    results = await asyncio.gather(fault(), *(outbox(a) for a in assessors))
    elapsed = time.monotonic() - started
    for a in assessors:
        await a.close()
    return {"sent": sent, "seen": seen, "down_for": results[0], "elapsed": elapsed, "fault": args.fault,
            "killed": phase.get("killed", 0)}


def _children(pid) -> list[int]:
    """The processes whose parent is `pid` (gunicorn's workers), from /proc."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return sorted(found)


async def send(a, body):
    try:
        response = await a.post_json(f"/a/{a.token}/save", body)
    except (OSError, EOFError, TimeoutError, asyncio.IncompleteReadError, ValueError) as exc:
        return f"connection error ({type(exc).__name__})"
    if response.status_code == 503:
        payload = json.loads(response.content)
        return 503 if payload.get("retry") is True else "503 without the retry message"
    return response.status_code


COUNT = r"""
import json
from django.db.models import Count
from django.db.models import F
from assessments.models import Judgement, JudgementChange
rows = JudgementChange.objects.values_list("change_id", flat=True)
# A judgement whose value is not its latest change's: a half-written save.
stale = Judgement.objects.exclude(value=F("latest_change__value")).count()
stale += Judgement.objects.filter(latest_change__isnull=True).count()
print(json.dumps({"stored": [str(c) for c in rows], "stale": stale}))
"""


def count_stored(env):
    output = bench_load.run([bench_load.PYTHON, "manage.py", "shell", "-c", COUNT], env)
    found = json.loads(output.strip().splitlines()[-1])
    return found["stored"], found["stale"]


def report(outcome, stored, stale, log):
    sent, seen = outcome["sent"], outcome["seen"]
    what = ("database down" if outcome["fault"] == "pg-restart"
            else f"{outcome['killed']} gunicorn workers killed (SIGKILL)")
    print(f"{what} over {outcome['down_for']:.1f} s of a {outcome['elapsed']:.1f} s run; answers seen:")
    for (phase, status), count in sorted(seen.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        print(f"  {phase:<6} {status!s:<40} {count}")
    duplicates = len(stored) - len(set(stored))
    missing = set(sent) - set(stored)
    extra = set(stored) - set(sent)
    print(f"changes sent {len(sent)}, stored {len(stored)}, stored twice {duplicates}, missing {len(missing)}, "
          f"unknown {len(extra)}; judgements not holding their latest change {stale}")
    errors_500 = sum(count for (_, status), count in seen.items() if status == 500)
    ok = duplicates == 0 and not missing and not extra and len(stored) == len(sent) and errors_500 == 0 and not stale
    print("OK: every change stored exactly once" if ok else f"FAILED (500s: {errors_500})")
    if not ok:
        print(Path(log).read_text()[-4000:])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
