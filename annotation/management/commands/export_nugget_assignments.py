"""manage.py export_nugget_assignments --campaign C [--source ID|NAME] [--out FILE]"""

from annotation.management.commands._nuggets import CampaignExport
from annotation.services.nuggets import export_assignments


class Command(CampaignExport):
    help = (
        "Write a nuggets campaign's nugget labels in the nuggetizer's assignments format: one JSON line per run and "
        "topic with nuggets, {qid, query, run_id, answer_text, nuggets: [{text, importance, assignment}]}. The "
        "label that counts (adjudicated, else the majority, a tie the lower; practice labels never); a nugget nobody "
        "labelled is not_support and a topic the run did not answer is the nuggetizer's empty answer, so the "
        "nuggetizer's calculate_nugget_scores gives exactly export_nugget_scores' figures. --source writes a "
        "machine source's labels instead of the people's."
    )

    def more_arguments(self, parser):
        parser.add_argument("--source", help="A machine source's nugget assignments (its id or name) instead of the "
                            "people's labels.")

    def text(self, options):
        return export_assignments(options["campaign"], source=options["source"])
