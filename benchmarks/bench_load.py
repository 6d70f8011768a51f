"""Load: many assessors judging at once against the production setup; saves/s and p50/p95/p99 of saves and pages.

    .venv/bin/python benchmarks/bench_load.py [--levels 10 50 200] [--seconds 20] [--warmup 2] [--rate SAVES_PER_S]
        [--workers N] [--threads N] [--fill 100000]
        [--pg postgres://postgres@127.0.0.1:5432] [--database pj_load] [--redis redis://127.0.0.1:6379/12]

Starts everything itself, on loopback only: a fresh PostgreSQL database (dropped and made again), the CAR Y3
sample outlines and runs through the import commands, one 20-passage article per assignment, as many
assessors as the largest level (each with a password, signed in through the real sign-in page), gunicorn
in production mode (DJANGO_DEBUG=0, several workers, behind an assumed HTTPS proxy: X-Forwarded-Proto), a
Celery worker on Redis, and the shared cache for sessions' throttling on Redis.

Each level runs N simulated assessors (one kept-alive HTTP/1.1 connection each, a minimal client) for --seconds: each opens its
assignment page, then judges it top to bottom at a human-but-busy pace (a pause of 20-80 ms between changes)
with bursts (every fifth passage, five notes saves back to back, like typing), reopening the page after
each pass. Bounded: no level sends more than --max-requests requests, and every request times out after 10 s.
Each level first runs --warmup seconds (2) that are not counted: all its assessors open their page at once, and
every server thread compiles its first statements; errors in them still count.

With --rate, open loop instead: the assessors together send that many saves a second (Poisson), whatever the
server's pace, and a save's latency counts from when it was due. That is the way to read "p99 at 400 saves/s":
in the closed loop the rate is the server's answer, not a setting, and at 50 assessors whose pauses average
33 ms a save, 400 saves/s means 50 / 400 - 0.033 = 92 ms a save on average (Little's law), whatever the server.

Prints per level: saves/s, page loads/s, p50/p95/p99 latency of saves and page loads, errors, and the CPU of
gunicorn and of the database's backends. With --server-timing the server also says in each answer how long its
queries took (the Server-Timing header; it wraps every query, about 5% of gunicorn's CPU, so it is off by
default: what is measured is what production runs), and the database's share of the server's time is printed. The anchor (issue 8): Label Studio 1.23.2 on this 2-core machine with PostgreSQL saved 17-21
annotations/s; the ratio to 19/s is printed. Aim: 400 saves/s at 50 assessors with p99 < 100 ms, 200 held
without errors, the page of a 20-passage article at p95 < 150 ms. Not part of the test suite (a smoke run is:
tests/reliability/test_load_benchmark.py, `--smoke`).
"""

