"""Generated answers (TREC RAG) uploaded to a nuggets campaign, as runs are uploaded (annotation/api/runs.py)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.common import detail, invalid_upload, rejection, visible_campaigns
from annotation.api.permissions import PARTICIPANT, IsParticipantOrOrganiser, request_role, scope_campaign
from annotation.api.runs import request_too_large, too_large, too_many_uploads
from annotation.api.serializers import DetailSerializer, RejectionSerializer
from annotation.services.errors import ServiceError
from annotation.units import tasks
from annotation.services.nuggets import upload_answers
from annotation.services.submissions import RunLimitReached, UploadTooLarge
from retrieval.ingest import ImportFailed


class AnswersUploadSerializer(serializers.Serializer):
    """An answers file: TREC RAG 2024 JSON lines."""

    file = serializers.FileField(allow_empty_file=True, help_text="The answers file, plain or gzip; UTF-8.")


class AnswersResultSerializer(serializers.Serializer):
    """What an answers upload stored."""

    summary = serializers.CharField()
    answers = serializers.IntegerField(help_text="Answers stored.")
    runs = serializers.ListField(child=serializers.CharField(), help_text="The runs made, one per run_id.")


class CampaignAnswers(APIView):
    """Upload generated answers to a nuggets campaign.

    Who: participants (their own runs, within the campaign's run limit) and organisers.
    """

    permission_classes = [IsParticipantOrOrganiser]
    parser_classes = [MultiPartParser]

    @extend_schema(
        summary="Upload generated answers (TREC RAG)",
        description=(
            "Multipart form with `file`: one answer a line, `{run_id, topic_id, topic, references, response_length, "
            "answer: [{text, citations}]}` (TREC RAG 2024), plain or gzip. Each run_id becomes one of your runs in "
            "the campaign. The file is checked whole (topics of the campaign, citations inside the references, "
            "documents of the collection, run names you have not used, one answer per topic and run): any problem "
            "and nothing is stored, and the 400 lists every problem with its line and field. 413: too large; 409: "
            "run limit; 429: too many uploads this hour."
        ),
        request={"multipart/form-data": AnswersUploadSerializer},
        responses={201: AnswersResultSerializer, 400: RejectionSerializer, 403: DetailSerializer,
                   404: DetailSerializer, 409: DetailSerializer, 413: DetailSerializer,
                   429: OpenApiResponse(DetailSerializer, description="Too many uploads this hour.")},
    )
    def post(self, request, name):
        scope = scope_campaign(request)
        if scope is not None and scope.name != name:
            raise PermissionDenied(f"This token is for campaign {scope.name!r} only.")
        campaign = get_object_or_404(visible_campaigns(request), name=name)
        if not tasks.of(campaign).answers:
            return detail(status.HTTP_400_BAD_REQUEST, f"campaign: {campaign.name!r} takes no answers "
                          f"(its task is {campaign.get_task_display()}).")
        oversized = request_too_large(request, "an answers file")
        if oversized is not None:
            return oversized
        upload = AnswersUploadSerializer(data=request.data)
        if not upload.is_valid():
            return invalid_upload(upload.errors)
        file = upload.validated_data["file"]
        busy = too_many_uploads(request.user)
        if busy is not None:
            return busy
        try:
            file.seek(0)
            result = upload_answers(campaign=campaign, owner=request.user, file=file, filename=file.name or "",
                                    limit_runs=request_role(request) == PARTICIPANT)
        except UploadTooLarge as exc:
            return too_large(str(exc))
        except RunLimitReached as exc:
            return detail(status.HTTP_409_CONFLICT, f"Run limit reached: {exc}.")
        except ServiceError as exc:
            return detail(status.HTTP_400_BAD_REQUEST, f"{exc.field}: {exc.message}")
        except ImportFailed as exc:
            return rejection(exc, what="The answers file")
        return Response({"summary": result.summary(), "answers": result.answers, "runs": result.runs},
                        status=status.HTTP_201_CREATED)
