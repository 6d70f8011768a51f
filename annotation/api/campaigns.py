"""Campaigns and their topics (JSON, and the TREC topic format for ad hoc topics)."""

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.views import APIView

from annotation.api.common import detail, visible_campaigns
from annotation.api.permissions import IsParticipantOrOrganiser
from annotation.api.serializers import CampaignSerializer, DetailSerializer, TopicSerializer
from annotation.models import Campaign
from assessments.importers.topics import trec_topics
from assessments.models import Topic


class CampaignList(generics.ListAPIView):
    """Campaigns by name: their task, run format, topics and limits. Participants see those that take runs.

    Who: participants and organisers; a token limited to a campaign sees that one.
    """

    permission_classes = [IsParticipantOrOrganiser]
    serializer_class = CampaignSerializer
    ordering = ("name",)

    def get_queryset(self):
        return visible_campaigns(self.request)

    @extend_schema(summary="List campaigns")
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class CampaignDetail(generics.RetrieveAPIView):
    """One campaign.

    Who: participants and organisers.
    """

    permission_classes = [IsParticipantOrOrganiser]
    serializer_class = CampaignSerializer
    lookup_field = "name"

    def get_queryset(self):
        return visible_campaigns(self.request)

    @extend_schema(summary="Get a campaign")
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


def campaign_topics(request, name):
    """The topics of a campaign the caller may see (404 otherwise), with their facets, by id."""
    campaign = get_object_or_404(visible_campaigns(request), name=name)
    if getattr(campaign, "track", None) is None:
        return campaign, Topic.objects.none()
    return campaign, campaign.track.topics.prefetch_related("facets").order_by("external_id")


class CampaignTopics(generics.ListAPIView):
    """The campaign's topics: id (as runs name it), kind, title, text, and the facets of outline topics.

    Who: participants and organisers. No gold article, ground truth or assessor notes are given.
    """

    permission_classes = [IsParticipantOrOrganiser]
    serializer_class = TopicSerializer
    pagination_class = None  # a plain list: bounded by the campaign's track, read whole by scripts (README, REST API)
    queryset = Topic.objects.none()  # for the schema; get_queryset gives the campaign's topics

    def get_queryset(self):
        return campaign_topics(self.request, self.kwargs["name"])[1]

    @extend_schema(summary="List a campaign's topics")
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class CampaignTopicsTrec(APIView):
    """The campaign's ad hoc topics as a TREC topic file (text/plain).

    Who: participants and organisers. 404 for campaigns whose topics are not ad hoc (use the JSON list).
    """

    permission_classes = [IsParticipantOrOrganiser]

    @extend_schema(
        summary="Download a campaign's topics in TREC format",
        responses={(200, "text/plain"): OpenApiTypes.STR, 404: OpenApiResponse(DetailSerializer)},
    )
    def get(self, request, name):
        campaign, topics = campaign_topics(request, name)
        if campaign.task != Campaign.Task.ADHOC:
            return detail(
                status.HTTP_404_NOT_FOUND,
                f"Campaign {campaign.name!r} has {campaign.get_task_display()} topics; the TREC topic format is for "
                "ad hoc topics (the JSON list has every kind).",
            )
        response = HttpResponse(trec_topics(topics), content_type="text/plain; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{campaign.name}-topics.txt"'
        return response
