from assessments.importers.topics import FORMATS, import_topics
from retrieval.ingest import ImportCommand


class Command(ImportCommand):
    help = (
        "Import ad hoc topics: classic TREC topic files (<top> <num> <title> <desc> <narr>), TREC web-track XML "
        "(<topic number=…>), TSV (qid<TAB>text) or JSON lines (query_id/qid, text/title, description, narrative); "
        "plain, gzip, bzip2 or xz. The format is told from the content; the collection is made if new."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="The topics file.")
        parser.add_argument("--collection", required=True, help="The collection the topics are about.")
        parser.add_argument("--format", choices=FORMATS, default="auto", help="The file's format (default: told "
                            "from the content).")
        parser.add_argument("--update", action="store_true", help="Replace topics already in the collection.")

    def handle(self, *args, **options):
        result = import_topics(
            options["path"], options["collection"], fmt=options["format"], update=options["update"],
            progress=self.progress,
        )
        self.stdout.write(self.style.SUCCESS(result.summary()))
