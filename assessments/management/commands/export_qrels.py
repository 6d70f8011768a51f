"""manage.py export_qrels [--collection C] [--pool P] [--topic ID ...] [--assessor NAME]
[--aggregate one|majority|mean|max|adjudicated] [--level page|section] [--qrel-set NAME] [--out FILE]"""

from django.core.management.base import BaseCommand, CommandError

from assessments.exporters import qrels
from assessments.exporters.common import ExportFailed, resolve_scope


class Command(BaseCommand):
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
            "(ties to the higher grade), mean (rounded half up), max, or adjudicated: an organiser's final label "
            "where adjudication set one, else the assessors' grade when they agree, else (an unresolved "
            "disagreement) the majority, counted in a warning on stderr. Adjudicated labels never count in the "
            "other aggregations. Default: one with --assessor, else majority.",
        )
        parser.add_argument(
            "--level", choices=qrels.LEVELS,
            help="page (default): the maximum over a passage's facets; section: one line per facet, topic "
            "column topic/heading_id.",
        )
        parser.add_argument("--qrel-set", help="Export this stored qrel set as it is, instead of the judgements.")
        parser.add_argument("--out", metavar="FILE", help="Write to FILE (replaced only when complete), not stdout.")

    def handle(self, *args, **options):
        aggregate, assessor = options["aggregate"], options["assessor"]
        stats = {}
        if aggregate and aggregate.startswith("assessor:"):
            if assessor and assessor != aggregate.split(":", 1)[1]:
                raise CommandError("--aggregate assessor:NAME and --assessor name different assessors")
            aggregate, assessor = "one", aggregate.split(":", 1)[1]
        try:
            if options["qrel_set"]:
                if assessor or aggregate or options["level"]:
                    raise CommandError("--qrel-set exports a stored set as it is: no --assessor, --aggregate, --level")
                scope = None
                if options["collection"] or options["pool"] or options["topics"]:
                    scope = resolve_scope(
                        collection=options["collection"], topics=options["topics"], pool=options["pool"]
                    )
                rows = qrels.qrel_set_lines(options["qrel_set"], scope and scope.topic_ids)
            else:
                scope = resolve_scope(
                    collection=options["collection"], topics=options["topics"], pool=options["pool"],
                    assessor=assessor,
                )
                rows = qrels.judgement_qrels(
                    scope, aggregate=aggregate or ("one" if assessor else "majority"), level=options["level"] or "page",
                    stats=stats,
                )
            count = qrels.write_qrels(rows, options["out"], self.stdout)
        except ExportFailed as exc:
            raise CommandError(f"nothing was exported: {exc}") from exc
        if stats.get("unresolved"):
            self.stderr.write(
                f"warning: {stats['unresolved']:,} lines have assessors who disagree and no adjudicated label: "
                f"their grade is the majority ({stats['adjudicated']:,} lines adjudicated)."
            )
        if options["out"]:
            self.stdout.write(f"{count:,} qrels lines written to {options['out']}.")
