"""A nuggets campaign's scores (organisers): the JSON `manage.py export_nugget_scores` writes."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.common import detail, visible_campaigns
from annotation.api.permissions import IsOrganiser
from annotation.api.serializers import DetailSerializer
from annotation.models import Campaign
from assessments.evaluation.nuggets import nugget_scores


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


class RunScoresSerializer(serializers.Serializer):
    """A run's means over the topics it answered that have a bank, and each topic's scores."""

    all = serializers.FloatField()
    vital = serializers.FloatField()
    strict_all = serializers.FloatField()
    strict_vital = serializers.FloatField()
    weighted = serializers.FloatField()
    topics = serializers.DictField(child=TopicScoresSerializer(), help_text="By topic id.")


class NuggetScoresSerializer(serializers.Serializer):
    """The scores of every run with answers in the campaign, by run name."""

    runs = serializers.DictField(child=RunScoresSerializer())


class CampaignNuggetScores(APIView):
    """The nugget scores of a nuggets campaign's answers (TREC RAG: all, vital, strict_all, strict_vital, weighted),
    per run and topic, from the people's nugget labels (adjudicated, else the majority, a tie the lower), as
    `manage.py export_nugget_scores` writes them. Who: organisers (a token limited to a campaign: that campaign)."""

    permission_classes = [IsOrganiser]

    @extend_schema(
        summary="Get a nuggets campaign's scores",
        responses={200: NuggetScoresSerializer, 400: OpenApiResponse(DetailSerializer),
                   404: OpenApiResponse(DetailSerializer)},
    )
    def get(self, request, name):
        campaign = get_object_or_404(visible_campaigns(request), name=name)
        if campaign.task != Campaign.Task.NUGGETS:
            return detail(status.HTTP_400_BAD_REQUEST, f"campaign: {campaign.name!r} is not a nuggets campaign "
                          f"(its task is {campaign.get_task_display()}).")
        return Response(nugget_scores(campaign.pk))
