"""manage.py import_nuggets FILE --campaign C [--assessor NAME]"""

from annotation.management.commands._nuggets import CampaignImport
from annotation.services.nuggets import IMPORTED_BANKS, import_banks_file


class Command(CampaignImport):
    help = (
        "Import nugget banks made elsewhere (nuggetizer: one topic a line, {qid, query, nuggets: [{text, importance}]}) "
        "into a nuggets campaign; each replaces its topic's bank, nuggets of an unchanged text keeping their labels. "
        "Checked whole: any problem and nothing is stored."
    )
    file_help = "The nuggets file."
    assessor = IMPORTED_BANKS
    importer = staticmethod(import_banks_file)
