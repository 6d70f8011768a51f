"""manage.py delete_campaign NAME --confirm NAME: export the campaign under EXPORT_DIR, then delete it."""

from django.core.management import BaseCommand, CommandError

from annotation.services.audit import delete_campaign
from annotation.models import Campaign
from assessments.exporters.common import ExportFailed


class Command(BaseCommand):
    help = (
        "Delete a campaign and its assignments after writing its export (assignments, judgements of its "
        "assessors on its topics and their history) to EXPORT_DIR. Needs --confirm with the name again. "
        "Judgements stay: they belong to the assessors."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="The campaign's name.")
        parser.add_argument("--confirm", metavar="NAME", required=True, help="The campaign's name again.")

    def handle(self, *args, name, confirm, **options):
        if confirm != name:
            raise CommandError(f"--confirm {confirm!r} does not match {name!r}: nothing was deleted")
        campaign = Campaign.objects.filter(name=name).first()
        if campaign is None:
            raise CommandError(f"no campaign named {name!r}")
        try:
            path = delete_campaign(campaign)
        except ExportFailed as exc:
            raise CommandError(f"{exc}; the campaign was not deleted") from None
        self.stdout.write(f"deleted campaign {name!r}; its export is {path}")
