"""manage.py export_nuggets --campaign C [--out FILE]"""

from annotation.management.commands._nuggets import CampaignExport
from annotation.services.nuggets import export_banks


class Command(CampaignExport):
    help = (
        "Write a nuggets campaign's nugget banks in the nuggetizer's format (one topic a line: qid, query, nuggets; "
        "each topic's adjudicated bank, else the latest). Each nugget has text and importance, `suggested` where it "
        "was taken from an LLM suggestion, and `made_by`, who made it: {kind: person, user}, {kind: import, user, "
        "file}, or {kind: machine, source, model, model_version, prompt, taken_by} for a suggestion kept as it came; "
        "a suggestion changed since is the person's (or import's) with suggested_by: the machine. The nuggetizer "
        "ignores the extra keys; import_nuggets reads suggested back, not made_by. See docs/nugget-scores.md."
    )

    def text(self, options):
        return export_banks(options["campaign"])
