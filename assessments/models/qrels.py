"""Qrels imported from elsewhere (Cranfield, TREC files) or frozen from judgements."""

from django.db import models
from django.db.models import Count

from assessments.models.topics import Topic
from retrieval.models import Collection, Passage


class QrelSetQuerySet(models.QuerySet):
    def with_counts(self):
        """Annotate qrel and topic counts (one query)."""
        return self.annotate(qrel_count=Count("qrels", distinct=True), topic_count=Count("qrels__topic", distinct=True))


class QrelSet(models.Model):
    """A named set of relevance grades over a collection's topics."""

    name = models.SlugField(max_length=100, unique=True)
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="qrel_sets")
    description = models.TextField(blank=True, help_text="Where the grades come from and what scale they use.")
    source_file = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = QrelSetQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Qrel(models.Model):
    """One graded (topic, passage) pair; `subtopic` keys section-level qrels (CAR heading id) or TREC's column 2."""

    qrel_set = models.ForeignKey(QrelSet, on_delete=models.CASCADE, related_name="qrels")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="qrels")
    passage = models.ForeignKey(Passage, on_delete=models.CASCADE, related_name="qrels")
    grade = models.IntegerField()
    subtopic = models.CharField(max_length=300, blank=True, default="")

    class Meta:
        ordering = ["qrel_set", "topic", "passage"]
        constraints = [
            models.UniqueConstraint(fields=["qrel_set", "topic", "passage", "subtopic"], name="unique_qrel"),
        ]

    def __str__(self):
        return f"{self.topic.external_id} {self.passage.external_id} {self.grade}"
