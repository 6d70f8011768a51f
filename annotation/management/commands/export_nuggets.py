"""manage.py export_nuggets --campaign C [--out FILE]"""

from annotation.management.commands._nuggets import CampaignExport
from annotation.services.nuggets import export_banks


class Command(CampaignExport):
    help = "Write a nuggets campaign's nugget banks in the nuggetizer's format (one topic a line)."

    def text(self, options):
        return export_banks(options["campaign"])
