"""manage.py import_rag_answers FILE --campaign C [--create-missing]"""

from annotation import importers
from annotation.management.commands._nuggets import CampaignImport
from annotation.services.nuggets import import_answers_file


class Command(CampaignImport):
    help = (
        "Import generated answers (TREC RAG 2024 / nuggetizer: one JSON object a line with run_id, topic_id, "
        "references and answer sentences with citations; or TREC RAG 2025: metadata {run_id, narrative_id, …}, "
        "references, answer) into a nuggets campaign, each run as the organisers' own run "
        "of its collection; plain or packed. Checked whole: any problem and nothing is stored."
    )
    file_help = "The answers file."
    importer = staticmethod(import_answers_file)

    def more_arguments(self, parser):
        self.add_options(parser, importers.get("answers").options)

    def importer_options(self, options):
        return {"create_missing": options["create_missing"]}
