"""Server CPU per save: the save endpoint's cost in the web process, this tree against a baseline commit, same run.

    .venv/bin/python benchmarks/bench_save_cpu.py [--saves 400] [--baseline 16a309c] [--server] [--rounds 1]
        [--pg postgres://postgres@127.0.0.1:5432] [--redis redis://127.0.0.1:6379/11]

For each tree (this one, and the baseline commit checked out into a temporary git worktree), a child process
makes a fresh PostgreSQL database, a 20-passage article and its assessor, signs in (Django's test client, the real
middleware, production settings: DEBUG off, sessions and caches on Redis) and posts --saves facet changes to the
save endpoint one after the other. Prints per tree: the web process's CPU per save (time.process_time: Python,
Django, the driver; not PostgreSQL's own CPU), the server's share of it (the request handler alone: middleware,
view, driver; without the test client building the request and reading the answer), the PostgreSQL backend's
own CPU per save (/proc of the backend serving the connection: the server is on this machine), wall time per save, SQL statements per save, and the ratio of this
tree to the baseline. A load generator on a busy machine mostly measures the machine; CPU per save does not move
with the load average as much. Not part of the test suite.

`--server` sends the same saves and page loads through gunicorn instead (started from each tree with production's
deploy/gunicorn.conf.py, one worker of one thread, over one kept-alive connection) and counts what the machine
spends on each request: the gunicorn worker's CPU, its PostgreSQL backend's and Redis's (the test client skips the
server, the database health check and the connection handling, about a quarter of a save). `--rounds N` measures
each tree N times, alternating, and prints the median round: this machine's CPU per save moves by up to a tenth
from one round to the next.
"""

