"""Machine labels: a source (a trained annotator, an LLM judge, a query filter) and the labels it made.

Machine labels are their own source, kept apart from the human Judgement rows: qrels, agreement,
adjudication and evaluation read judgements only, unless an organiser asks for machine labels by name
(`export_qrels --source machine|filled`, assessments.services.qrels). Nothing here is ever shown as a
human judgement. A source records what makes its labels reproducible: the model (name, version,
checksum of the weights or of the prompt), its settings (prompt, temperature, threshold...), and the
snapshot of human labels it was trained on.
"""

from django.db import models
from django.db.models import Q

from assessments.models.topics import Topic
from config.ids import parse_id
from retrieval.models import BackgroundJob, Collection, Passage

MAX_NAMED = 10  # sources a name may find before the caller says it names several


class MachineLabelSourceQuerySet(models.QuerySet):
    def usable_by(self, campaign_id):
        """The sources a campaign may use (its pre-labels, judging order, triage, audit, reports, exports): its own
        and those made for no campaign, never another campaign's (the one rule)."""
        return self.filter(Q(campaign_id=campaign_id) | Q(campaign_id__isnull=True))

    def named(self, text) -> list:
        """The sources among these that a person's `text` names (--source, ?source=, machine_source), by id: the
        source of that id when `text` is ASCII digits (config.ids.parse_id), and those of that name (at most 200
        printable characters; other text names none, and never reaches the database).

        Digits are an id: a source may not be named with digits only (MachineLabelSource.name_problem), so a
        name and an id never meet. A source named so before that rule is found beside the id's source, and the
        caller refuses the text as naming several (several_sources) rather than pick one silently."""
        text = str(text)
        source_id = parse_id(text)
        named = Q(name=text) if len(text) <= 200 and text.isprintable() else Q(pk__in=[])
        if source_id is not None:
            named |= Q(pk=source_id)
        return list(self.filter(named).order_by("pk")[:MAX_NAMED])


def several_sources(text, found) -> str:
    """Why `text` names each of the sources `found` (two or more), and how to name one of them: by its id."""
    ids = ", ".join(f"{s.pk} ({s.name})" for s in found)
    if parse_id(str(text)) is not None:
        return f"{text!r} is the id of one machine label source and the name of another: give its id ({ids})"
    return f"several machine label sources are named {str(text)[:100]!r}: give its id ({ids})"


