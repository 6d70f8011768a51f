"""Encoding on the CPU: batches side by side, one torch thread each (now) against one batch at a time on all of
torch's threads (before), in one run, on Cranfield's abstracts as the pool build indexes them (title and text).

    .venv/bin/python benchmarks/bench_encoder_threads.py [--every 1] [--repeats 2] [--queries]

Both paths run the same batches (sorted by length, 32 a batch) of the bundled all-MiniLM-L6-v2 in fp32; they
alternate (before, now, before, now…) so a change in the machine's load falls on both. Prints each run's wall and
CPU seconds, tokens per CPU second and the load average, the RATIOs before / now of CPU seconds and wall seconds
(sums over the repeats), and the largest difference between the two paths' vectors (float rounding: ≤ 1e-6).
CPU seconds are the figure to trust on a shared machine; wall seconds only on an idle one. `--every 7` takes
every 7th abstract (200 of them) for a quick run; `--queries` encodes Cranfield's 225 queries instead.
"""

import argparse
import os
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def cranfield_texts(queries: bool) -> list[str]:
    """Cranfield's abstracts as build_pool indexes them (title, newline, text), or its queries."""
    from assessments.importers.cranfield import parse_documents, parse_queries
    from retrieval.ingest import Problems
    from retrieval.services.work import passage_text

    folder = ROOT / "data" / "cranfield"
    if queries:
        return [record.text("W") for record in parse_queries((folder / "cran.qry").read_text(encoding="utf-8"),
                                                             Problems("cran.qry"))]
    records = parse_documents((folder / "cran.all.1400").read_text(encoding="utf-8"),
                              Problems("cran.all.1400")).values()
    return [passage_text(record.words("T"), record.text("W"), "title+text") for record in records]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=1, help="take every n-th text (1: all)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--queries", action="store_true", help="encode the 225 queries, not the abstracts")
    args = parser.parse_args()

    import django

    django.setup()
    import numpy as np
    import torch

    from retrieval.encoders import Encoder, EncoderSpec
    from retrieval.specs import BUNDLED_ENCODER, resolve_model

    texts = cranfield_texts(args.queries)[:: args.every]
    encoder = Encoder(EncoderSpec(resolve_model(BUNDLED_ENCODER)), device="cpu", dtype="fp32")
    tokens = sum(map(len, encoder.tokenizer(texts, truncation=True, max_length=encoder.max_length)["input_ids"]))
    print(f"{len(texts)} Cranfield {'queries' if args.queries else 'abstracts'} ({tokens} tokens), "
          f"batch size {encoder.batch_size}, torch threads {torch.get_num_threads()}, "
          f"{os.cpu_count()} CPUs; now runs {encoder.batch_workers(len(texts))} batches at once", flush=True)
    paths = (("before", 1), ("now", None))  # the same loaded model: one batch at a time, or torch's threads' worth
    for _, workers in paths:  # warm both up
        encoder.workers = workers
        encoder.encode(texts[:64])

    totals = {"before": [0.0, 0.0], "now": [0.0, 0.0]}
    vectors = {}
    for repeat in range(args.repeats):
        for name, workers in paths:
            encoder.workers = workers
            load, wall, used = os.getloadavg()[0], time.perf_counter(), cpu_seconds()
            vectors[name] = encoder.encode(texts)
            wall, used = time.perf_counter() - wall, cpu_seconds() - used
            totals[name][0] += wall
            totals[name][1] += used
            print(f"  {name:6s} #{repeat + 1}: {wall:6.1f} s wall, {used:6.1f} s CPU, {tokens / used:6.0f} tokens per "
                  f"CPU second, load {load:.2f} → {os.getloadavg()[0]:.2f}", flush=True)
    difference = float(np.abs(vectors["before"] - vectors["now"]).max())
    print(f"largest |before − now| over the vectors: {difference:.2e}")
    print(f"RATIO CPU seconds before / now = {totals['before'][1] / totals['now'][1]:.2f}")
    print(f"RATIO wall seconds before / now = {totals['before'][0] / totals['now'][0]:.2f} (trust it on an idle "
          f"machine only)")


if __name__ == "__main__":
    main()
