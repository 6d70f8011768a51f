"""TREC files at the speed of the tools people compare with: evaluate_runs against ir_measures, and run import.

    .venv/bin/python benchmarks/bench_trec_files.py [--topics 100] [--depth 1000] [--runs 10]
        [--import-lines 200000] [--repeat 3] [--use-database-url] [--skip-import]

Writes, in a temporary folder and always the same (seeded), a qrels file (a third of each topic's candidates
judged, grades 0-2) and --runs run files of --topics x --depth lines (ClueWeb-like document ids, six-decimal
scores), then times in the same run:

- evaluate: assessments.evaluation.sources.evaluate_files, what `manage.py evaluate_runs --qrels Q --run R...`
  does after start-up (stream and check every line, rank as trec_eval does, AP nDCG@10 P@10 R@100 RR Rprec),
  against ir_measures on the same files (read_trec_qrels, read_trec_run and calc_aggregate, which scores with
  pytrec_eval in C) for the same measures; the mean values of both are compared. Aim: at most 1.2x.
- import: import_trec_run's import_run on one run file of --import-lines lines into a collection that already
  has its documents and topics, in a throwaway database (a SQLite file; with --use-database-url a test
  database beside DATABASE_URL's PostgreSQL): lines/s against the aim of 100,000 lines/s, and against the
  database's own floor measured right after on the same rows (INSERT ... SELECT of the entries just written as
  another run: the same indexes, unique checks and foreign keys, no parsing, no lookups, no client), with the
  time of each step.

Prints the fastest of --repeat for each. Not part of the test suite.
"""

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
MEASURES = ["AP", "nDCG@10", "P@10", "R@100", "RR", "Rprec"]


def write_files(folder: Path, topics: int, depth: int, runs: int, seed: int = 7) -> tuple[Path, list[Path]]:
    rng = random.Random(seed)
    docs = {
        t: [f"clueweb12-{rng.randrange(10**4):04d}wb-{rng.randrange(100):02d}-{rng.randrange(10**5):05d}"
            for _ in range(depth * 3)]
        for t in range(topics)
    }
    qrels = folder / "qrels.txt"
    with qrels.open("w") as out:
        for t in range(topics):
            for doc in rng.sample(docs[t], depth):
                out.write(f"{401 + t} 0 {doc} {rng.choice([0, 0, 0, 1, 1, 2])}\n")
    paths = []
    for r in range(runs):
        path = folder / f"run{r}.txt"
        with path.open("w") as out:
            for t in range(topics):
                score = 30.0
                for rank, doc in enumerate(rng.sample(docs[t], depth), start=1):
                    score -= rng.random() * 0.02
                    out.write(f"{401 + t} Q0 {doc} {rank} {score:.6f} run{r}\n")
        paths.append(path)
    return qrels, paths


def best(repeat, action):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return min(times), result


def bench_evaluate(qrels, runs, repeat):
    import ir_measures

    from assessments.evaluation import parse_measure
    from assessments.evaluation.measures import aggregate
    from assessments.evaluation.sources import evaluate_files

    ours_measures = [parse_measure(m) for m in MEASURES]
    theirs_measures = [ir_measures.parse_measure(m) for m in MEASURES]

    def ours():
        report = evaluate_files(qrels, runs, ours_measures)
        return [{str(m): v for m, v in aggregate(r.per_topic, ours_measures).items()} for r in report.runs]

    def theirs():
        judged = list(ir_measures.read_trec_qrels(str(qrels)))
        return [
            {str(m): v for m, v in ir_measures.calc_aggregate(theirs_measures, judged,
                                                               ir_measures.read_trec_run(str(r))).items()}
            for r in runs
        ]

    ours_time, ours_values = best(repeat, ours)
    theirs_time, theirs_values = best(repeat, theirs)
    worst = max(abs(a[m] - b[m]) for a, b in zip(ours_values, theirs_values) for m in MEASURES)
    lines = sum(1 for r in runs for _ in r.open())
    print(f"evaluate: {len(runs)} runs, {lines:,} lines, {len(MEASURES)} measures")
    print(f"  evaluate_runs (files)  {ours_time:7.2f} s  ({lines / ours_time:,.0f} lines/s)")
    print(f"  ir_measures            {theirs_time:7.2f} s  ({lines / theirs_time:,.0f} lines/s)")
    print(f"  ratio evaluate_runs / ir_measures: {ours_time / theirs_time:.2f} (aim: at most 1.2); "
          f"largest difference of a mean value: {worst:.1e}")


