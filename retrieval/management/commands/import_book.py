"""manage.py import_book PATH --title T [--slug S] [--sentences-per-chunk 3]: a plain-text book, split and chunked."""

from retrieval.importers import OPTIONS, prepare_book, write_book
from retrieval.ingest import ImportCommand


class Command(ImportCommand):
    help = (
        "Import a plain-text book (UTF-8, optionally gzipped): strip a Project Gutenberg header and footer, join "
        "hard-wrapped paragraph lines, split sentences with pysbd, and store chunks of N consecutive sentences as "
        "passages slug:0, slug:1, ... of a new book collection named by the slug. A bad input writes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="The book's text file.")
        self.add_options(parser, OPTIONS)  # registered as kind `book` (assessments.importers.registry)

    def handle(self, *args, **options):
        prepared = prepare_book(
            options["path"],
            title=options["title"],
            slug=options["slug"],
            sentences_per_chunk=options["sentences_per_chunk"],
            progress=self.progress,
        )
        book = write_book(prepared, progress=self.progress)
        removed = [
            part for part, flag in (("header", prepared.header_removed), ("footer", prepared.footer_removed)) if flag
        ]
        note = f"; Project Gutenberg {' and '.join(removed)} removed" if removed else ""
        self.stdout.write(
            f"Imported {book.title!r} as {book.slug}: {book.sentence_count:,} sentences in "
            f"{len(prepared.chunks):,} chunks of {book.sentences_per_chunk}{note}."
        )
