"""Storing a change (assessments.services.judging.record_judgement) on PostgreSQL: this tree against a baseline commit.

    .venv/bin/python benchmarks/bench_record.py [--baseline 7d7e79d] [--changes 600] [--rounds 6]
        [--pg postgres://postgres@127.0.0.1:5432]

Each tree (the baseline commit checked out into a temporary git worktree, and this one) gets a fresh database,
migrated by its own code, with one topic and 200 passages. Then, in alternating order, round after round, a child
process of each tree stores --changes notes changes on those passages (each passage judged three times, the later
changes becoming current) for a new assessor, twice:

- in one caller's transaction, as an import or an adjudication does;
- each change its own transaction, as a page's save does (here without the request around it).

Prints the median wall time a change per tree and the ratio of this tree to the baseline (the median of the
rounds' ratios). The client, its round trips and PostgreSQL are all in the figure; CPU through gunicorn is
bench_save_cpu.py --server's. Not part of the test suite.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import scale  # noqa: E402  (its databases' making and dropping)

MODES = ("in the caller's transaction", "each its own transaction")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="7d7e79d", help="Commit to compare with (before this change).")
    parser.add_argument("--changes", type=int, default=600, help="Changes a round stores in each mode.")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--child", nargs=3, metavar=("ACTION", "TREE", "DATABASE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        action, tree, database = args.child
        return child(action, Path(tree), args.pg, database, args.changes)
    if args.changes < 1 or args.rounds < 1:
        parser.error("--changes and --rounds: 1 or more")

    trees = {}
    times = {}
    with tempfile.TemporaryDirectory(prefix="bench-record-") as tmp:
        baseline = Path(tmp) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(baseline), args.baseline], cwd=ROOT, check=True)
        trees = {f"baseline {args.baseline}": (baseline, f"pj_benchrec_base_{secrets.token_hex(3)}"),
                 "this tree": (ROOT, f"pj_benchrec_this_{secrets.token_hex(3)}")}
        try:
            for tree, database in trees.values():
                run_child("setup", tree, database, args)
            for round_ in range(args.rounds):
                order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
                for name in order:
                    tree, database = trees[name]
                    times.setdefault(name, []).append(run_child("measure", tree, database, args))
                print(f"round {round_ + 1} of {args.rounds}", file=sys.stderr)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(baseline)], cwd=ROOT, check=False)
            for _, database in trees.values():
                scale.drop_database(args.pg, database)
    report(times, args)
    return 0


def run_child(action, tree, database, args):
    command = [sys.executable, str(Path(__file__).resolve()), "--pg", args.pg, "--changes", str(args.changes),
               "--child", action, str(tree), database]
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{action} in {tree} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(times, args):
    names = list(times)
    base, this = names
    print(f"record_judgement on PostgreSQL, {args.changes} changes a round and mode, {args.rounds} rounds, alternating")
    print(f"{'':>30} {base:>22} {this:>12}   this / baseline (median of rounds; min … max)")
    for mode in MODES:
        medians = [statistics.median(r[mode] for r in times[name]) for name in names]
        ratios = sorted(b[mode] / a[mode] for a, b in zip(times[base], times[this], strict=True))
        print(f"{mode:>30} {medians[0]:19.3f} ms {medians[1]:9.3f} ms   {statistics.median(ratios):.3f} "
              f"({ratios[0]:.3f} … {ratios[-1]:.3f})")


# Children ---------------------------------------------------------------------------------------------------------


def child(action, tree, pg, database, changes):
    os.environ.update(
        DATABASE_URL=f"{pg}/{database}", DJANGO_SETTINGS_MODULE="config.settings", DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50), DJANGO_ALLOWED_HOSTS="testserver",
    )
    os.environ.pop("CACHE_URL", None)
    os.chdir(tree)
    sys.path.insert(0, str(tree))
    if action == "setup":
        scale.recreate_database(pg, database)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import transaction

    from assessments.models import Layer, Topic
    from retrieval.models import Collection, Passage
    from assessments.services.judging import record_judgement
    from tests import factories

    if action == "setup":
        call_command("migrate", verbosity=0)
        coll = factories.collection("bench")
        factories.topic(coll, "tqa2:L_0001", facets=[("tqa2:L_0001/T_1", "heading")])
        for i in range(1, 201):
            factories.passage(coll, f"{i:040x}")
        print("{}")
        return 0
    coll = Collection.objects.get(name="bench")
    topic = Topic.objects.get(collection=coll)
    passages = list(Passage.objects.filter(collection=coll).order_by("pk"))
    result = {}
    for mode in MODES:
        judge = factories.user(f"bench-{secrets.token_hex(4)}")

        def store(judge=judge):
            for i in range(changes):
                record_judgement(assessor=judge, layer=Layer.NOTES, topic=topic, passage=passages[i % len(passages)],
                                 value=f"note {i}", run_ids=["bench"])

        started = time.perf_counter()
        if mode == MODES[0]:
            with transaction.atomic():
                store()
        else:
            store()
        result[mode] = (time.perf_counter() - started) / changes * 1000
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
