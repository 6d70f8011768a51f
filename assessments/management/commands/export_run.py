"""manage.py export_run NAME --out FILE [--collection C] [--tag TAG]"""

from django.core.management.base import BaseCommand, CommandError

from assessments.exporters.common import ExportFailed, atomic_file
from assessments.models import Run, RunEntry
from assessments.services.runs import RunLookupError, find_run


class Command(BaseCommand):
    help = (
        "Write a stored run in TREC format (`topic Q0 docid rank score tag`), topics in order, each topic's "
        "passages in the run's rank order. An entry without a score gets one that keeps that order under "
        "trec_eval's sort (count − rank + 1)."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="Run name, or OWNER/NAME where several teams use the name.")
        parser.add_argument("--out", required=True, metavar="FILE", help="File to write ('-' for standard output).")
        parser.add_argument("--collection", help="Collection of the run (when the name is in several).")
        parser.add_argument("--tag", help="Run tag for column 6 (default: the run's name).")

    def handle(self, *args, name, out, collection, tag, **options):
        runs = Run.objects.filter(collection__name=collection) if collection else None
        try:
            run = find_run(name, runs, field="name")
        except RunLookupError as exc:
            raise CommandError(str(exc) + (f" in collection {collection!r}" if collection else "")) from None
        tag = tag or run.name
        if any(c.isspace() for c in tag):
            raise CommandError("the tag may not contain spaces")
        lines = list(export_lines(run, tag))
        text = "".join(lines)
        if out == "-":
            self.stdout.write(text, ending="")
        else:
            try:
                with atomic_file(out) as handle:  # a file it cannot write is said, not a traceback
                    handle.write(text)
            except ExportFailed as exc:
                raise CommandError(f"nothing was exported: {exc.message}") from exc
            self.stderr.write(f"Wrote {len(lines):,} lines of run {run.name!r} to {out}.")


def export_lines(run, tag):
    """TREC run lines of a stored run, topic by topic in rank order."""
    entries = RunEntry.objects.filter(run=run).order_by("topic__external_id", "topic_id", "rank")
    rows = entries.values_list("topic_id", "topic__external_id", "passage__external_id", "rank", "score")
    current, count = None, 0
    counts = dict(_counts(run))
    for topic_id, topic, passage, rank, score in rows.iterator(chunk_size=10_000):
        if topic_id != current:
            current, count = topic_id, counts[topic_id]
        value = score if score is not None else float(count - rank + 1)
        yield f"{topic} Q0 {passage} {rank} {float(value)!r} {tag}\n"


def _counts(run):
    from django.db.models import Count

    return RunEntry.objects.filter(run=run).values("topic_id").annotate(n=Count("pk")).values_list("topic_id", "n")
