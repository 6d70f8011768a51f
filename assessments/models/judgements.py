"""Judgements: the current value per (assessor, layer, key) and the append-only history of every change.

A key is (topic, passage) for per-passage layers, (topic, passage, passage2) for
transitions and pair ratings, plus an optional `item` for study items (a
forced-choice set). Every change is kept in JudgementChange with the assessor,
the assessor's clock, the server's clock, the session and the runs it was made
under; Judgement holds the value of the latest change in the assessor's own
clock order. Wire names of external formats (MustLabel, SameTransition...)
live in the import/export modules, not here.
"""

import uuid

from django.conf import settings
from django.db import models
from django.db.models.functions import Coalesce

from assessments.models.topics import Topic
from retrieval.models import Passage


class Layer(models.TextChoices):
    """What a judgement is about; each layer has its own value shape (assessments.judging.validate_value)."""

    NOTES = "notes", "Notes"
    FACET = "facet", "Facet and relevance"
    REMOVAL = "removal", "Removed as non-relevant"
    TRANSITION = "transition", "Transition"
    PLOT_GRADE = "plot_grade", "Plot grade"
    PLOT_SPANS = "plot_spans", "Query spans describing the plot"
    CHOICE = "choice", "Forced choice"
    RATING = "rating", "Pair rating (1-10)"
    GRADE = "grade", "Relevance grade (ad hoc)"
    EVIDENCE = "evidence", "Evidence passages of a document"
    NUGGETS = "nuggets", "A topic's nugget bank"
    NUGGET_SUPPORT = "nugget_support", "Whether an answer supports a nugget"
    CITATION_SUPPORT = "citation_support", "Whether a cited passage supports a sentence"


# The layers that grade a pooled candidate (a plot chunk, an ad hoc document): what judging orders, the queue,
# qualification, machine labels, qrels and reports read as a candidate's grade. A campaign uses one of them.
CANDIDATE_GRADES = (Layer.PLOT_GRADE, Layer.GRADE)


class Relevance(models.TextChoices):
    """CAR Y3 relevance of a passage for a facet; qrels grades MUST 3, SHOULD 2, CAN 1.

    The page offers MUST / SHOULD / CAN only (Relevance.offered()). The other members are the
    original CAR assessment tool's labels, kept so that its files import and export unchanged:
    TOPIC and NONREL grade 0, TRASH grades -2, DUPLICATE and UNSET have no grade (dropped from qrels).
    """

    MUST = "must", "MUST"
    SHOULD = "should", "SHOULD"
    CAN = "can", "CAN"
    # Legacy: imported from the original tool's files, never offered on the page.
    TOPIC = "topic", "TOPIC (legacy)"
    NONREL = "nonrel", "NON-RELEVANT (legacy)"
    TRASH = "trash", "TRASH (legacy)"
    DUPLICATE = "duplicate", "DUPLICATE (legacy)"
    UNSET = "unset", "UNSET (legacy)"

    @classmethod
    def offered(cls):
        """The labels an assessor chooses from; the others are accepted only from imports."""
        return [cls.MUST, cls.SHOULD, cls.CAN]


# qrels grade of each relevance; a label missing here (DUPLICATE, UNSET) gives no qrels line.
RELEVANCE_GRADE = {
    Relevance.MUST: 3,
    Relevance.SHOULD: 2,
    Relevance.CAN: 1,
    Relevance.TOPIC: 0,
    Relevance.NONREL: 0,
    Relevance.TRASH: -2,
}


class SpecialFacet(models.TextChoices):
    """Facet choices beside the topic's own headings."""

    OTHER = "other", "OTHER RELEVANT FACET"
    GENERAL = "general", "GENERAL/INTRODUCTION"


