"""Campaigns and their topics (JSON, and the TREC topic format for ad hoc topics)."""

import tempfile
from pathlib import Path

from django.conf import settings
from django.http import HttpResponse
from django.utils.text import get_valid_filename
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.common import detail, invalid_upload, rejection, visible_campaigns
from annotation.api.permissions import ORGANISER, IsParticipantOrOrganiser, request_role, scope_campaign
from annotation.api.serializers import (
    CampaignSerializer, DetailSerializer, RejectionSerializer, TopicSerializer, TopicUploadResultSerializer,
    TopicUploadSerializer,
)
from annotation.services.campaigns import TOPIC_KIND
from annotation.services.data_imports import import_campaign_topics
from annotation.services.errors import ServiceError
from retrieval.ingest import ImportFailed
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
    """The campaign's topics: id (as runs name it), kind, title, text, and the facets of outline topics; organisers
    upload an ad hoc campaign's topics here too (a TREC topic file, web-track XML, TSV or JSON lines).

    Who: participants and organisers (GET); organisers (POST). No gold article, ground truth or assessor notes are
    given.
    """

    permission_classes = [IsParticipantOrOrganiser]
    parser_classes = [MultiPartParser]
    serializer_class = TopicSerializer
    pagination_class = None  # a plain list: bounded by the campaign's track, read whole by scripts (README, REST API)
    queryset = Topic.objects.none()  # for the schema; get_queryset gives the campaign's topics

    def get_queryset(self):
        return campaign_topics(self.request, self.kwargs["name"])[1]

    @extend_schema(summary="List a campaign's topics")
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Upload topics to an ad hoc campaign",
        description=(
            "Multipart form with `file` (classic TREC topics, web-track XML, TSV or JSON lines; plain, gzip, bzip2 or "
            "xz; the format told from the content unless `format`) and `update` (true replaces topics already in "
            "the collection; otherwise each is a problem). The file is checked whole: any problem and nothing is "
            "stored, and the 400 lists every problem with its line and field. The topics join the campaign. Who: "
            "organisers."
        ),
        request={"multipart/form-data": TopicUploadSerializer},
        responses={201: TopicUploadResultSerializer, 400: RejectionSerializer, 403: DetailSerializer,
                   404: DetailSerializer, 413: DetailSerializer},
    )
    def post(self, request, name):
        if request_role(request) != ORGANISER:
            raise PermissionDenied("Uploading topics needs an organiser token.")
        campaign = get_object_or_404(visible_campaigns(request), name=name)
        if TOPIC_KIND[campaign.task] != Topic.Kind.ADHOC:
            return detail(status.HTTP_400_BAD_REQUEST, f"campaign: {campaign.name!r} takes no ad hoc topics "
                          f"(its task is {campaign.get_task_display()}).")
        upload = TopicUploadSerializer(data=request.data)
        if not upload.is_valid():
            return invalid_upload(upload.errors)
        file, limit = upload.validated_data["file"], settings.API_MAX_UPLOAD_BYTES
        if file.size > limit:
            return detail(status.HTTP_413_REQUEST_ENTITY_TOO_LARGE, f"Too large: the file has {file.size:,} bytes; "
                          f"at most {limit:,} are taken.")
        with tempfile.TemporaryDirectory(prefix="pooljudge-topics-") as folder:
            path = Path(folder) / (get_valid_filename(file.name or "") or "topics")
            with open(path, "wb") as out:
                for chunk in file.chunks():
                    out.write(chunk)
            try:
                summary, added = import_campaign_topics(campaign, path, fmt=upload.validated_data["format"],
                                                        update=upload.validated_data["update"],
                                                        own_only=scope_campaign(request) is not None)
            except ImportFailed as exc:
                return rejection(exc, what="The topics file")
            except ServiceError as exc:
                return detail(status.HTTP_400_BAD_REQUEST, f"{exc.field}: {exc.message}")
        return Response({"summary": summary, "added_to_campaign": added}, status=status.HTTP_201_CREATED)


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
        if TOPIC_KIND[campaign.task] != Topic.Kind.ADHOC:
            return detail(
                status.HTTP_404_NOT_FOUND,
                f"Campaign {campaign.name!r} has {campaign.get_task_display()} topics; the TREC topic format is for "
                "ad hoc topics (the JSON list has every kind).",
            )
        response = HttpResponse(trec_topics(topics), content_type="text/plain; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{campaign.name}-topics.txt"'
        return response
