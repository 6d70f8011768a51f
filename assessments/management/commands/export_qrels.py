"""manage.py export_qrels [--collection C] [--campaign NAME] [--pool P] [--topic ID ...] [--assessor NAME]
[--aggregate one|majority|mean|max|adjudicated] [--ties higher|lower] [--level page|section] [--qrel-set NAME] [--out FILE]
[--source human|machine|filled [--machine-source ID] [--sources-out FILE]]"""

from django.core.management.base import BaseCommand, CommandError

from assessments.exporters import machine, qrels
from assessments.exporters.common import ExportFailed
from assessments.services.qrels import SOURCES, QrelsRequest, qrels_rows, qrels_sourced


class Command(BaseCommand):
    # As Django's dumpdata: no system checks, which import every URL and with them the pages' statistics
    # packages (statsmodels, scipy, pandas: 120 MB of the 190 MB peak of an export of 1M judgements, and 3 s).
    requires_system_checks = []
    help = (
        "Write TREC qrels (topic 0 docid grade) from the judgements, on the CAR scale (MUST 3, SHOULD 2, CAN 1, "
        "removed 0) for outlines and the plot grade for plot topics, sorted, to stdout or atomically to --out. "
        "See assessments/exporters/qrels.py for every rule."
    )

    def add_arguments(self, parser):
        parser.add_argument("--collection", help="Collection of the topics (default: the only one with judgements).")
        parser.add_argument("--pool", help="Only the topics of this pool.")
        parser.add_argument(
            "--topic", "--topics", dest="topics", nargs="+", action="extend", default=[], metavar="ID",
            help="Only these topics (external ids).",
        )
        parser.add_argument("--assessor", help="Only this assessor's judgements (goes with --aggregate one).")
        parser.add_argument(
            "--aggregate", metavar="HOW",
            help="How assessors' grades combine: one (with --assessor; also written assessor:NAME), majority "
            "(the most frequent grade; a tie as --ties says), mean (rounded half up), max, or adjudicated: an organiser's final label "
            "where adjudication set one, else the assessors' grade when they agree, else (an unresolved "
            "disagreement) the majority, counted in a warning on stderr. Adjudicated labels never count in the "
            "other aggregations. Default: one with --assessor, else majority.",
        )
        parser.add_argument(
            "--ties", metavar="WAY",
            help="Where majority (and adjudicated's unresolved lines) send a tie, e.g. two assessors grading 1 and 2: "
            "higher (default: the higher of the tied grades) or lower.",
        )
        parser.add_argument(
            "--level", choices=qrels.LEVELS,
            help="page (default): the maximum over a passage's facets; section: one line per facet, topic "
            "column topic/heading_id.",
        )
        parser.add_argument("--qrel-set", help="Export this stored qrel set as it is, instead of the judgements.")
        parser.add_argument(
            "--campaign", help="Only the labels made in this campaign (default: every human label of the collection).",
        )
        parser.add_argument("--out", metavar="FILE", help="Write to FILE (replaced only when complete), not stdout.")
        parser.add_argument(
            "--source", choices=SOURCES, default="human",
            help="Whose labels: human (default: the judgements only), machine (one machine label source's grades), or "
            "filled (the human lines, and the machine's only where no human judged; with --campaign of a hybrid "
            "judging order, the calibrated fill of every candidate of its pools no person graded: the campaign's "
            "judging_min_rel where relevant, else 0). Machine labels are page level.",
        )
        parser.add_argument(
            "--machine-source", metavar="ID",
            help="The machine label source (id or name) for --source machine|filled; needed when several label here.",
        )
        parser.add_argument(
            "--sources-out", metavar="FILE",
            help="Also write each qrels line's source (`topic docid human|machine`, same order) to FILE: machine "
            "for a line of the machine source or of the hybrid's calibrated fill.",
        )

    def handle(self, *args, **options):
        stats = {}
        request = QrelsRequest(
            collection=options["collection"], pool=options["pool"], topics=tuple(options["topics"]),
            assessor=options["assessor"], aggregate=options["aggregate"], level=options["level"],
            qrel_set=options["qrel_set"], campaign_id=self.campaign_id(options["campaign"]),
            source=options["source"], machine_source=options["machine_source"], ties=options["ties"],
        )
        try:
            if options["source"] == "human" and not options["sources_out"]:
                count = qrels.write_qrels(qrels_rows(request, stats), options["out"], self.stdout)
            else:
                count = machine.write_sourced(qrels_sourced(request, stats), options["out"], options["sources_out"],
                                              self.stdout)
        except ExportFailed as exc:
            raise CommandError(f"nothing was exported: {exc.as_flag()}") from exc
        if stats.get("unresolved"):
            self.stderr.write(
                f"warning: {stats['unresolved']:,} lines have assessors who disagree and no adjudicated label: "
                f"their grade is the majority ({stats['adjudicated']:,} lines adjudicated)."
            )
        if options["out"]:
            self.stdout.write(f"{count:,} qrels lines written to {options['out']}.")

    @staticmethod
    def campaign_id(name):
        if not name:
            return None
        from assessments.campaign_link import campaign_id_named

        found = campaign_id_named(name)
        if found is None:
            raise CommandError(f"nothing was exported: --campaign: no campaign named {name!r}")
        return found
