"""End-to-end pool build over every chunk of the four sample books for 100 queries, vs the library called directly.

    .venv/bin/python benchmarks/bench_pool.py [--queries 100] [--depth 20] [--per-topic 10]

Sets up a throw-away SQLite database and index folder, imports the four books (3-sentence chunks,
not timed), makes `--queries` plot topics (a sentence of a random chunk, words shuffled; the chunk
is its ground truth), then builds one pool per book with BM25 + dense (the bundled
all-MiniLM-L6-v2) + RRF, depth k, top N, through the Celery tasks (eager, in this process):
indexes, sharded encoding, searches, retriever runs, fused run, candidates with provenance. The
baseline does the same retrieval with the library alone (bm25s, encoder, FAISS, RRF) and no
database. Prints the time, passages/s, the ratio pipeline / library, and how many ground-truth
chunks the pools caught.
"""

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BOOKS = {
    "call-of-the-wild": "The Call of the Wild", "tom-sawyer": "The Adventures of Tom Sawyer",
    "moby-dick": "Moby Dick", "a-tale-of-two-cities": "A Tale of Two Cities",
}


def throwaway_site(folder: Path):
    """Django on a throw-away SQLite database and index folder under `folder`, migrated, eager Celery."""
    os.environ["DATABASE_URL"] = f"sqlite:///{folder / 'bench.sqlite3'}"
    os.environ["RETRIEVAL_INDEX_DIR"] = str(folder / "indexes")
    os.environ.pop("CELERY_BROKER_URL", None)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def setup(folder: Path):
    throwaway_site(folder)
    from django.core.management import call_command

    for slug, title in BOOKS.items():
        call_command("import_book", str(ROOT / "data" / "books" / f"{slug}.txt"), "--title", title, "--slug", slug,
                     "--no-progress", verbosity=0)


def make_topics(count, seed=7):
    from assessments.models import Topic
    from retrieval.models import Book, Passage

    rng = random.Random(seed)
    books = list(Book.objects.order_by("slug"))
    topics = {book.pk: [] for book in books}
    for n in range(count):
        book = books[n % len(books)]
        chunk = rng.choice(list(Passage.objects.filter(book=book).values_list("pk", "text")))
        words = max(chunk[1].split(". "), key=len).split()
        rng.shuffle(words)
        topic = Topic.objects.create(collection=book.collection, external_id=f"q{n + 1}", kind=Topic.Kind.PLOT,
                                     book=book, text=" ".join(words[:25]))
        topic.ground_truth.set([chunk[0]])
        topics[book.pk].append(topic)
    return books, topics


def pipeline(books, topics, depth, per_topic):
    from assessments.models import Pool
    from assessments.services.pooling import define_pool
    from assessments.tasks import build_pool

    pools = []
    for book in books:
        pool = define_pool(name=f"bench-{book.slug}", collection=book.collection, topics=topics[book.pk],
                           retrievers=["bm25", "dense"], strategy=Pool.Strategy.RRF, depth=depth, per_topic=per_topic)
        build_pool.apply(args=[pool.pk])
        pool.refresh_from_db()
        assert pool.status == Pool.Status.READY, pool.error
        pools.append(pool)
    return pools


def library(books, topics, depth, per_topic):
    """The same retrieval with the library alone: no database writes, no jobs."""
    import numpy as np

    from retrieval import fusion, vectors
    from retrieval.encoders import EncoderSpec, load_encoder
    from retrieval.lexical import BM25Index
    from retrieval.models import Passage
    from retrieval.specs import BUNDLED_ENCODER, resolve_model

    encoder = load_encoder(EncoderSpec(resolve_model(BUNDLED_ENCODER)))
    caught = 0
    for book in books:
        rows = list(Passage.objects.filter(book=book).order_by("pk").values_list("pk", "text"))
        ids, texts = [pk for pk, _ in rows], [text for _, text in rows]
        queries = [t.text for t in topics[book.pk]]
        lexical = BM25Index.build(ids, texts).search(queries, max(depth, 100))
        index = vectors.build(encoder.encode_passages(texts))
        dense = vectors.search(index, np.asarray(ids), encoder.encode_queries(queries), max(depth, 100))
        for topic, a, b in zip(topics[book.pk], lexical, dense):
            top = [pid for pid, _ in fusion.rrf([a[:depth], b[:depth]])[:per_topic]]
            caught += topic.ground_truth.filter(pk__in=top).exists()
    return caught


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--per-topic", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pooljudge-bench-") as folder:
        start = time.perf_counter()
        setup(Path(folder))
        from retrieval.encoders import EncoderSpec, load_encoder
        from retrieval.models import Passage
        from retrieval.specs import BUNDLED_ENCODER, resolve_model

        books, topics = make_topics(args.queries)
        chunks = Passage.objects.filter(book__in=books).count()
        print(f"{len(books)} books, {chunks:,} chunks, {args.queries} queries (set up in {time.perf_counter() - start:.0f} s)")
        load_encoder(EncoderSpec(resolve_model(BUNDLED_ENCODER)))  # both sides find the model loaded

        start = time.perf_counter()
        pools = pipeline(books, topics, args.depth, args.per_topic)
        ours = time.perf_counter() - start
        from assessments.models import PoolCandidate

        caught = sum(
            PoolCandidate.objects.filter(pool=pool, topic=pool_topic, passage__in=pool_topic.ground_truth.all()).exists()
            for pool in pools for pool_topic in pool.topics.all()
        )
        candidates = PoolCandidate.objects.filter(pool__in=pools).count()
        print(f"pipeline: {ours:.1f} s, {chunks / ours:.1f} passages/s, {candidates:,} candidates, "
              f"ground truth pooled for {caught}/{args.queries} queries")

        start = time.perf_counter()
        direct_caught = library(books, topics, args.depth, args.per_topic)
        direct = time.perf_counter() - start
        print(f"library alone: {direct:.1f} s, {chunks / direct:.1f} passages/s, "
              f"ground truth in the top {args.per_topic} for {direct_caught}/{args.queries} queries")
        print(f"RATIO pipeline / library = {ours / direct:.2f} (time; the pipeline also stores runs, pools, jobs)")


if __name__ == "__main__":
    main()
