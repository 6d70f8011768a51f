"""Export speed and memory: export_qrels and the CAR Y3 export against the floor of streaming the same rows.

    .venv/bin/python benchmarks/bench_export.py [--judgements 1000000] [--repeat 2] [--use-database-url]

Builds a throwaway database (a SQLite file in a temporary directory; with --use-database-url a test
database beside DATABASE_URL's, created and dropped by Django), writes N judgements of CAR outline
judging in bulk (facets, removals, notes, transitions of three assessors over topics of 100
passages, each with its latest change), then times in the same run:

- floor: iterating a values_list over exactly the rows and columns the exporter reads, unsorted;
- export_qrels (page level, majority, to a file) and export_car_assessments (to a directory).

Prints each export's time, its ratio to its floor and the peak resident memory during each phase
(Linux: VmHWM after resetting it through /proc/self/clear_refs; elsewhere the process's peak).
Aim: within 1.5x of the floor, under 300 MB. Not part of the test suite.
"""

import argparse
import os
import random
import resource
import shutil
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSESSORS = ("alice", "bob", "carol")
PASSAGES_PER_TOPIC = 100
FACETS_PER_TOPIC = 6
BATCH = 5000


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judgements", type=int, default=1_000_000, help="How many judgements to write.")
    parser.add_argument("--repeat", type=int, default=2, help="Time each phase this often, keep the fastest.")
    parser.add_argument(
        "--use-database-url", action="store_true",
        help="Use a throwaway test database on DATABASE_URL's server instead of a temporary SQLite file.",
    )
    args = parser.parse_args(argv)

    with throwaway_database("bench-export-", args.use_database_url) as (workdir, connection):
        started = time.perf_counter()
        populate(args.judgements)
        print(f"database: {connection.vendor} ({connection.settings_dict['NAME']})")
        print(f"wrote {args.judgements:,} judgements (and their changes) in {time.perf_counter() - started:.1f} s")
        run_phases(workdir, args.repeat)


@contextmanager
def throwaway_database(prefix, use_database_url):
    """Set Django up on a database made for this run and drop it after; yields (work folder, connection).

    A temporary SQLite file by default; with use_database_url a test database on DATABASE_URL's server.
    """
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    if not use_database_url:
        os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'bench.sqlite3'}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    created_test_db = None
    try:
        if use_database_url:
            created_test_db = connection.creation.create_test_db(verbosity=0, autoclobber=True)
        else:
            call_command("migrate", verbosity=0)
        yield workdir, connection
    finally:
        if created_test_db:
            connection.creation.destroy_test_db(created_test_db, verbosity=0)
        shutil.rmtree(workdir, ignore_errors=True)


# --- data -------------------------------------------------------------------------------------------------


