"""Filled qrels on Cranfield over several human slices: how the annotator's probabilities become labels (issue 28).

    .venv/bin/python benchmarks/filled_qrels_variants.py [--topics odd|even] [--slices 0 23 r1 r2 ...]
        [--model current|run-blind|no-run-columns|c1] [--database FILE] [--json FILE]

The set-up of annotator_cranfield.py's filled qrels: Cranfield imported (qrels code −1 judged not relevant), a
depth-10 pool of its eight runs over the chosen topics. Then, for each human slice (`N`: the 20% of the topics
from position N, so `0` is annotator_cranfield.py's slice; `rK`: a random 20% drawn with seed K),
`train_annotator --qrels cranfield-qrels --pool POOL --topics SLICE` and `machine_label`, and the eight runs ranked
by nDCG@10 (Kendall's τ against the full qrels) with the slice's qrels alone and with filled qrels whose machine
part turns the stored probabilities into labels in several ways, all from the same trained model:

- kappa: the product's rule, the model's threshold (best κ in an inner cross-validation by topic of its labels);
- half: a fixed 0.5;
- prevalence_total: one threshold giving the unjudged candidates the human slice's share of relevant candidates;
- prevalence_topic: that share of each topic's candidates, best first;
- expected_topic: round(Σ p) of each topic's candidates, best first (the model's own expected count);
- soft: the probability itself as the gain (a diagnostic: integer qrels cannot carry it).

`--model run-blind` trains with `train_annotator --run-blind` (the feature model reads no run's rank or score, nor
the share of runs or their fusion). `no-run-columns` and `c1` are what-ifs patched into this process, not product
options: the per-run rank and score columns zeroed (the share of runs and the fusion kept), or C = 1 instead of
0.1. `--database FILE` keeps the SQLite database (Cranfield
and the pool) and reuses it on the next call; by default everything is built in a throw-away folder.
"""

import argparse
import io
import json
import os
import random
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from annotator_cranfield import RUNS  # noqa: E402

VARIANTS = ("kappa", "half", "prevalence_total", "prevalence_topic", "expected_topic", "soft")


def patch_model(kind):
    """The what-if models: columns of the feature matrix zeroed (StandardScaler leaves a constant column at 0), or
    another C."""
    from assessments.machine import model as relevance

    if kind == "no-run-columns":
        original = relevance.candidate_features

        def features(ranks, scores, *args, **kwargs):
            x = original(ranks, scores, *args, **kwargs).copy()
            runs = np.asarray(ranks).shape[1]
            x[:, list(range(runs)) + list(range(runs + 2, 2 * runs + 2))] = 0.0  # rank:R…, score:R…
            return x

        relevance.candidate_features = features
    elif kind == "c1":
        init = relevance.RelevanceModel.__init__

        def with_c(self, *args, **kwargs):
            kwargs.setdefault("c", 1.0)
            init(self, *args, **kwargs)

        relevance.RelevanceModel.__init__ = with_c


