"""manage.py import_qrels PATH --collection C [--name NAME] [--create-missing]"""

from assessments.importers import registry
from assessments.importers.trec import import_qrels
from retrieval.ingest import ImportCommand


class Command(ImportCommand):
    help = (
        "Import a TREC qrels file (topic iteration docid grade) as a qrel set of a collection. Column 2 becomes "
        "the subtopic, except 0 (or Q0), which means none. The whole file is checked first: any problem and "
        "nothing is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="The qrels file (plain or gzip).")
        parser.add_argument("--collection", required=True, help="Name of the collection the qrels grade.")
        self.add_options(parser, registry.get("qrels").options)

    def handle(self, *args, **options):
        result = import_qrels(
            options["path"], options["collection"], name=options["name"],
            create_missing=options["create_missing"], progress=self.progress,
        )
        self.stdout.write(result.summary())
