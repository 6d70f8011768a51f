"""manage.py export_plot_labels --out FILE [--pool P | --campaign C] [--history] | --choices [--format csv|json]"""

from django.core.management.base import BaseCommand, CommandError

from assessments.exporters.common import ExportFailed
from assessments.exporters.plot import choice_rows, plot_label_records, resolve_pools, write_choices, write_json_lines


class Command(BaseCommand):
    help = (
        "Write every plot label (grade, query spans with their text, forced choices, pair ratings) as JSON lines "
        "with assessor, time stamps, session and runs; --history writes every change instead of the current "
        "values; --choices writes the forced-choice answers (right or wrong, beside the retriever's choice) as CSV "
        "or JSON. The file appears only when complete. See assessments/exporters/plot.py for the fields."
    )

    def add_arguments(self, parser):
        parser.add_argument("--out", required=True, metavar="FILE", help="Output file ('-' for stdout).")
        parser.add_argument("--pool", help="Only this pool's plot topics and study items.")
        parser.add_argument("--campaign", help="Only the plot topics and study items of this campaign's pools.")
        parser.add_argument("--history", action="store_true", help="Every change of every label, oldest first.")
        parser.add_argument("--choices", action="store_true", help="Forced-choice results instead of the labels.")
        parser.add_argument("--format", choices=("csv", "json"), default="csv", help="With --choices (default csv).")

    def handle(self, *args, **opts):
        if opts["choices"] and opts["history"]:
            raise CommandError("--choices writes the current answers; it takes no --history")
        try:
            pools = resolve_pools(pool=opts["pool"], campaign=opts["campaign"])
            if opts["choices"]:
                count = write_choices(choice_rows(pools), opts["out"], opts["format"], stream=self.stdout)
                what = "forced-choice answers"
            else:
                count = write_json_lines(plot_label_records(pools, history=opts["history"]), opts["out"], stream=self.stdout)
                what = "label changes" if opts["history"] else "labels"
        except ExportFailed as exc:
            raise CommandError(str(exc)) from exc
        if opts["out"] != "-":
            self.stderr.write(f"Wrote {count} {what} to {opts['out']}.")