class Transition(models.TextChoices):
    """How two consecutive kept passages connect.

    The page offers SAME / COHERENT / SWITCH (Transition.offered()). The other members are the
    original CAR assessment tool's labels, imported and exported unchanged, never offered: its
    CoherentTransition (distinct from AppropriateTransition, which is our COHERENT), Offtopic,
    ToNonRel, Redundant and Unset.
    """

    SAME = "same", "SAME TOPIC"
    COHERENT = "coherent", "COHERENT TRANSITION"
    SWITCH = "switch", "TOPIC SWITCH"
    # Legacy: imported from the original tool's files, never offered on the page.
    LEGACY_COHERENT = "legacy_coherent", "COHERENT (legacy)"
    OFFTOPIC = "offtopic", "OFF TOPIC (legacy)"
    TO_NONREL = "to_nonrel", "TO NON-RELEVANT (legacy)"
    REDUNDANT = "redundant", "REDUNDANT (legacy)"
    UNSET = "unset", "UNSET (legacy)"

    @classmethod
    def offered(cls):
        """The labels an assessor chooses from; the others are accepted only from imports."""
        return [cls.SAME, cls.COHERENT, cls.SWITCH]


class JudgementQuerySet(models.QuerySet):
    def by(self, user):
        """Judgements made by `user`."""
        return self.filter(assessor=user)

    def in_campaign(self, campaign):
        """Judgements made in one campaign (a Campaign, its id, or None for those made outside any campaign)."""
        campaign_id = getattr(campaign, "pk", campaign)
        return self.filter(campaign_id=campaign_id) if campaign_id is not None else self.filter(campaign_id__isnull=True)

    def of_layer(self, layer):
        """Judgements of one layer."""
        return self.filter(layer=layer)

    def without_practice(self, campaign=None):
        """These judgements less the practice labels (qualification answers) of one campaign (a Campaign or its id),
        or of every campaign: the qrels (Scope.judgements: export_qrels, /api/qrels/, downloads, evaluation, the
        machine's training and comparison), the ad hoc and plot records, study results, agreement, the dashboard,
        adjudication, the judging order and the machine's skipped pairs and anchoring call it (docs/campaigns.md). Which labels are practice is annotation's rule
        (Assignment.objects.practice_labels), read by name: assessments imports nothing from annotation."""
        from django.apps import apps

        assignments = apps.get_model("annotation", "Assignment").objects.all()
        campaign_id = getattr(campaign, "pk", campaign)
        if campaign_id is not None:
            assignments = assignments.filter(campaign_id=campaign_id)
        practice = assignments.practice_labels()
        return self if practice is None else self.exclude(practice)

    def without_superseded_finals(self):
        """These judgements less the adjudicated ones that a later adjudication of the same item replaced: THE rule
        of which final label counts (the qrels, the nugget and citation scores and the adjudication page call it).

        Each organiser's final label is their own judgement (one per person and key), so two organisers who settle
        one item leave two adjudicated rows with the same key; the one set last (by its clock, then the row made
        last) is the item's final label, as the adjudication page shows it. Rows not adjudicated pass untouched.
        """
        later = Judgement.objects.filter(
            key=models.OuterRef("key"), layer=models.OuterRef("layer"), topic_id=models.OuterRef("topic_id"),
            adjudicated=True,
        ).filter(models.Q(client_time__gt=models.OuterRef("client_time"))
                 | models.Q(client_time=models.OuterRef("client_time"), id__gt=models.OuterRef("id")))
        return self.filter(models.Q(adjudicated=False) | ~models.Exists(later))

    def without_stale_transitions(self):
        """These judgements less the transitions that no article shows now: THE rule of which transitions count
        (the Y3 export, agreement, the dashboard and adjudication call it; the stored history keeps everything).

        A transition (p1, p2) counts where p1 and p2 are consecutive and kept in some article of the topic (a run's
        entries for it) under the same assessor's removals in the same campaign: both kept, and every passage
        between them removed. Removing a passage (or keeping one between) ends the pair's transition, as the
        outline page, which then shows the next kept pair, does. Where no article of the topic holds both passages
        (labels imported without their runs) only the removals decide. Other layers pass untouched.
        """
        from assessments.models.runs import RunEntry

        def removed(passage, depth):
            """The assessor's removal of `passage` (a column `depth` queries out from the transition)."""
            def outer(name):
                ref = name
                for _ in range(depth):
                    ref = models.OuterRef(ref)
                return ref

            return models.Exists(
                Judgement.objects.annotate(_campaign=Coalesce("campaign_id", 0)).filter(
                    assessor_id=outer("assessor_id"), topic_id=outer("topic_id"), layer=Layer.REMOVAL, grade=0,
                    passage_id=passage, adjudicated=outer("adjudicated"), _campaign=Coalesce(outer("campaign_id"), 0),
                )
            )

        kept_between = RunEntry.objects.filter(  # an entry between e1 and e2 that the assessor kept
            run_id=models.OuterRef("run_id"), topic_id=models.OuterRef("topic_id"),
            rank__gt=models.OuterRef(models.OuterRef("rank")), rank__lt=models.OuterRef("rank"),
        ).filter(~removed(models.OuterRef("passage_id"), 4))
        second = RunEntry.objects.filter(  # e2: passage2 after e1 in e1's article, nothing kept between
            run_id=models.OuterRef("run_id"), topic_id=models.OuterRef("topic_id"),
            passage_id=models.OuterRef(models.OuterRef("passage2_id")), rank__gt=models.OuterRef("rank"),
        ).filter(~models.Exists(kept_between))
        first = RunEntry.objects.filter(  # e1: passage in an article of the topic
            topic_id=models.OuterRef("topic_id"), passage_id=models.OuterRef("passage_id"),
        ).filter(models.Exists(second))
        together = RunEntry.objects.filter(  # an article holding both passages, in any order
            topic_id=models.OuterRef("topic_id"), passage_id=models.OuterRef("passage_id"),
        ).filter(models.Exists(RunEntry.objects.filter(
            run_id=models.OuterRef("run_id"), topic_id=models.OuterRef("topic_id"),
            passage_id=models.OuterRef(models.OuterRef("passage2_id")),
        )))
        live = ((models.Exists(first) | ~models.Exists(together)) & ~removed(models.OuterRef("passage_id"), 1)
                & ~removed(models.OuterRef("passage2_id"), 1))
        return self.filter(~models.Q(layer=Layer.TRANSITION) | live)


