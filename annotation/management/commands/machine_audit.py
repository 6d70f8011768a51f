"""manage.py machine_audit CAMPAIGN --source ID [--size N] [--seed S]: a sample of the human labels a machine
disagrees with goes to review (annotation/services/triage.py)."""

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Campaign
from annotation.services.triage import DEFAULT_AUDIT, TriageInvalid, audit_review


class Command(BaseCommand):
    help = (
        "Audit with a machine label source: a fixed random sample of the campaign's human labels it disagrees with "
        "(relevant or not), from batches that are done, opens a review round of each batch. The reviewer judges the "
        "human label; the machine's label is shown to the reviewer only as why the item was sampled."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign")
        parser.add_argument("--source", type=int, required=True, metavar="ID", help="The machine label source.")
        parser.add_argument("--size", type=int, default=DEFAULT_AUDIT, help=f"Labels to sample (default {DEFAULT_AUDIT}).")
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args, **options):
        campaign = Campaign.objects.filter(name=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"campaign: no campaign named {options['campaign']!r}")
        try:
            done = audit_review(campaign, options["source"], size=options["size"], seed=options["seed"])
        except TriageInvalid as exc:
            raise CommandError(f"nothing was sampled: {exc.as_flag().replace('--machine-source', '--source')}") from exc
        self.stdout.write(f"{done['disagreeing']:,} human labels disagree with the machine, {done['eligible']:,} of "
                          f"them in batches that are done; {done['sampled']:,} sampled into {len(done['reviews'])} "
                          f"review{'s' if len(done['reviews']) != 1 else ''}.")
