"""Campaigns and assignments: who judges which unit of work. Roles are groups (annotation.roles)."""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Count, Q

from assessments.models import Pool, Run, Topic


class Campaign(models.Model):
    """A judging effort: a task, its pools, guidelines shown to assessors, and settings."""

    class Task(models.TextChoices):
        OUTLINE = "outline", "CAR outline judging"
        PLOT = "plot", "Plot-retrieval labelling"
        ADHOC = "adhoc", "Ad hoc relevance"

    name = models.SlugField(max_length=100, unique=True)
    title = models.CharField(max_length=300, blank=True)
    task = models.CharField(max_length=20, choices=Task.choices)
    guidelines = models.TextField(blank=True, help_text="Shown to assessors on every page (plain text).")
    pools = models.ManyToManyField(Pool, related_name="campaigns", blank=True)
    settings = models.JSONField(default=dict, blank=True, help_text="Task settings, e.g. the plot grade scale.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.title or self.name


class AssignmentQuerySet(models.QuerySet):
    def for_assessor(self, user):
        """The assignments of one assessor; the only ones that assessor may see."""
        return self.filter(assessor=user)

    def open(self):
        """Assignments not finished yet."""
        return self.exclude(status=Assignment.Status.DONE)

    def with_progress(self):
        """Annotate how many of the assessor's judgements exist for the assignment's topic (one query)."""
        return self.annotate(
            judged=Count(
                "topic__judgements",
                filter=Q(topic__judgements__assessor=models.F("assessor")),
                distinct=True,
            )
        )


class Assignment(models.Model):
    """One assessor's unit of work: a topic and one run's article (outline), or a query's candidates (plot)."""

    class Status(models.TextChoices):
        TODO = "todo", "To do"
        STARTED = "started", "Started"
        DONE = "done", "Done"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="assignments", null=True, blank=True)
    assessor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="assignments")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="assignments", null=True, blank=True,
                            help_text="The run whose article is judged (outline judging).")
    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="assignments", null=True, blank=True,
                             help_text="The pool whose candidates are judged (plot labelling).")
    token = models.CharField(max_length=32, unique=True, editable=False,
                             help_text="Unguessable id used in URLs.")
    position = models.PositiveIntegerField(default=0, help_text="Order in the assessor's queue.")
    seed = models.BigIntegerField(default=0, help_text="Seed of the candidate order shown to this assessor.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.TODO)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        ordering = ["assessor", "position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["assessor", "topic", "run"], condition=Q(run__isnull=False), name="unique_article_assignment"
            ),
        ]
        indexes = [models.Index(fields=["assessor", "status", "position"], name="assignment_queue")]

    def __str__(self):
        what = f" / {self.run.name}" if self.run_id else ""
        return f"{self.assessor} — {self.topic.external_id}{what}"

    def save(self, *args, **kwargs):
        if not self.token:
            self.token = secrets.token_hex(16)
        if not self.seed:
            self.seed = secrets.randbits(62)
        super().save(*args, **kwargs)


class Track(models.Model):
    """What a campaign takes runs for: the collection and topics that uploaded runs rank (Run.track = campaign name).

    The campaign's task decides the file format: outline campaigns take TREC CAR Y3 JSON lines, plot and ad
    hoc campaigns TREC six-column runs.
    """

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="track")
    collection = models.ForeignKey("retrieval.Collection", on_delete=models.PROTECT, related_name="tracks")
    topics = models.ManyToManyField(Topic, related_name="tracks")
    max_runs = models.PositiveIntegerField(
        null=True, blank=True, help_text="Runs a participant may upload (empty: the API_MAX_RUNS_PER_PARTICIPANT setting)."
    )
    max_per_topic = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="Passages a run may give a topic (empty: 20 for outline articles, as in Y3; 1000 for TREC runs).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign"]

    def __str__(self):
        return f"{self.campaign.name} ({self.collection.name})"


class ApiTokenQuerySet(models.QuerySet):
    def active(self):
        """Tokens not revoked, of active users."""
        return self.filter(revoked_at__isnull=True, user__is_active=True)

    def revoke(self):
        """Revoke the tokens among these that are not revoked yet (one UPDATE); returns how many."""
        from django.utils import timezone

        return self.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())


class ApiToken(models.Model):
    """A key for the REST API. Only a hash of the key is stored; the key is shown once, when it is issued."""

    class Role(models.TextChoices):
        PARTICIPANT = "participant", "Participant"
        ORGANISER = "organiser", "Organiser"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    role = models.CharField(max_length=20, choices=Role.choices)
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, null=True, blank=True, related_name="api_tokens",
        help_text="When set, the token acts on this campaign only.",
    )
    prefix = models.CharField(max_length=8, db_index=True, help_text="The key's first characters, to name it.")
    key_hash = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the key, hex.")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "API token"

    def __str__(self):
        return f"{self.prefix}… ({self.user}, {self.role})"
