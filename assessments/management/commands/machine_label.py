"""manage.py machine_label (--annotator ID | --zero-shot fusion|encoder) --pool NAME… [--campaign NAME]
[--include-judged] [--batch-size N]: label pool candidates, with a trained annotator or zero-shot (no human label)."""

from django.core.management.base import BaseCommand, CommandError

from assessments.machine import annotator
from assessments.machine.commands import campaign_id, progress_bar
from assessments.management.commands.train_annotator import flag
from assessments.models import MachineJob
from assessments.services import machine


class Command(BaseCommand):
    help = (
        "Label the pools' candidates that this annotator has not labelled yet and that no human judged, in batches "
        "(each stored when made: run it again after a stop and it goes on where it stopped). Machine labels stay "
        "their own source: qrels use them only when asked (export_qrels --source machine|filled)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--annotator", type=int, metavar="ID", help="The trained annotator's id.")
        parser.add_argument("--zero-shot", choices=annotator.ZERO_SHOT,
                            help="A new zero-shot source, no human label needed: fusion (reciprocal-rank fusion of "
                            "the pools' runs) or encoder (the bundled encoder's cosine of topic and candidate).")
        parser.add_argument("--campaign", help="With --zero-shot: the campaign the source is made for.")
        parser.add_argument("--name", help="With --zero-shot: a name for the source (default METHOD-ID).")
        parser.add_argument("--pool", "--pools", dest="pools", nargs="+", required=True, metavar="NAME")
        parser.add_argument("--include-judged", action="store_true",
                            help="Label the candidates people judged too (to compare; its training labels are flagged).")
        parser.add_argument("--batch-size", type=int, default=annotator.LABEL_BATCH)
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, **options):
        if (options["annotator"] is None) == (options["zero_shot"] is None):
            raise CommandError("nothing was labelled: give --annotator ID, or --zero-shot fusion|encoder")
        try:
            if options["zero_shot"]:
                job = machine.zero_shot(options["zero_shot"], options["pools"], name=options["name"] or "",
                                        include_judged=options["include_judged"], batch_size=options["batch_size"],
                                        within=campaign_id(options["campaign"], "nothing was labelled"))
            else:
                job = machine.label(options["annotator"], options["pools"], include_judged=options["include_judged"],
                                    batch_size=options["batch_size"])
        except machine.MachineInvalid as exc:
            raise CommandError(f"nothing was labelled: {flag(exc)}") from exc
        bar = progress_bar(self, job.items_total, "labelling", not options["no_progress"])
        try:
            job = machine.run(job, bar)
        finally:
            if bar is not None:
                bar.close()
        if job.status != MachineJob.Status.DONE:
            raise CommandError(f"labelling stopped: {job.error or job.message}")
        source = job.source
        total = source.labels.filter(passage__isnull=False).count()
        self.stdout.write(f"{job.items_done:,} candidates labelled by {source.name} (#{source.pk}); "
                          f"{total:,} labels from it in all.")