def labels_of(variant, p, by_topic, prevalence, threshold):
    """0/1 labels (or the probabilities, `soft`) of the candidates whose probabilities are `p`."""
    def best_of_each_topic(count):
        out = np.zeros(len(p), dtype=int)
        for rows in by_topic.values():
            rows = np.asarray(rows)
            out[rows[np.argsort(-p[rows], kind="stable")[:count(rows)]]] = 1
        return out

    if variant == "kappa":
        return (p >= threshold).astype(int)
    if variant == "half":
        return (p >= 0.5).astype(int)
    if variant == "prevalence_total":
        return (p >= np.quantile(p, 1 - prevalence)).astype(int)
    if variant == "prevalence_topic":
        return best_of_each_topic(lambda rows: max(1, round(prevalence * len(rows))))
    if variant == "expected_topic":
        return best_of_each_topic(lambda rows: max(1, round(float(p[rows].sum()))))
    return p


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", choices=("even", "odd"), default="odd")
    parser.add_argument("--slices", nargs="+", default=["0"])
    parser.add_argument("--human-share", type=float, default=0.2)
    parser.add_argument("--model", choices=("current", "run-blind", "no-run-columns", "c1"), default="current")
    parser.add_argument("--database", type=Path, help="Keep the SQLite database here and reuse it.")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    import shutil
    import tempfile

    workdir = Path(tempfile.mkdtemp(prefix="filled-variants-"))
    try:
        run(args, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def run(args, workdir):
    database = args.database.resolve() if args.database else workdir / "bench.sqlite3"
    reuse = database.exists()
    os.environ["DATABASE_URL"] = f"sqlite:///{database}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.RETRIEVAL_INDEX_DIR = database.parent / f"{database.stem}-indexes"
    settings.MACHINE_MODEL_DIR = workdir / "annotators"
    patch_model(args.model)

    from assessments.evaluation import parse_measure
    from assessments.evaluation.sources import stored_qrels
    from assessments.machine import compare
    from assessments.models import MachineLabel, MachineLabelSource, Pool, QrelSet

    def command(*options):
        out = io.StringIO()
        call_command(*options, stdout=out, stderr=io.StringIO())
        return out.getvalue()

    topics = [str(n) for n in range(1, 226) if (n % 2 == 0) == (args.topics == "even")]
    pool_name = f"runs-{args.topics}"
    if not reuse:
        call_command("migrate", verbosity=0)
        call_command("import_cranfield", str(ROOT / "data" / "cranfield"), "--no-progress", stdout=io.StringIO())
    if not Pool.objects.filter(name=pool_name).exists():
        call_command("build_pool", "--name", pool_name, "--collection", "cranfield", "--retrievers", *RUNS,
                     "--depth", "10", "--topics", *topics, "--no-progress", stdout=io.StringIO(), stderr=io.StringIO())
    pool = Pool.objects.get(name=pool_name)
    topic_ids = set(pool.topics.values_list("pk", flat=True))
    runs = compare.stored_runs(compare.pool_run_ids([pool.pk]), topic_ids)
    full = {k: g for k, g in compare.flat(stored_qrels(QrelSet.objects.get(name="cranfield-qrels"))).items()
            if k[0] in set(topics)}
    measure = parse_measure("nDCG@10")
    candidates = {}
    for topic, docid in pool.candidates.values_list("topic__external_id", "passage__external_id"):
        candidates.setdefault(topic, []).append(docid)

    def tau(pairs):
        ranked = compare.rankings(runs, compare.as_qrels(full), {"other": compare.as_qrels(pairs)}, measure)
        return ranked["rows"][0]["tau"]

    size = max(3, round(args.human_share * len(topics)))
    report = {"topics": args.topics, "model": args.model, "human_topics": size, "slices": {}}
    for name in args.slices:
        humans = (sorted(random.Random(int(name[1:])).sample(topics, size), key=int) if name.startswith("r")
                  else topics[int(name):int(name) + size])
        people = set(humans)
        trained = json.loads(command("train_annotator", "--qrels", "cranfield-qrels", "--pool", pool_name,
                                     "--topics", *humans, "--folds", "3", "--format", "json", "--no-progress",
                                     *(["--run-blind"] if args.model == "run-blind" else [])))
        command("machine_label", "--annotator", str(trained["annotator"]), "--pool", pool_name, "--no-progress")
        source = MachineLabelSource.objects.get(pk=trained["annotator"])
        judged = {k: g for k, g in full.items() if k[0] in people}
        prevalence = float(np.mean([full.get((t, d), 0) >= 1 for t in humans for d in candidates.get(t, [])]))
        scores = {(t, d): s for t, d, s in MachineLabel.objects.filter(source=source, in_training=False)
                  .values_list("topic__external_id", "passage__external_id", "score") if t not in people}
        keys = sorted(scores)
        p = np.array([scores[k] for k in keys])
        by_topic = {}
        for i, (topic, _) in enumerate(keys):
            by_topic.setdefault(topic, []).append(i)
        row = {"human_topics": humans, "auc": trained.get("auc"), "prevalence": prevalence,
               "threshold": source.settings["probability_threshold"], "human_share": tau(judged)}
        for variant in VARIANTS:
            labels = labels_of(variant, p, by_topic, prevalence, row["threshold"])
            machine = {k: (float(v) if variant == "soft" else int(v)) for k, v in zip(keys, labels)}
            row[variant] = tau({**machine, **judged})
        report["slices"][name] = row
        print(f"{name}: human share τ {row['human_share']:.3f}; filled " + ", ".join(
            f"{v} {row[v]:.3f}" for v in VARIANTS), flush=True)
    if len(args.slices) > 1:
        report["mean"] = {v: statistics.mean(r[v] for r in report["slices"].values()) for v in ("human_share",
                                                                                              *VARIANTS)}
        print("mean: " + ", ".join(f"{k} {v:.3f}" for k, v in report["mean"].items()))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
