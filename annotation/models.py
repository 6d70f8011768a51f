"""Campaigns and assignments: who judges which unit of work. Roles are groups (annotation.roles)."""

import secrets
from collections import defaultdict

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Count, Q

from assessments.models import Pool, QrelSet, Run, Topic
from retrieval.models import Passage

USER_MODEL = settings.AUTH_USER_MODEL  # Campaign has a field named `settings`, which hides the module in its body


class Campaign(models.Model):
    """A judging effort: a task, its pools, guidelines shown to assessors, and settings."""

    class Task(models.TextChoices):
        OUTLINE = "outline", "CAR outline judging"
        PLOT = "plot", "Plot-retrieval labelling"
        ADHOC = "adhoc", "Ad hoc relevance"
        NUGGETS = "nuggets", "Nugget evaluation of generated answers (TREC RAG)"

    name = models.SlugField(max_length=100, unique=True)
    title = models.CharField(max_length=300, blank=True)
    task = models.CharField(max_length=20, choices=Task.choices)
    guidelines = models.TextField(
        blank=True, help_text="Shown to assessors on every page (Markdown: emphasis, lists, links; HTML is shown as text).",
    )
    pools = models.ManyToManyField(Pool, related_name="campaigns", blank=True)
    settings = models.JSONField(default=dict, blank=True, help_text="Task settings, e.g. the plot grade scale.")
    overlap = models.PositiveSmallIntegerField(
        default=1, help_text="Assessors per work unit (a topic's articles, or a query's candidates); per topic: campaign topics.",
    )
    qualification_gold = models.ForeignKey(
        QrelSet, on_delete=models.PROTECT, null=True, blank=True, related_name="qualifying_campaigns",
        help_text="Known answers of the qualification topics: an assessor's page-level grade must equal the gold grade.",
    )
    qualification_threshold = models.FloatField(
        default=0.9, help_text="Share of qualification items an assessor must get right to start formal work.",
    )
    qualification_attempts = models.PositiveSmallIntegerField(
        default=2, help_text="Attempts an assessor has at the qualification; raise it to allow a retake.",
    )
    review_sample_size = models.PositiveSmallIntegerField(
        default=10, help_text="Items a reviewer checks of each finished batch (all of them when the batch is smaller).",
    )
    review_threshold = models.FloatField(
        default=0.95, help_text="Pass rate a reviewed batch needs; under it the batch goes back to its assessor for revision.",
    )
    reviewers = models.ManyToManyField(
        USER_MODEL, blank=True, related_name="reviewed_campaigns",
        help_text="Who reviews this campaign's batches (empty: everyone in the reviewer group).",
    )
    show_run_names = models.BooleanField(
        default=False, help_text="Show assessors which run wrote the article they judge (off: judging is blind).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.title or self.name


class CampaignTopic(models.Model):
    """A topic's own settings in a campaign: its overlap (e.g. every assessor on one topic), or a qualification topic."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="campaign_topics")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="campaign_settings")
    overlap = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Assessors for this topic's units (empty: the campaign's overlap; 0: everyone).",
    )
    qualification = models.BooleanField(
        default=False, help_text="A qualification topic: every assessor judges it first, scored against the gold qrels.",
    )

    class Meta:
        ordering = ["campaign", "topic"]
        constraints = [models.UniqueConstraint(fields=["campaign", "topic"], name="unique_campaign_topic")]

    def __str__(self):
        return f"{self.campaign.name} {self.topic.external_id}"


class AssignmentQuerySet(models.QuerySet):
    def for_assessor(self, user):
        """The assignments of one assessor; the only ones that assessor may see."""
        return self.filter(assessor=user)

    def open(self):
        """Assignments not finished yet."""
        return self.exclude(status=Assignment.Status.DONE)

    def of_campaign(self, campaign):
        """The assignments of one campaign."""
        return self.filter(campaign=campaign)

    def practice_labels(self, prefix=""):
        """THE rule of which labels are practice, as a Q over Judgement fields (each behind `prefix`, e.g.
        "judgement__" from a JudgementChange), or None where no label is: Judgement.objects.without_practice applies
        it for the qrels, evaluation, agreement, the dashboard and adjudication.

        An assessor's labels of a topic in a campaign are practice when, among these assignments, they hold
        qualification units of that topic in that campaign and no formal one: those labels are their qualification
        answers, scored against the gold (annotation.services.qualification), not the campaign's judgements. Labels
        are kept one per assessor and item, so an assessor who also holds a formal unit of the topic has one label
        per passage, the one their formal page shows: it counts. Adjudicated labels are never practice. Read by name
        from assessments (apps.get_model), which imports nothing from annotation.
        """
        practice = (self.filter(qualification=True, campaign__isnull=False)
                    .exclude(models.Exists(Assignment.objects.filter(
                        campaign_id=models.OuterRef("campaign_id"), topic_id=models.OuterRef("topic_id"),
                        assessor_id=models.OuterRef("assessor_id"), qualification=False)))
                    .order_by().values_list("campaign_id", "topic_id", "assessor_id").distinct())
        groups = defaultdict(set)
        for campaign_id, topic_id, assessor_id in practice:
            groups[campaign_id, topic_id].add(assessor_id)
        if not groups:
            return None
        found = Q()
        for (campaign_id, topic_id), assessors in sorted(groups.items()):
            found |= Q(**{f"{prefix}campaign_id": campaign_id, f"{prefix}topic_id": topic_id,
                          f"{prefix}assessor_id__in": sorted(assessors), f"{prefix}adjudicated": False})
        return found

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

    class Kind(models.TextChoices):
        """What the unit of work is, fixed when it is made (Assignment.kind_of)."""

        OUTLINE = "outline", "Outline article"
        PLOT_LABELS = "plot_labels", "Plot labels"
        CHOICE = "choice", "Forced choice"
        PAIR = "pair", "Pair rating"
        ADHOC = "adhoc", "Document grades"
        NUGGET_SUPPORT = "nugget_support", "Nugget support"
        NUGGET_CREATION = "nugget_creation", "Nugget creation"
        CITATION_SUPPORT = "citation_support", "Citation support"

    class Status(models.TextChoices):
        """The one state machine of annotation.services.status: to do -> in progress -> done; reopen; revise."""

        TODO = "todo", "To do"
        IN_PROGRESS = "in_progress", "In progress"
        DONE = "done", "Done"
        REVISE = "revise", "To revise"

    MODES = {"label": Kind.PLOT_LABELS, "choice": Kind.CHOICE, "pair": Kind.PAIR}  # campaign settings["mode"]

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
    kind = models.CharField(max_length=20, choices=Kind.choices, help_text="What is judged: set when it is made.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.TODO)
    incomplete_reason = models.TextField(
        blank=True, help_text="Why the assessor submitted it with labels missing (reviewers see it); empty otherwise.",
    )
    qualification = models.BooleanField(
        default=False, help_text="Qualification work: scored against known answers, never reviewed.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        ordering = ["assessor", "position", "id"]
        constraints = [
            models.UniqueConstraint(  # an answer's nugget support and its citation support are two units
                fields=["assessor", "topic", "run", "kind"], condition=Q(run__isnull=False),
                name="unique_article_assignment",
            ),
            models.CheckConstraint(
                condition=(Q(kind__in=["outline", "nugget_support", "citation_support"], run__isnull=False)
                           | Q(kind__in=["plot_labels", "choice", "pair", "adhoc"], pool__isnull=False)
                           | Q(kind="nugget_creation", run__isnull=True, pool__isnull=True)),
                name="assignment_kind_has_its_unit",
                violation_error_message="An outline assignment needs a run (its article), a nugget or citation support "
                                        "one a run (its answer to the topic), a nugget creation one neither; the "
                                        "others need a pool.",
            ),
        ]
        indexes = [models.Index(fields=["assessor", "status", "position"], name="assignment_queue")]

    def __str__(self):
        what = f" / {self.run.name}" if self.run_id else ""
        return f"{self.assessor} — {self.topic.external_id}{what}"

    @property
    def shown_run_name(self) -> str:
        """The run's name as the assessor may see it: empty unless the campaign shows run names (judging is blind)."""
        return self.run.name if self.run_id and self.campaign_id and self.campaign.show_run_names else ""

    @property
    def shown_pool_name(self) -> str:
        """The pool's name as the assessor or reviewer may see it: empty unless the campaign shows run names (a pool
        may be named after the runs it pools)."""
        return self.pool.name if self.pool_id and self.campaign_id and self.campaign.show_run_names else ""

    def save(self, *args, **kwargs):
        if not self.token:
            self.token = secrets.token_hex(16)
        if not self.seed:
            self.seed = secrets.randbits(62)
        if not self.kind:
            self.kind = self.kind_of(self.campaign, run=self.run_id)
        super().save(*args, **kwargs)

    @classmethod
    def kind_of(cls, campaign, *, run=None) -> str:
        """The kind of a unit made for `campaign`, from stored data alone: a nuggets campaign's unit is an answer (its
        run's, to the topic: its nugget support, or its citations' support where the campaign's nugget_stage is
        "citations") or, without a run, the topic's nugget bank to write; an outline article when it has a
        run, else its campaign's mode (an ad hoc campaign's labelling mode grades documents). A mode that is none of
        MODES is a ValueError (annotation.services.status.kind_for says it as StatusInvalid naming `mode`)."""
        if campaign is not None and campaign.task == campaign.Task.NUGGETS:
            if not run:
                return cls.Kind.NUGGET_CREATION
            stage = campaign.settings.get("nugget_stage") if isinstance(campaign.settings, dict) else None
            return cls.Kind.CITATION_SUPPORT if stage == "citations" else cls.Kind.NUGGET_SUPPORT
        if run:
            return cls.Kind.OUTLINE
        settings_ = campaign.settings if campaign is not None and isinstance(campaign.settings, dict) else {}
        mode = settings_.get("mode", "label")
        if mode not in cls.MODES:
            raise ValueError(f"{mode!r} is not one of {', '.join(cls.MODES)}")
        if mode == "label" and campaign is not None and campaign.task == campaign.Task.ADHOC:
            return cls.Kind.ADHOC
        return cls.MODES[mode]


class QualificationResult(models.Model):
    """One scored attempt of an assessor at a campaign's qualification."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="qualification_results")
    assessor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="qualification_results")
    attempt = models.PositiveSmallIntegerField()
    items = models.PositiveIntegerField(help_text="Gold items in the assessor's qualification articles.")
    correct = models.PositiveIntegerField()
    score = models.FloatField(help_text="correct / items.")
    threshold = models.FloatField(help_text="The campaign's threshold when this attempt was scored.")
    passed = models.BooleanField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "assessor", "attempt"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "assessor", "attempt"], name="unique_qualification_attempt"),
        ]

    def __str__(self):
        return f"{self.assessor} {self.campaign.name} #{self.attempt}: {self.score:.0%}"


class ReviewQuerySet(models.QuerySet):
    def for_reviewer(self, user):
        """The reviews given to `user`: the only batches whose labels a reviewer may see."""
        return self.filter(reviewer=user)


class Review(models.Model):
    """A reviewer's check of a random sample of one finished batch (assignment); one per round of revision."""

    class Status(models.TextChoices):
        OPEN = "open", "To review"
        PASSED = "passed", "Passed"
        FAILED = "failed", "Sent back for revision"

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="reviews")
    round = models.PositiveSmallIntegerField(default=1, help_text="1 for the first review, 2 after one revision...")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="reviews",
        help_text="Empty: no reviewer was available; any organiser may take it.",
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN)
    threshold = models.FloatField(help_text="The campaign's review threshold when the review was opened.")
    pass_rate = models.FloatField(null=True, blank=True, help_text="Share of sampled items marked right.")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = ReviewQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["assignment", "round"], name="unique_review_round")]

    def __str__(self):
        return f"review {self.round} of {self.assignment}"


