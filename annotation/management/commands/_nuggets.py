"""What the nuggets campaign commands share (a module Django does not take for a command: its name starts with _)."""

from django.core.management.base import BaseCommand, CommandError

from annotation.services.errors import ServiceError
from assessments.exporters.common import ExportFailed, atomic_file
from retrieval.ingest import ImportCommand


def campaign_option(parser):
    parser.add_argument("--campaign", required=True, help="The nuggets campaign.")


def served(call, *args, **kwargs):
    """call(*args, **kwargs), a ServiceError said as the command's option."""
    try:
        return call(*args, **kwargs)
    except ServiceError as exc:
        raise CommandError(f"--{exc.field}: {exc.message}") from exc


class CampaignImport(ImportCommand):
    """FILE --campaign C [--assessor NAME]: `importer(campaign, path, **options)` and its summary."""

    file_help = "The file."
    assessor = None  # the default user the labels go under; None: the command takes no --assessor

    def add_arguments(self, parser):
        parser.add_argument("path", help=self.file_help)
        campaign_option(parser)
        if self.assessor:
            parser.add_argument("--assessor", default=self.assessor,
                                help=f"The user the labels are stored under (made if new; default {self.assessor}).")
        self.more_arguments(parser)

    def more_arguments(self, parser):
        pass

    def handle(self, *args, **options):
        result = served(self.importer, options["campaign"], options["path"], **self.importer_options(options))
        self.stdout.write(self.style.SUCCESS(result.summary()))

    def importer_options(self, options):
        return {"assessor": options["assessor"]} if self.assessor else {}


class CampaignExport(BaseCommand):
    """--campaign C [--out FILE]: writes what `text(options)` gives."""

    def add_arguments(self, parser):
        campaign_option(parser)
        self.more_arguments(parser)
        parser.add_argument("--out", help="The file to write (default: standard output).")

    def more_arguments(self, parser):
        pass

    def handle(self, *args, **options):
        text = served(self.text, options)
        if options["out"]:
            try:
                with atomic_file(options["out"]) as handle:  # a file it cannot write is said, not a traceback
                    handle.write(text)
            except ExportFailed as exc:
                raise CommandError(f"nothing was exported: {exc.message}") from exc
        else:
            self.stdout.write(text, ending="")
