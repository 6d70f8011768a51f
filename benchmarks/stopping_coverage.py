"""How often the stopping estimate's 95% interval holds the truth, on synthetic topics nobody tuned on.

    .venv/bin/python benchmarks/stopping_coverage.py [--topics 40] [--noise 1.5 4] [--seed 2026]
    .venv/bin/python benchmarks/stopping_coverage.py --qrels QRELS --runs RUN… [--depth 100]    # real runs

With --qrels and --runs (TREC files, e.g. Cranfield's BM25 runs from `benchmarks/simulate_cranfield.py
--bm25-only --out DIR`) the same figures come from those topics, the runs' ranks the only features.

Each topic: 12 runs ranking a hidden relevance plus noise (benchmarks/bench_ordering.synthetic_topic, about 5% of a
3,000-document universe relevant; the --noise levels give easier and harder runs), pooled at depth 100 and judged in
the active order with the truth as the assessor. At 10/20/30/50% of each pool judged, estimate_remaining is asked
for the relevant documents still unjudged: the sum over topics against the truth, and how many topics' intervals
hold it, with the interval's Bernoulli term alone and with the model weights' uncertainty added (the delta method,
ordering.PARAMETER_VARIANCE, the default). Then each topic is stopped at an estimated 90% recall (pessimistic end,
checked every 5 judgements from 10): judgements made and recall reached.
"""

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=40)
    parser.add_argument("--noise", type=float, nargs="+", default=[1.5, 4.0])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--qrels", help="A TREC qrels file: real topics instead of synthetic ones (with --runs).")
    parser.add_argument("--runs", nargs="+", default=[], help="TREC run files (with --qrels).")
    parser.add_argument("--depth", type=int, default=100)
    args = parser.parse_args()
    from bench_ordering import synthetic_topic

    from assessments.services import ordering as o

    sets = []
    if args.qrels:
        import os

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        import django

        django.setup()
        from assessments.evaluation.sources import read_qrels_file, read_run_file

        qrels = read_qrels_file(args.qrels)
        runs = dict(read_run_file(path) for path in args.runs)
        real = []
        for topic, judged in sorted(qrels.items()):
            rankings = {name: ranking[topic] for name, ranking in runs.items() if topic in ranking}
            if rankings:
                real.append((o.TopicPool.from_rankings(rankings, args.depth), judged))
        sets.append((f"{args.qrels}, {len(runs)} runs at depth {args.depth}", real))
    else:
        for noise in args.noise:
            rng = np.random.default_rng(args.seed)
            made = []
            for _ in range(args.topics):
                rankings, grades = synthetic_topic(rng, universe=3000, runs=12, depth=100, noise=noise)
                made.append((o.TopicPool.from_rankings(rankings, 100), grades))
            sets.append((f"noise {noise}", made))
    for name, pools in sets:
        topics = []
        for pool, grades in pools:
            judge, sequence = o.make_order("active", pool), []
            while (i := judge.next()) is not None:
                sequence.append(i)
                judge.record(i, grades.get(pool.keys[i], 0))
            topics.append((pool, grades, sequence))
        size = sum(len(p) for p, _, _ in topics)
        print(f"{name}: {len(topics)} topics, {size:,} candidates")
        for variance in (False, True):
            o.PARAMETER_VARIANCE = variance
            label = "Bernoulli + weights" if variance else "Bernoulli alone"
            cells = []
            for budget in (0.1, 0.2, 0.3, 0.5):
                truth = estimated = covered = counted = 0
                for pool, grades, sequence in topics:
                    made = {pool.keys[i]: grades.get(pool.keys[i], 0) for i in sequence[: math.ceil(budget * len(pool))]}
                    e = o.estimate_remaining(pool, made)
                    truth += sum(1 for k in pool.keys if k not in made and grades.get(k, 0) >= 1)
                    if e.remaining is not None:
                        left = sum(1 for k in pool.keys if k not in made and grades.get(k, 0) >= 1)
                        counted += 1
                        estimated += e.remaining
                        covered += e.low <= left <= e.high
                cells.append(f"{budget:.0%}: {estimated:,.0f} est. for {truth:,} left, holds {covered}/{counted}")
            judged = found = relevant = 0
            for pool, grades, sequence in topics:
                made = {}
                relevant += sum(1 for k in pool.keys if grades.get(k, 0) >= 1)
                for n, i in enumerate(sequence, start=1):
                    made[pool.keys[i]] = grades.get(pool.keys[i], 0)
                    if n >= 10 and n % 5 == 0 and o.decide_stop(o.estimate_remaining(pool, made), target_recall=0.9).stop:
                        break
                judged += len(made)
                found += sum(1 for g in made.values() if g >= 1)
            print(f"  {label:<20} " + "; ".join(cells))
            print(f"  {'':<20} stop at an estimated 90%: {judged:,} judgements ({judged / size:.0%}), "
                  f"recall {found / relevant:.1%}")
    o.PARAMETER_VARIANCE = True


if __name__ == "__main__":
    main()
