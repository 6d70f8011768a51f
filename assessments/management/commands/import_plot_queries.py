"""manage.py import_plot_queries PATH: plot-retrieval queries (JSON lines) as PLOT topics with ground-truth chunks."""

from collections import Counter

from assessments.importers.plot import prepare_plot_queries, write_plot_queries
from retrieval.ingest import ImportCommand


class Command(ImportCommand):
    help = (
        "Import plot-retrieval queries from a JSON-lines file: one object a line with query_id, book (the slug of an "
        "imported book), query and an optional ground_truth_text, a verbatim span of the book whose chunks become the "
        "topic's ground truth. A bad input writes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="The queries file (.jsonl, optionally gzipped).")

    def handle(self, *args, **options):
        queries = prepare_plot_queries(options["path"], progress=self.progress)
        write_plot_queries(queries, progress=self.progress, source=options["path"])
        per_book = Counter(q.book.slug for q in queries)
        books = ", ".join(f"{slug} {count}" for slug, count in sorted(per_book.items()))
        chunks = sum(len(q.ground_truth) for q in queries)
        without = sum(1 for q in queries if not q.ground_truth_text)
        note = f"; {without} without ground truth" if without else ""
        self.stdout.write(f"Imported {len(queries)} plot queries ({books}) with {chunks} ground-truth chunks{note}.")
