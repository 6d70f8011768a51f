"""manage.py import_car_assessments PATH [PATH ...] [--collection car-y3]"""

from assessments.importers.car.assessments import assessment_paths, import_car_assessments
from assessments.importers.car import DEFAULT_COLLECTION
from retrieval.ingest import ImportCommand


class Command(ImportCommand):
    help = (
        "Import TREC CAR Y3 detailed assessment files (ours, or the original assessment tool's with its label "
        "names) as judgements: every value recorded as an imported change with its annotator, time stamp, session "
        "and runs; unknown annotators become users. A directory stands for its *.json files. All files are checked "
        "together first: any problem and nothing is written. Importing the same content again stores nothing new."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", metavar="PATH", help="Assessment files (plain or gzip) or directories.")
        parser.add_argument(
            "--collection", default=DEFAULT_COLLECTION,
            help=f"Collection of the topics and paragraphs (default {DEFAULT_COLLECTION}).",
        )

    def handle(self, *args, **options):
        result = import_car_assessments(
            assessment_paths(options["paths"]), options["collection"], progress=self.progress
        )
        self.stdout.write(result.summary())
