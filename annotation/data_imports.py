"""Data imports started from the organiser's console (models): the uploaded files, kept in the database until a worker
has imported them, and the job's problems (annotation.services.data_imports runs them). An import is a background
job (retrieval.models.background: its status, progress, error, who started it).

The files live in the database rather than on a disk, so any Celery worker that reaches the database can
import them; they are emptied once the import has ended.
"""

from django.conf import settings
from django.db import models

from retrieval.models import BackgroundJob


class DataImport(BackgroundJob):
    """Files an organiser uploaded to import (topics, runs, qrels, a book, nugget banks), imported as one background
    job."""

    class Kind(models.TextChoices):
        """What the files are; each kind has its importer (the one its manage.py command calls)."""

        CAR_OUTLINES = "car-outlines", "CAR outlines (Y3 JSON cast file or .cbor)"
        CAR_RUNS = "car-runs", "CAR runs (Y3 JSON lines, or the older single-page files)"
        CAR_ASSESSMENTS = "car-assessments", "CAR Y3 assessments (JSON, a file per topic and assessor)"
        TREC_RUN = "trec-run", "TREC run (qid Q0 docid rank score tag)"
        QRELS = "qrels", "TREC qrels (topic iteration docid grade)"
        TOPICS = "topics", "Ad hoc topics (classic TREC, web-track XML, TSV or JSON lines)"
        DOCUMENTS = "documents", "Documents (TREC SGML, JSON lines or TSV; several files at once)"
        BOOK = "book", "Book (plain text, for plot retrieval)"
        PLOT_QUERIES = "plot-queries", "Plot queries (JSON lines)"
        ANSWERS = "answers", "Generated answers (TREC RAG: {run_id, topic_id, references, answer} a line)"
        NUGGETS = "nuggets", "Nugget banks (nuggetizer nuggets file: {qid, query, nuggets} a line)"
        NUGGET_ASSIGNMENTS = "nugget-assignments", "Nugget assignments (nuggetizer file: {qid, run_id, nuggets} a line)"

    job_kind = "import"

    kind = models.CharField(max_length=20, choices=Kind.choices)
    campaign = models.ForeignKey(
        "annotation.Campaign", on_delete=models.SET_NULL, null=True, blank=True, related_name="data_imports",
        help_text="The campaign whose page started it: the topics the files bring are added to it.",
    )
    collection = models.CharField(max_length=100, blank=True, help_text="The collection imported into (by name).")
    options = models.JSONField(default=dict, blank=True, help_text="The importer's options (title, name, ...).")
    file_names = models.JSONField(default=list, blank=True)
    summary = models.TextField(blank=True, help_text="What was imported, in the importer's words.")
    problems = models.JSONField(
        default=list, blank=True, help_text="Why nothing was imported: [{source, line, field, message}, ...].",
    )
    problem_total = models.PositiveIntegerField(default=0, help_text="Problems found (more than listed past a cap).")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="data_imports",
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.get_kind_display()} #{self.pk} ({self.get_status_display().lower()})"

    def kind_label(self) -> str:
        return "import"

    def task_name(self) -> str:
        return "annotation.tasks.run_data_import"

    def status_extra(self) -> dict:
        return {"summary": self.summary, "problems": self.problems, "problem_total": self.problem_total,
                "files": self.file_names}


class DataImportFile(models.Model):
    """One uploaded file of a data import; its content is emptied once the import has ended."""

    data_import = models.ForeignKey(DataImport, on_delete=models.CASCADE, related_name="files")
    position = models.PositiveSmallIntegerField()
    name = models.CharField(max_length=255, help_text="The file's name as uploaded (problems name it).")
    size = models.PositiveBigIntegerField(default=0)
    content = models.BinaryField(blank=True)

    class Meta:
        ordering = ["data_import", "position"]
        constraints = [models.UniqueConstraint(fields=["data_import", "position"], name="unique_import_file_position")]

    def __str__(self):
        return self.name


class DismissedWork(models.Model):
    """A failed piece of background work an organiser dismissed from the campaign list (annotation.reports.jobs)."""

    class Kind(models.TextChoices):
        IMPORT = "import", "Data import"
        POOL = "pool", "Pool build"
        JOB = "job", "Retrieval job"
        MACHINE = "machine", "Machine job"

    kind = models.CharField(max_length=20, choices=Kind.choices)
    object_id = models.PositiveBigIntegerField(help_text="The DataImport, Pool, Job or MachineJob dismissed.")
    dismissed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                     related_name="+")
    dismissed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "object_id"], name="unique_dismissed_work")]

    def __str__(self):
        return f"{self.get_kind_display()} #{self.object_id} (dismissed)"
