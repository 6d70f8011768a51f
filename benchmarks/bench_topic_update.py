"""Importing a large topics file again with update on PostgreSQL: update_topics against Django's bulk_update.

    .venv/bin/python benchmarks/bench_topic_update.py [--topics 70000] [--rounds 1]
        [--pg postgres://postgres@127.0.0.1:5432] [--database pj_topic_update]

Makes a fresh PostgreSQL database (dropped first, and after), migrates it, and imports --topics topics from a
JSON-lines file (import_topics, as `manage.py import_topics` and the Data page do). Then, each round, imports a file
in which every topic's title and description changed (update on) twice: once writing the changes with bulk_update
(batches of 1,000: the baseline, as before issue 38's fix), once with update_topics (an UPDATE per topic by
executemany), in alternating order. Then imports the last file once more, unchanged, which writes nothing now.
Prints the median time of each way and the ratio to the baseline's. Not part of the test suite.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from scale import drop_database, recreate_database  # noqa: E402


def write_topics_file(path, n, version):
    with open(path, "w") as out:
        for i in range(1, n + 1):
            out.write(json.dumps({"qid": str(i), "title": f"topic {i} title, version {version}",
                                  "description": f"What is said about subject {i}, as of version {version}?"}) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=70_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432", help="PostgreSQL server (no database).")
    parser.add_argument("--database", default="pj_topic_update", help="Database to create (dropped first and after).")
    args = parser.parse_args(argv)

    recreate_database(args.pg, args.database)
    os.environ.update(DATABASE_URL=f"{args.pg}/{args.database}", DJANGO_SETTINGS_MODULE="config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from assessments.importers import topics as importer
    from assessments.models import Topic

    try:
        call_command("migrate", verbosity=0)
        folder = Path(tempfile.mkdtemp(prefix="bench-topics-"))
        first = folder / "v0.jsonl"
        write_topics_file(first, args.topics, 0)
        started = time.perf_counter()
        print(importer.import_topics(first, "bench").summary(), f"({time.perf_counter() - started:.1f} s)", flush=True)
        ways = {"bulk_update": lambda topics: Topic.objects.bulk_update(topics, ["title", "text", "metadata"],
                                                                          batch_size=1000),
                "update_topics": importer.update_topics}
        times = {way: [] for way in ways}
        version = 0
        for round_ in range(args.rounds):
            for way in sorted(ways, reverse=round_ % 2 == 1):
                version += 1
                path = folder / f"v{version}.jsonl"
                write_topics_file(path, args.topics, version)
                importer.update_topics = ways[way]
                started = time.perf_counter()
                result = importer.import_topics(path, "bench", update=True)
                times[way].append(time.perf_counter() - started)
                assert Topic.objects.filter(title__endswith=f"version {version}", metadata__description__endswith=(
                    f"version {version}?")).count() == args.topics, "not every topic was written"
                print(f"{way:>13}: {times[way][-1]:6.1f} s  {result.summary()}", flush=True)
        started = time.perf_counter()
        result = importer.import_topics(path, "bench", update=True)
        print(f"the same file again: {time.perf_counter() - started:.1f} s  {result.summary()}")
        base = statistics.median(times["bulk_update"])
        print(f"\n{'way':>13} {'median s':>9} {'ratio':>6}")
        for way in ways:
            median = statistics.median(times[way])
            print(f"{way:>13} {median:9.1f} {median / base:6.3f}")
    finally:
        from django.db import connections

        connections.close_all()
        drop_database(args.pg, args.database)
    return 0


if __name__ == "__main__":
    sys.exit(main())
