"""Server CPU per save: the save endpoint's cost in the web process, this tree against a baseline commit, same run.

    .venv/bin/python benchmarks/bench_save_cpu.py [--saves 400] [--baseline 16a309c] [--server] [--rounds 1]
        [--pg postgres://postgres@127.0.0.1:5432] [--redis redis://127.0.0.1:6379/11] [--sqlite]

For each tree (this one, and the baseline commit checked out into a temporary git worktree), a child process
makes a fresh PostgreSQL database, a 20-passage article and its assessor, signs in (Django's test client, the real
middleware, production settings: DEBUG off, sessions and caches on Redis) and posts --saves facet changes to the
save endpoint one after the other. Prints per tree: the web process's CPU per save (time.process_time: Python,
Django, the driver; not PostgreSQL's own CPU), the server's share of it (the request handler alone: middleware,
view, driver; without the test client building the request and reading the answer), the PostgreSQL backend's
own CPU per save (/proc of the backend serving the connection: the server is on this machine), wall time per save, SQL statements per save, and the ratio of this
tree to the baseline. A load generator on a busy machine mostly measures the machine; CPU per save does not move
with the load average as much. Not part of the test suite.

`--server` sends saves and page loads through gunicorn instead: each tree's own gunicorn (production's
deploy/gunicorn.conf.py, one worker), both running at once on databases of their own, one request after another
over a kept-alive connection. Blocks of --saves saves and --pages page loads go to one tree, then the other, in
alternating order, --rounds times, counting the CPU time of every thread (/proc/…/schedstat, nanoseconds) of the
gunicorn worker, its PostgreSQL backends and Redis: what a request costs the machine, where the test client skips
the server, the database health check and the connection handling. Prints the median block and the median of the
blocks' ratios. On this machine one block's CPU per save moves by a quarter from one block to the next, so use many
short blocks: `--server --saves 100 --pages 10 --rounds 40` gave 1.009 for a tree against itself (26 Nov 2026).

`--sqlite` puts each tree's database in a SQLite file instead (the demo's database; its CPU is the web process's
own, so the PostgreSQL column reads 0), sessions and caches still on Redis.
"""

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--saves", type=int, default=400)
    parser.add_argument("--pages", type=int, default=50, help="Loads of the judging page measured after the saves.")
    parser.add_argument("--baseline", default="16a309c", help="Commit to compare with (before issue 19).")
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/11")
    parser.add_argument("--server", action="store_true",
                        help="Send the saves and page loads through each tree's own gunicorn (production's "
                             "deploy/gunicorn.conf.py, one worker), both at once, in alternating blocks, and count the "
                             "CPU of the worker, its PostgreSQL backends and Redis: what a request costs the machine "
                             "(the test client skips the server, the health check and the connection handling).")
    parser.add_argument("--rounds", type=int, default=1,
                        help="How many times each tree is measured, alternating (baseline, this tree, this tree, "
                             "baseline, …): the median is printed. With --server, blocks of --saves and --pages; use "
                             "many short ones (--saves 100 --pages 10 --rounds 40).")
    parser.add_argument("--sqlite", action="store_true", help="A SQLite file database instead of PostgreSQL.")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    trees = {}
    with tempfile.TemporaryDirectory(prefix="save-cpu-") as tmp:
        baseline = Path(tmp) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(baseline), args.baseline], cwd=ROOT, check=True)
        try:
            if args.server:
                return _compare_servers(args, (("baseline " + args.baseline, baseline), ("this tree", ROOT)))
            for _ in range(args.rounds):  # alternating, so that a machine growing busier shows in both
                for name, tree in (("baseline " + args.baseline, baseline), ("this tree", ROOT)):
                    out = subprocess.run(
                        [sys.executable, str(ROOT / "benchmarks" / "bench_save_cpu.py"), "--child", str(tree),
                         "--saves", str(args.saves), "--pages", str(args.pages), "--pg", args.pg, "--redis", args.redis,
                         *(["--sqlite"] if args.sqlite else [])],
                        capture_output=True, text=True, check=False)
                    if out.returncode != 0:
                        raise SystemExit(f"{name} failed:\n{out.stderr[-3000:]}")
                    trees.setdefault(name, []).append(json.loads(out.stdout.strip().splitlines()[-1]))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(baseline)], cwd=ROOT, check=False)
    results = {name: _median_round(rounds) for name, rounds in trees.items()}
    base = next(iter(results.values()))
    print(f"{'':22} {'CPU ms/save':>12} {'server CPU ms':>14} {'PostgreSQL CPU ms':>18} {'wall ms/save':>13} "
          f"{'statements':>11} {'CPU × baseline':>15} {'server × baseline':>18} {'PostgreSQL × baseline':>22}")
    for name, r in results.items():
        print(f"{name:22} {r['cpu_ms']:12.2f} {r['handler_cpu_ms']:14.2f} {r['db_cpu_ms']:18.2f} {r['wall_ms']:13.2f} "
              f"{r['statements']:11.1f} {r['cpu_ms'] / base['cpu_ms']:15.2f} "
              f"{r['handler_cpu_ms'] / base['handler_cpu_ms']:18.2f} {r['db_cpu_ms'] / max(base['db_cpu_ms'], 1e-9):22.2f}")
    print(f"\njudging page of the 20-passage article ({args.pages} loads after the saves):")
    for name, r in results.items():
        print(f"{name:22} server CPU {r['page_cpu_ms']:7.2f} ms a load, {r['page_statements']:.1f} statements, "
              f"{r['page_cpu_ms'] / base['page_cpu_ms']:.2f}x the baseline")
    return 0


