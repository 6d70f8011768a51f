"""Storing a retriever's run: rows written straight (insert_rows: COPY on PostgreSQL, executemany on SQLite; now)
against RunEntry model instances through bulk_create (before), in one run.

    .venv/bin/python benchmarks/bench_save_rankings.py [--topics 112] [--depth 100] [--repeats 3] [--use-database-url]

A throw-away database with Cranfield imported; a run of `topics` × `depth` random (passage, score) rankings is saved
by both paths in turn (before, now, before, now…), each into a fresh run. Prints the rows, each path's wall and CPU
seconds summed over the repeats, the RATIO before / now of CPU seconds, and whether both stored the same rows
(topic, passage, rank, score). The pool build saves one such run per retriever (Cranfield's even topics at depth 100:
11,200 rows a run).
"""

import argparse
import io
import os
import random
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def save_with_model_instances(run, rankings):
    """The path before: the same ranks, as RunEntry instances through bulk_create."""
    from django.db import transaction

    from assessments.models import RunEntry
    from retrieval.models import Passage

    wanted = {pid for ranking in rankings.values() for pid, _ in ranking}
    external = dict(Passage.objects.filter(pk__in=wanted).values_list("pk", "external_id"))
    with transaction.atomic():
        entries = []
        for topic_id, ranking in rankings.items():
            ordered = sorted(ranking, key=lambda hit: (hit[1], external[hit[0]]), reverse=True)
            entries.extend(RunEntry(run=run, topic_id=topic_id, passage_id=pid, rank=rank, score=score)
                           for rank, (pid, score) in enumerate(ordered, start=1))
        RunEntry.objects.bulk_create(entries, batch_size=2000)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=112)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--use-database-url", action="store_true")
    args = parser.parse_args()

    from bench_export import throwaway_database

    with throwaway_database("save-rankings-", use_database_url=args.use_database_url) as (_, connection):
        from django.core.management import call_command

        from assessments.models import Run, RunEntry, Topic
        from assessments.services.pooling import _save_rankings
        from retrieval.models import Collection, Passage

        call_command("import_cranfield", str(ROOT / "data" / "cranfield"), "--no-progress", stdout=io.StringIO())
        collection = Collection.objects.get(name="cranfield")
        passages = list(Passage.objects.filter(collection=collection).values_list("pk", flat=True))
        topics = list(Topic.objects.order_by("pk").values_list("pk", flat=True))[: args.topics]
        rng = random.Random(20261127)
        rankings = {t: [(p, rng.random()) for p in rng.sample(passages, args.depth)] for t in topics}
        rows = sum(map(len, rankings.values()))
        print(f"{rows} rows a run ({len(topics)} topics × {args.depth}), {connection.vendor}", flush=True)
        totals, stored = {"before": [0.0, 0.0], "now": [0.0, 0.0]}, {}
        for repeat in range(args.repeats):
            for name, save in (("before", save_with_model_instances), ("now", _save_rankings)):
                run = Run.objects.create(collection=collection, name=f"{name}-{repeat}", source=Run.Source.RETRIEVER)
                load, wall, used = os.getloadavg()[0], time.perf_counter(), cpu_seconds()
                save(run, rankings)
                wall, used = time.perf_counter() - wall, cpu_seconds() - used
                totals[name][0] += wall
                totals[name][1] += used
                print(f"  {name:6s} #{repeat + 1}: {wall:5.2f} s wall, {used:5.2f} s CPU, load {load:.2f}", flush=True)
                stored[name] = list(RunEntry.objects.filter(run=run).order_by("topic_id", "rank")
                                    .values_list("topic_id", "passage_id", "rank", "score"))
        print(f"same rows stored: {stored['before'] == stored['now']}")
        print(f"RATIO CPU seconds before / now = {totals['before'][1] / totals['now'][1]:.2f} "
              f"(wall {totals['before'][0] / totals['now'][0]:.2f})")


if __name__ == "__main__":
    main()