import argparse
import json
import os
import secrets
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
                        help="Send the saves and page loads through gunicorn (production's deploy/gunicorn.conf.py, one "
                             "worker of one thread) over a kept-alive connection, and count the worker's CPU, the "
                             "PostgreSQL backend's and Redis's: everything a request costs the machine, not only the "
                             "Django handler's share (the test client skips the server, the health check and the "
                             "connection handling).")
    parser.add_argument("--rounds", type=int, default=1,
                        help="Measure each tree this many times, alternating (baseline, this tree, baseline, …); "
                             "the median round is printed.")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    trees = {}
    with tempfile.TemporaryDirectory(prefix="save-cpu-") as tmp:
        baseline = Path(tmp) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(baseline), args.baseline], cwd=ROOT, check=True)
        try:
            for _ in range(args.rounds):  # alternating, so that a machine growing busier shows in both
                for name, tree in (("baseline " + args.baseline, baseline), ("this tree", ROOT)):
                    out = subprocess.run(
                        [sys.executable, str(ROOT / "benchmarks" / "bench_save_cpu.py"), "--child", str(tree),
                         "--saves", str(args.saves), "--pages", str(args.pages), "--pg", args.pg, "--redis", args.redis,
                         *(["--server"] if args.server else [])],
                        capture_output=True, text=True, check=False)
                    if out.returncode != 0:
                        raise SystemExit(f"{name} failed:\n{out.stderr[-3000:]}")
                    trees.setdefault(name, []).append(json.loads(out.stdout.strip().splitlines()[-1]))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(baseline)], cwd=ROOT, check=False)
    results = {name: _median_round(rounds) for name, rounds in trees.items()}
    if args.server:
        return _print_server(results, args)
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
    """The round whose total CPU a save is the median of the tree's rounds (one round: that one)."""
    key = "total_ms" if "total_ms" in rounds[0] else "cpu_ms"
    return sorted(rounds, key=lambda r: r[key])[len(rounds) // 2] | {"rounds": [r[key] for r in rounds]}


def _print_server(results, args):
    base = next(iter(results.values()))
    print(f"through gunicorn (deploy/gunicorn.conf.py, 1 worker x 1 thread), {args.saves} saves then {args.pages} "
          f"page loads, one after the other; CPU per request of the machine's parts (median of {args.rounds} round(s))")
    print(f"{'':22} {'gunicorn ms':>12} {'PostgreSQL ms':>14} {'Redis ms':>9} {'total ms':>9} {'wall ms':>8} "
          f"{'total x baseline':>17}   rounds (total ms)")
    for what, prefix in (("save", ""), ("page", "page_")):
        print(what)
        for name, r in results.items():
            total = r[prefix + "total_ms"]
            rounds = ", ".join(f"{t:.2f}" for t in r["rounds"]) if not prefix else ""
            print(f"  {name:20} {r[prefix + 'web_ms']:12.3f} {r[prefix + 'db_ms']:14.3f} {r[prefix + 'redis_ms']:9.3f} "
                  f"{total:9.3f} {r[prefix + 'wall_ms']:8.2f} {total / base[prefix + 'total_ms']:17.2f}   {rounds}")
    return 0


def child(args):
    tree = Path(args.child)
    database = f"pj_savecpu_{secrets.token_hex(4)}"
    import psycopg

    with psycopg.connect(f"{args.pg}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{database}"')
    os.environ.update(
        DATABASE_URL=f"{args.pg}/{database}", DJANGO_SETTINGS_MODULE="config.settings", DJANGO_DEBUG="0",
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
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                ours = cursor.fetchone()[0]
            print(json.dumps(_through_server(tree, args, database, ours, client, assignment.token,
                                             [p.pk for p in passages])))
            return 0
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
        page = reverse("annotation:outline", args=[assignment.token])
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
        with psycopg.connect(f"{args.pg}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    return 0


def _through_server(tree, args, database, ours, client, token, passages):
    """The saves and page loads through gunicorn, started from `tree` as production starts it (one worker of one
    thread), over one kept-alive connection; CPU per request of the worker, its PostgreSQL backend and Redis."""
    import http.client
    import signal
    import socket

    import psycopg
    from django.conf import settings

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, PYTHONPATH=str(tree), DJANGO_ALLOWED_HOSTS="127.0.0.1")
    log = open(Path(tempfile.mkdtemp(prefix="savecpu-gunicorn-")) / "gunicorn.log", "w")
    server = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "gunicorn"), "config.wsgi", "-c", str(tree / "deploy" / "gunicorn.conf.py"),
         "-b", f"127.0.0.1:{port}", "-w", "1", "--threads", "1", "--log-level", "warning"],
        cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for _ in range(300):
            try:
                connection.connect()
                break
            except OSError:
                if server.poll() is not None:
                    raise SystemExit(f"gunicorn exited: {Path(log.name).read_text()[-2000:]}") from None
                time.sleep(0.1)
        origin = f"https://127.0.0.1:{port}"
        csrf = "k" * 32  # the cookie's secret, sent as is in the header too
        cookies = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}; " \
                  f"{settings.CSRF_COOKIE_NAME}={csrf}"
        headers = {"X-Forwarded-Proto": "https", "Origin": origin, "Referer": origin + "/", "Cookie": cookies}
        save_headers = {**headers, "Content-Type": "application/json", "X-CSRFToken": csrf}

        def request(method, url, body=None, extra=headers):
            connection.request(method, url, body=body, headers=extra)
            response = connection.getresponse()
            content = response.read()
            if response.status != 200:
                raise SystemExit(f"{method} {url}: {response.status} {content[:500]!r}")

        def save(seq):
            body = {"change_id": str(uuid.uuid4()), "layer": "facet", "passage": passages[seq % len(passages)],
                    "value": [{"facet": f"tqa2:L_0001/T_{seq % 6}", "relevance": "must"}],
                    "client_time": "2024-05-01T12:00:00.000Z", "client_seq": seq, "session_id": "page-2"}
            request("POST", f"/a/{token}/save", json.dumps(body), save_headers)

        page = f"/a/{token}/"
        for seq in range(1000, 1100):  # warm: the worker's first statements, its connections, its imports
            save(seq)
        for _ in range(10):
            request("GET", page)
        worker = next(int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _parent(p) == server.pid)
        with psycopg.connect(f"{args.pg}/{database}", autocommit=True) as pg:
            backends = [row[0] for row in pg.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid NOT IN (%s, pg_backend_pid())",
                (database, ours))]
        redis = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _command(p) == "redis-server"]
        result = {}
        for prefix, count, one in (("", args.saves, save), ("page_", args.pages, lambda _: request("GET", page))):
            before = [sum(map(_process_cpu, pids)) for pids in ([worker, server.pid], backends, redis)]
            started = time.perf_counter()
            for seq in range(2000, 2000 + count):
                one(seq)
            wall = time.perf_counter() - started
            after = [sum(map(_process_cpu, pids)) for pids in ([worker, server.pid], backends, redis)]
            web, db, cache = ((a - b) * 1000 / count for a, b in zip(after, before, strict=True))
            result.update({prefix + "web_ms": web, prefix + "db_ms": db, prefix + "redis_ms": cache,
                           prefix + "total_ms": web + db + cache, prefix + "wall_ms": wall * 1000 / count})
        connection.close()
        return result
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


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
    """User and system CPU seconds of a process on this machine (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    sys.exit(main())
