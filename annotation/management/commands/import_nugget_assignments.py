"""manage.py import_nugget_assignments FILE --campaign C [--assessor NAME]"""

from annotation.management.commands._nuggets import CampaignImport
from annotation.services.nuggets import IMPORTED_ASSIGNMENTS, import_assignments_file


class Command(CampaignImport):
    help = (
        "Import nugget assignments made elsewhere (nuggetizer: one (topic, run) a line, {qid, run_id, nuggets: [{text, "
        "importance, assignment}]}) as one assessor's labels of a nuggets campaign; each nugget is the topic's nugget "
        "of the same text. Checked whole: any problem and nothing is stored."
    )
    file_help = "The assignments file."
    assessor = IMPORTED_ASSIGNMENTS
    importer = staticmethod(import_assignments_file)
