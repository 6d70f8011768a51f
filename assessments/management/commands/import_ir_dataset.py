from assessments.importers.ir_datasets import import_dataset
from retrieval.ingest import ImportCommand


class Command(ImportCommand):
    help = (
        "Import a dataset ir_datasets knows (e.g. msmarco-passage/dev/small, robust04, beir/scifact/test): its queries "
        "as ad hoc topics, its qrels as a qrel set, its documents as passages, through ir_datasets' own iterators "
        "and docs store (its cache must hold the files: IR_DATASETS_HOME). Without --docs/--queries/--qrels, all "
        "three; queries and qrels go first, so --only-needed takes the documents they (and runs, pools) name."
    )

    def add_arguments(self, parser):
        parser.add_argument("dataset", help="The ir_datasets id.")
        parser.add_argument("--collection", help="The collection (default: the id as a slug, / as -).")
        parser.add_argument("--docs", action="store_true", help="Import the documents.")
        parser.add_argument("--queries", action="store_true", help="Import the queries.")
        parser.add_argument("--qrels", action="store_true", help="Import the qrels.")
        parser.add_argument("--only-needed", action="store_true", help="Only the documents that runs, pools and "
                            "qrels of the collection name, looked up in the docs store.")
        parser.add_argument("--update", action="store_true", help="Replace topics and documents already there.")

    def handle(self, *args, **options):
        parts = [options[k] for k in ("docs", "queries", "qrels")]
        everything = not any(parts)
        for line in import_dataset(
            options["dataset"], collection=options["collection"], docs=everything or options["docs"],
            queries=everything or options["queries"], qrels=everything or options["qrels"],
            only_needed=options["only_needed"], update=options["update"], progress=self.progress,
        ):
            self.stdout.write(self.style.SUCCESS(line))
