"""manage.py agreement_report [--campaign C] [--topic T] [--layer L ...] [--format text|json|csv]
manage.py agreement_report --input FILE --level nominal|ordinal|interval|ratio [--scale A,B,C] [--format ...]"""

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.reports.agreement import LAYERS, AgreementFailed, campaign_report
from annotation.models import Campaign
from assessments.agreement.csvfile import csv_report
from assessments.agreement.formats import report_csv, report_text
from assessments.agreement.ratings import LEVELS
from retrieval.ingest import ImportFailed

FORMATS = {"text": report_text, "csv": report_csv, "json": lambda report: json.dumps(report, indent=1, allow_nan=False)}


class Command(BaseCommand):
    help = (
        "Agreement between assessors: Krippendorff's α, Fleiss' κ, pairwise Cohen's κ (weighted for ordinal "
        "scales), all/none agree, per label layer, topic and assessor pair, and the runs' ranking stability "
        "(Kendall's τ), for a campaign's judgements or for a CSV of item,assessor,label."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", help="The campaign (default: the only one with assignments).")
        parser.add_argument("--topic", help="Only this topic (external id).")
        parser.add_argument("--layer", dest="layers", nargs="+", action="extend", choices=LAYERS, metavar="LAYER",
                            help=f"Only these layers: {', '.join(LAYERS)}.")
        parser.add_argument("--format", choices=tuple(FORMATS), default="text", help="text (default), json or csv.")
        parser.add_argument("--input", metavar="FILE",
                            help="A CSV with the header item,assessor,label (missing cells allowed) instead of a "
                            "campaign.")
        parser.add_argument("--level", choices=LEVELS, help="With --input: the labels' level of measurement.")
        parser.add_argument("--scale", help="With --input and --level ordinal: labels in order, comma-separated "
                            "(needed when they are not numbers).")

    def handle(self, *args, **options):
        if options["input"]:
            report = self._input_report(options)
        else:
            if options["level"] or options["scale"]:
                raise CommandError("--level and --scale go with --input")
            try:
                report = campaign_report(self._campaign(options["campaign"]), topic=options["topic"],
                                         layers=options["layers"])
            except AgreementFailed as exc:
                raise CommandError(f"--{exc}") from exc
        self.stdout.write(FORMATS[options["format"]](report), ending="" if options["format"] != "json" else "\n")

    def _input_report(self, options):
        if options["campaign"] or options["topic"] or options["layers"]:
            raise CommandError("--input reads labels from a file: no --campaign, --topic or --layer")
        if not options["level"]:
            raise CommandError("--input needs --level (nominal, ordinal, interval or ratio)")
        scale = [label.strip() for label in options["scale"].split(",")] if options["scale"] else None
        try:
            return csv_report(options["input"], options["level"], scale=scale)
        except ImportFailed as exc:
            raise CommandError(f"no report:\n{exc.report()}") from exc

    def _campaign(self, name):
        if name:
            campaign = Campaign.objects.filter(name=name).first()
            if campaign is None:
                raise CommandError(f"--campaign: no campaign named {name!r}")
            return campaign
        names = list(Campaign.objects.filter(assignments__isnull=False).distinct().values_list("name", flat=True)[:10])
        if len(names) != 1:
            which = f"several campaigns have assignments ({', '.join(names)})" if names else \
                "no campaign has assignments"
            raise CommandError(f"--campaign: {which}; name one")
        return Campaign.objects.get(name=names[0])