import argparse
import asyncio
import json
import os
import random
import runpy
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import urllib.parse
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
BIN = Path(PYTHON).parent
HOST = "127.0.0.1"
ANCHOR_SAVES_PER_S = (17, 21)  # Label Studio 1.23.2, same machine (issue 8)
ARTICLE_LENGTH = 20
PASSWORD = "bench-" + secrets.token_hex(8)
GUNICORN_CONF = str(ROOT / "deploy" / "gunicorn.conf.py")  # production's gunicorn settings (deploy/run-production.sh)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[10, 50, 200], help="Concurrent assessors.")
    parser.add_argument("--seconds", type=float, default=20.0, help="Length of each level.")
    parser.add_argument("--max-requests", type=int, default=200_000, help="Requests per level at most.")
    parser.add_argument("--workers", type=int, default=None,
                        help="gunicorn worker processes (production's: deploy/gunicorn.conf.py, two per CPU).")
    parser.add_argument("--threads", type=int, default=None,
                        help="Threads per gunicorn worker (production's: deploy/gunicorn.conf.py, 2).")
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432", help="PostgreSQL server (no database).")
    parser.add_argument("--database", default="pj_load", help="Database to create (dropped first).")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/12", help="Redis for Celery and the cache.")
    parser.add_argument("--pg-setting", action="append", default=[], metavar="NAME=VALUE",
                        help="ALTER DATABASE … SET for the benchmark's database only (a diagnostic, e.g. "
                             "synchronous_commit=off to see what commits' fsync cost).")
    parser.add_argument("--no-celery", action="store_true", help="Do not start a Celery worker.")
    parser.add_argument("--fill", type=int, default=0, metavar="JUDGEMENTS",
                        help="First fill the database with this many judgements of other rounds (benchmarks/scale.py).")
    parser.add_argument("--pause-ms", type=float, nargs=2, default=(20, 80), help="Pause between changes, min max.")
    parser.add_argument("--rate", type=float, default=None, metavar="SAVES_PER_S",
                        help="Open loop: the level's assessors together send this many saves a second (each a Poisson "
                             "process), whatever the server's pace; a save's latency counts from when it was due, so "
                             "a server that falls behind is not hidden (no coordinated omission). Without it, closed "
                             "loop: each assessor pauses --pause-ms after an answer, and the server's pace sets the rate.")
    parser.add_argument("--warmup", type=float, default=2.0, metavar="SECONDS",
                        help="Run each level this long first without counting it (pages opened all at once, each "
                             "server thread's first statements compiled); then --seconds are counted.")
    parser.add_argument("--server-timing", action="store_true",
                        help="Turn on the Server-Timing header (each answer's query time; costs the server CPU) and "
                             "print the database's share of the server's time and the view's own latency.")
    parser.add_argument("--smoke", action="store_true",
                        help="A tiny run for the test suite: SQLite in a temporary folder, 1 worker, no Celery.")
    args = parser.parse_args(argv)
    production = runpy.run_path(GUNICORN_CONF)  # what deploy/run-production.sh would start with
    args.workers = args.workers or production["workers"]
    args.threads = args.threads or production["threads"]

    workdir = Path(tempfile.mkdtemp(prefix="bench-load-"))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_", "CACHE_"))}
    env.update(
        DJANGO_DEBUG="0", DJANGO_SECRET_KEY=secrets.token_urlsafe(50), DJANGO_ALLOWED_HOSTS=HOST,
        DJANGO_SERVER_TIMING="1" if args.server_timing else "0", LOGIN_THROTTLE_FAILURES="1000", PYTHONPATH=str(ROOT),
        DJANGO_STATIC_ROOT=str(workdir / "static"),
    )
    if args.smoke:
        env["DATABASE_URL"] = f"sqlite:///{workdir / 'load.sqlite3'}"
        args.no_celery, args.workers, args.threads = True, 1, 1
    else:
        recreate_database(args.pg, args.database, args.pg_setting)
        env.update(DATABASE_URL=f"{args.pg}/{args.database}", CELERY_BROKER_URL=args.redis, CACHE_URL=args.redis)
    processes = []
    try:
        started = time.perf_counter()
        tokens = prepare(env, max(args.levels))
        print(f"data: {len(tokens)} assessors with a {ARTICLE_LENGTH}-passage article each "
              f"({time.perf_counter() - started:.1f} s)", flush=True)
        if args.fill and not args.smoke:  # a full database: history of other rounds (benchmarks/scale.py)
            output = run([PYTHON, str(ROOT / "benchmarks" / "scale.py"), "--fill-only", "--sizes", str(args.fill),
                          "--pg", args.pg, "--database", args.database, "--redis", args.redis], env)
            print(f"data: {output.strip().splitlines()[-1]} (benchmarks/scale.py rounds)", flush=True)
        # Production mode serves the collected, hashed static files (WhiteNoise), as deploy/run-production.sh does.
        subprocess.run([str(BIN / "python"), str(ROOT / "manage.py"), "collectstatic", "--noinput", "-v", "0"],
                       env=env, check=True, cwd=ROOT)
        processes.append(start([str(BIN / "gunicorn"), "config.wsgi", "-c", GUNICORN_CONF, "-b", f"{HOST}:{port}",
                                "-w", str(args.workers), "--threads", str(args.threads), "--backlog", "2048",
                                *(["--access-logfile", "-"] if os.environ.get("BENCH_ACCESS_LOG") else []),
                                "--log-level", "warning"], env, workdir / "gunicorn.log"))
        if not args.no_celery:
            processes.append(start([str(BIN / "celery"), "-A", "config", "worker", "-Q", "default", "-c", "1",
                                    "-n", f"bench{port}@%h", "--loglevel", "WARNING"], env, workdir / "celery.log"))
        wait_for_port(port, processes[0], workdir / "gunicorn.log")
        where = "SQLite (smoke)" if args.smoke else f"PostgreSQL database {args.database}"
        print(f"server: gunicorn {args.workers} workers x {args.threads} threads on {HOST}:{port}, {where}"
              + ("" if args.no_celery else ", a Celery worker on Redis"), flush=True)
        measure = None if args.smoke else (lambda: cpu_seconds(args.database, processes[0].pid))
        results = asyncio.run(run_levels(f"http://{HOST}:{port}", tokens, args, measure))
        report(results, args)
        return 0 if all(r.errors == 0 for r in results) else 1
    finally:
        for process in processes:
            stop(process)
        if not args.smoke and not os.environ.get("BENCH_KEEP_DATABASE"):
            drop_database(args.pg, args.database)


