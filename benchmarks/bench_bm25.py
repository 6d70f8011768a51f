"""Our BM25 path (retrieval.lexical.BM25Index) vs bm25s called directly, on the four books' passages.

    .venv/bin/python benchmarks/bench_bm25.py [--queries 100] [--k 100] [--repeats 5]

Both index the same passages with the same tokenisation (English Snowball stemmer, English stop
words, k1=1.2, b=0.75) and answer the same queries; ours also maps rows to passage ids, drops
passages that match no query term and orders ties by id. Prints the time of each and the overhead
(ours / direct − 1; the aim is ≤ 10%) for indexing, searching and both together.
"""

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def book_passages():
    from retrieval.books import paragraphs, strip_gutenberg

    texts = []
    for path in sorted((ROOT / "data" / "books").glob("*.txt")):
        for paragraph in paragraphs(strip_gutenberg(path.read_text(encoding="utf-8")).text):
            words = paragraph.split()
            for start in range(0, len(words), 60):
                texts.append(" ".join(words[start : start + 60]))
    return texts


def interleaved(repeats, first, second):
    """Median times of `first` and `second`, run alternately (so drifting machine load hits both alike)."""
    times, results = ([], []), [None, None]
    for _ in range(repeats):
        for i, fn in enumerate((first, second)):
            start = time.perf_counter()
            results[i] = fn()
            times[i].append(time.perf_counter() - start)
    return [sorted(t)[len(t) // 2] for t in times], results


def main():
    import bm25s
    import Stemmer

    from retrieval.lexical import BM25Index, BM25Spec

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    texts = book_passages()
    ids = list(range(10_000, 10_000 + len(texts)))
    rng = random.Random(5)
    queries = [" ".join(rng.sample(texts[i].split(), min(12, len(texts[i].split())))) for i in rng.sample(range(len(texts)), args.queries)]
    print(f"{len(texts):,} passages, {len(queries)} queries, k={args.k}")

    stemmer = Stemmer.Stemmer("english")

    def direct_index():
        retriever = bm25s.BM25(k1=1.2, b=0.75)
        retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
        return retriever

    def direct_search(retriever):
        tokens = bm25s.tokenize(queries, stopwords="en", stemmer=stemmer, show_progress=False)
        return retriever.retrieve(tokens, k=args.k, show_progress=False)

    def our_index():
        return BM25Index.build(ids, texts, BM25Spec())

    def our_search(index):
        return index.search(queries, args.k)

    direct_index(), our_index()  # warm up
    (direct_build, our_build), (retriever, index) = interleaved(args.repeats, direct_index, our_index)
    (direct_query, our_query), ((_, scores), hits) = interleaved(
        args.repeats, lambda: direct_search(retriever), lambda: our_search(index)
    )
    same = sum(  # the same top-10 scores (the order of equal scores may differ)
        [round(float(s), 4) for s in row[:10] if s > 0] == [round(s, 4) for _, s in ranking[:10]]
        for row, ranking in zip(scores, hits)
    )
    print(f"index:  bm25s {direct_build * 1000:8.1f} ms   ours {our_build * 1000:8.1f} ms   "
          f"overhead {100 * (our_build / direct_build - 1):+.1f}%")
    print(f"search: bm25s {direct_query * 1000:8.1f} ms   ours {our_query * 1000:8.1f} ms   "
          f"overhead {100 * (our_query / direct_query - 1):+.1f}%")
    total_direct, total_ours = direct_build + direct_query, our_build + our_query
    print(f"top-10 scores agree on {same}/{len(queries)} queries")
    print(f"RATIO ours / bm25s (index + search) = {total_ours / total_direct:.3f} "
          f"(overhead {100 * (total_ours / total_direct - 1):+.1f}%)")


if __name__ == "__main__":
    main()
