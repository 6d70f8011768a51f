"""manage.py export_nugget_scores --campaign C [--format json|tsv] [--out FILE]"""

import json

from annotation.management.commands._nuggets import CampaignExport
from annotation.services.nuggets import campaign_scope
from assessments.evaluation.nuggets import FORMATS, nugget_scores, scores_tsv


class Command(CampaignExport):
    help = (
        "Score a nuggets campaign's answers (TREC RAG: all, vital, strict_all, strict_vital, weighted), per run and "
        "topic, from the people's nugget labels (adjudicated, else the majority, a tie taking the lower)."
    )

    def more_arguments(self, parser):
        parser.add_argument("--format", choices=FORMATS, default="json")

    def text(self, options):
        scores = nugget_scores(campaign_scope(options["campaign"]).campaign_id)
        return scores_tsv(scores) if options["format"] == "tsv" else json.dumps(scores, indent=1) + "\n"
