"""The default auto-annotator on Cranfield against its zero-shot baseline, in one run (issue 28's aims).

    .venv/bin/python benchmarks/annotator_cranfield.py [--topics even|odd|all] [--human-share 0.2] [--run-blind]
        [--json FILE]

A throw-away SQLite database: Cranfield imported (qrels code −1 judged not relevant, as trec_eval reads it), then

1. the pool BM25 ∪ dense (the bundled all-MiniLM-L6-v2), depth 10, over the chosen topics (build_pool: encoding the
   1,400 abstracts once is part of it, timed apart), and
   `train_annotator --qrels cranfield-qrels --pool POOL --folds 3 --format json`: the qrels are the people, folds
   split by topic; AUC and κ of the annotator beside those of reciprocal-rank fusion of the pool's runs, with their
   ratio, the command's wall and CPU seconds (embeddings read from the stored vectors) and the load average;
2. filled qrels: a pool of Cranfield's eight runs (BM25 at five settings, on the title and on the abstract alone,
   and the dense run: those runs are ranked), the first `human-share` of the chosen topics judged by people (their
   qrels), the annotator trained on them labels the rest; machine_report ranks the eight runs by nDCG@10 with the
   full qrels, the human share alone and the filled qrels (Kendall's τ). A zero-shot fusion source fills the same
   topics as the baseline. With --run-blind the human share's annotator is trained with `train_annotator
   --run-blind` (it reads no run's rank or score).

Model choices were made on Cranfield's odd topics; report on the even ones (the default).
"""

import argparse
import io
import json
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

RUNS = ["bm25", "bm25:k1=0.9,b=0.4", "bm25:k1=1.5,b=0.75", "bm25:k1=2.0,b=0.9", "bm25:k1=1.2,b=0.3",
        "bm25:fields=title", "bm25:fields=text", "dense"]


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(what, call):
    load, wall, used = os.getloadavg()[0], time.perf_counter(), cpu()
    result = call()
    out = {"wall_s": round(time.perf_counter() - wall, 1), "cpu_s": round(cpu() - used, 1),
           "load_before": round(load, 2), "load_after": round(os.getloadavg()[0], 2)}
    print(f"{what}: {out['wall_s']} s wall, {out['cpu_s']} s CPU, load {out['load_before']} → {out['load_after']}",
          flush=True)
    return result, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", choices=("even", "odd", "all"), default="even")
    parser.add_argument("--human-share", type=float, default=0.2)
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--run-blind", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from bench_export import throwaway_database

    with throwaway_database("annotator-cranfield-", use_database_url=False) as (workdir, _):
        from django.conf import settings
        from django.core.management import call_command

        settings.RETRIEVAL_INDEX_DIR = workdir / "indexes"
        settings.MACHINE_MODEL_DIR = workdir / "annotators"
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        call_command("import_cranfield", str(ROOT / "data" / "cranfield"), "--no-progress", stdout=io.StringIO())
        topics = [str(n) for n in range(1, 226) if args.topics == "all" or (n % 2 == 0) == (args.topics == "even")]
        chosen = ["--topics", *topics]
        report = {"topics": args.topics, "topic_count": len(topics), "machine": os.cpu_count()}

        _, report["pool_build"] = timed("build_pool bm25 ∪ dense, depth 10 (encodes the collection once)", lambda: call_command(
            "build_pool", "--name", "cran", "--collection", "cranfield", "--retrievers", "bm25", "dense",
            "--depth", "10", *chosen, "--no-progress", stdout=io.StringIO(), stderr=io.StringIO()))

        def command(*options):
            out = io.StringIO()
            call_command(*options, stdout=out, stderr=io.StringIO())
            return out.getvalue()

        text, report["train"] = timed("train_annotator --qrels cranfield-qrels --pool cran --folds 3", lambda: command(
            "train_annotator", "--qrels", "cranfield-qrels", "--pool", "cran", "--folds", str(args.folds),
            "--format", "json", "--no-progress"))
        figures = json.loads(text)
        report["figures"] = {k: figures[k] for k in ("precision", "recall", "f1", "auc", "kappa", "baseline_precision",
                                                     "baseline_recall", "baseline_f1", "baseline_auc",
                                                     "baseline_kappa", "examples", "positives", "topics", "seconds",
                                                     "cpu_seconds")}
        for name in ("auc", "kappa"):
            ratio = figures[name] / figures[f"baseline_{name}"] if figures[f"baseline_{name}"] else None
            report["figures"][f"{name}_ratio"] = ratio
            print(f"  {name}: annotator {figures[name]:.3f}, fusion {figures[f'baseline_{name}']:.3f}, "
                  f"ratio {ratio:.3f}")

        # Filled qrels: eight runs, a human share of the topics, the rest labelled by the annotator or by fusion.
        _, report["runs_pool_build"] = timed("build_pool of the eight runs", lambda: call_command(
            "build_pool", "--name", "cran-runs", "--collection", "cranfield", "--retrievers", *RUNS, "--depth", "10",
            *chosen, "--no-progress", stdout=io.StringIO(), stderr=io.StringIO()))
        humans = topics[: max(3, round(args.human_share * len(topics)))]
        text, report["train_human_share"] = timed(f"train_annotator on {len(humans)} human topics", lambda: command(
            "train_annotator", "--qrels", "cranfield-qrels", "--pool", "cran-runs", "--topics", *humans,
            "--folds", str(args.folds), "--format", "json", "--no-progress", *(["--run-blind"] * args.run_blind)))
        share = json.loads(text)
        command("machine_label", "--annotator", str(share["annotator"]), "--pool", "cran-runs", "--no-progress")
        command("machine_label", "--zero-shot", "fusion", "--pool", "cran-runs", "--no-progress")
        from assessments.models import MachineLabelSource

        fusion_source = MachineLabelSource.objects.get(kind="zero_shot", model="fusion")
        report["rankings"] = {}
        for name, source in (("annotator", share["annotator"]), ("fusion", fusion_source.pk)):
            out = command("machine_report", "--source", str(source), "--qrels", "cranfield-qrels", "--pool",
                          "cran-runs", "--human-topics", *humans, "--format", "json")
            data = json.loads(out)
            rows = {row["qrels"]: row["tau"] for row in data["rankings"]["rows"]}
            report["rankings"][name] = {"rows": data["rankings"]["rows"], "agreement": data["agreement"]}
            print(f"  Kendall τ vs full qrels ({data['rankings']['runs']} runs, {data['rankings']['measure']}), "
                  f"machine = {name}: " + ", ".join(f"{k} {v:.3f}" for k, v in rows.items() if v is not None))
        report["human_topics"] = len(humans)
        if args.json:
            args.json.write_text(json.dumps(report, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
