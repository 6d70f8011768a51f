"""The real sample plot data for the plot tests: a book of data/books, its sample queries, a BM25 pool over them."""

import json

from django.core.management import call_command

from assessments.models import Run, Topic
from assessments.services.pooling import assemble_pool, define_pool
from retrieval.models import Book
from tests.factories import DATA

BOOK = "call-of-the-wild"


def sample_queries(slug=None):
    """The sample queries of data/plot (of one book when `slug` is given), as dicts."""
    lines = (DATA / "plot" / "sample-queries.jsonl").read_text(encoding="utf-8").splitlines()
    queries = [json.loads(line) for line in lines if line.strip()]
    return [q for q in queries if slug is None or q["book"] == slug]


def load_book(tmp_path, slug=BOOK):
    """Import one sample book and its sample queries; returns (book, [plot topics])."""
    call_command("import_book", str(DATA / "books" / f"{slug}.txt"), "--title", slug, "--slug", slug, "--no-progress")
    path = tmp_path / f"{slug}-queries.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in sample_queries(slug)), encoding="utf-8")
    call_command("import_plot_queries", str(path), "--no-progress")
    book = Book.objects.get(slug=slug)
    return book, list(Topic.objects.filter(book=book).order_by("external_id"))


def bm25_pool(book, topics, name="plot-bm25", depth=30, per_topic=10):
    """A pool built by the real BM25 retriever (eager tasks); returns (pool, its BM25 run)."""
    pool = define_pool(name=name, collection=book.collection, topics=topics, retrievers=["bm25"], depth=depth,
                       per_topic=per_topic)
    pool = assemble_pool(pool.pk)
    run = Run.objects.get(pk__in=pool.params["built"]["runs"])
    return pool, run