def populate(total):
    """Write `total` judgements of outline judging, each with its one change, in bulk batches."""
    from django.contrib.auth import get_user_model

    from assessments.models import Facet, Judgement, JudgementChange, Layer, Topic
    from assessments.models.judgements import RELEVANCE_GRADE
    from retrieval.models import Collection, Passage

    rng = random.Random(20191011)
    collection = Collection.objects.create(name="bench")
    users = [get_user_model().objects.create(username=name) for name in ASSESSORS]
    per_topic = len(users) * PASSAGES_PER_TOPIC * 2.5  # facet, some removals, some notes, a transition
    topic_count = max(1, int(total / per_topic) + 1)
    relevances = ["must", "should", "can"]
    start = datetime(2019, 10, 11, tzinfo=UTC)
    writer = BulkWriter()
    made = 0

    for t in range(topic_count):
        topic = Topic.objects.create(collection=collection, external_id=f"tqa2:L_{t:05d}", kind=Topic.Kind.OUTLINE,
                                     title=f"Topic {t}")
        headings = [f"{topic.external_id}/T_{t:05d}{h}" for h in range(FACETS_PER_TOPIC)]
        Facet.objects.bulk_create(
            Facet(topic=topic, heading_id=h, heading=f"heading {i}", position=i) for i, h in enumerate(headings)
        )
        Passage.objects.bulk_create(
            Passage(collection=collection, external_id=uuid.UUID(int=rng.getrandbits(128)).hex + "abcdefgh",
                    text="")
            for _ in range(PASSAGES_PER_TOPIC)
        )
        passages = list(Passage.objects.filter(collection=collection).order_by("-pk")
                        .values_list("pk", flat=True)[:PASSAGES_PER_TOPIC])[::-1]
        for user in users:
            previous = None
            for passage in passages:
                rows = [(Layer.FACET, passage, None)]
                if rng.random() < 0.2:
                    rows.append((Layer.REMOVAL, passage, None))
                if rng.random() < 0.33:
                    rows.append((Layer.NOTES, passage, None))
                if previous is not None:
                    rows.append((Layer.TRANSITION, previous, passage))
                previous = passage
                for layer, p1, p2 in rows:
                    if made == total:
                        break
                    made += 1
                    if layer == Layer.FACET:
                        value = [{"facet": h, "relevance": rng.choice(relevances)}
                                 for h in rng.sample(headings, rng.choice((1, 1, 2)))]
                        grade = max(RELEVANCE_GRADE[v["relevance"]] for v in value)
                    elif layer == Layer.REMOVAL:
                        value = rng.random() < 0.9
                        grade = 0 if value else None
                    elif layer == Layer.NOTES:
                        value, grade = f"note {made}: relevant, mentions the facet", None
                    else:
                        value, grade = rng.choice(("same", "coherent", "switch")), None
                    moment = start + timedelta(seconds=made, microseconds=rng.randrange(1, 1_000_000))
                    runs = [f"run{rng.randrange(10)}"]
                    writer.add(
                        Judgement, id=made, assessor_id=user.pk, layer=str(layer.value), topic_id=topic.pk,
                        passage_id=p1, passage2_id=p2, item="", key=Judgement.make_key(layer, topic.pk, p1, p2),
                        value=value, grade=grade, run_ids=runs, latest_change_id=made, client_time=moment,
                        client_seq=0, updated_at=moment, adjudicated=False,
                    )
                    writer.add(
                        JudgementChange, id=made, change_id=uuid.UUID(int=made), judgement_id=made,
                        assessor_id=user.pk, layer=str(layer.value), value=value, client_time=moment, client_seq=0,
                        received_at=moment, session_id=f"session-{user.pk}-{t}", run_ids=runs, source="import",
                    )
        if made == total:
            break
    writer.flush()
    reset_sequences()


class BulkWriter:
    """INSERTs rows (column values by field name) with executemany, skipping the model layer; batched.

    Values are adapted per field with Django's own get_db_prep_save, once per distinct field kind that
    needs it (JSON, datetimes, UUIDs), so the rows are stored exactly as the ORM would store them.
    Judgement and JudgementChange point at each other; their foreign keys are checked at commit.
    """

    def __init__(self):
        self.rows, self.pending = {}, 0

    def add(self, model, **values):
        self.rows.setdefault(model, []).append(values)
        self.pending += 1
        if self.pending >= 2 * BATCH:
            self.flush()

    def flush(self):
        from django.db import connection, transaction

        with transaction.atomic(), connection.cursor() as cursor:
            for model, rows in self.rows.items():
                if not rows:
                    continue
                fields = [model._meta.get_field(name) for name in rows[0]]
                columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
                marks = ", ".join(["%s"] * len(fields))
                sql = f"INSERT INTO {connection.ops.quote_name(model._meta.db_table)} ({columns}) VALUES ({marks})"
                adapt = [self.adapter(f, connection) for f in fields]
                cursor.executemany(
                    sql, [[a(v) if a else v for a, v in zip(adapt, row.values(), strict=True)] for row in rows]
                )
                rows.clear()
        self.pending = 0

    @staticmethod
    def adapter(field, connection):
        if field.get_internal_type() in ("JSONField", "DateTimeField", "UUIDField"):
            return lambda value: field.get_db_prep_save(value, connection)
        return None


