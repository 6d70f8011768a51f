"""Judging orders on Cranfield with a dozen runs of our own retrievers, no parameter tuned on them.

    .venv/bin/python benchmarks/simulate_cranfield.py [--depth 100] [--out DIR] [--plot docs/judging-orders-cranfield.svg]

Sets up a throw-away SQLite database and index folder, imports Cranfield (title + abstract indexed,
qrels code −1 judged not relevant), and makes the runs through build_pool (BM25 and the bundled
all-MiniLM-L6-v2 encoder run in this process): BM25 with five parameter settings, BM25 on the title
alone, on the abstract alone and without stemming or stop words, the dense encoder on title +
abstract and on the abstract alone, and RRF and CombSUM fusions of BM25 with the encoder. The active
order gets the documents' MiniLM vectors (from the dense index) and each query encoded alike (its
seed) through --features. Then `manage.py simulate_judging` runs on the stored runs (depth 100,
every order) against the qrels of all topics, of the odd topics (on which the active model's one
setting, its penalty, was chosen) and of the even topics (held out); prints the tables, a Markdown
version for docs/judging-orders.md, and the times. With --out the runs, qrels and features are kept there, to
replay with simulate_judging on files.
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

# Pools: name → (retrievers, extra build_pool options). Each retriever's run is kept; fusions add a fused run.
POOLS = {
    "bm25-sweep": (["bm25", "bm25:k1=0.9,b=0.4", "bm25:k1=1.5,b=0.75", "bm25:k1=2.0,b=0.9", "bm25:k1=1.2,b=0.3"], []),
    "bm25-fields": (["bm25:fields=title", "bm25:fields=text", "bm25:stemmer=,stopwords="], []),
    "dense": (["dense", "dense:fields=text"], []),
    "fused-rrf": (["bm25", "dense"], ["--strategy", "rrf", "--per-topic", "100"]),
    "fused-combsum": (["bm25", "dense"], ["--strategy", "rrf", "--fusion", "combsum", "--per-topic", "100"]),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--out", type=Path, help="Keep the runs, qrels and features here (TREC files, .npz).")
    parser.add_argument("--plot", default=str(ROOT / "docs" / "judging-orders-cranfield.svg"))
    parser.add_argument("--json", type=Path, help="Write the simulator's JSON (all topics) here too.")
    parser.add_argument("--bm25-only", action="store_true",
                        help="Only the BM25 runs (no encoder: minutes, not an hour on a busy CPU), written with the "
                        "qrels to --out, and stop there (e.g. for benchmarks/stopping_coverage.py --qrels --runs).")
    args = parser.parse_args()
    pools = {k: v for k, v in POOLS.items() if k.startswith("bm25")} if args.bm25_only else POOLS

    from bench_export import throwaway_database

    with throwaway_database("simulate-cranfield-", use_database_url=False) as (workdir, _):
        from django.conf import settings
        from django.core.management import call_command

        from assessments.models import Run

        settings.RETRIEVAL_INDEX_DIR = workdir / "indexes"
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        out = args.out or workdir / "files"
        out.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        call_command("import_cranfield", str(ROOT / "data" / "cranfield"), "--no-progress", stdout=io.StringIO())
        for name, (retrievers, options) in pools.items():
            call_command("build_pool", "--name", name, "--collection", "cranfield", "--retrievers", *retrievers,
                         "--depth", str(args.depth), *options, "--no-progress", stdout=io.StringIO())
        runs = list(Run.objects.order_by("name").values_list("name", flat=True))
        print(f"{len(runs)} runs built in {time.perf_counter() - started:.0f} s: {', '.join(runs)}")
        for run in runs:
            call_command("export_run", run, "--out", str(out / f"{run}.run"), stdout=io.StringIO())
        qrels = write_qrels(out)
        if args.bm25_only:
            print(f"runs and qrels in {out}")
            return
        features = write_features(out / "minilm.npz")

        common = ["--runs", *runs, "--depth", str(args.depth), "--features", str(features), "--no-progress"]
        results, seconds = {}, {}
        for part, path in qrels.items():
            started = time.perf_counter()
            text = io.StringIO()
            plot = ["--plot", args.plot] if part == "all" else []
            call_command("simulate_judging", "--qrels", str(path), *common, *plot, stdout=text)
            seconds[part] = time.perf_counter() - started
            print(f"--- {part} topics ({seconds[part]:.0f} s) ---\n{text.getvalue()}")
            text = io.StringIO()
            call_command("simulate_judging", "--qrels", str(path), *common, "--format", "json", stdout=text)
            results[part] = json.loads(text.getvalue())
        if args.json:
            args.json.write_text(json.dumps(results["all"], indent=1) + "\n")
        print(markdown(results["all"]))
        print()
        for part in ("odd", "even"):
            orders = results[part]["orders"]
            depth = orders["depth"]["judgements_to_recall"]["0.9"]
            print(f"{part} topics at 90%: " + ", ".join(
                f"{name} {o['judgements_to_recall']['0.9']:,} ({saving(o['judgements_to_recall']['0.9'], depth)})"
                for name, o in orders.items()))
        print()
        print(stopping_check(qrels["all"], [out / f"{run}.run" for run in runs], features, args.depth))
        print(f"\nplot: {args.plot}")


def stopping_check(qrels_path, run_paths, features_path, depth) -> str:
    """How well estimate_remaining predicts the relevant documents still unjudged, per topic, along the active order."""
    import math

    from assessments.evaluation.sources import read_qrels_file, read_run_file
    from assessments.ordering import decide_stop, estimate_remaining
    from assessments.services.simulation import load_features, simulate, topic_pools

    qrels = read_qrels_file(qrels_path)
    runs = dict(read_run_file(path) for path in run_paths)
    vectors, seeds = load_features(features_path)
    result = simulate(qrels, runs, depth=depth, orders=["active"], features=vectors, seeds=seeds)
    pools = topic_pools(qrels, runs, depth, vectors, seeds)
    lines = ["Stopping estimate along the active order (all topics; relevant still unjudged, summed, and how many "
             "topics' 95% intervals hold the truth):"]
    for budget in (0.1, 0.2, 0.3, 0.5):
        truth = estimated = covered = counted = 0
        for topic, pool in pools.items():
            sequence = result.orders["active"].sequences[topic][: math.ceil(budget * len(pool))]
            made = {pool.keys[i]: qrels[topic].get(pool.keys[i], 0) for i in sequence}
            estimate = estimate_remaining(pool, made)
            left = sum(1 for k in pool.keys if k not in made and qrels[topic].get(k, 0) >= 1)
            truth += left
            if estimate.remaining is not None:
                counted += 1
                estimated += estimate.remaining
                covered += estimate.low <= left <= estimate.high
        lines.append(f"  {budget:.0%} judged: {truth} left, {estimated:.0f} estimated; interval holds the truth in "
                     f"{covered}/{counted} topics with an estimate")
    stops = judged = found = relevant = 0
    for topic, pool in pools.items():  # stop each topic at an estimated 90% recall (pessimistic end)
        sequence, made = result.orders["active"].sequences[topic], {}
        total = sum(1 for k in pool.keys if qrels[topic].get(k, 0) >= 1)
        for n, i in enumerate(sequence, start=1):
            made[pool.keys[i]] = qrels[topic].get(pool.keys[i], 0)
            if n >= 10 and n % 5 == 0 and decide_stop(estimate_remaining(pool, made), target_recall=0.9).stop:
                stops += 1
                break
        judged += len(made)
        found += sum(1 for g in made.values() if g >= 1)
        relevant += total
    lines.append(f"  stopping at an estimated 90% recall: {stops} of {len(pools)} topics stopped early; "
                 f"{judged:,} judgements, {found}/{relevant} relevant found ({found / max(relevant, 1):.0%})")
    return "\n".join(lines)


def write_qrels(folder: Path) -> dict:
    """The stored Cranfield qrels as TREC files: all topics, the odd ones and the even ones."""
    from assessments.evaluation.sources import stored_qrels
    from assessments.models import QrelSet

    qrels = stored_qrels(QrelSet.objects.get(name="cranfield-qrels"))
    paths = {}
    for part, keep in (("all", lambda t: True), ("odd", lambda t: int(t) % 2), ("even", lambda t: not int(t) % 2)):
        paths[part] = folder / f"cranfield-{part}.qrels"
        lines = [f"{t} 0 {doc} {grade}" for t in sorted(qrels, key=int) if keep(t) for doc, grade in qrels[t].items()]
        paths[part].write_text("\n".join(lines) + "\n")
    return paths


def write_features(path: Path) -> Path:
    """The documents' vectors from the collection's dense index (title + abstract) and the queries encoded alike."""
    import numpy as np

    from assessments.models import Topic
    from assessments.services.pooling import query_text
    from retrieval import specs
    from retrieval.encoders import load_encoder
    from retrieval.models import Index, Passage
    from retrieval.services.work import IDS, MANIFEST, encoder_spec

    spec = specs.parse("dense")
    index = Index.objects.get(collection__name="cranfield", kind=Index.Kind.DENSE, config__fields="title+text")
    manifest = json.loads((index.path / MANIFEST).read_text())
    vectors = np.concatenate([np.load(index.path / v) for v, _ in manifest["shards"]])
    pks = np.load(index.path / IDS)
    external = dict(Passage.objects.filter(collection=index.collection).values_list("pk", "external_id"))
    topics = list(Topic.objects.filter(collection=index.collection).order_by("pk"))
    queries = load_encoder(encoder_spec(spec)).encode_queries([query_text(t) for t in topics])
    np.savez(path, ids=np.array([external[int(pk)] for pk in pks]), vectors=vectors,
             topics=np.array([t.external_id for t in topics]), topic_vectors=queries)
    return path


def saving(judgements, depth) -> str:
    change = 1 - judgements / depth if depth else 0.0
    return f"{change:.0%} fewer" if change >= 0 else f"{-change:.0%} more"


def markdown(result) -> str:
    """docs/judging-orders.md's table: judgements to each recall level (and the saving against depth at 90%), τ (MAP) at 20%."""
    orders = result["orders"]
    depth = orders.get("depth", {}).get("judgements_to_recall", {}).get("0.9")
    lines = [
        "| order | 50% | 80% | 90% | 95% | against depth at 90% | τ (MAP) at 10% | 20% | 30% | 50% |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, order in orders.items():
        recall, tau = order["judgements_to_recall"], order["tau_at_budget"]
        lines.append(
            f"| {name} | " + " | ".join(f"{recall[p]:,}" for p in ("0.5", "0.8", "0.9", "0.95"))
            + f" | {saving(recall['0.9'], depth) if name != 'depth' else ''} | "
            + " | ".join("n/a" if tau[b] is None else f"{tau[b]:.3f}" for b in ("0.1", "0.2", "0.3", "0.5"))
            + " |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