# Setup ------------------------------------------------------------------------------------------------------------


def recreate_database(server, name, pg_settings=()):
    import psycopg
    from psycopg import sql

    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        for setting in pg_settings:
            key, _, value = setting.partition("=")
            conn.execute(sql.SQL("ALTER DATABASE {} SET {} = {}").format(
                sql.Identifier(name), sql.Identifier(key), sql.Literal(value)))


def drop_database(server, name):
    import psycopg
    from psycopg import sql

    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


SETUP = r"""
import json, sys
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db.models import Count
from annotation.models import Assignment
from annotation.roles import Role
from assessments.models import RunEntry

n, length, password = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
data = "data/car-y3/"
call_command("import_car_outlines", data + "tqa-heading-cast-and-more-6.json", "--no-progress", verbosity=0)
import glob
call_command("import_car_run", *sorted(glob.glob(data + "runs/*.json")), "--create-topics", "--no-progress", verbosity=0)
from assessments.models import Run
# The sample's articles have 30-48 paragraphs: each becomes a run of its first `length` paragraphs.
articles = []
longer = RunEntry.objects.values("topic_id", "run_id").annotate(n=Count("id")).filter(n__gte=length)
for i, (topic_id, run_id) in enumerate(longer.order_by("topic_id", "run_id").values_list("topic_id", "run_id")):
    source = Run.objects.get(pk=run_id)
    run = Run.objects.create(collection=source.collection, name=f"load-{i}")
    RunEntry.objects.bulk_create(
        RunEntry(run=run, topic_id=topic_id, passage_id=e.passage_id, rank=e.rank, score=e.score)
        for e in RunEntry.objects.filter(run_id=run_id, topic_id=topic_id).order_by("rank")[:length]
    )
    articles.append((topic_id, run.pk))
assert articles, f"no article of {length} paragraphs or more in the CAR sample runs"
User = get_user_model()
hashed = make_password(password)
users = User.objects.bulk_create(User(username=f"load{i:04d}", password=hashed) for i in range(n))
Group.objects.get(name=Role.ASSESSOR).user_set.add(*users)
import secrets
done = Assignment.objects.bulk_create(
    Assignment(assessor=u, topic_id=articles[i % len(articles)][0], run_id=articles[i % len(articles)][1],
               token=secrets.token_hex(16), seed=secrets.randbits(62), kind=Assignment.Kind.OUTLINE)
    for i, u in enumerate(users)
)
print(json.dumps({"articles": len(articles), "people": [[a.assessor.username, a.token] for a in done]}))
"""


def prepare(env, assessors):
    """Migrate, import the CAR sample, create the assessors and their assignments; [(username, token)]."""
    run([PYTHON, "manage.py", "migrate", "-v", "0"], env)
    output = run([PYTHON, "manage.py", "shell", "-c", SETUP.replace("sys.argv[1]", str(assessors))
                  .replace("sys.argv[2]", str(ARTICLE_LENGTH)).replace("sys.argv[3]", repr(PASSWORD))], env)
    made = json.loads(output.strip().splitlines()[-1])
    return [tuple(p) for p in made["people"]]


def run(command, env):
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command[:3])} failed:\n{result.stderr[-3000:]}")
    return result.stdout


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def start(command, env, log):
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def stop(process):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def wait_for_port(port, process, log, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"gunicorn exited:\n{Path(log).read_text()[-3000:]}")
        with socket.socket() as s:
            if s.connect_ex((HOST, port)) == 0:
                return
        time.sleep(0.2)
    raise SystemExit(f"gunicorn did not listen on {port} within {timeout} s")


