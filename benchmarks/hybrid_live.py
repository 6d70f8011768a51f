"""The hybrid order as the live queue serves it (issue 41): `hybrid.plan` replayed batch by batch with the qrels as
the assessors, on benchmarks/hybrid_judging.py's synthetic TREC-like collection. Prints the time of each plan (what
a page computes when the labels changed), of the intervals (the results page), how many runs' MAP intervals hold the
whole-pool MAP half-way through the budget and at its end, and τ by MAP against the whole pool judged for the live
replay and for `hybrid.judge` (the simulator's) on the same judge and budget.

    .venv/bin/python benchmarks/hybrid_live.py [--seed 201] [--judge 0] [--budget 0.1] [--per-call 50]

`--per-call`: labels given between two plans (a page's worth of assessors at once; the simulator's batches are a
twentieth of the budget). Pure numpy (no database).
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from assessments.services import hybrid  # noqa: E402
from hybrid_judging import make_collection, make_judge, pools_of  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=201)
    parser.add_argument("--judge", type=int, default=0)
    parser.add_argument("--budget", type=float, default=0.1)
    parser.add_argument("--per-call", type=int, default=50)
    args = parser.parse_args()
    qrels, runs, latent = make_collection(args.seed)
    pools = pools_of(qrels, runs)
    flat = hybrid.flatten(pools, runs)
    flat = hybrid.flatten(pools, runs, make_judge(flat, qrels, latent, 100 * args.seed + args.judge))
    grades = np.array([qrels.get(t, {}).get(d, 0) for t, d in flat.keys], dtype=np.float64)
    whole = hybrid.run_scores(flat, grades >= 1)["AP"]
    budget = hybrid.budget_count(len(flat), args.budget)
    given, times, halfway = {}, [], None
    while True:
        started = time.perf_counter()
        plan = hybrid.plan(flat, given, budget)
        times.append(time.perf_counter() - started)
        if not plan.batch:
            break
        if halfway is None and len(given) >= budget // 2:
            midway = hybrid.intervals(flat, plan.judged)
            halfway = (len(given), int(((midway.low["AP"] <= whole) & (whole <= midway.high["AP"])).sum()))
        for i in plan.batch[: args.per_call]:
            given[i] = grades[i]
    started = time.perf_counter()
    found = hybrid.intervals(flat, plan.judged)
    interval_s = time.perf_counter() - started
    live = hybrid.run_scores(flat, hybrid.fill(flat, plan.judged))["AP"]
    held = int(((found.low["AP"] <= whole) & (whole <= found.high["AP"])).sum())
    simulated = hybrid.judge(flat, lambda rows: grades[rows], args.budget, seed=0)
    offline = hybrid.run_scores(flat, hybrid.fill(flat, simulated))["AP"]
    print(f"{len(flat):,} candidates, {len(flat.runs)} runs, budget {budget:,} ({args.budget:g}), {len(times)} plans "
          f"of {args.per_call} labels: median {statistics.median(times):.2f} s, max {max(times):.2f} s; intervals "
          f"{interval_s:.1f} s (held the whole-pool MAP for {held} of {len(flat.runs)} runs; after {halfway[0]:,} "
          f"labels, {halfway[1]})")
    print(f"τ by MAP against the whole pool judged: live {hybrid.kendall_tau(live, whole):.3f}, "
          f"hybrid.judge {hybrid.kendall_tau(offline, whole):.3f}")


if __name__ == "__main__":
    main()
