"""manage.py import_trec_run PATH --collection C [--name NAME] [--create-missing]"""

from assessments.importers import registry
from assessments.importers.trec import import_run
from retrieval.ingest import ImportCommand


class Command(ImportCommand):
    help = (
        "Import a TREC run file (qid Q0 docid rank score tag) as a run of a collection. Ranks are stored in "
        "trec_eval's order (score descending, ties by docid descending); the file's rank column is kept in "
        "origin. The whole file is checked first: any problem and nothing is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="The run file (plain or gzip).")
        parser.add_argument("--collection", required=True, help="Name of the collection the run ranks.")
        self.add_options(parser, registry.get("trec-run").options)

    def handle(self, *args, **options):
        result = import_run(
            options["path"], options["collection"], name=options["name"],
            create_missing=options["create_missing"], progress=self.progress,
        )
        self.stdout.write(result.summary())
