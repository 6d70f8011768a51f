from assessments.importers.documents import import_collection_documents
from retrieval.documents import BAD_BYTES, FORMATS
from retrieval.ingest import ImportCommand


class Command(ImportCommand):
    help = (
        "Import documents: TREC SGML (<DOC><DOCNO>…), JSON lines (Pyserini id/contents, BEIR _id/title/text) or TSV "
        "(id, text; id, title, text); plain, gzip, bzip2 or xz, streamed. The format is told from the content; the "
        "collection is made if new. All files go in one transaction: any problem stores nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", help="The documents files.")
        parser.add_argument("--collection", required=True, help="The collection the documents belong to.")
        parser.add_argument("--format", choices=FORMATS, default="auto", help="The files' format (default: told "
                            "from the content).")
        parser.add_argument("--only-needed", action="store_true", help="Import only the documents the collection's "
                            "runs, pools, qrels and answers name (import those first).")
        parser.add_argument("--update", action="store_true", help="Replace documents already in the collection.")
        parser.add_argument("--retext-judged", action="store_true", help="With --update, change the text of a "
                            "document people judged (their grades then stand for the new text; the summary says how "
                            "many). Without it, such a change is refused. Text under evidence spans never changes.")
        parser.add_argument("--encoding", default="utf-8", help="The files' encoding: UTF-8 (the default) or an 8-bit "
                            "one, e.g. latin-1 or cp1252 for old TREC disks.")
        parser.add_argument("--bad-bytes", choices=BAD_BYTES, default="refuse", help="A byte the encoding cannot "
                            "read: refuse the files (the default), or replace it by U+FFFD with a warning naming "
                            "the place (web crawls such as GOV2 mix encodings).")

    def handle(self, *args, **options):
        result = import_collection_documents(
            options["paths"], options["collection"], fmt=options["format"], update=options["update"],
            only_needed=options["only_needed"], progress=self.progress, encoding=options["encoding"],
            bad_bytes=options["bad_bytes"], retext_judged=options["retext_judged"],
        )
        self.stdout.write(self.style.SUCCESS(result.summary()))