def reset_sequences():
    from django.core.management.color import no_style
    from django.db import connection

    from assessments.models import Judgement, JudgementChange

    with connection.cursor() as cursor:
        for sql in connection.ops.sequence_reset_sql(no_style(), [Judgement, JudgementChange]):
            cursor.execute(sql)


# --- phases -----------------------------------------------------------------------------------------------


def run_phases(workdir, repeat):
    from assessments.exporters import car_y3, qrels
    from assessments.exporters.common import raw_rows, resolve_scope

    scope = resolve_scope(collection="bench")
    devnull = open(os.devnull, "w")

    def floor(queryset):
        def stream():  # what the brief calls the floor: a values_list over the same rows, unsorted
            for _ in queryset.order_by().iterator(2000):
                pass
        return stream

    def driver_floor(queryset):
        def stream():  # the same rows as the driver returns them, without Django's conversions
            for _ in raw_rows(queryset.order_by()):
                pass
        return stream

    def command(*args):
        def run():
            from django.core.management import call_command

            call_command(*args, stdout=devnull)
        return run

    def export_y3():
        shutil.rmtree(workdir / "y3", ignore_errors=True)
        command("export_car_assessments", "--collection", "bench", "--out", str(workdir / "y3"))()

    qrels_file = str(workdir / "bench.qrels")
    cases = [
        ("export_qrels (page level, majority)", qrels.page_level_rows(scope),
         command("export_qrels", "--collection", "bench", "--out", qrels_file)),
        ("export_car_assessments", car_y3.export_rows(scope), export_y3),
        ("export_qrels --level section", qrels.section_level_rows(scope),
         command("export_qrels", "--collection", "bench", "--level", "section", "--out", qrels_file + ".section")),
    ]
    for name, rows, export in cases:
        floor_time = measure(floor(rows), repeat)
        driver_time = measure(driver_floor(rows), repeat)
        export_time = measure(export, repeat)
        print(f"{name}:")
        print(f"  export            wall {export_time.wall:7.2f} s   cpu {export_time.cpu:7.2f} s   "
              f"peak memory {export_time.peak}")
        print(f"  floor             wall {floor_time.wall:7.2f} s   cpu {floor_time.cpu:7.2f} s   "
              f"peak memory {floor_time.peak}   (values_list over the same rows, unsorted)")
        print(f"  driver floor      wall {driver_time.wall:7.2f} s   cpu {driver_time.cpu:7.2f} s   "
              "(the same rows straight from the driver, no conversions)")
        print(f"  ratio to floor    wall {export_time.wall / floor_time.wall:7.2f}x   "
              f"cpu {export_time.cpu / floor_time.cpu:7.2f}x")
    lines = sum(1 for _ in open(qrels_file))
    files = sum(1 for _ in (workdir / "y3").iterdir())
    print(f"output: {lines:,} page-level qrels lines, {files:,} Y3 files")


@dataclass
class Timing:
    wall: float
    cpu: float
    peak: str


def measure(phase, repeat) -> Timing:
    """Fastest wall and CPU seconds over `repeat` runs of `phase`, and the peak resident memory during them."""
    wall = cpu = None
    peak = 0
    for _ in range(repeat):
        resettable = reset_peak()
        started, started_cpu = time.perf_counter(), time.process_time()
        phase()
        elapsed, elapsed_cpu = time.perf_counter() - started, time.process_time() - started_cpu
        wall = elapsed if wall is None else min(wall, elapsed)
        cpu = elapsed_cpu if cpu is None else min(cpu, elapsed_cpu)
        peak = max(peak, peak_kib() if resettable else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    label = "" if reset_peak() else " (process peak)"
    return Timing(wall, cpu, f"{peak / 1024:.0f} MB{label}")


def reset_peak() -> bool:
    """Reset the kernel's record of this process's peak RSS (Linux); False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def peak_kib() -> int:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


if __name__ == "__main__":
    main()
