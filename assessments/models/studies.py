"""Human-study items (seed 000 §5.3, seed 001 §4, seed 003): forced-choice sets and passage pairs to rate.

An item belongs to a pool (the campaign reaches it through Campaign.pools). Its `key` is the
Judgement.item of the labels given to it: a forced choice is stored as a Judgement of layer CHOICE
keyed (topic, item) whose value is the chosen passage's external id; a pair rating as a Judgement
of layer RATING keyed (topic, passage, passage2, item).
"""

from django.db import models

from assessments.models.pools import Pool
from assessments.models.runs import Run
from assessments.models.topics import Topic
from retrieval.models import Passage


class StudyItem(models.Model):
    """One item of a human study: a query with N candidates to choose from, or two passages to rate 1-10."""

    class Kind(models.TextChoices):
        CHOICE = "choice", "Forced choice"
        PAIR = "pair", "Pair rating"

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="study_items")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    key = models.CharField(max_length=200, help_text="Unique in the pool; the Judgement.item of its labels.")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="study_items", null=True, blank=True)
    candidates = models.ManyToManyField(
        Passage, related_name="study_items", blank=True, help_text="Forced choice: the passages offered."
    )
    answer = models.ForeignKey(
        Passage, on_delete=models.CASCADE, related_name="+", null=True, blank=True,
        help_text="Forced choice: the ground-truth passage.",
    )
    run = models.ForeignKey(
        Run, on_delete=models.SET_NULL, related_name="study_items", null=True, blank=True,
        help_text="The retriever run the negatives came from; its best-ranked candidate is the retriever's choice.",
    )
    retriever_choice = models.ForeignKey(
        Passage, on_delete=models.SET_NULL, related_name="+", null=True, blank=True,
        help_text="Forced choice: the candidate the retriever ranks first.",
    )
    passage = models.ForeignKey(Passage, on_delete=models.CASCADE, related_name="+", null=True, blank=True,
                                help_text="Pair rating: the first passage.")
    passage2 = models.ForeignKey(Passage, on_delete=models.CASCADE, related_name="+", null=True, blank=True,
                                 help_text="Pair rating: the second passage.")
    similarity = models.FloatField(null=True, blank=True, help_text="Pair rating: the encoder's cosine similarity.")
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pool", "key"]
        constraints = [models.UniqueConstraint(fields=["pool", "key"], name="unique_study_item_key")]

    def __str__(self):
        return f"{self.pool.name} {self.kind} {self.key}"
