from assessments.importers import registry
from assessments.importers.documents import import_collection_documents
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
        self.add_options(parser, registry.get("documents").options)

    def handle(self, *args, **options):
        result = import_collection_documents(
            options["paths"], options["collection"], fmt=options["format"], update=options["update"],
            only_needed=options["only_needed"], progress=self.progress, encoding=options["encoding"],
            bad_bytes=options["bad_bytes"], retext_judged=options["retext_judged"],
        )
        self.stdout.write(self.style.SUCCESS(result.summary()))
