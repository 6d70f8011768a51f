"""manage.py import_cranfield DIR [--collection cranfield] [--minus-one-gain 0]"""

from assessments.importers.cranfield import import_cranfield
from retrieval.ingest import ImportCommand


class Command(ImportCommand):
    help = (
        "Import the Cranfield collection (cran.all.1400, cran.qry, cranqrel in SMART format) from a folder: "
        "1,400 documents, 225 ad hoc topics numbered 1…225 in file order, and qrels as gains (5 − code for "
        "codes 1…4, --minus-one-gain for −1). Everything is checked first: any problem and nothing is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("folder", metavar="DIR", help="Folder holding cran.all.1400, cran.qry and cranqrel.")
        parser.add_argument("--collection", default="cranfield", help="Collection name (default: cranfield).")
        parser.add_argument(
            "--minus-one-gain", type=int, default=0,
            help="Gain for the qrels code −1 (no code given). Default 0: judged, not relevant, as trec_eval counts a "
            "−1 at its default threshold (grade ≥ 1); 1 makes it relevant like code 4.",
        )

    def handle(self, *args, **options):
        result = import_cranfield(
            options["folder"], options["collection"], minus_one_gain=options["minus_one_gain"],
            progress=self.progress,
        )
        self.stdout.write(result.summary())
