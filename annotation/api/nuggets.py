"""A nuggets campaign's scores (organisers): the JSON `manage.py export_nugget_scores` writes."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.common import detail, visible_campaigns
from annotation.api.permissions import IsOrganiser
from annotation.api.serializers import DetailSerializer
from annotation.services.errors import ServiceError
from annotation.units import tasks
from annotation.services.nuggets import scores


class TopicScoresSerializer(serializers.Serializer):
    """One answer's scores (a run's answer to a topic) with its nugget counts."""

    all = serializers.FloatField()
    vital = serializers.FloatField()
    strict_all = serializers.FloatField()
    strict_vital = serializers.FloatField()
    weighted = serializers.FloatField()
    nuggets = serializers.IntegerField(help_text="Nuggets in the topic's bank.")
    vital_nuggets = serializers.IntegerField()
    assessed = serializers.IntegerField(help_text="Nuggets with a label for this answer (the rest count 0).")
    citation_precision = serializers.FloatField(
        required=False, help_text="Where the campaign judges citations: the mean support of the answer's citations "
        "(full 1, partial 0.5, none or not judged 0).")
    citation_recall = serializers.FloatField(
        required=False, help_text="Where the campaign judges citations: the mean over the answer's sentences of their "
        "best citation's support (citing nothing: 0).")
    citations = serializers.IntegerField(required=False, help_text="Cited (sentence, passage) pairs.")
    citations_assessed = serializers.IntegerField(required=False, help_text="Of them, those with a label.")


class RunScoresSerializer(serializers.Serializer):
    """A run's means over every topic with a bank (one it did not answer counts 0, as the nuggetizer scores it), and
    each answered topic's scores."""

    all = serializers.FloatField()
    vital = serializers.FloatField()
    strict_all = serializers.FloatField()
    strict_vital = serializers.FloatField()
    weighted = serializers.FloatField()
    citation_precision = serializers.FloatField(required=False, help_text="Where the campaign judges citations.")
    citation_recall = serializers.FloatField(required=False, help_text="Where the campaign judges citations.")
    topics = serializers.DictField(child=TopicScoresSerializer(), help_text="By topic id.")
    unanswered = serializers.ListField(child=serializers.CharField(), help_text="Topics with nuggets the run did not "
                                       "answer: each counts 0 in its means.")


class MachineComparisonSerializer(serializers.Serializer):
    """An LLM nugget assignment source beside the people's labels."""

    source = serializers.IntegerField()
    name = serializers.CharField()
    runs = serializers.IntegerField(help_text="Runs scored by both.")
    tau = serializers.DictField(child=serializers.FloatField(allow_null=True),
                                help_text="Kendall's tau-b between the two run rankings, per measure.")
    labels = serializers.IntegerField(help_text="(answer, nugget) pairs labelled by both.")
    agreement = serializers.FloatField(allow_null=True, help_text="Share of those with the same label.")
    alpha = serializers.FloatField(allow_null=True, help_text="Krippendorff's alpha (ordinal) on those.")
    reasons = serializers.DictField(child=serializers.CharField(), help_text="Why a figure is null.")


class NuggetScoresSerializer(serializers.Serializer):
    """The scores of every run with answers in the campaign, by run name: the people's, or a named machine
    source's."""

    source = serializers.JSONField(required=False, help_text="With ?source=: the machine source scored (id, name).")
    runs = serializers.DictField(child=RunScoresSerializer())
    definitions = serializers.DictField(
        child=serializers.CharField(), help_text="What each measure is: all and vital give partial_support 0.5 (the "
        "nuggetizer's all_score, vital_score), strict_all and strict_vital 0; weighted: vital 1, okay 0.5.")
    topics_without_nuggets = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()), required=False,
        help_text="Topics with answers and no nugget bank (not scored, left out of the runs' means): the runs that "
        "answered each.")
    compared_with_machine = MachineComparisonSerializer(
        many=True, required=False, help_text="The people's scores: each LLM assignment source beside them.")
    compared_with_people = MachineComparisonSerializer(
        required=False, help_text="With ?source=: that source beside the people.")


class CampaignNuggetScores(APIView):
    """The nugget scores of a nuggets campaign's answers (TREC RAG: all, vital, strict_all, strict_vital, weighted),
    per run and topic, from the people's nugget labels (adjudicated, else the majority, a tie the lower), as
    `manage.py export_nugget_scores` writes them; `?source=` scores by an LLM's assignments instead. Who: organisers (a token limited to a campaign: that campaign)."""

    permission_classes = [IsOrganiser]

    @extend_schema(
        summary="Get a nuggets campaign's scores",
        parameters=[OpenApiParameter("source", str, description="Score by this machine source's nugget "
                                     "assignments (its id or name) instead of the people's.")],
        responses={200: NuggetScoresSerializer, 400: OpenApiResponse(DetailSerializer),
                   404: OpenApiResponse(DetailSerializer)},
    )
    def get(self, request, name):
        campaign = get_object_or_404(visible_campaigns(request), name=name)
        if not tasks.of(campaign).answers:
            return detail(status.HTTP_400_BAD_REQUEST, f"campaign: {campaign.name!r} is not a nuggets campaign "
                          f"(its task is {campaign.get_task_display()}).")
        try:
            return Response(scores(campaign, source=request.query_params.get("source")))
        except ServiceError as exc:
            return Response({"detail": f"{exc.field}: {exc.message}", "field": exc.field},
                            status=status.HTTP_400_BAD_REQUEST)
