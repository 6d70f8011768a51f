"""Bandit and metasearch judging orders on rank features alone: MM-NS and Hedge against depth and MaxMean.

    .venv/bin/python benchmarks/bandit_orders.py --qrels Q --runs RUN… [--depth 100] [--tune]
    .venv/bin/python benchmarks/bandit_orders.py --synthetic 40      # TREC-format synthetic runs, nobody tuned on

Replays depth, maxmean, mmns (non-stationary MaxMean, Losada et al. 2017) and hedge (Aslam, Pavlu and Savell 2003)
with the qrels as the assessor (assessments.services.simulation.simulate, the simulator's own code, no document
text: each run's ranks are the only features) and prints, per order, the judgements needed for 50/80/90/95% of the
relevant pooled documents (summed over topics) and the ratio to depth and to MaxMean at each. With --tune it first
tries each MM-NS discount and Hedge beta of a small grid on the same data (use it on Cranfield's odd topics only:
`benchmarks/simulate_cranfield.py --bm25-only --out DIR` writes DIR/cranfield-odd.qrels and the runs), then
prints the table with the best of each. --synthetic N writes N topics of 20 runs of 1,000 lines
(benchmarks/bench_ordering.synthetic_topic, noise --noise) as TREC files and reads them back.
"""

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

ORDERS = ("depth", "maxmean", "mmns", "hedge", "active")  # active: the shared model, rank features alone
DISCOUNTS = (0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)  # 1.0: MaxMean
BETAS = (0.01, 0.1, 0.3, 0.6, 0.8, 0.9, 1.0)  # 1.0: no learning, the runs' rank values fused


def table(result, orders) -> list[str]:
    recalls = list(result.orders["depth"].judgements_to_recall)
    lines = [f"   {'order':<9}" + "".join(f"{f'{p:.0%}':>9}" for p in recalls)
             + "   ×depth at " + "/".join(f"{p:.0%}" for p in recalls) + "   ×maxmean at 90%   seconds"]
    depth, maxmean = result.orders["depth"].judgements_to_recall, result.orders["maxmean"].judgements_to_recall
    for name in orders:
        got = result.orders[name].judgements_to_recall
        ratios = "/".join(f"{got[p] / depth[p]:.3f}" for p in recalls)
        lines.append(f"   {name:<9}" + "".join(f"{got[p]:>9,}" for p in recalls) + f"   {ratios:<27}"
                     f"   {got[0.9] / maxmean[0.9]:.3f}            {result.orders[name].seconds:.1f}")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qrels")
    parser.add_argument("--runs", nargs="+", default=[])
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--tune", action="store_true", help="Grid of MM-NS discounts and Hedge betas on this data.")
    parser.add_argument("--discount", type=float, help="MM-NS discount (default ordering.MMNS_DISCOUNT).")
    parser.add_argument("--beta", type=float, help="Hedge beta (default ordering.HEDGE_BETA).")
    parser.add_argument("--synthetic", type=int, default=0, help="N synthetic topics as TREC files instead.")
    parser.add_argument("--noise", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from bench_ordering import synthetic_trec_files

    from assessments.evaluation.sources import read_qrels_file, read_run_file
    from assessments.services import ordering
    from assessments.services.simulation import simulate

    if args.synthetic:
        qrels_path, run_paths = synthetic_trec_files(args.synthetic, args.noise, args.seed)
        label = f"synthetic: {args.synthetic} topics x 20 runs x 1,000 lines, noise {args.noise}, seed {args.seed}"
    else:
        qrels_path, run_paths = Path(args.qrels), [Path(p) for p in args.runs]
        label = f"{qrels_path} with {len(run_paths)} runs"
    qrels = read_qrels_file(str(qrels_path))
    runs = dict(read_run_file(str(path)) for path in run_paths)
    if args.discount is not None:
        ordering.MMNS_DISCOUNT = args.discount
    if args.beta is not None:
        ordering.HEDGE_BETA = args.beta

    def run(orders):
        return simulate(qrels, runs, depth=args.depth, orders=orders, budgets=())

    if args.tune:
        print(f"tuning on {label}: judgements for 90% recall")
        for constant, grid, order in (("MMNS_DISCOUNT", DISCOUNTS, "mmns"), ("HEDGE_BETA", BETAS, "hedge")):
            scores = {}
            for value in grid:
                setattr(ordering, constant, value)
                scores[value] = run([order]).orders[order].judgements_to_recall[0.9]
            best = min(scores, key=lambda v: (scores[v], v))
            setattr(ordering, constant, best)
            print(f"   {order} {constant}: " + ", ".join(f"{v}: {n:,}" for v, n in scores.items()) + f"; best {best}")
    started = time.perf_counter()
    result = run(list(ORDERS))
    print(f"{label}, depth {args.depth}: {result.topics} topics, {result.candidates:,} candidates, "
          f"{result.relevant:,} relevant; MM-NS discount {ordering.MMNS_DISCOUNT}, Hedge beta {ordering.HEDGE_BETA}")
    print("\n".join(table(result, ORDERS)))
    print(f"   ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