def _median_round(rounds):
    """The round whose CPU a save is the median of the tree's rounds (one round: that one)."""
    return sorted(rounds, key=lambda r: r["cpu_ms"])[len(rounds) // 2]


def child(args):
    tree = Path(args.child)
    database = f"pj_savecpu_{secrets.token_hex(4)}"
    if args.sqlite:
        database_url = f"sqlite:///{tempfile.mkdtemp(prefix='savecpu-')}/{database}.sqlite3"
    else:
        import psycopg

        with psycopg.connect(f"{args.pg}/postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{database}"')
        database_url = f"{args.pg}/{database}"
    os.environ.update(
        DATABASE_URL=database_url, DJANGO_SETTINGS_MODULE="config.settings", DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50), DJANGO_ALLOWED_HOSTS="testserver", CACHE_URL=args.redis,
        CACHE_KEY_PREFIX=f"savecpu-{secrets.token_hex(4)}", DJANGO_STATIC_ROOT=tempfile.mkdtemp(prefix="savecpu-"),
    )
    os.chdir(tree)
    sys.path.insert(0, str(tree))
    try:
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection
        from django.test import Client
        from django.urls import reverse

        from annotation.models import Assignment
        from tests import factories

        call_command("migrate", verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)  # production pages name hashed static files
        coll = factories.collection("car")
        topic = factories.topic(coll, "tqa2:L_0001", facets=[(f"tqa2:L_0001/T_{i}", f"Heading {i}") for i in range(6)])
        passages = [factories.passage(coll, f"{i:040x}", text="words " * 150) for i in range(1, 21)]
        run = factories.run(coll, "guir", {topic: passages})
        user = factories.user("judge")
        assignment = Assignment.objects.create(assessor=user, topic=topic, run=run)
        client = Client(HTTP_X_FORWARDED_PROTO="https", secure=True)
        client.force_login(user)
        url = reverse("annotation:save", args=[assignment.token])
        statements = []

        def count(execute, sql, params, many, context):
            statements.append(1)
            return execute(sql, params, many, context)

        def save(seq):
            body = {"change_id": str(uuid.uuid4()), "layer": "facet", "passage": passages[seq % 20].pk,
                    "value": [{"facet": f"tqa2:L_0001/T_{seq % 6}", "relevance": "must"}],
                    "client_time": "2024-05-01T12:00:00.000Z", "client_seq": seq, "session_id": "page-1"}
            response = client.post(url, json.dumps(body), content_type="application/json")
            assert response.status_code == 200, response.content

        for seq in range(30):  # warm: statuses, caches, imports
            save(seq)
        if args.server:
            return _serve(tree, database, client, assignment.token, [p.pk for p in passages])
        if os.environ.get("SAVE_CPU_PROFILE"):
            import cProfile
            import pstats

            cProfile.runctx("for seq in range(30, 130): save(seq)", globals(), locals(), "/tmp/save_cpu.prof")
            pstats.Stats("/tmp/save_cpu.prof", stream=sys.stderr).sort_stats("tottime").print_stats(30)
        handler_cpu = []
        get_response = client.handler.get_response

        def timed_get_response(request):  # the server's side alone: middleware, view, database driver
            started = time.process_time()
            try:
                return get_response(request)
            finally:
                handler_cpu.append(time.process_time() - started)

        client.handler.get_response = timed_get_response
        backend = None
        if not args.sqlite:
            with connection.cursor() as cursor:  # the PostgreSQL backend serving this connection (same machine)
                cursor.execute("SELECT pg_backend_pid()")
                backend = cursor.fetchone()[0]
        started, started_cpu, started_db = time.perf_counter(), time.process_time(), _process_cpu(backend)
        with connection.execute_wrapper(count):
            for seq in range(30, 30 + args.saves):
                save(seq)
        wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
        db_cpu = _process_cpu(backend) - started_db
        result = {"cpu_ms": cpu * 1000 / args.saves, "handler_cpu_ms": sum(handler_cpu) * 1000 / args.saves,
                  "db_cpu_ms": db_cpu * 1000 / args.saves, "wall_ms": wall * 1000 / args.saves,
                  "statements": len(statements) / args.saves}
        # The judging page of the same (now judged) article: the server's CPU and statements a load.
        page = reverse("annotation:unit", args=[assignment.token])
        for _ in range(5):
            assert client.get(page).status_code == 200
        handler_cpu.clear()
        statements.clear()
        with connection.execute_wrapper(count):
            for _ in range(args.pages):
                client.get(page)
        result.update(page_cpu_ms=sum(handler_cpu) * 1000 / args.pages, page_statements=len(statements) / args.pages)
        print(json.dumps(result))
    finally:
        from django.db import connections

        connections.close_all()
        if not args.sqlite:
            with psycopg.connect(f"{args.pg}/postgres", autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    return 0


def _serve(tree, database, client, token, passages):
    """Start gunicorn from `tree` as production does (deploy/gunicorn.conf.py), with one worker; say on stdout how to
    reach it (one JSON line), and stop it when the parent writes a line."""
    import signal
    import socket

    from django.conf import settings
    from django.db import connections

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, PYTHONPATH=str(tree), DJANGO_ALLOWED_HOSTS="127.0.0.1")
    log = Path(tempfile.mkdtemp(prefix="savecpu-gunicorn-")) / "gunicorn.log"
    server = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "gunicorn"), "config.wsgi", "-c", str(tree / "deploy" / "gunicorn.conf.py"),
         "-b", f"127.0.0.1:{port}", "-w", "1", "--log-level", "warning"],
        cwd=tree, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        connections.close_all()  # the only connections to `database` left are the server's
        print(json.dumps({
            "port": port, "server": server.pid, "log": str(log), "database": database, "token": token,
            "passages": passages, "session": [settings.SESSION_COOKIE_NAME,
                                              client.cookies[settings.SESSION_COOKIE_NAME].value],
            "csrf_cookie": settings.CSRF_COOKIE_NAME,
        }), flush=True)
        sys.stdin.readline()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    return 0


