"""Generated answers (TREC RAG): a run's answer to a topic, its sentences in order, and each sentence's citations.

An answer belongs to a Run of the campaign's collection (the run-name rules of assessments.services.runs apply) and
to the campaign it was submitted to or imported into (`campaign_id`, as Judgement keeps it: assessments imports
nothing from annotation). The nuggets an answer is judged against, and the judgements themselves, are Judgements
(layers `nuggets`, `nugget_support`, `citation_support`: see assessments.nuggets).
"""

from django.db import models

from assessments.models.runs import Run
from assessments.models.topics import Topic
from retrieval.models import Passage


class Answer(models.Model):
    """One run's generated answer to one topic, as the TREC RAG 2024 format gives it."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="answers")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="answers")
    campaign_id = models.PositiveIntegerField(help_text="The campaign (annotation.Campaign id) the answer is judged in.")
    references = models.JSONField(
        default=list, blank=True, help_text="The documents the answer's citations index into, as the file lists them.",
    )
    response_length = models.PositiveIntegerField(null=True, blank=True, help_text="As the file gives it (words).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign_id", "topic", "run"]
        constraints = [models.UniqueConstraint(fields=["run", "topic"], name="unique_answer_run_topic")]
        indexes = [models.Index(fields=["campaign_id", "topic"], name="answer_campaign_topic")]

    def __str__(self):
        return f"{self.run.name} {self.topic.external_id}"


class AnswerSentence(models.Model):
    """One sentence of an answer, in order (`position` from 0)."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="sentences")
    position = models.PositiveIntegerField()
    text = models.TextField()

    class Meta:
        ordering = ["answer", "position"]
        constraints = [models.UniqueConstraint(fields=["answer", "position"], name="unique_answer_sentence")]

    def __str__(self):
        return f"{self.answer_id}#{self.position}"


class AnswerCitation(models.Model):
    """A passage a sentence cites: `reference` is the index into the answer's references the file gave."""

    sentence = models.ForeignKey(AnswerSentence, on_delete=models.CASCADE, related_name="citations")
    position = models.PositiveIntegerField(help_text="Order among the sentence's citations, from 0.")
    reference = models.PositiveIntegerField()
    passage = models.ForeignKey(Passage, on_delete=models.CASCADE, related_name="citations")

    class Meta:
        ordering = ["sentence", "position"]
        constraints = [models.UniqueConstraint(fields=["sentence", "position"], name="unique_answer_citation")]

    def __str__(self):
        return f"{self.sentence} [{self.reference}]"