def cpu_seconds(database, server_pid):
    """{pid: (kind, CPU seconds so far)} of PostgreSQL's backends of `database` and of the gunicorn processes."""
    tick = os.sysconf("SC_CLK_TCK")
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
        if cmdline.startswith("postgres: ") and f" {database} " in cmdline:
            found[int(entry.name)] = ("postgres", used)
        elif int(fields[1]) == server_pid or int(entry.name) == server_pid:  # the master and its workers
            found[int(entry.name)] = ("gunicorn", used)
    return found


def cpu_used(before, after):
    """CPU seconds per kind between two cpu_seconds snapshots (a process that ended in between is not counted)."""
    totals = {"postgres": 0.0, "gunicorn": 0.0}
    for pid, (kind, used) in after.items():
        earlier = before.get(pid)
        totals[kind] += used - (earlier[1] if earlier and earlier[0] == kind else 0.0)
    return totals


# Load -------------------------------------------------------------------------------------------------------------


@dataclass
class Level:
    """What one level measured."""

    assessors: int
    seconds: float = 0.0
    latencies: dict = field(default_factory=lambda: defaultdict(list))  # kind → [seconds]
    db_ms: float = 0.0
    app_ms: float = 0.0
    save_db_ms: list = field(default_factory=list)
    save_app_ms: list = field(default_factory=list)
    page_app_ms: list = field(default_factory=list)
    errors: int = 0
    error_kinds: dict = field(default_factory=lambda: defaultdict(int))
    requests: int = 0
    client_cpu: float = 0.0
    load: float = 0.0
    server_cpu: dict = field(default_factory=dict)
    offered: float | None = None  # open loop: saves/s asked for (--rate)
    counted_from: float = 0.0  # perf_counter: requests sent (or due) before it are not counted (--warmup)


class Connection:
    """HTTP/1.1 over one kept-alive loopback connection, as little client CPU as it can be: the load generator shares
    the server's two cores, and each millisecond it spends is one the server does not get (httpx spent about 1.7 ms
    a request here). Reconnects when the server closes the connection."""

    def __init__(self, host, port):
        self.host, self.port = host, port
        self.reader = self.writer = None

    async def request(self, method, path, headers, body=b""):
        for attempt in (0, 1):
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
            head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{headers}"
            if body or method == "POST":
                head += f"Content-Length: {len(body)}\r\n"
            try:
                self.writer.write(head.encode("latin-1") + b"\r\n" + body)
                return await self._response()
            except (ConnectionError, asyncio.IncompleteReadError):
                await self.close()
                if attempt:  # a fresh connection failed too
                    raise
        raise AssertionError("unreachable")

    async def _response(self):
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers, cookies = {}, {}
        for line in lines[1:]:
            if not line:
                continue
            name, _, value = line.partition(":")
            name, value = name.lower(), value.strip()
            if name == "set-cookie":
                cookie, _, _ = value.partition(";")
                key, _, val = cookie.partition("=")
                cookies[key.strip()] = val.strip()
            else:
                headers[name] = value
        if "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while size := int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16):
                parts.append(await self.reader.readexactly(size + 2))
            await self.reader.readuntil(b"\r\n")
            body = b"".join(p[:-2] for p in parts)
        else:
            body = await self.reader.read()
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return Response(status, headers, cookies, body)

    async def close(self):
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except (ConnectionError, OSError):
                pass
        self.reader = self.writer = None


@dataclass
class Response:
    status_code: int
    headers: dict
    cookies: dict
    content: bytes

    @property
    def text(self):
        return self.content.decode("utf-8", "replace")


