"""Variants of the active order on rank features alone, on tuning data (issue 28, item 5).

    .venv/bin/python benchmarks/active_variants.py --qrels DIR/cranfield-odd.qrels --runs DIR/*.run
    .venv/bin/python benchmarks/active_variants.py --synthetic 40          # seed 12, noise 0.5: its first 40 topics

Replays, with the qrels as the assessor (assessments.services.simulation.judge_order), the active order's model
(ordering.fit_logistic on standardised features, the topic as a relevant seed row, refits at ordering.batch_points,
reciprocal-rank fusion until it can be fitted) with one change each: (a) more rank features (per-run reciprocal
rank, Borda, CombMNZ) or each run's quality estimated from the judgements so far as a feature updated at each refit
(Hedge's weighted rank value, MaxMean's posterior precision × rank value, its log-odds); (b) the model's score mixed
with Hedge's; (c) a refit after every judgement; other penalties; and the runs' ranks below the pool's depth
(`deep`: what became the active-deep order). Prints judgements for 90% recall summed over topics and × depth, then a
ceiling: a logistic model fitted on each topic's own qrels (in-sample, not an order) read top down. For choosing
among variants on tuning data only; held-out figures come from benchmarks/bandit_orders.py.
"""

import argparse
import math
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402

VARIANTS = [
    ("active", {}),
    ("(a) + reciprocal rank, Borda, CombMNZ", {"static": ("rr", "borda", "mnz")}),
    ("(a) + Hedge's weighted rank value", {"dynamic": ("hedge",)}),
    ("(a) + MaxMean precision x rank value", {"dynamic": ("mmfuse",)}),
    ("(a) + MaxMean log-odds x rank value", {"dynamic": ("mmlogit",)}),
    ("(b) mixed with Hedge, 30%", {"mix": 0.3}),
    ("(b) mixed with Hedge, 50%", {"mix": 0.5}),
    ("(c) refit after every judgement", {"every": 1}),
    ("penalty 10", {"ridge": 10.0}),
    ("penalty 200", {"ridge": 200.0}),
    ("deep ranks, penalty 50 (active-deep)", {"deep": True}),
    ("deep ranks, penalty 200", {"deep": True, "ridge": 200.0}),
]


def make_variant(ordering, config):
    """An Order class: the active order's model with `config`'s change."""

    class Variant(ordering.Order):
        name = "variant"

        def __init__(self, pool, min_rel=1):
            super().__init__(pool, min_rel)
            self.sequence = []
            ranks = pool.deep_ranks if config.get("deep") else pool.ranks
            self.static = np.hstack([ordering.relevance.rank_features(ranks), static_features(ranks, config)])
            self.hedge = ordering.Hedge(pool, min_rel)
            self.relevant, self.seen = np.zeros(len(pool.runs)), np.zeros(len(pool.runs))
            every = config.get("every")
            self.points = set(ordering.batch_points(len(pool)) if every is None else range(1, len(pool) + 1, every))
            self.ranking, self.at, self.fitted, self.weights = pool.fusion_order().tolist(), 0, -1, None

        def _record(self, i, relevant):
            self.sequence.append((i, relevant))
            self.hedge.record(i, relevant)
            present = self.pool.ranks[i] > 0
            self.seen += present
            self.relevant += present * relevant

        def dynamic(self):
            columns, values = [], self.hedge.values
            precision = (self.relevant + 1) / (self.seen + 2)
            for name in config.get("dynamic", ()):
                if name == "hedge":
                    columns.append(values @ self.hedge.weights)
                elif name == "mmfuse":
                    columns.append(values @ precision / precision.sum())
                elif name == "mmlogit":
                    odds = np.log(precision / (1 - precision))
                    columns.append(values @ (odds - odds.mean()))
            return np.column_stack(columns) if columns else np.zeros((len(self.pool), 0))

        def scores(self):
            x = np.hstack([self.static, self.dynamic()])
            rows = np.vstack([x, x.max(axis=0)])  # the topic as a relevant example: the pool's best features
            std = x.std(axis=0)
            rows = np.hstack([np.ones((len(rows), 1)), (rows - x.mean(axis=0)) / np.where(std > 0, std, 1.0)])
            model = ordering.fit_logistic(rows, self.sequence + [(len(self.pool), True)],
                                          ridge=config.get("ridge", ordering.RIDGE), start=self.weights)
            if model is None:
                return None
            self.weights = model.weights
            z = rows[: len(self.pool)] @ model.weights
            if config.get("mix"):
                h = self.hedge.values @ self.hedge.weights
                z = ((1 - config["mix"]) * (z - z.mean()) / (z.std() + 1e-12)
                     + config["mix"] * (h - h.mean()) / (h.std() + 1e-12))
            return z

        def next(self):
            n = len(self.sequence)
            if n in self.points and n != self.fitted:
                self.fitted = n
                z = self.scores()
                if z is not None:
                    z[np.frombuffer(bytes(self.judged), dtype=bool)] = -np.inf
                    self.ranking, self.at = np.lexsort((np.arange(len(z)), -z)).tolist(), 0
            while self.at < len(self.ranking) and self.judged[self.ranking[self.at]]:
                self.at += 1
            return self.ranking[self.at] if self.at < len(self.ranking) else None

    return Variant


