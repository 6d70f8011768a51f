"""Choosing the next candidate to judge, and replaying every judging order at TREC scale.

    .venv/bin/python benchmarks/bench_ordering.py [--candidates 2000] [--runs 20] [--repeats 7] [--trec-topics 100]

1. One topic of `--candidates` candidates pooled from `--runs` synthetic runs (depth 100; each run a
   noisy ranking of hidden relevance, about 5% relevant): the time of next_candidate(pool,
   judgements, order) - the stateless call the live queue makes, replaying the judgements so far -
   with 0, a quarter, half and all but one of the candidates judged (in that order's own sequence),
   for every order, with rank features alone and with 384-dimensional embeddings and a seed
   (active). Prints milliseconds (median of --repeats; wall clock, and the process's CPU time, which
   other processes on a shared machine do not inflate as much) with the pool prepared as a live queue
   keeps it (features computed once per topic, the active model last fitted at the refit point before:
   every timed call refits, its worst case, since between two refit points a queue gets the kept
   ranking) and from a fresh pool, and the ratio to depth order; the aim is under 10 ms.
2. TREC scale: `--trec-topics` topics x 20 runs of 1,000 documents written as TREC run files and a
   qrels file, then `manage.py simulate_judging --depth 100` on them (every order; rank features,
   as files give): prints the pool size and the time of reading and of each order; the aim is all
   orders in under a minute.
"""

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def synthetic_topic(rng, universe, runs, depth, noise):
    """(rankings {run: [doc…]}, grades {doc: grade}) of one topic: runs rank the hidden relevance plus noise."""
    hidden = rng.normal(size=universe)
    grades = {f"d{i}": int(h > 1.65) for i, h in enumerate(hidden)}  # about 5% relevant
    rankings = {}
    for r in range(runs):
        skill = 0.5 + rng.random()
        order = np.argsort(-(skill * hidden + noise * rng.normal(size=universe)))
        rankings[f"run{r:02d}"] = [f"d{i}" for i in order[:depth]]
    return rankings, grades


def synthetic_trec_files(topics: int, noise: float, seed: int) -> tuple[Path, list[Path]]:
    """`topics` synthetic topics of 20 runs x 1,000 documents written as TREC run files and a qrels file of the
    depth-100 pool, in a new temporary folder: (qrels path, run paths)."""
    rng = np.random.default_rng(seed)
    folder = Path(tempfile.mkdtemp(prefix="bench-ordering-"))
    runs = {f"run{r:02d}": [] for r in range(20)}
    qrels = []
    for t in range(1, topics + 1):
        rankings, grades = synthetic_topic(rng, universe=3000, runs=20, depth=1000, noise=noise)
        for name, ranking in rankings.items():
            runs[name].extend(f"{t} Q0 {doc} {rank} {1000 - rank} {name}" for rank, doc in enumerate(ranking, 1))
        pooled = {doc for ranking in rankings.values() for doc in ranking[:100]}
        qrels.extend(f"{t} 0 {doc} {grades[doc]}" for doc in sorted(pooled))
    paths = []
    for name, lines in runs.items():
        paths.append(folder / f"{name}.run")
        paths[-1].write_text("\n".join(lines) + "\n")
    (folder / "qrels").write_text("\n".join(qrels) + "\n")
    return folder / "qrels", paths


def add_trec_arguments(parser):
    """The data arguments of the benchmarks that replay judging orders on TREC files (bandit_orders.py,
    active_variants.py): --qrels and --runs, the pool's --depth, or --synthetic N topics (--noise, --seed) instead."""
    parser.add_argument("--qrels")
    parser.add_argument("--runs", nargs="+", default=[])
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--synthetic", type=int, default=0, help="N synthetic topics as TREC files instead.")
    parser.add_argument("--noise", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=12)


def trec_paths(args) -> tuple[Path, list[Path]]:
    """(qrels path, run paths) of the arguments add_trec_arguments added: synthetic_trec_files(--synthetic, --noise,
    --seed) where --synthetic is given, else --qrels and --runs."""
    if args.synthetic:
        return synthetic_trec_files(args.synthetic, args.noise, args.seed)
    return Path(args.qrels), [Path(p) for p in args.runs]


