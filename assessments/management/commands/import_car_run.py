"""manage.py import_car_run PATH [PATH ...] [--collection car-y3] [--create-topics]"""

from assessments.importers import registry
from assessments.importers.car import DEFAULT_COLLECTION, import_car_runs
from retrieval.ingest import ImportCommand


class Command(ImportCommand):
    help = (
        "Import TREC CAR Y3 submissions (one page per JSON line) or the older single-page files as runs: each "
        "page is a run's article for a topic, its paragraphs in article order; paragraphs with para_body become "
        "passages. Pages of tqa2: topics are held to the Y3 rules. All files are checked together first: any "
        "problem and nothing is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", metavar="PATH", help="Submission files (plain or gzip).")
        parser.add_argument(
            "--collection", default=DEFAULT_COLLECTION,
            help=f"Collection of the topics and passages (created if missing; default {DEFAULT_COLLECTION}).",
        )
        self.add_options(parser, registry.get("car-runs").options)

    def handle(self, *args, **options):
        result = import_car_runs(
            options["paths"], options["collection"], create_topics=options["create_topics"], progress=self.progress,
        )
        self.stdout.write(result.summary())
