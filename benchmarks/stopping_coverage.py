"""How often the stopping estimate's 95% interval holds the truth, on synthetic topics nobody tuned on.

    .venv/bin/python benchmarks/stopping_coverage.py [--topics 40] [--noise 1.5 4] [--seed 2026] [--sample 0.05]
    .venv/bin/python benchmarks/stopping_coverage.py --qrels QRELS --runs RUN… [--depth 100]    # real runs

With --qrels and --runs (TREC files, e.g. Cranfield's BM25 runs from `benchmarks/simulate_cranfield.py
--bm25-only --out DIR`) the same figures come from those topics, the runs' ranks the only features.

Each topic: 12 runs ranking a hidden relevance plus noise (benchmarks/bench_ordering.synthetic_topic, about 5% of a
3,000-document universe relevant; the --noise levels give easier and harder runs), pooled at depth 100 and judged in
the active order with the truth as the assessor. At 10/20/30/50% of each pool judged, estimate_remaining is asked
for the relevant documents still unjudged: the sum over topics against the truth, and how many topics' intervals
hold it, with the interval's Bernoulli term alone and with the model weights' uncertainty added (the delta method,
ordering.PARAMETER_VARIANCE, the default). Then each topic is stopped at an estimated 90% recall (pessimistic end,
checked every 5 judgements from 10): judgements made and recall reached. A third row (--sample, default 5%; 0
leaves it out) judges a uniform random sample of each pool first (ordering.draw_sample), the order's picks after
it, and asks ordering.mixed_estimate, the model corrected by the sample's residuals; its counts include the sample.
--max-topics N keeps the first N real topics for a shorter run.
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
    parser.add_argument("--sample", type=float, help="Share of each pool judged first as a uniform random sample "
                        "for mixed_estimate (default ordering.SAMPLE_SHARE, 5%%; 0: none).")
    parser.add_argument("--max-topics", type=int, help="Only the first N topics (a shorter run on a busy machine).")
    args = parser.parse_args()
    from bench_ordering import synthetic_topic

    from assessments import ordering as o

    args.sample = o.SAMPLE_SHARE if args.sample is None else args.sample

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
        real = real[: args.max_topics]
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
        plain, mixed = [], []
        for k, (pool, grades) in enumerate(pools):
            plain.append((pool, grades, (), judging_sequence(o, pool, grades, ())))
            if args.sample:
                sample = o.draw_sample(pool, {}, math.ceil(args.sample * len(pool)), seed=k)
                mixed.append((pool, grades, sample, judging_sequence(o, pool, grades, sample)))
        size = sum(len(t[0]) for t in plain)
        print(f"{name}: {len(plain)} topics, {size:,} candidates")
        rows = [("Bernoulli alone", plain, False, o.estimate_remaining),
                ("Bernoulli + weights", plain, True, o.estimate_remaining)]
        if args.sample:
            rows.append((f"+ {args.sample:.0%} sample", mixed, True,
                         lambda pool, made, sample=None: o.mixed_estimate(pool, made, sample)))
        for label, topics, variance, estimate in rows:
            o.PARAMETER_VARIANCE = variance
            cells = []
            for budget in (0.1, 0.2, 0.3, 0.5):
                truth = estimated = covered = counted = 0
                for pool, grades, sample, sequence in topics:
                    made = judged_at(pool, grades, sample, sequence, math.ceil(budget * len(pool)))
                    e = estimate(pool, made, sample) if sample else estimate(pool, made)
                    left = sum(1 for k in pool.keys if k not in made and grades.get(k, 0) >= 1)
                    truth += left
                    if e.remaining is not None:
                        counted += 1
                        estimated += e.remaining
                        covered += e.low <= left <= e.high
                cells.append(f"{budget:.0%}: {estimated:,.0f} est. for {truth:,} left, holds {covered}/{counted}")
            judged = found = relevant = 0
            for pool, grades, sample, sequence in topics:
                relevant += sum(1 for k in pool.keys if grades.get(k, 0) >= 1)
                n = len(sample)
                while True:
                    n += 1
                    made = judged_at(pool, grades, sample, sequence, n)
                    if n >= len(pool) or (n >= 10 and n % 5 == 0 and o.decide_stop(
                            estimate(pool, made, sample) if sample else estimate(pool, made),
                            target_recall=0.9).stop):
                        break
                judged += len(made)
                found += sum(1 for g in made.values() if g >= 1)
            print(f"  {label:<20} " + "; ".join(cells))
            print(f"  {'':<20} stop at an estimated 90%: {judged:,} judgements ({judged / size:.0%}), "
                  f"recall {found / relevant:.1%}")
    o.PARAMETER_VARIANCE = True


def judging_sequence(o, pool, grades, sample) -> list:
    """The active order's picks over the whole pool, the `sample` judged first (as judgements made elsewhere)."""
    judge, sequence = o.make_order("active", pool), []
    judge.record_all([(pool.index[k], grades.get(k, 0)) for k in sample])
    while (i := judge.next()) is not None:
        sequence.append(i)
        judge.record(i, grades.get(pool.keys[i], 0))
    return sequence


def judged_at(pool, grades, sample, sequence, n) -> dict:
    """{candidate: grade} after n judgements: the sample, then the order's first picks."""
    made = {k: grades.get(k, 0) for k in sample}
    for i in sequence[: max(0, n - len(made))]:
        made[pool.keys[i]] = grades.get(pool.keys[i], 0)
    return made


if __name__ == "__main__":
    main()