# One meaning of run_ids, on a judgement and on each change: the NAMES of the runs the key was judged under (an
# outline's article's run, an answer's run), as the CAR Y3 assessments' run_ids are. Nugget and citation support
# stored run primary keys until migration 0020; a run is told apart by the item (its answer) where teams share a name.
RUN_IDS_HELP = "The names of the runs this key was judged under (an article's run, an answer's run)."


class Judgement(models.Model):
    """The current value of one assessor's label for one key."""

    # Indexes: each one costs every save (see Meta). assessor and topic lead the composite indexes, which serve
    # their lookups, so they have none of their own.
    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="judgements", db_index=False,
    )
    layer = models.CharField(max_length=20, choices=Layer.choices)
    topic = models.ForeignKey(
        Topic, on_delete=models.CASCADE, related_name="judgements", null=True, blank=True, db_index=False,
    )
    passage = models.ForeignKey(
        Passage, on_delete=models.CASCADE, related_name="judgements", null=True, blank=True,
        help_text="Null only for forced choice, whose key is (topic, item).",
    )
    passage2 = models.ForeignKey(
        Passage, on_delete=models.CASCADE, related_name="judgements_as_second", null=True, blank=True
    )
    item = models.CharField(max_length=200, blank=True, default="", help_text="Study item key (forced-choice set).")
    campaign_id = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="The campaign (annotation.Campaign id) the label was made in; empty: outside any campaign "
        "(imports). Two campaigns never share a label, even on one pool.",
    )
    key = models.CharField(
        max_length=400, editable=False, help_text="[campaign:]layer|topic|passage|passage2|item, unique per assessor."
    )
    value = models.JSONField(null=True, blank=True, help_text="Null when the assessor cleared the label.")
    grade = models.SmallIntegerField(null=True, blank=True, help_text="Numeric grade derived from the value, if any.")
    run_ids = models.JSONField(default=list, blank=True, help_text=RUN_IDS_HELP)
    adjudicated = models.BooleanField(
        default=False, help_text="An organiser's final label set by adjudication (source ADJUDICATION), not an assessor's.",
    )
    latest_change = models.ForeignKey(  # no index: a save's UPDATE then touches no indexed column (a HOT update)
        "JudgementChange", on_delete=models.PROTECT, related_name="+", null=True, blank=True, db_index=False,
    )
    client_time = models.DateTimeField(help_text="Assessor's clock at the latest change.")
    client_seq = models.BigIntegerField(default=0, help_text="Assessor's counter, breaks ties of client_time.")
    updated_at = models.DateTimeField(auto_now=True)

    objects = JudgementQuerySet.as_manager()

    class Meta:
        ordering = ["topic", "layer", "passage"]
        constraints = [models.UniqueConstraint(fields=["assessor", "key"], name="unique_judgement_key")]
        indexes = [
            models.Index(fields=["campaign_id", "layer", "topic"], name="judgement_campaign_layer"),
            models.Index(fields=["topic", "layer"], name="judgement_topic_layer"),
            models.Index(fields=["assessor", "topic"], name="judgement_assessor_topic"),
        ]

    def __str__(self):
        return f"{self.assessor} {self.key} = {self.value!r}"

    @staticmethod
    def make_key(layer, topic_id, passage_id, passage2_id=None, item="", campaign_id=None):
        """The unique key string of a judgement (per assessor); a campaign's labels are keyed apart."""
        key = f"{layer}|{topic_id or ''}|{passage_id}|{passage2_id or ''}|{item or ''}"
        return f"{campaign_id}:{key}" if campaign_id else key