class Assessor:
    """One simulated assessor: a signed-in session (cookies sent by hand: they are HTTPS-only) and an article."""

    def __init__(self, base, username, token):
        self.username, self.token, self.base = username, token, base
        host, port = base.split("://", 1)[1].split(":")
        self.connection = Connection(host, int(port))
        self.origin = "https://" + base.split("://", 1)[1]
        self.fixed = f"X-Forwarded-Proto: https\r\nOrigin: {self.origin}\r\nReferer: {self.origin}/\r\n"
        self.headers = self.fixed
        self.cookies = {}
        self.passages, self.facets = [], []
        self.session_id = str(uuid.uuid4())
        self.seq = 0

    def _remember(self, response):
        if response.cookies:
            self.cookies.update(response.cookies)
            cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            self.headers = f"{self.fixed}Cookie: {cookie}\r\n"

    async def sign_in(self, level):
        response = await self.timed(level, "sign-in page", "GET", "/accounts/login/")
        if "csrftoken" not in self.cookies:
            raise RuntimeError(f"{self.username}: the sign-in page answered {response.status_code} without a CSRF cookie: "
                               f"{response.text[:300]!r}")
        form = urllib.parse.urlencode({
            "username": self.username, "password": PASSWORD, "csrfmiddlewaretoken": self.cookies["csrftoken"],
        }).encode()
        response = await self.timed(level, "sign-in", "POST", "/accounts/login/", form,
                                    "Content-Type: application/x-www-form-urlencoded\r\n")
        if response.status_code != 302 or "sessionid" not in self.cookies:
            raise RuntimeError(f"{self.username} could not sign in: {response.status_code}")

    async def open_page(self, level):
        response = await self.timed(level, "page", "GET", f"/a/{self.token}/")
        if response.status_code == 200 and not self.passages:
            html = response.text
            start = html.index('<script id="outline-data" type="application/json">')
            start = html.index(">", start) + 1
            state = json.loads(html[start:html.index("</script>", start)])
            self.passages = [p["id"] for p in state["passages"]]
            self.facets = [f["id"] for f in state["facets"]]

    async def save(self, level, layer, passage, value, passage2=None, due=None):
        self.seq += 1
        body = {
            "change_id": str(uuid.uuid4()), "layer": layer, "passage": passage, "value": value,
            "client_time": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "client_seq": self.seq, "session_id": self.session_id,
        }
        if passage2 is not None:
            body["passage2"] = passage2
        await self.timed(level, "save", "POST", f"/a/{self.token}/save", json.dumps(body).encode(), self.json_headers(),
                         due)

    def json_headers(self):
        return f"Content-Type: application/json\r\nX-CSRFToken: {self.cookies['csrftoken']}\r\n"

    async def post_json(self, url, body):
        """POST `body` as JSON (the page's script does so); the Response. Raises on a dropped connection or after
        10 s, and starts the next request on a fresh connection."""
        try:
            async with asyncio.timeout(10.0):
                return await self.connection.request("POST", url, self.headers + self.json_headers(),
                                                     json.dumps(body).encode())
        except BaseException:
            await self.connection.close()
            raise

    async def timed(self, level, kind, method, url, body=b"", headers="", due=None):
        level.requests += 1
        sent = time.perf_counter()
        start = sent if due is None else due  # open loop: from when it was due, not when it left
        try:
            async with asyncio.timeout(10.0):
                response = await self.connection.request(method, url, self.headers + headers, body)
        except Exception as exc:  # a timeout or a dropped connection counts as an error of this kind
            await self.connection.close()  # mid-answer: the next request starts on a fresh connection
            level.errors += 1
            level.error_kinds[f"{kind}: {type(exc).__name__}"] += 1
            return _Failed()
        elapsed = time.perf_counter() - start
        self._remember(response)
        ok = response.status_code in (200, 302)
        if not ok:
            level.errors += 1
            level.error_kinds[f"{kind}: HTTP {response.status_code}"] += 1
        elif start >= level.counted_from:  # errors count during the warm-up too; latencies do not
            level.latencies[kind].append(elapsed)
            if due is not None:  # open loop: also the answer's time alone (how late it left is the rest)
                level.latencies[f"{kind} from sending"].append(time.perf_counter() - sent)
            timing = _server_timing(response.headers.get("server-timing", ""))
            if not timing:  # without --server-timing the server says nothing
                return response
            level.db_ms += timing.get("db", 0.0)
            level.app_ms += timing.get("app", 0.0)
            if kind == "save":
                level.save_db_ms.append(timing.get("db", 0.0))
                level.save_app_ms.append(timing.get("app", 0.0))
            elif kind == "page":
                level.page_app_ms.append(timing.get("app", 0.0))
        return response

    async def judge(self, level, deadline, budget, pause, rate=None):
        """Open the page, judge the article top to bottom (with bursts of notes), again, until the deadline.

        Closed loop (`rate` None): a pause after each answer, as `pause` says. Open loop: this assessor's saves are
        due as a Poisson process of `rate` a second, each sent when due or, if the one before is still waiting for
        its answer, right after it (the page sends its changes in order)."""
        rng = random.Random(self.username)
        if rate is not None:
            await asyncio.sleep(rng.uniform(0, 1 / rate))  # the assessors do not all start at once
            due = time.perf_counter()

            async def save(*change, passage2=None):
                nonlocal due
                delay = due - time.perf_counter()
                if time.monotonic() + delay >= deadline:  # due after the level's end: not sent, and the assessor
                    await asyncio.sleep(max(0.0, deadline - time.monotonic()))  # waits for the end (no new page)
                    return
                if delay > 0:
                    await asyncio.sleep(delay)
                await self.save(level, *change, passage2=passage2, due=due)
                due += rng.expovariate(rate)

            await self.judge_changes(level, deadline, budget, rng, save, lambda: asyncio.sleep(0))
            return

        async def save(*change, passage2=None):
            await self.save(level, *change, passage2=passage2)

        await self.judge_changes(level, deadline, budget, rng, save, lambda: asyncio.sleep(rng.uniform(*pause) / 1000))

    async def judge_changes(self, level, deadline, budget, rng, save, think):
        """The article's changes, top to bottom, again and again: `save(layer, passage, value)` sends one, `think()`
        is the pause after a facet or a transition (none inside a burst of notes). The first pass starts at a
        passage drawn at random: on a real site the assessors are spread over their articles, and when all started
        at the top their passes ended together and every page load came in one burst (at 250 saves/s offered, the
        slowest 15 page loads of a run fell within 0.3 s)."""
        start = None
        while time.monotonic() < deadline and level.requests < budget:
            await self.open_page(level)
            if not self.passages:
                return
            start = rng.randrange(len(self.passages)) if start is None else 0
            for i, pid in enumerate(self.passages):
                if i < start:
                    continue
                if time.monotonic() >= deadline or level.requests >= budget:
                    return
                facet = rng.choice(self.facets)
                await save("facet", pid, [{"facet": facet, "relevance": rng.choice(["must", "should", "can"])}])
                await think()
                if i % 5 == 0:  # a burst: notes typed and saved as they are typed
                    for n in range(1, 6):
                        await save("notes", pid, f"note {'x' * n}")
                if i + 1 < len(self.passages):
                    await save("transition", pid, rng.choice(["same", "coherent", "switch"]),
                               passage2=self.passages[i + 1])
                    await think()

    async def close(self):
        await self.connection.close()


