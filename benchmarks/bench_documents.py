"""Document import against a bare COPY of the same rows, on PostgreSQL, in one run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_documents \\
        .venv/bin/python benchmarks/bench_documents.py [--documents 1000000] [--repeat 1] [--gzip]

Writes --documents short MS MARCO-like documents (`id<TAB>text`, 25 to 60 words, seeded) to a temporary file,
then in a throwaway test database beside DATABASE_URL's (created and dropped here):

- import: retrieval.documents.import_documents into a new collection, as `manage.py import_documents` does
  (stream, decode, check every id, COPY in one transaction);
- bare COPY: the same rows (collection, id, title, text, metadata, created_at), formatted in memory before the
  clock starts, sent by one COPY FROM STDIN into the same table (its indexes, unique check and foreign keys), in
  one transaction: what the database itself costs.

Each is rolled back after it is timed (the table is the same for both). Prints docs/s of each and their ratio
(aim: import >= 20,000 docs/s and <= 1.5x the bare COPY). Not part of the test suite.
"""

import argparse
import gzip
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
WORDS = ("the of and to in a is that for it as was with be by on not he this are or his from at which but have an "
         "they you were her she there one all we their been has when who will more no if out so said what up its "
         "about into than them can only other new some could time these two may then do first any my now such like "
         "our over man me even most made after also did many before must through back years where much your way "
         "well down should because each just those people how too little state good very make world still own see "
         "men work long get here between both life being under never day same another know while last might us "
         "great old year off come since against go came right used take three").split()


class Rollback(Exception):
    pass


def write_documents(path: Path, count: int, packed: bool, seed: int = 11) -> int:
    rng = random.Random(seed)
    opener = gzip.open if packed else open
    with opener(path, "wt", encoding="utf-8") as out:
        for n in range(count):
            out.write(f"{n}\t{' '.join(rng.choices(WORDS, k=rng.randint(25, 60)))}.\n")
    return path.stat().st_size


def timed(connection, action):
    """Seconds of `action` inside a transaction that is rolled back after."""
    from django.db import transaction

    start = time.perf_counter()
    elapsed = None
    try:
        with transaction.atomic():
            action()
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
            elapsed = time.perf_counter() - start
            raise Rollback
    except Rollback:
        pass
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--gzip", action="store_true", help="Write the file gzipped.")
    args = parser.parse_args()
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/bench_documents")
    from bench_export import throwaway_database

    with tempfile.TemporaryDirectory(prefix="bench-documents-") as tmp:
        path = Path(tmp) / ("docs.tsv.gz" if args.gzip else "docs.tsv")
        size = write_documents(path, args.documents, args.gzip)
        with throwaway_database("bench-documents-", True) as (_, connection):
            if connection.vendor != "postgresql":
                sys.exit("DATABASE_URL must name a PostgreSQL server")
            from django.utils import timezone

            from retrieval.bulk import _copy_text
            from retrieval.documents import import_documents
            from retrieval.models import Collection, Passage

            Collection.objects.create(name="bench", kind=Collection.Kind.DOCUMENTS)
            bare = Collection.objects.create(name="bare", kind=Collection.Kind.DOCUMENTS)
            created = _copy_text(timezone.now()).replace("%%", "%")
            lines = []
            with (gzip.open if args.gzip else open)(path, "rt", encoding="utf-8") as handle:
                for line in handle:
                    docid, text = line.rstrip("\n").split("\t")
                    lines.append(f"{bare.pk}\t{docid}\t\t{text}\t{{}}\t{created}\n")
            data = "".join(lines).encode()
            del lines
            table = connection.ops.quote_name(Passage._meta.db_table)
            columns = "collection_id, external_id, title, text, metadata, created_at"

            def ours():
                result = import_documents([path], "bench")
                assert result.created == args.documents, result.created

            def copy():
                with connection.cursor() as cursor:
                    with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as out:
                        for start in range(0, len(data), 1 << 20):
                            out.write(data[start : start + (1 << 20)])

            times = {"import": [], "copy": []}
            for _ in range(args.repeat):
                times["import"].append(timed(connection, ours))
                times["copy"].append(timed(connection, copy))
            ours_s, copy_s = min(times["import"]), min(times["copy"])
            n = args.documents
            print(f"{n:,} documents, {size / 1e6:,.1f} MB {'gzip ' if args.gzip else ''}TSV, PostgreSQL, best of "
                  f"{args.repeat}")
            print(f"  import_documents  {ours_s:7.2f} s  {n / ours_s:10,.0f} docs/s")
            print(f"  bare COPY         {copy_s:7.2f} s  {n / copy_s:10,.0f} docs/s")
            print(f"  ratio             {ours_s / copy_s:7.2f}x  (aims: >= 20,000 docs/s, <= 1.5x)")


if __name__ == "__main__":
    main()
