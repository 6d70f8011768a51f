"""Topics of three kinds (CAR outline, plot query, ad hoc query) and the facets of outlines."""

from django.db import models
from django.db.models import Count

from retrieval.models import Book, Collection, Passage


class TopicQuerySet(models.QuerySet):
    def of_kind(self, kind):
        """Topics of one kind (Topic.Kind)."""
        return self.filter(kind=kind)

    def with_counts(self):
        """Annotate facet, run-entry and ground-truth counts (one query)."""
        return self.annotate(
            facet_count=Count("facets", distinct=True),
            entry_count=Count("run_entries", distinct=True),
            ground_truth_count=Count("ground_truth", distinct=True),
        )


class Topic(models.Model):
    """An information need judged against passages of one collection."""

    class Kind(models.TextChoices):
        OUTLINE = "outline", "CAR outline"
        PLOT = "plot", "Plot query"
        ADHOC = "adhoc", "Ad hoc query"

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="topics")
    external_id = models.CharField(max_length=200, help_text="The id used in runs and qrels, e.g. tqa2:L_0257.")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    title = models.CharField(max_length=500, blank=True)
    text = models.TextField(blank=True, help_text="Query text: the reader's comment for plot topics.")
    gold_text = models.TextField(blank=True, help_text="A gold article for outline topics, when there is one.")
    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="topics", null=True, blank=True)
    ground_truth_text = models.TextField(blank=True, help_text="Verbatim span of the book the query is about.")
    ground_truth = models.ManyToManyField(Passage, related_name="ground_truth_for", blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    facets_version = models.PositiveIntegerField(
        default=0, editable=False,
        help_text="Raised whenever a facet of the topic is saved or deleted: each process keeps the topic's facet ids "
                  "under this number (assessments.services.judging.topic_facet_ids).")

    objects = TopicQuerySet.as_manager()

    class Meta:
        ordering = ["collection", "external_id"]
        constraints = [models.UniqueConstraint(fields=["collection", "external_id"], name="unique_topic_external_id")]

    def __str__(self):
        return f"{self.external_id} {self.title}".strip()


class Facet(models.Model):
    """A heading of an outline topic, in outline order."""

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="facets")
    heading_id = models.CharField(max_length=300, help_text="Section path, e.g. tqa2:L_0257/T_1512.")
    heading = models.CharField(max_length=500)
    position = models.PositiveSmallIntegerField()
    notes = models.TextField(blank=True, help_text="Topic author's notes on what the facet covers.")

    class Meta:
        ordering = ["topic", "position"]
        constraints = [
            models.UniqueConstraint(fields=["topic", "heading_id"], name="unique_facet_heading_id"),
            models.UniqueConstraint(fields=["topic", "position"], name="unique_facet_position"),
        ]

    def __str__(self):
        return self.heading
