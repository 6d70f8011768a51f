"""manage.py export_car_assessments --out DIR [--collection C] [--pool P] [--topic ID ...] [--assessor NAME]"""

from django.core.management.base import BaseCommand, CommandError

from assessments.exporters.car_y3 import export_car_assessments
from assessments.exporters.common import ExportFailed, resolve_scope


class Command(BaseCommand):
    help = (
        "Write the outline judgements as TREC CAR Y3 detailed assessment files (seed 004 Appendix A): one JSON "
        "file per topic and assessor, named <topic>__<assessor>.json (percent-encoded), each written whole or "
        "not at all. See assessments/exporters/car_y3.py for the format and every decision."
    )

    def add_arguments(self, parser):
        parser.add_argument("--out", required=True, metavar="DIR", help="Directory for the files (created if missing).")
        parser.add_argument("--collection", help="Collection of the topics (default: the only one with judgements).")
        parser.add_argument("--pool", help="Only the topics of this pool.")
        parser.add_argument(
            "--topic", "--topics", dest="topics", nargs="+", action="extend", default=[], metavar="ID",
            help="Only these topics (external ids).",
        )
        parser.add_argument("--assessor", help="Only this assessor's labels.")
        parser.add_argument("--indent", type=int, metavar="N", help="Pretty-print with N spaces (default: compact).")

    def handle(self, *args, **options):
        try:
            scope = resolve_scope(
                collection=options["collection"], topics=options["topics"], pool=options["pool"],
                assessor=options["assessor"],
            )
            result = export_car_assessments(scope, options["out"], indent=options["indent"])
        except ExportFailed as exc:
            raise CommandError(f"export failed: {exc.as_flag()}") from exc
        self.stdout.write(result.summary())