class JudgementChange(models.Model):
    """One change of one label, never updated or deleted: who, when, in which session, under which runs."""

    class Source(models.TextChoices):
        WEB = "web", "Assessor page"
        API = "api", "REST API"
        IMPORT = "import", "Imported file"
        ADJUDICATION = "adjudication", "Adjudication"

    change_id = models.UUIDField(default=uuid.uuid4, unique=True, help_text="Client-made id: a resent change is stored once.")
    # judgement and assessor lead the composite indexes of Meta: no index of their own (each costs every save).
    judgement = models.ForeignKey(Judgement, on_delete=models.CASCADE, related_name="changes", db_index=False)
    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="judgement_changes", db_index=False,
    )
    layer = models.CharField(max_length=20, choices=Layer.choices)
    value = models.JSONField(null=True, blank=True)
    client_time = models.DateTimeField()
    client_seq = models.BigIntegerField(default=0)
    received_at = models.DateTimeField(auto_now_add=True)
    session_id = models.CharField(max_length=200, blank=True)
    run_ids = models.JSONField(default=list, blank=True, help_text=RUN_IDS_HELP)
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.WEB)
    active_ms = models.PositiveIntegerField(
        null=True, blank=True, help_text="Active time the assessor spent on this change (idle time not counted), ms.",
    )
    machine_shown = models.BooleanField(
        null=True, blank=True,
        help_text="Whether the page showed a machine label for this item (campaigns with pre-labels on); empty where "
        "the campaign shows none.",
    )

    class Meta:
        ordering = ["judgement", "client_time", "client_seq", "id"]
        indexes = [
            models.Index(fields=["assessor", "received_at"], name="change_assessor_received"),
            # A label's history in its clock order (the audit log, dashboards): read in order, never sorted.
            models.Index(fields=["judgement", "client_time", "client_seq", "id"], name="change_judgement_order"),
        ]

    def __str__(self):
        return f"{self.assessor} {self.layer} @ {self.client_time:%Y-%m-%d %H:%M:%S}"
