"""Peak memory of a run upload against the size of the file, whatever it unpacks to.

    .venv/bin/python benchmarks/bench_upload_memory.py [--sizes 10 50 190] [--topics 50]

Builds a throwaway SQLite database with an ad hoc campaign of --topics topics (1,000 documents each) and, for
each size (MB unpacked), three gzip files written in pieces to a temporary folder (never held whole here):

- repeated: one run line over and over (the 480 KB file that unpacked to 190 MB): every line a duplicate;
- distinct: lines of new documents, padded so that gzip packs them about 20x: more lines than the campaign
  can take;
- full run: the largest valid run, every topic with its 1,000 documents (size-independent, stored).

Each goes through annotation.services.submissions.upload_run, what POST /api/runs/ calls, with the default
limits (API_MAX_UNCOMPRESSED_BYTES 200 MiB, API_MAX_COMPRESSION_RATIO 100); tracemalloc gives the peak of
Python's allocations (zlib's buffers included). Beside each, the baseline: unpacking the same file whole and
decoding it to text, as uploads were read before (the 190 MB case cost 1.05 GB and 21 s then, parse included).
Not part of the test suite.
"""

import argparse
import gzip
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
MB = 1024 * 1024


def write_gzip(path, lines, size):
    """Write generated lines (an iterator of str) gzipped until `size` bytes of text; returns the bytes written."""
    written = 0
    with gzip.open(path, "wt", compresslevel=6) as out:
        chunk = []
        for line in lines:
            chunk.append(line)
            written += len(line)
            if len(chunk) == 10_000:
                out.write("".join(chunk))
                chunk.clear()
            if written >= size:
                break
        out.write("".join(chunk))
    return written


def repeated():
    while True:
        yield "301 Q0 d1 1 3.5 teamA\n"


def distinct(pad="x" * 40):
    i = 0
    while True:
        i += 1
        yield f"301 Q0 doc-{i}-{pad} {i} {1e6 - i} teamA\n"


def full_run(topics):
    for t in range(topics):
        for d in range(1000):
            yield f"{1000 + t} Q0 d{d} {d + 1} {1000 - d} teamA\n"


def measure(action):
    tracemalloc.start()
    start = time.perf_counter()
    try:
        outcome = action()
    except Exception as exc:  # noqa: BLE001  (the outcome is what the benchmark prints)
        last = exc.problems[-1].message if getattr(exc, "problems", None) else str(exc)
        outcome = f"{type(exc).__name__}: {last[:100]}"
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return outcome, seconds, peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[10, 50, 190], help="MB unpacked")
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--no-baseline", action="store_true")
    args = parser.parse_args()
    from bench_export import throwaway_database

    with throwaway_database("bench-upload-", False) as (workdir, _):
        from django.contrib.auth import get_user_model

        from annotation.services.campaigns import create_campaign
        from annotation.services.submissions import upload_run
        from assessments.importers.trec import insert_rows
        from assessments.models import Run, Topic
        from retrieval.ingest import decode_text
        from retrieval.models import Collection, Passage

        collection = Collection.objects.create(name="web", kind=Collection.Kind.DOCUMENTS)
        Topic.objects.bulk_create([Topic(collection=collection, external_id=str(1000 + t), kind=Topic.Kind.ADHOC)
                                   for t in range(args.topics)])
        insert_rows(Passage, ["collection", "external_id", "text"], ((collection.pk, f"d{d}", "") for d in range(1000)))
        campaign = create_campaign(name="bench", task="adhoc", topics=[str(1000 + t) for t in range(args.topics)])
        owner = get_user_model().objects.create_user("team")
        cases = [(f"repeated {size:g} MB", repeated(), size * MB) for size in args.sizes]
        cases += [(f"distinct {size:g} MB", distinct(), size * MB) for size in args.sizes]
        cases.append((f"full run ({args.topics} topics x 1,000)", full_run(args.topics), float("inf")))
        print(f"{'file':32} {'gzip':>9} {'unpacked':>9}  {'upload: peak':>12} {'time':>7}   "
              f"{'whole: peak':>11} {'time':>7}   outcome")
        for name, lines, size in cases:
            path = Path(workdir) / "upload.txt.gz"
            unpacked = write_gzip(path, lines, size)
            packed = path.stat().st_size

            def upload():
                with path.open("rb") as handle:
                    handle.size = packed  # what Django's UploadedFile gives
                    run = upload_run(campaign=campaign, owner=owner, file=handle, filename=path.name, limit_runs=False)
                    entries = run.entries.count()
                    Run.objects.filter(pk=run.pk).delete()
                    return f"stored, {entries:,} entries"

            outcome, seconds, peak = measure(upload)
            if args.no_baseline:
                whole = "", ""
            else:
                _, whole_seconds, whole_peak = measure(lambda: len(decode_text(path.read_bytes(), "f").split("\n")))
                whole = f"{whole_peak / MB:9.1f} MB", f"{whole_seconds:6.2f}s"
            print(f"{name:32} {packed / MB:7.2f}MB {unpacked / MB:7.1f}MB  {peak / MB:9.1f} MB {seconds:6.2f}s   "
                  f"{whole[0]:>11} {whole[1]:>7}   {outcome}")
            os.remove(path)


if __name__ == "__main__":
    sys.exit(main() or 0)
