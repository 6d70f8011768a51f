from assessments.importers import registry
from assessments.importers.topics import import_topics
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
        self.add_options(parser, registry.get("topics").options)

    def handle(self, *args, **options):
        result = import_topics(
            options["path"], options["collection"], fmt=options["format"], update=options["update"],
            progress=self.progress,
        )
        self.stdout.write(self.style.SUCCESS(result.summary()))
