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

With --prior-from-odd (issue 28, item 4: the active order seeded with a cross-topic prior, as HiCAL seeds its
learner) it trains the features model (assessments.machine.model.RelevanceModel, the annotator's, on the rank
features of the pools) on the ODD topics' qrels only, takes its probabilities on the EVEN topics' pools (built from
the runs alone: no even qrels are read) as the prior, and reports on the even topics depth, maxmean, active without
a prior, active with it and the prior alone (`machine`), with their ratios:

    .venv/bin/python benchmarks/bandit_orders.py --qrels DIR/cranfield-all.qrels --runs DIR/*.run --prior-from-odd
    .venv/bin/python benchmarks/bandit_orders.py --synthetic 100 --prior-from-odd
"""

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

ORDERS = ("depth", "maxmean", "mmns", "hedge", "active", "active-deep")  # active: the shared model, rank features alone;
# active-deep: the same on the runs' ranks below the pool's depth too (their 1,000 lines where the pool takes 100)
DISCOUNTS = (0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)  # 1.0: MaxMean
BETAS = (0.01, 0.1, 0.3, 0.6, 0.8, 0.9, 1.0)  # 1.0: no learning, the runs' rank values fused


def table(result, orders) -> list[str]:
    recalls = list(result.orders["depth"].judgements_to_recall)
    width = max(9, *map(len, orders))
    lines = [f"   {'order':<{width}}" + "".join(f"{f'{p:.0%}':>9}" for p in recalls)
             + "   ×depth at " + "/".join(f"{p:.0%}" for p in recalls) + "   ×maxmean at 90%   seconds"]
    depth, maxmean = result.orders["depth"].judgements_to_recall, result.orders["maxmean"].judgements_to_recall
    for name in orders:
        got = result.orders[name].judgements_to_recall
        ratios = "/".join(f"{got[p] / depth[p]:.3f}" for p in recalls)
        lines.append(f"   {name:<{width}}" + "".join(f"{got[p]:>9,}" for p in recalls) + f"   {ratios:<27}"
                     f"   {got[0.9] / maxmean[0.9]:.3f}            {result.orders[name].seconds:.1f}")
    return lines


PRIOR_ORDERS = ("depth", "maxmean", "active", "active+prior", "machine")  # --prior-from-odd's table


def cross_topic_prior(qrels, runs, depth, train, test, min_rel=1) -> dict:
    """{topic: {doc: probability of relevant}} on the `test` topics' pools from the features model (RelevanceModel,
    as the annotator fits it, C = 0.1) trained on the rank features and qrels of the `train` topics' pools. The test
    pools are built from the runs alone: their qrels are never read."""
    import numpy as np

    from assessments.machine.model import RelevanceModel
    from assessments.services.simulation import topic_pools

    x, labels, groups = [], [], []
    for topic, pool in topic_pools({t: qrels[t] for t in train}, runs, depth).items():
        x.append(pool.rank_features())
        labels.extend(int(qrels[topic].get(key, 0) >= min_rel) for key in pool.keys)
        groups.extend([topic] * len(pool))
    model = RelevanceModel().fit(np.vstack(x), np.array(labels), np.array(groups), tune_threshold=False)
    unjudged = {t: {} for t in test}  # only which topics: the pools come from the runs
    return {t: dict(zip(pool.keys, model.predict(pool.rank_features()).tolist()))
            for t, pool in topic_pools(unjudged, runs, depth).items()}


def write_prior(prior, path) -> None:
    """The prior as a TREC run (score column: the probability), for `simulate_judging --prior FILE`."""
    with open(path, "w") as out:
        for topic, scores in prior.items():
            ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
            out.writelines(f"{topic} Q0 {doc} {rank} {score!r} odd-topics-prior\n"
                           for rank, (doc, score) in enumerate(ranked, start=1))


def prior_table(qrels, runs, depth, label, write_to=None) -> list[str]:
    """Trained on the odd topics, measured on the even ones: the active order with and without the prior."""
    from assessments.services.simulation import simulate

    odd = [t for t in qrels if int(t) % 2]
    even = [t for t in qrels if not int(t) % 2]
    started = time.perf_counter()
    prior = cross_topic_prior(qrels, runs, depth, odd, even)
    trained = time.perf_counter() - started
    if write_to:
        write_prior(prior, write_to)
    held_out = {t: qrels[t] for t in even}
    result = simulate(held_out, runs, depth=depth, orders=["depth", "maxmean", "active"], budgets=())
    seeded = simulate(held_out, runs, depth=depth, orders=["active", "machine"], prior=prior, budgets=())
    result.orders["active+prior"] = seeded.orders["active"]
    result.orders["machine"] = seeded.orders["machine"]
    lines = [f"{label}, depth {depth}: prior trained on {len(odd)} odd topics ({trained:.1f} s), measured on "
             f"{result.topics} even topics, {result.candidates:,} candidates, {result.relevant:,} relevant; "
             f"prior scores for {seeded.prior['topics']} of them", *table(result, PRIOR_ORDERS)]
    with_prior = result.orders["active+prior"].judgements_to_recall[0.9]
    without = result.orders["active"].judgements_to_recall[0.9]
    lines.append(f"   active with the prior / without at 90%: {with_prior:,} / {without:,} = "
                 f"{with_prior / without:.3f}")
    lines.extend(f"   note: {note}" for note in seeded.notes)
    return lines


def main():
    from bench_ordering import add_trec_arguments, trec_paths

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_trec_arguments(parser)
    parser.add_argument("--tune", action="store_true", help="Grid of MM-NS discounts and Hedge betas on this data.")
    parser.add_argument("--discount", type=float, help="MM-NS discount (default ordering.MMNS_DISCOUNT).")
    parser.add_argument("--beta", type=float, help="Hedge beta (default ordering.HEDGE_BETA).")
    parser.add_argument("--prior-from-odd", action="store_true",
                        help="The active order with a prior trained on the odd topics, measured on the even ones.")
    parser.add_argument("--write-prior", metavar="FILE",
                        help="With --prior-from-odd: write the prior as a TREC run (for simulate_judging --prior).")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from assessments.evaluation.sources import read_qrels_file, read_run_file
    from assessments import ordering
    from assessments.services.simulation import simulate

    qrels_path, run_paths = trec_paths(args)
    if args.synthetic:
        label = f"synthetic: {args.synthetic} topics x 20 runs x 1,000 lines, noise {args.noise}, seed {args.seed}"
    else:
        label = f"{qrels_path} with {len(run_paths)} runs"
    qrels = read_qrels_file(str(qrels_path))
    runs = dict(read_run_file(str(path)) for path in run_paths)
    if args.discount is not None:
        ordering.MMNS_DISCOUNT = args.discount
    if args.beta is not None:
        ordering.HEDGE_BETA = args.beta

    if args.prior_from_odd:
        started = time.perf_counter()
        print("\n".join(prior_table(qrels, runs, args.depth, label, args.write_prior)))
        print(f"   ({time.perf_counter() - started:.0f} s)")
        return

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