def bench_import(folder, lines, repeat, use_database_url):
    from bench_export import throwaway_database

    topics, depth = max(1, lines // 1000), min(lines, 1000)
    (folder / "import").mkdir()
    _, (path,) = write_files(folder / "import", topics, depth, 1, seed=11)
    with throwaway_database("bench-trec-", use_database_url) as (_, connection):
        from django.db import transaction

        from assessments.importers import trec
        from assessments.models import Run, RunEntry, Topic
        from retrieval.ingest import Problems
        from retrieval.models import Collection, Passage

        where = "PostgreSQL" if connection.vendor == "postgresql" else "SQLite"
        parsed = trec.read_run(path, Problems(path))
        collection = Collection.objects.create(name="bench")
        trec.insert_rows(Passage, ["collection", "external_id", "text"],
                         ((collection.pk, d, "") for d in sorted(set(parsed.docids))), plain_text=True)
        Topic.objects.bulk_create([Topic(collection=collection, external_id=q, kind=Topic.Kind.ADHOC)
                                   for q in dict.fromkeys(parsed.qids)])
        times, floors = [], []
        for attempt in range(repeat):
            start = time.perf_counter()
            result = trec.import_run(path, "bench", name=f"run-{attempt}")
            times.append(time.perf_counter() - start)
            with transaction.atomic():
                floor_run = Run.objects.create(collection=collection, name=f"floor-{attempt}")
                table = connection.ops.quote_name(RunEntry._meta.db_table)
                start = time.perf_counter()
                with connection.cursor() as cursor:
                    cursor.execute(
                        f"INSERT INTO {table} (run_id, topic_id, passage_id, rank, score, origin) "
                        f"SELECT %s, topic_id, passage_id, rank, score, origin FROM {table} WHERE run_id = %s",
                        [floor_run.pk, result.run.pk],
                    )
            floors.append(time.perf_counter() - start)  # the commit (deferred foreign key checks) included
        steps = import_steps(trec, path, connection)
        took, floor = min(times), min(floors)
        print(f"import: {result.entries:,} lines ({result.topics:,} topics) into {where}, documents already there")
        print(f"  import_trec_run        {took:7.2f} s  {result.entries / took:,.0f} lines/s  "
              f"(ratio to the aim of 100,000 lines/s: {result.entries / took / 100_000:.2f})")
        print(f"  the database's floor   {floor:7.2f} s  {result.entries / floor:,.0f} lines/s  "
              f"(INSERT ... SELECT of the same rows; import / floor: {took / floor:.2f})")
        print("  steps: " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in steps))


def import_steps(trec, path, connection):
    """The import's steps timed one by one (a separate import, rolled back)."""
    from django.db import transaction

    from assessments.models import Run, RunEntry, Topic
    from retrieval.ingest import Problems
    from retrieval.models import Passage

    steps = []
    start = time.perf_counter()
    parsed = trec.read_run(path, Problems(path))
    steps.append(("read and check", time.perf_counter() - start))
    start = time.perf_counter()
    collection_id = Run.objects.filter(name="run-0").values_list("collection_id", flat=True).get()
    topics = trec.ids_by_external_id(Topic.objects.filter(collection_id=collection_id), set(parsed.qids))
    passages = trec.ids_by_external_id(Passage.objects.filter(collection_id=collection_id), set(parsed.docids))
    steps.append(("look up ids", time.perf_counter() - start))
    refs = trec.References(topics, passages, [], [])

    class Rollback(Exception):
        pass

    try:
        with transaction.atomic():
            run = Run.objects.create(collection_id=collection_id, name="steps")
            start = time.perf_counter()
            rows = list(trec._entry_rows(run.pk, parsed, parsed.by_topic(), refs, False))
            steps.append(("order and make rows", time.perf_counter() - start))
            start = time.perf_counter()
            trec.insert_rows(RunEntry, ["run", "topic", "passage", "rank", "score", "origin"], rows, plain_text=True)
            steps.append(("copy", time.perf_counter() - start))
            start = time.perf_counter()
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the foreign key checks a commit would do
            steps.append(("foreign key checks", time.perf_counter() - start))
            raise Rollback
    except Rollback:
        pass
    return steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=100)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--import-lines", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--use-database-url", action="store_true", help="Import into a test database on DATABASE_URL.")
    parser.add_argument("--skip-import", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-trec-files-") as tmp:
        folder = Path(tmp)
        qrels, runs = write_files(folder, args.topics, args.depth, args.runs)
        if args.skip_import:
            import os

            import django

            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
            sys.path.insert(0, str(ROOT))
            django.setup()
            bench_evaluate(qrels, runs, args.repeat)
            return
        from bench_export import throwaway_database  # noqa: F401  (sets Django up for both parts)

        bench_import(folder, args.import_lines, args.repeat, args.use_database_url)
        bench_evaluate(qrels, runs, args.repeat)


if __name__ == "__main__":
    sys.exit(main() or 0)