def static_features(ranks, config):
    ranks = ranks.astype(np.float64)
    present, deepest = ranks > 0, max(ranks.max(initial=0), 1)
    linear = np.where(present, (deepest + 1 - ranks) / deepest, 0.0)
    columns = []
    for name in config.get("static", ()):
        if name == "rr":
            columns.append(np.where(present, 1.0 / np.maximum(ranks, 1), 0.0))
        elif name == "borda":
            columns.append(linear.sum(axis=1, keepdims=True))
        elif name == "mnz":
            columns.append((linear.sum(axis=1) * present.sum(axis=1))[:, None])
    return np.hstack(columns) if columns else np.zeros((len(ranks), 0))


def to_90(pools, qrels, sequence_of) -> int:
    total = 0
    for topic, pool in pools.items():
        relevant = [qrels[topic].get(key, 0) >= 1 for key in pool.keys]
        need = math.ceil(0.9 * sum(relevant) - 1e-9)
        if need:
            found = np.cumsum(np.array(relevant)[sequence_of(topic, pool)])
            total += int(np.searchsorted(found, need)) + 1
    return total


def main():
    from bench_ordering import add_trec_arguments, trec_paths

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_trec_arguments(parser)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from assessments.evaluation.sources import read_qrels_file, read_run_file
    from assessments import ordering
    from assessments.services.simulation import judge_order, single_threaded, topic_pools

    qrels_path, run_paths = trec_paths(args)
    qrels = read_qrels_file(str(qrels_path))
    runs = dict(read_run_file(str(path)) for path in run_paths)
    pools = topic_pools(qrels, runs, args.depth)
    depth = to_90(pools, qrels, lambda topic, pool: np.arange(len(pool)))
    print(f"{qrels_path}: {len(pools)} topics; depth order needs {depth:,} judgements for 90% recall")
    with single_threaded():
        for label, config in VARIANTS:
            started = time.perf_counter()
            ordering.CLASSES["variant"] = make_variant(ordering, config)
            try:
                got = to_90(pools, qrels, lambda topic, pool: judge_order(pool, qrels[topic], "variant", 1, 0))
            finally:
                del ordering.CLASSES["variant"]
            print(f"   {label:<40} {got:>8,}  {got / depth:.3f} x depth  ({time.perf_counter() - started:.1f} s)")
        for label, deep in (("ceiling, the pool's ranks", False), ("ceiling, the deep ranks", True)):
            def fitted(topic, pool, deep=deep):
                x = pool.rank_features() if not deep else ordering.relevance.rank_features(pool.deep_ranks)
                std = x.std(axis=0)
                x = np.hstack([np.ones((len(x), 1)), (x - x.mean(axis=0)) / np.where(std > 0, std, 1.0)])
                y = [qrels[topic].get(key, 0) >= 1 for key in pool.keys]
                model = ordering.fit_logistic(x, list(enumerate(y)), ridge=1.0)
                if model is None:
                    return np.arange(len(pool))
                return np.lexsort((np.arange(len(pool)), -(x @ model.weights)))
            got = to_90(pools, qrels, fitted)
            print(f"   {label:<40} {got:>8,}  {got / depth:.3f} x depth  (in-sample: not an order)")


if __name__ == "__main__":
    main()
