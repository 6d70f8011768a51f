"""manage.py export_audit: every judgement change as JSON lines, with its old and new value."""

from django.contrib.auth import get_user_model
from django.core.management import BaseCommand, CommandError

from annotation.services.audit import change_rows, write_jsonl
from annotation.models import Campaign
from assessments.exporters.common import ExportFailed


class Command(BaseCommand):
    help = (
        "Write the audit trail: one JSON object per judgement change (assessor, server and client time, "
        "session, source, label key, runs, old_value, new_value, current), label by label in the assessor's "
        "clock order. The file appears only when complete."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", metavar="NAME", help="Only the campaign's assessors on its topics.")
        parser.add_argument("--assessor", metavar="USERNAME", help="Only this assessor's changes.")
        parser.add_argument("--out", metavar="FILE", required=True, help="Where to write the JSON lines.")

    def handle(self, *args, campaign=None, assessor=None, out, **options):
        found_campaign = found_assessor = None
        if campaign:
            found_campaign = Campaign.objects.filter(name=campaign).first()
            if found_campaign is None:
                raise CommandError(f"--campaign: no campaign named {campaign!r}")
        if assessor:
            found_assessor = get_user_model().objects.filter(username=assessor).first()
            if found_assessor is None:
                raise CommandError(f"--assessor: no user named {assessor!r}")
        try:
            count = write_jsonl(change_rows(campaign=found_campaign, assessor=found_assessor), out)
        except ExportFailed as exc:
            raise CommandError(f"{exc}; nothing was written") from None
        self.stdout.write(f"wrote {count:,} changes to {out}")