def previous_fit(pool, made, order):
    """Leave `pool` as a live queue's is when `made` arrives: the active model last fitted at the refit point
    before the one `made` reaches (whose weights the next fit starts from), its ranking for `made` not kept."""
    from assessments.ordering import batch_points, next_candidate

    if order == "active":
        points = [p for p in batch_points(len(made)) if p <= len(made)]
        pool._cache.pop("model_rankings", None)
        pool._cache.pop("last_weights", None)
        if len(points) >= 2:
            next_candidate(pool, dict(list(made.items())[: points[-2]]), order)
    pool._cache.pop("model_rankings", None)  # the active model is fitted on the timed call


def per_call(args):
    from assessments.ordering import ORDERS, TopicPool, make_order, next_candidate

    rng = np.random.default_rng(11)
    # Little overlap between runs, so 20 runs x depth 100 pool about 2,000 candidates.
    rankings, grades = synthetic_topic(rng, universe=args.candidates * 10, runs=args.runs, depth=100, noise=12.0)
    plain = TopicPool.from_rankings(rankings, 100)
    vectors = {key: rng.normal(size=384) for key in plain.keys}
    embedded = TopicPool.from_rankings(rankings, 100, features=vectors, seed=rng.normal(size=384))
    print(f"1. next_candidate on one topic: {len(plain):,} candidates from {args.runs} runs at depth 100; "
          f"milliseconds, median of {args.repeats}: with the topic's pool prepared (its features computed once "
          "and kept, as a queue keeps a pool's topics; the active model refitted on every call, from the last "
          "refit point's weights), wall clock (its "
          "process CPU time in brackets: on a shared machine the wall clock waits for other processes) / from a "
          "fresh pool")
    stages = [0, len(plain) // 4, len(plain) // 2, len(plain) - 1]
    print(f"   {'order':<18}" + "".join(f"{f'{n:,} judged':>24}" for n in stages) + "   vs depth (prepared, half)")
    depth_at_half = None
    for label, pool, orders in (("", plain, ORDERS), (" +embeddings", embedded, ["active"])):
        for order in orders:
            judge, sequence = make_order(order, pool), []
            while (i := judge.next()) is not None:
                sequence.append(pool.keys[i])
                judge.record(i, grades.get(pool.keys[i], 0))
            cells = []
            for n in stages:
                made = {key: grades.get(key, 0) for key in sequence[:n]}
                timings = {}
                cpu = []
                for fresh in (False, True):
                    times = []
                    for _ in range(args.repeats):
                        if fresh:
                            pool._cache.clear()
                        else:
                            previous_fit(pool, made, order)
                        started, started_cpu = time.perf_counter(), time.process_time()
                        next_candidate(pool, made, order)
                        times.append((time.perf_counter() - started) * 1000)
                        if not fresh:
                            cpu.append((time.process_time() - started_cpu) * 1000)
                    timings[fresh] = statistics.median(times)
                cells.append((timings[False], statistics.median(cpu), timings[True]))
            if order == "depth":
                depth_at_half = cells[2][0]
            ratio = cells[2][0] / depth_at_half if depth_at_half else float("nan")
            print(f"   {order + label:<18}" + "".join(f"{f'{a:.2f} ({c:.2f}) / {b:.2f}':>24}" for a, c, b in cells)
                  + f"   {ratio:>8.0f}x")
            worst = max(a for a, _, _ in cells)
            worst_cpu = max(c for _, c, _ in cells)
            print(f"   {'':<18}worst prepared: {worst:.2f} ms wall, {worst_cpu:.2f} ms CPU "
                  f"({'under' if worst_cpu < 10 else 'OVER'} the 10 ms aim in CPU time)")


def trec_scale(args):
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    qrels, paths = synthetic_trec_files(args.trec_topics, noise=0.5, seed=12)
    print(f"2. simulate_judging at TREC scale: {args.trec_topics} topics x 20 runs x 1,000 lines "
          f"({args.trec_topics * 20_000:,} run lines), depth 100")
    out = io.StringIO()
    started = time.perf_counter()
    call_command("simulate_judging", "--qrels", str(qrels), "--runs", *map(str, paths), "--depth", "100",
                 "--no-progress", stdout=out)
    total = time.perf_counter() - started
    text = out.getvalue().splitlines()
    print("   " + text[0])
    print("   " + text[-1])
    print(f"   whole command: {total:.1f} s (aim: every order in under a minute)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--trec-topics", type=int, default=100, help="0 skips the TREC-scale simulation.")
    args = parser.parse_args()
    per_call(args)
    if args.trec_topics:
        trec_scale(args)


if __name__ == "__main__":
    main()
