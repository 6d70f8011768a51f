"""manage.py export_nugget_scores --campaign C [--source NAME] [--format json|tsv] [--out FILE]"""

import json

from annotation.management.commands._nuggets import CampaignExport
from annotation.services.nuggets import scores
from assessments.evaluation.nuggets import FORMATS, scores_tsv, unscored_warning


class Command(CampaignExport):
    help = (
        "Score a nuggets campaign's answers (TREC RAG: all, vital, strict_all, strict_vital, weighted), per run and "
        "topic, from the people's nugget labels (adjudicated, else the majority, a tie taking the lower; practice "
        "labels never count). all and vital give partial_support 0.5 (the nuggetizer's all_score and vital_score), "
        "strict_all and strict_vital 0 (its strict_all_score, strict_vital_score); weighted: vital 1, okay 0.5, "
        "partial 0.5 (TREC RAG 2024); the JSON's definitions say each. A topic with answers and no nuggets is not "
        "scored and is said (on standard error, and in the JSON as topics_without_nuggets). Where the "
        "campaign has LLM nugget assignments (manage.py llm_nuggets assign), the JSON sets each beside the people's "
        "(compared_with_machine: Kendall's tau of the run rankings, alpha and agreement on the labels); they count "
        "only when named: --source ID|NAME scores the runs by that source's labels instead."
    )

    def more_arguments(self, parser):
        parser.add_argument("--format", choices=FORMATS, default="json")
        parser.add_argument("--source", help="Score by this machine source's nugget assignments (its id or name) "
                            "instead of the people's.")

    def text(self, options):
        found = scores(options["campaign"], source=options["source"])
        self.stderr.write(unscored_warning(found), ending="")
        return scores_tsv(found) if options["format"] == "tsv" else json.dumps(found, indent=1) + "\n"
