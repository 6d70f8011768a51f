"""manage.py import_car_outlines PATH [--collection car-y3] [--include-train] [--update]"""

from assessments.importers import registry
from assessments.importers.car import DEFAULT_COLLECTION, import_outlines
from retrieval.ingest import ImportCommand


class Command(ImportCommand):
    help = (
        "Import TREC CAR outlines as topics with facets: the Y3 JSON cast file (tqa-heading-cast-and-more-6.json; "
        "test pages are includePages minus trainTitles, facets are each page's includeSections in order) or an "
        "official CBOR outlines file (facets are the top-level sections). A topic already stored with the same "
        "content is left as it is. The whole file is checked first: any problem and nothing is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="The JSON cast file or a .cbor outlines file.")
        parser.add_argument(
            "--collection", default=DEFAULT_COLLECTION,
            help=f"Collection of the topics (created if missing; default {DEFAULT_COLLECTION}).",
        )
        self.add_options(parser, registry.get("car-outlines").options)

    def handle(self, *args, **options):
        result = import_outlines(
            options["path"], options["collection"], include_train=options["include_train"],
            update=options["update"], progress=self.progress,
        )
        self.stdout.write(result.summary())