class _Failed:
    status_code = 0
    cookies = {}
    text = ""


def _server_timing(header):
    out = {}
    for part in header.split(","):
        name, _, rest = part.strip().partition(";")
        for param in rest.split(";"):
            key, _, value = param.partition("=")
            if key.strip() == "dur":
                out[name] = float(value)
    return out


async def run_levels(base, people, args, measure=None):
    assert base.startswith(f"http://{HOST}:"), "loopback only"
    setup = Level(assessors=len(people))
    assessors = [Assessor(base, username, token) for username, token in people]
    started = time.perf_counter()
    limit = asyncio.Semaphore(8)  # password hashing is deliberately slow: do not queue 200 at once

    async def sign_in(a):
        async with limit:
            await a.sign_in(setup)

    await asyncio.gather(*(sign_in(a) for a in assessors))
    print(f"signed in {len(assessors)} assessors in {time.perf_counter() - started:.1f} s "
          f"(sign-in p50 {pct(setup.latencies['sign-in'], 50) * 1000:.0f} ms; password hashing)", flush=True)
    results = []
    try:
        for n in args.levels:
            level = Level(assessors=n, offered=args.rate)
            # The first --warmup seconds run but are not counted: every assessor opens the page at once, and each
            # server thread's first statements are compiled (at 200 saves/s, all saves over 100 ms fell there).
            level.counted_from = time.perf_counter() + args.warmup
            deadline = time.monotonic() + args.warmup + args.seconds
            marks = {}

            async def warmed():
                await asyncio.sleep(args.warmup)
                marks.update(cpu=time.process_time(), server=measure() if measure else None)

            warm = asyncio.create_task(warmed())
            each = args.rate / n if args.rate else None  # open loop: each assessor's share of the rate
            await asyncio.gather(*(a.judge(level, deadline, args.max_requests, args.pause_ms, each)
                                   for a in assessors[:n]))
            await warm
            level.seconds = time.perf_counter() - level.counted_from
            level.client_cpu = time.process_time() - marks["cpu"]
            level.load = os.getloadavg()[0]
            if measure:
                level.server_cpu = cpu_used(marks["server"], measure())
            results.append(level)
            print_level(level)
    finally:
        await asyncio.gather(*(a.close() for a in assessors))
    return results