class _Server:
    """One tree's gunicorn, as the parent drives it: saves and page loads over one kept-alive connection, and the
    CPU (ns, every thread) of its worker, the worker's PostgreSQL backends and Redis."""

    def __init__(self, name, info, args):
        import http.client

        self.name, self.info, self.args = name, info, args
        self.connection = http.client.HTTPConnection("127.0.0.1", info["port"], timeout=30)
        deadline = time.monotonic() + 60
        while True:
            try:
                self.connection.connect()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"{name}: gunicorn did not listen: {Path(info['log']).read_text()[-2000:]}") from None
                time.sleep(0.1)
        origin = f"https://127.0.0.1:{info['port']}"
        csrf = "k" * 32  # the cookie's secret, sent as is in the header too
        self.headers = {"X-Forwarded-Proto": "https", "Origin": origin, "Referer": origin + "/",
                        "Cookie": f"{info['session'][0]}={info['session'][1]}; {info['csrf_cookie']}={csrf}"}
        self.save_headers = {**self.headers, "Content-Type": "application/json", "X-CSRFToken": csrf}
        self.seq = 1000

    def request(self, method, url, body=None, headers=None):
        self.connection.request(method, url, body=body, headers=headers or self.headers)
        response = self.connection.getresponse()
        content = response.read()
        if response.status != 200:
            raise SystemExit(f"{self.name}: {method} {url}: {response.status} {content[:500]!r}")

    def save(self):
        self.seq += 1
        passages = self.info["passages"]
        body = {"change_id": str(uuid.uuid4()), "layer": "facet", "passage": passages[self.seq % len(passages)],
                "value": [{"facet": f"tqa2:L_0001/T_{self.seq % 6}", "relevance": "must"}],
                "client_time": "2024-05-01T12:00:00.000Z", "client_seq": self.seq, "session_id": "page-2"}
        self.request("POST", f"/a/{self.info['token']}/save", json.dumps(body), self.save_headers)

    def page(self):
        self.request("GET", f"/a/{self.info['token']}/")

    def find_processes(self):
        """The worker, its PostgreSQL backends (a thread connects on its first request, so asked before each block)
        and Redis."""
        import psycopg

        proc = Path("/proc")
        workers = [int(p.name) for p in proc.iterdir() if p.name.isdigit() and _parent(p) == self.info["server"]]
        with psycopg.connect(f"{self.args.pg}/postgres", autocommit=True) as pg:
            backends = [row[0] for row in pg.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s", (self.info["database"],))]
        redis = [int(p.name) for p in proc.iterdir() if p.name.isdigit() and _command(p) == "redis-server"]
        self.processes = {"web": [self.info["server"], *workers], "db": backends, "redis": redis}

    def measure(self, one, count) -> dict:
        """CPU ms a request of each part, over `count` requests one after the other."""
        self.find_processes()
        before = {part: _run_ns(pids) for part, pids in self.processes.items()}
        started = time.perf_counter()
        for _ in range(count):
            one()
        wall = time.perf_counter() - started
        used = {part: (_run_ns(pids) - before[part]) / 1e6 / count for part, pids in self.processes.items()}
        return used | {"total": sum(used.values()), "wall": wall * 1000 / count}


def _compare_servers(args, trees):
    """Each tree's gunicorn at once (own database, own worker); blocks of saves and page loads go to one, then the
    other, in alternating order, so that a machine growing busier or quieter weighs on both alike. Prints the
    median block of each and the median of the blocks' ratios."""
    children, servers = [], []
    try:
        for name, tree in trees:
            child = subprocess.Popen(
                [sys.executable, str(ROOT / "benchmarks" / "bench_save_cpu.py"), "--child", str(tree), "--server",
                 "--pg", args.pg, "--redis", args.redis],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            children.append(child)
            line = child.stdout.readline()
            if not line:
                raise SystemExit(f"{name} failed:\n{child.stderr.read()[-3000:]}")
            servers.append(_Server(name, json.loads(line), args))
        for server in servers:  # warm: the worker's first statements, its connections, its imports
            for _ in range(100):
                server.save()
            for _ in range(10):
                server.page()
        blocks = {server.name: {"save": [], "page": []} for server in servers}
        for number in range(args.rounds):
            for server in servers if number % 2 == 0 else servers[::-1]:
                blocks[server.name]["save"].append(server.measure(server.save, args.saves))
                blocks[server.name]["page"].append(server.measure(server.page, args.pages))
    finally:
        for child in children:
            if child.poll() is None:
                child.stdin.write("stop\n")
                child.stdin.flush()
            child.wait(timeout=120)
    base, this = (blocks[server.name] for server in servers)
    print(f"through gunicorn (deploy/gunicorn.conf.py, one worker), one request after another over a kept-alive "
          f"connection; {args.rounds} rounds of {args.saves} saves and {args.pages} page loads per tree, alternating; "
          f"CPU ms a request (median round), every thread of each process")
    print(f"{'':24} {'gunicorn':>9} {'PostgreSQL':>11} {'Redis':>7} {'total':>7} {'wall':>7}   rounds' totals (sorted; min … quartile | quartile … max)")
    for kind in ("save", "page"):
        print(kind)
        for server in servers:
            rows = blocks[server.name][kind]
            median = {part: statistics.median(r[part] for r in rows) for part in rows[0]}
            totals = sorted(r["total"] for r in rows)
            each = ", ".join(f"{t:.2f}" for t in totals) if len(rows) <= 5 else \
                f"{totals[0]:.2f} … {totals[len(totals) // 4]:.2f} | {totals[len(totals) * 3 // 4]:.2f} … {totals[-1]:.2f}"
            print(f"  {server.name[:22]:22} {median['web']:9.3f} {median['db']:11.3f} {median['redis']:7.3f} "
                  f"{median['total']:7.3f} {median['wall']:7.2f}   {each}")
        ratios = [t["total"] / b["total"] for b, t in zip(base[kind], this[kind], strict=True)]
        print(f"  this tree / baseline, CPU of a {kind} in all: {statistics.median(ratios):.3f} (median of the rounds' "
              f"ratios; from {min(ratios):.3f} to {max(ratios):.3f})")
    return 0


def _run_ns(pids) -> int:
    """Nanoseconds on a CPU of every thread of these processes so far (/proc/PID/task/TID/schedstat)."""
    total = 0
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                pass  # a thread that ended meanwhile
    return total


def _parent(proc) -> int:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError):
        return -1


def _command(proc) -> str:
    try:
        return (proc / "comm").read_text().strip()
    except OSError:
        return ""


def _process_cpu(pid) -> float:
    """User and system CPU seconds of a process on this machine (/proc/PID/stat); 0 for none (SQLite)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    sys.exit(main())