class ReviewItem(models.Model):
    """One sampled item of a review: what the assessor said about a passage, and the reviewer's verdict."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveSmallIntegerField(help_text="The item's place in the batch (1 = first).")
    passage = models.ForeignKey(
        Passage, on_delete=models.CASCADE, related_name="review_items", null=True, blank=True,
        help_text="The passage judged (outline, plot labels); empty for a study item.",
    )
    item = models.CharField(max_length=200, blank=True, help_text="The study item's key (forced choice, pair rating).")
    labels = models.JSONField(default=dict, blank=True, help_text="The assessor's labels when the review was opened.")
    correct = models.BooleanField(null=True, blank=True)
    remark = models.TextField(blank=True)

    class Meta:
        ordering = ["review", "position"]
        constraints = [models.UniqueConstraint(fields=["review", "position"], name="unique_review_item_position")]

    def __str__(self):
        return f"{self.review} #{self.position}"


class Track(models.Model):
    """What a campaign takes runs for: the collection and topics that uploaded runs rank (Run.track = campaign name).

    The campaign's task decides the file format: outline campaigns take TREC CAR Y3 JSON lines, plot and ad
    hoc campaigns TREC six-column runs.
    """

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="track")
    collection = models.ForeignKey("retrieval.Collection", on_delete=models.PROTECT, related_name="tracks")
    topics = models.ManyToManyField(Topic, related_name="tracks")
    # The limits' range is the column's (PostgreSQL's integer): past it PostgreSQL wrapped or refused a limit.
    LIMIT_MAX = 2_147_483_647
    max_runs = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(LIMIT_MAX)],
        help_text="Runs a participant may upload (empty: the API_MAX_RUNS_PER_PARTICIPANT setting).",
    )
    max_per_topic = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(LIMIT_MAX)],
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


from annotation.data_imports import DataImport, DataImportFile  # noqa: E402,F401  (models of the console's uploads)