class MachineLabelSource(models.Model):
    """Where machine labels come from: one trained annotator, or one LLM judge (endpoint, model, prompt)."""

    class Kind(models.TextChoices):
        CLASSIFIER = "classifier", "Text-pair classifier trained on human labels"
        LLM = "llm", "LLM judge (0-3 relevance)"
        QUERY_FILTER = "query_filter", "LLM query filter (describes a plot or only a feeling)"
        ZERO_SHOT = "zero_shot", "Zero-shot: fusion of the pool's runs, or encoder similarity (no human label)"
        NUGGET_ASSIGN = "nugget_assign", "LLM nugget assignment (support, partial support, no support)"
        NUGGET_SUGGEST = "nugget_suggest", "LLM nugget suggestions (a topic's atomic nuggets, vital or okay)"
        IMPORTED = "imported", "Imported machine labels (an outside LLM judge)"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        TRAINING = "training", "Training"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    # THE rule of which kinds label a (topic, passage) pair's relevance with a score and a grade: what machine qrels,
    # the dashboard's comparison with people, triage's `likely` threshold and the audit read. A classifier: its
    # probability of relevant, 0/1 at its threshold. An LLM judge: its grade 0-3 as the score. A zero-shot source:
    # its fusion score (0-1) or encoder cosine, 0/1 for the top share of each topic (trained on no human label).
    # Imported labels (import_machine_labels): a probability of relevance (score) with a grade, or a judge's grade.
    # Not the LLM query filter (whether a query describes a plot: no passage) nor nugget sources (labels of answers).
    PASSAGE_KINDS = (Kind.CLASSIFIER, Kind.LLM, Kind.ZERO_SHOT, Kind.IMPORTED)

    name = models.CharField(max_length=200, help_text="A name for people, e.g. annotator-3 or llm-judge-gpt.")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="machine_sources")
    campaign_id = models.PositiveIntegerField(
        null=True, blank=True, help_text="The campaign (annotation.Campaign id) it was trained on or judges for.",
    )
    key = models.CharField(
        max_length=64, blank=True, db_index=True,
        help_text="Hash of what makes the labels (LLM: endpoint, model, prompt, temperature): the same job resumes it.",
    )
    model = models.CharField(max_length=300, help_text="Base model: a Hugging Face name or folder, or the LLM's name.")
    model_version = models.CharField(
        max_length=200, blank=True, help_text="What the model reports of its version (LLM: the answering model).",
    )
    checksum = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 of the trained weights (classifier) or of the prompt and settings (LLM).",
    )
    settings = models.JSONField(
        default=dict, blank=True, help_text="Prompt, temperature, threshold, epochs, max length... (never an API key).",
    )
    training = models.JSONField(
        default=dict, blank=True,
        help_text="Snapshot of the human labels it was trained on: id (SHA-256 of the labels), counts, where from.",
    )
    metrics = models.JSONField(default=dict, blank=True, help_text="k-fold cross-validation against the human labels.")
    grades = models.JSONField(default=list, blank=True, help_text="The grades its labels take, e.g. [0, 1] or [0, 1, 2, 3].")
    artifact = models.CharField(max_length=500, blank=True, help_text="Folder of the trained model (classifier).")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = MachineLabelSourceQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.name} (#{self.pk}, {self.get_kind_display()})"

    @staticmethod
    def name_problem(name) -> str | None:
        """What is wrong with a name a person gives a new source (stripped, non-empty), else None: over 200
        characters, or ASCII digits only, which --source, ?source= and machine_source would read as an id."""
        if len(name) > 200:
            return "at most 200 characters"
        if name.isascii() and name.isdigit():
            return "a name of digits only would be read as a source's id: add a letter (e.g. annotator-7)"
        return None


class MachineLabelQuerySet(models.QuerySet):
    def answered(self):
        """Labels with a grade (an unparseable or failed answer has none)."""
        return self.filter(grade__isnull=False)

    def failed(self):
        """Answers that could not be read as a grade: errors, counted and shown, never a 0."""
        return self.filter(grade__isnull=True)


class MachineLabel(models.Model):
    """One label of one source: a (topic, passage) grade and score, a topic's verdict (query filter) or suggested
    nuggets (value), or a topic's (answer, nugget) support (item "<answer id>:<nugget id>", grade 0-2)."""

    source = models.ForeignKey(MachineLabelSource, on_delete=models.CASCADE, related_name="labels")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="machine_labels")
    passage = models.ForeignKey(
        Passage, on_delete=models.CASCADE, related_name="machine_labels", null=True, blank=True,
        help_text="Empty for a verdict on the topic itself (the query filter) or a nugget label.",
    )
    item = models.CharField(
        max_length=100, blank=True, default="",
        help_text="What is labelled besides the topic: '<answer id>:<nugget id>' for a nugget's support.",
    )
    grade = models.SmallIntegerField(
        null=True, blank=True, help_text="The label; empty when the answer could not be read (see error).",
    )
    score = models.FloatField(null=True, blank=True, help_text="Classifier: probability of relevant; LLM: the grade.")
    value = models.JSONField(
        null=True, blank=True,
        help_text="Nugget labels: the support label and the nugget's text asked about; suggestions: the nuggets.",
    )
    raw_answer = models.TextField(blank=True, help_text="The LLM's answer as it came.")
    error = models.TextField(blank=True, help_text="Why there is no grade (an unparseable answer, a refused request).")
    in_training = models.BooleanField(
        default=False, help_text="The pair was among the human labels the source was trained on (not a fair test of it).",
    )
    tokens = models.PositiveIntegerField(null=True, blank=True, help_text="Tokens the request used (LLM).")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = MachineLabelQuerySet.as_manager()

    class Meta:
        ordering = ["source", "topic", "passage"]
        constraints = [
            models.UniqueConstraint(fields=["source", "topic", "passage"], condition=Q(passage__isnull=False),
                                    name="unique_machine_label"),
            models.UniqueConstraint(fields=["source", "topic"], condition=Q(passage__isnull=True, item=""),
                                    name="unique_machine_topic_verdict"),
            models.UniqueConstraint(fields=["source", "topic", "item"], condition=Q(passage__isnull=True) & ~Q(item=""),
                                    name="unique_machine_item_label"),
        ]
        indexes = [models.Index(fields=["topic", "passage"], name="machine_label_item")]

    def __str__(self):
        what = self.passage.external_id if self.passage_id else (self.item or "(topic)")
        return f"{self.source_id} {self.topic.external_id} {what} = {self.grade}"


class MachineJob(BackgroundJob):
    """Background work of a source (training, labelling a pool, LLM requests): its spend and errors besides what
    every background job has (retrieval.models.background: status, progress, rate, time left, who started it)."""

    class Kind(models.TextChoices):
        TRAIN = "train", "Train and cross-validate"
        LABEL = "label", "Label pool candidates"
        LLM = "llm", "LLM judge"
        FILTER = "filter", "LLM query filter"
        NUGGET_ASSIGN = "nugget_assign", "LLM nugget assignment"
        NUGGET_SUGGEST = "nugget_suggest", "LLM nugget suggestions"

    job_kind = "machine"
    TASKS = {  # the Celery task of each kind (assessments/tasks.py)
        Kind.TRAIN: "assessments.tasks.gpu_train_annotator", Kind.LABEL: "assessments.tasks.gpu_machine_label",
        Kind.LLM: "assessments.tasks.llm_judge", Kind.FILTER: "assessments.tasks.llm_judge",
        Kind.NUGGET_ASSIGN: "assessments.tasks.llm_nuggets", Kind.NUGGET_SUGGEST: "assessments.tasks.llm_nuggets",
    }

    source = models.ForeignKey(MachineLabelSource, on_delete=models.CASCADE, related_name="jobs")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    params = models.JSONField(default=dict, blank=True, help_text="Pools, limits, batch size.")
    errors = models.PositiveIntegerField(default=0, help_text="Items whose answer could not be read or was refused.")
    requests = models.PositiveIntegerField(default=0, help_text="Requests sent (LLM), retries included.")
    tokens = models.PositiveBigIntegerField(default=0, help_text="Tokens the endpoint counted (LLM).")

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.get_kind_display()} #{self.pk} of source {self.source_id}"

    def progress_counts(self) -> list[str]:
        counts = [f"{self.items_done:,}/{self.items_total:,}"]
        if self.errors:
            counts.append(f"{self.errors:,} errors")
        if self.requests:
            counts.append(f"{self.requests:,} requests, {self.tokens:,} tokens")
        return counts

    def status_extra(self) -> dict:
        return {"source": self.source_id, "source_name": self.source.name, "errors": self.errors,
                "requests": self.requests, "tokens": self.tokens}

    def task_name(self) -> str:
        return self.TASKS[self.kind]
