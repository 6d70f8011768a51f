"""Model-assisted assessment on Cranfield: its qrels as the "humans", a share of the topics judged, the rest labelled
by the auto-annotator, and what that does to the agreement and to a system ranking.

    .venv/bin/python benchmarks/machine_cranfield.py [--human-topics 45] [--depth 10] [--folds 3] [--epochs 1] \
        [--max-length 64] [--model minilm] [--json FILE]

Sets up a throw-away SQLite database and folders, imports Cranfield (qrels code −1 judged not relevant, as
trec_eval reads it), and makes eight runs with build_pool (BM25 with five settings, on the title alone, on the
abstract alone, and the bundled all-MiniLM-L6-v2 encoder) pooled as the depth-k union. Then, with the manage.py
commands docs/machine-assistance.md shows:

1. train_annotator --qrels cranfield-qrels --pool POOL --topics 1…N: the first N topics' pool candidates, graded by the
   qrels (a candidate the qrels do not list is 0), are the human labels; k-fold cross-validation, then the
   classifier on all of them;
2. machine_label: the other topics' candidates;
3. machine_report --qrels cranfield-qrels --human-topics 1…N: the machine's labels against the qrels on the topics
   it labelled (which it never saw), and the runs ranked by nDCG@10 with the full qrels, with the human share
   alone, with the machine's labels alone, and filled (human share + machine elsewhere).
"""

import argparse
import io
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

RETRIEVERS = ["bm25", "bm25:k1=0.9,b=0.4", "bm25:k1=1.5,b=0.75", "bm25:k1=2.0,b=0.9", "bm25:k1=1.2,b=0.3",
              "bm25:fields=title", "bm25:fields=text", "dense"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--human-topics", type=int, default=45, help="The first N topics are judged by people.")
    parser.add_argument("--depth", type=int, default=10, help="Pool depth (union of the runs' top k).")
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--json", type=Path, help="Write the report's JSON here.")
    args = parser.parse_args()

    from bench_export import throwaway_database

    with throwaway_database("machine-cranfield-", use_database_url=False) as (workdir, _):
        from django.conf import settings
        from django.core.management import call_command

        from assessments.models import Pool, Run

        settings.RETRIEVAL_INDEX_DIR = workdir / "indexes"
        settings.MACHINE_MODEL_DIR = workdir / "annotators"
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        started = time.perf_counter()
        call_command("import_cranfield", str(ROOT / "data" / "cranfield"), "--no-progress", stdout=io.StringIO())
        call_command("build_pool", "--name", "cran-judge", "--collection", "cranfield", "--retrievers", *RETRIEVERS,
                     "--depth", str(args.depth), "--no-progress", stdout=io.StringIO())
        pool = Pool.objects.get(name="cran-judge")
        runs = list(Run.objects.order_by("name").values_list("name", flat=True))
        print(f"{len(runs)} runs, pool of {pool.candidates.count():,} candidates over {pool.topics.count()} topics "
              f"(depth {args.depth}) in {time.perf_counter() - started:.0f} s: {', '.join(runs)}")
        humans = [str(n) for n in range(1, args.human_topics + 1)]

        started = time.perf_counter()
        out = io.StringIO()
        call_command("train_annotator", "--qrels", "cranfield-qrels", "--pool", "cran-judge", "--topics", *humans,
                     "--model", args.model, "--folds", str(args.folds), "--epochs", str(args.epochs),
                     "--max-length", str(args.max_length), "--batch-size", str(args.batch_size),
                     "--learning-rate", str(args.learning_rate), "--format", "json", stdout=out)
        figures = json.loads(out.getvalue())
        trained = time.perf_counter() - started
        from assessments.management.commands.train_annotator import report

        print(f"--- train_annotator ({trained:.0f} s) ---\n{report(figures)}")

        started = time.perf_counter()
        out = io.StringIO()
        call_command("machine_label", "--annotator", str(figures["annotator"]), "--pool", "cran-judge", stdout=out)
        print(f"--- machine_label ({time.perf_counter() - started:.0f} s) ---\n{out.getvalue()}")

        common = ["--source", str(figures["annotator"]), "--qrels", "cranfield-qrels", "--pool", "cran-judge",
                  "--human-topics", *humans]
        text = io.StringIO()
        call_command("machine_report", *common, stdout=text)
        print(f"--- machine_report ---\n{text.getvalue()}")
        data = io.StringIO()
        call_command("machine_report", *common, "--format", "json", stdout=data)
        report_json = json.loads(data.getvalue())
        if args.json:
            args.json.write_text(json.dumps({"train": figures, "report": report_json}, indent=1, default=str) + "\n")
        print(markdown(figures, report_json))


def markdown(figures, report) -> str:
    """docs/machine-assistance.md's table: cross-validation, agreement on the unseen topics, and the rankings."""
    def f(x):
        return "–" if x is None else f"{x:.3f}"

    a = report["agreement"]
    lines = [
        "| figure | value |", "|---|---|",
        f"| human labels (pool candidates of the human topics) | {figures['examples']:,} ({figures['positives']:,} relevant) |",
        f"| {len(figures['folds'])}-fold cross-validation: precision / recall / F1 | "
        f"{f(figures['precision'])} / {f(figures['recall'])} / {f(figures['f1'])} |",
        f"| cross-validation: ROC AUC / Cohen's κ | {f(figures['auc'])} / {f(figures['kappa'])} |",
        f"| machine × qrels on the {len(a['topics'])} other topics ({a['items']:,} candidates): κ / agreement | "
        f"{f(a['kappa'])} / {f(a['agree'])} |",
    ]
    for row in report["rankings"]["rows"]:
        largest = row["largest"]
        change = f" (largest change: {largest['run']} {largest['from']} → {largest['to']})" if largest else ""
        lines.append(f"| Kendall's τ of {report['rankings']['runs']} runs by {report['rankings']['measure']}, full qrels × "
                     f"{row['qrels']} ({row['topics']} topics) | {f(row['tau'])}{change} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
