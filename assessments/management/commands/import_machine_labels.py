"""manage.py import_machine_labels FILE --name NAME [--collection C] [--campaign C] [--model M] [--prompt TEXT|@FILE]"""

from pathlib import Path

from django.core.management.base import CommandError

from assessments.importers.machine_labels import FORMATS, import_machine_labels
from retrieval.ingest import ImportCommand, read_text


class Command(ImportCommand):
    help = (
        "Import an outside judge's labels (e.g. UMBRELA's) as a machine label source: TSV `topic doc p` (p the "
        "probability of relevance), TREC qrels of machine grades 0-3, or JSON lines {topic_id, doc_id, probs} "
        "(a probability per grade). Plain, gzip, bzip2 or xz. The whole file is checked first: any problem and "
        "nothing is written. Never human judgements: qrels read them only by name (export_qrels --source machine)."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="The labels file.")
        parser.add_argument("--name", required=True, help="The source's name (not digits only).")
        parser.add_argument("--collection", help="The collection the file's topics and documents are of "
                                                 "(default: the campaign's).")
        parser.add_argument("--campaign", help="The campaign the labels are for (else any campaign may use them).")
        parser.add_argument("--format", choices=FORMATS, default="auto",
                            help="tsv, qrels or jsonl (default: told from the first line).")
        parser.add_argument("--model", default="", help="The judge's model, as provenance.")
        parser.add_argument("--prompt", default="", help="The judge's prompt, as provenance: the text, or @FILE.")
        parser.add_argument("--user", help="Who imports (a user name), as provenance.")
        parser.add_argument("--replace", action="store_true",
                            help="Replace the labels of an imported source of this name (kept under its id).")

    def handle(self, *args, **options):
        prompt = options["prompt"]
        if prompt.startswith("@"):
            if not Path(prompt[1:]).is_file():
                raise CommandError(f"nothing was imported: --prompt: no file {prompt[1:]!r}")
            prompt = read_text(prompt[1:])
        result = import_machine_labels(
            options["path"], options["name"], collection_name=options["collection"],
            campaign_name=options["campaign"], fmt=options["format"], model=options["model"], prompt=prompt,
            username=options["user"], replace=options["replace"], progress=self.progress,
        )
        self.stdout.write(result.summary())