def pct(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def print_level(level):
    saves, pages = level.latencies["save"], level.latencies["page"]
    rate = len(saves) / level.seconds
    share = level.db_ms / level.app_ms if level.app_ms else float("nan")
    line = (
        (f"{level.assessors:>4} assessors, open loop at {level.offered:.0f} saves/s offered (latency from when each "
         f"was due):\n      " if level.offered else "")
        + f"{level.assessors:>4} assessors: {rate:7.1f} saves/s ({rate / statistics.mean(ANCHOR_SAVES_PER_S):5.1f}x the "
        f"anchor's 19/s), save p50/p95/p99 {pct(saves, 50) * 1000:6.1f} / {pct(saves, 95) * 1000:6.1f} / "
        f"{pct(saves, 99) * 1000:6.1f} ms; {len(pages) / level.seconds:5.1f} pages/s, page p50/p95/p99 "
        f"{pct(pages, 50) * 1000:6.1f} / {pct(pages, 95) * 1000:6.1f} / {pct(pages, 99) * 1000:6.1f} ms; "
        + (f"database {share:4.0%} of server time; " if level.app_ms else "") + f"errors {level.errors}"
    )
    line += (f"\n      the load generator itself used {level.client_cpu / level.seconds:.0%} of a core; "
             f"load average {level.load:.1f} on {os.cpu_count()} cores")
    if level.server_cpu:
        pg, web = level.server_cpu["postgres"], level.server_cpu["gunicorn"]
        line += (f"\n      CPU: gunicorn {web / level.seconds:.0%} of a core, PostgreSQL (this database's backends) "
                 f"{pg / level.seconds:.0%}: the database's share of the server's CPU {pg / (pg + web):.0%}; "
                 f"{1000 * web / max(1, len(level.latencies['save'])):.1f} ms of gunicorn CPU per save")
    if level.save_app_ms:
        line += (f"\n      a save inside the server (the view, from its Server-Timing): p50/p99 "
                 f"{pct(level.save_app_ms, 50):.1f} / {pct(level.save_app_ms, 99):.1f} ms, of which database "
                 f"{pct(level.save_db_ms, 50):.1f} / {pct(level.save_db_ms, 99):.1f} ms")
    sending = level.latencies.get("save from sending")
    if sending:
        line += (f"\n      a save from sending to its answer (not from when it was due): p50/p95/p99 "
                 f"{pct(sending, 50) * 1000:.1f} / {pct(sending, 95) * 1000:.1f} / {pct(sending, 99) * 1000:.1f} ms")
    if level.page_app_ms:
        line += (f"\n      a page inside the server: p50/p99 {pct(level.page_app_ms, 50):.1f} / "
                 f"{pct(level.page_app_ms, 99):.1f} ms")
    print(line, flush=True)
    for kind, count in sorted(level.error_kinds.items()):
        print(f"      {count} x {kind}")


def report(results, args):
    print("\nsummary (aim: 400 saves/s at 50 assessors with save p99 < 100 ms; 200 without errors; page p95 < 150 ms)")
    for level in results:
        saves, pages = level.latencies["save"], level.latencies["page"]
        rate = len(saves) / level.seconds
        low, high = ANCHOR_SAVES_PER_S
        offered = f" (open loop, {level.offered:.0f}/s offered)" if level.offered else ""
        print(f"  {level.assessors:>4}{offered}: {len(saves):>6} saves in {level.seconds:.1f} s = {rate:.1f}/s "
              f"({rate / high:.1f}-{rate / low:.1f}x Label Studio's {low}-{high}/s); "
              f"save p99 {pct(saves, 99) * 1000:.1f} ms; "
              + (f"page p95 {pct(pages, 95) * 1000:.1f} ms; " if pages else "no page opened after the warm-up; ")
              + f"errors {level.errors}")


if __name__ == "__main__":
    sys.exit(main())
