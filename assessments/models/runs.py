"""Runs: ranked passages per topic, uploaded by participants or made by our retrievers."""

from django.conf import settings
from django.db import models
from django.db.models import Count, F

from assessments.models.counting import related_count

from assessments.models.topics import Topic
from retrieval.models import Collection, Passage


class RunQuerySet(models.QuerySet):
    def owned_by(self, user):
        """Runs whose owner is `user`."""
        return self.filter(owner=user)

    def with_counts(self):
        """Annotate entry and topic counts (one query). Counted per run by a correlated subquery, not by joining and
        grouping every entry: a page of runs counts the entries of its own runs only, however many runs there are.
        A run of generated answers (TREC RAG) has answers, not entries: `answer_count`, and its entry and topic counts
        are its answers' (the Data page and GET /api/runs/ said "topics 0, entries 0" of one)."""
        answer = self.model._meta.get_field("answers").related_model  # answers.py imports this module, not back

        def counted(model, what):
            return related_count(model, "run_id", what=what)

        return self.annotate(answer_count=counted(answer, Count("*"))).annotate(  # counted once, added below
            entry_count=counted(RunEntry, Count("*")) + F("answer_count"),
            topic_count=counted(RunEntry, Count("topic_id", distinct=True)) + counted(answer, Count("topic_id",
                                                                                                  distinct=True)),
        )


class Run(models.Model):
    """A system's output over a collection's topics."""

    class Source(models.TextChoices):
        UPLOADED = "uploaded", "Uploaded by a participant"
        IMPORTED = "imported", "Imported from a file"
        RETRIEVER = "retriever", "Made by a retriever"

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="runs")
    name = models.CharField(max_length=100, help_text="Run tag (TREC column 6, CAR run_id).")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="runs"
    )
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.IMPORTED)
    track = models.CharField(max_length=100, blank=True, help_text="Campaign or track the run was submitted to.")
    retriever = models.JSONField(default=dict, blank=True, help_text="Retriever and parameters, for retriever runs.")
    description = models.TextField(blank=True)
    source_file = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["collection", "name"]
        # A participant's run name is theirs within the campaign (track) it was submitted to, so that an upload
        # never tells whether another team has a name; the organisers' own runs (no owner, no campaign) keep one
        # name per collection.
        # assessments.services.runs holds the rules that go with these.
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "track", "owner", "name"], condition=models.Q(owner__isnull=False),
                name="unique_run_name_per_owner_track",
            ),
            models.UniqueConstraint(  # not a deleted participant's runs (owner set null, their campaign kept)
                fields=["collection", "name"], condition=models.Q(owner__isnull=True, track=""),
                name="unique_run_name_organisers",
            ),
        ]
        indexes = [
            models.Index(fields=["collection", "name"], name="run_collection_name"),
            # The API's list of a campaign's runs, newest first, a page at a time (keyset on id).
            models.Index(fields=["track", "id"], name="run_track_id"),
        ]

    def __str__(self):
        return self.name


class RunEntry(models.Model):
    """One ranked passage of a run for a topic; for CAR articles the rank is the article order."""

    # run and topic lead the unique and composite indexes of Meta, which serve their lookups: no index of their
    # own (every imported line wrote both).
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="entries", db_index=False)
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="run_entries", db_index=False)
    passage = models.ForeignKey(Passage, on_delete=models.CASCADE, related_name="run_entries")
    rank = models.PositiveIntegerField()
    score = models.FloatField(null=True, blank=True)
    origin = models.JSONField(default=dict, blank=True, help_text="CAR paragraph_origins: section path, rank score.")

    class Meta:
        ordering = ["run", "topic", "rank"]
        verbose_name_plural = "run entries"
        constraints = [
            models.UniqueConstraint(fields=["run", "topic", "passage"], name="unique_run_topic_passage"),
            models.UniqueConstraint(fields=["run", "topic", "rank"], name="unique_run_topic_rank"),
        ]
        indexes = [models.Index(fields=["topic", "run", "rank"], name="runentry_topic_run_rank")]

    def __str__(self):
        return f"{self.run.name} {self.topic.external_id} #{self.rank}"
