"""The campaign dashboard of one round: this tree against a baseline commit, same databases, same run.

    .venv/bin/python benchmarks/bench_dashboard.py [--topics 10 90] [--baseline 527e2df] [--repeat 5]
        [--pg postgres://postgres@127.0.0.1:5432] [--memory-limit-gb 8]

For each --topics, a fresh PostgreSQL database holding one round shaped like scale.py's (scale.add_round with that
many topics: 10 give about 3,400 judgements, 90 about 30,700; five assessors, every passage judged: facets, some
removals and notes, transitions). Then, for each tree (the baseline commit checked out into a temporary git worktree,
and this one), a child process serves the organiser's dashboard of that round (Django's test client, DEBUG off, a
local-memory cache) and prints:

- cold: median wall time of --repeat views, the cache emptied before each (a view after a change);
- warm: the same without emptying it (views with no change in between);
- the statements of a cold view, and the peak of Python memory during one (tracemalloc);
- the child's peak resident memory (ru_maxrss).

The child runs under an address-space limit (--memory-limit-gb): a tree that asks for more fails with MemoryError,
reported as such, instead of taking the machine. Prints the ratio of this tree to the baseline. Not part of the
test suite.
"""

import argparse
import json
import os
import resource
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, nargs="+", default=[10, 90], help="Topics of the round, per database.")
    parser.add_argument("--baseline", default="527e2df", help="Commit to compare with (before this change).")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--memory-limit-gb", type=float, default=8)
    parser.add_argument("--fill", nargs=2, metavar=("DATABASE", "TOPICS"), help=argparse.SUPPRESS)
    parser.add_argument("--measure", nargs=2, metavar=("TREE", "DATABASE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.fill:
        return fill(args.pg, args.fill[0], int(args.fill[1]))
    if args.measure:
        return measure(args.pg, Path(args.measure[0]), args.measure[1], args.repeat)

    databases = {}
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-dashboard-") as tmp:
        baseline = Path(tmp) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(baseline), args.baseline], cwd=ROOT, check=True)
        try:
            for topics in args.topics:
                database = f"pj_benchdash_{topics}_{secrets.token_hex(3)}"
                out = child(["--fill", database, str(topics)], args)
                databases[topics] = (database, json.loads(out.stdout.strip().splitlines()[-1])["judgements"])
            for topics, (database, judgements) in databases.items():
                for name, tree in ((f"baseline {args.baseline}", baseline), ("this tree", ROOT)):
                    out = child(["--measure", str(tree), database, "--repeat", str(args.repeat)], args,
                                limit=args.memory_limit_gb)
                    lines = out.stdout.strip().splitlines()
                    results[topics, name] = json.loads(lines[-1]) if out.returncode == 0 and lines else {
                        "error": (out.stderr.strip().splitlines() or ["no output"])[-1][:120]}
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(baseline)], cwd=ROOT, check=False)
            for database, _ in databases.values():
                drop(args.pg, database)
    report(databases, results)
    return 0


def child(extra, args, limit=None):
    command = [sys.executable, str(Path(__file__).resolve()), "--pg", args.pg, *extra]

    def cap():
        if limit:
            size = int(limit * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    out = subprocess.run(command, capture_output=True, text=True, check=False, preexec_fn=cap)
    if out.returncode != 0 and "--fill" in extra:
        raise SystemExit(f"filling failed:\n{out.stderr[-3000:]}")
    return out


def report(databases, results):
    print(f"{'round':>22} {'tree':>18} {'cold ms':>9} {'warm ms':>9} {'statements':>10} {'peak MB':>8} "
          f"{'RSS MB':>7} {'cold × base':>11} {'peak × base':>11}")
    for topics, (_, judgements) in databases.items():
        rows = [(name, r) for (t, name), r in results.items() if t == topics]
        base = rows[0][1]
        for name, r in rows:
            label = f"{judgements:,} judgements"
            if "error" in r:
                print(f"{label:>22} {name:>18}   failed: {r['error']}")
                continue
            cold_ratio = f"{r['cold'] / base['cold']:.2f}" if "cold" in base else "–"
            peak_ratio = f"{r['peak'] / base['peak']:.3f}" if "peak" in base else "–"
            print(f"{label:>22} {name:>18} {r['cold'] * 1000:9.1f} {r['warm'] * 1000:9.1f} {r['statements']:10d} "
                  f"{r['peak'] / 2**20:8.1f} {r['rss'] / 2**10:7.0f} {cold_ratio:>11} {peak_ratio:>11}")


# Children ---------------------------------------------------------------------------------------------------------


def settings_environment(pg, database):
    os.environ.update(
        DATABASE_URL=f"{pg}/{database}", DJANGO_SETTINGS_MODULE="config.settings", DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50), DJANGO_ALLOWED_HOSTS="testserver",
        DJANGO_STATIC_ROOT=tempfile.mkdtemp(prefix="bench-dashboard-static-"),
    )
    os.environ.pop("CACHE_URL", None)  # the local-memory cache: emptied between cold views, this process only


def fill(pg, database, topics):
    """A fresh database with round 0 of `topics` topics (scale.add_round), migrated by this tree."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import scale

    scale.recreate_database(pg, database)
    settings_environment(pg, database)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    scale.ROUND_TOPICS = topics
    made = scale.add_round(0)
    scale.analyse()
    print(json.dumps({"judgements": made}))
    return 0


def measure(pg, tree, database, repeat):
    """The dashboard of round-0000 served by the code in `tree`; prints one JSON line."""
    settings_environment(pg, database)
    os.chdir(tree)
    sys.path.insert(0, str(tree))
    import tracemalloc

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.urls import reverse

    call_command("collectstatic", "--noinput", verbosity=0)  # production mode serves the hashed names
    organiser = get_user_model().objects.get(username="organiser")
    client = Client(HTTP_X_FORWARDED_PROTO="https", secure=True)
    client.force_login(organiser)
    url = reverse("annotation:dashboard", args=["round-0000"])

    def view(cold):
        if cold:
            cache.clear()
        started = time.perf_counter()
        response = client.get(url)
        assert response.status_code == 200, response.status_code
        return time.perf_counter() - started

    view(True)  # warm the imports, templates and connection
    cold = statistics.median(view(True) for _ in range(repeat))
    view(False)
    warm = statistics.median(view(False) for _ in range(repeat))
    statements = []

    def count(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        view(True)
    tracemalloc.start()
    view(True)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(json.dumps({"cold": cold, "warm": warm, "statements": len(statements), "peak": peak,
                      "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
    return 0


def drop(pg, database):
    import psycopg
    from psycopg import sql

    with psycopg.connect(f"{pg}/postgres", autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))


if __name__ == "__main__":
    sys.exit(main())
