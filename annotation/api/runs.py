"""Runs: upload (checked whole, stored only when clean), list, get, delete while no pool uses it."""

from django.conf import settings
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from annotation.api.common import detail, invalid_upload, rejection, visible_runs
from annotation.api.permissions import PARTICIPANT, IsParticipantOrOrganiser, request_role, scope_campaign
from annotation.api.serializers import DetailSerializer, RejectionSerializer, RunSerializer, RunUploadSerializer
from annotation.services.submissions import RunInUse, RunLimitReached, UploadTooLarge, delete_run, upload_run
from config import throttle
from config.ids import parse_id
from retrieval.ingest import ImportFailed

MULTIPART_OVERHEAD = 64 * 1024  # room for the form's other fields and boundaries before a body is too large


class RunList(generics.ListCreateAPIView):
    """Runs: a participant's own (organisers: all), newest first; upload a run to a campaign.

    Who: participants (their own runs) and organisers.
    """

    permission_classes = [IsParticipantOrOrganiser]
    parser_classes = [MultiPartParser]
    serializer_class = RunSerializer
    ordering = ("-id",)

    def get_serializer_class(self):
        return RunUploadSerializer if self.request.method == "POST" else RunSerializer

    def get_queryset(self):
        runs = visible_runs(self.request)
        campaign = self.request.query_params.get("campaign")
        return runs.filter(track=campaign) if campaign else runs

    @extend_schema(
        summary="List runs",
        parameters=[OpenApiParameter("campaign", str, description="Only runs uploaded to this campaign.")],
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Upload a run",
        description=(
            "Multipart form with `campaign` (its name) and `file`: TREC six columns `qid Q0 docid rank score tag` "
            "for ad hoc and plot campaigns, TREC CAR Y3 JSON lines for outline campaigns; plain or gzip, UTF-8 "
            "(a BOM, CRLF, tabs or runs of spaces are fine). The file is checked whole: any problem and nothing "
            "is stored, and the 400 response lists every problem (up to 50) with its line and field. "
            "413: the file is over the size limit (or unpacks past it); 409: you already have as many runs in the "
            "campaign as allowed; 429: you sent more uploads this hour than allowed. Who: participants and "
            "organisers (organisers have no run limit)."
        ),
        request={"multipart/form-data": RunUploadSerializer},
        responses={
            201: RunSerializer,
            400: OpenApiResponse(
                RejectionSerializer, description="The request or the run was rejected; nothing was stored."
            ),
            403: DetailSerializer,
            409: OpenApiResponse(DetailSerializer, description="The run limit of the campaign is reached."),
            413: OpenApiResponse(DetailSerializer, description="The file is too large."),
            429: OpenApiResponse(DetailSerializer, description="Too many uploads this hour."),
        },
    )
    def post(self, request, *args, **kwargs):
        limit = settings.API_MAX_UPLOAD_BYTES
        oversized = request_too_large(request, "a run file")
        if oversized is not None:
            return oversized
        upload = self.get_serializer(data=request.data)
        if not upload.is_valid():
            return invalid_upload(upload.errors)
        campaign, file = upload.validated_data["campaign"], upload.validated_data["file"]
        scope = scope_campaign(request)
        if scope is not None and scope.pk != campaign.pk:
            raise PermissionDenied(f"This token is for campaign {scope.name!r} only.")
        if file.size > limit:
            return too_large(f"the file has {file.size:,} bytes; at most {limit:,} are taken")
        busy = too_many_uploads(request.user)
        if busy is not None:
            return busy
        try:
            file.seek(0)
            run = upload_run(
                campaign=campaign, owner=request.user, file=file, filename=file.name or "",
                limit_runs=request_role(request) == PARTICIPANT,
            )
        except UploadTooLarge as exc:
            return too_large(str(exc))
        except RunLimitReached as exc:
            return detail(status.HTTP_409_CONFLICT, f"Run limit reached: {exc}.")
        except ImportFailed as exc:
            return rejection(exc)
        created = visible_runs(request).get(pk=run.pk)
        return Response(RunSerializer(created).data, status=status.HTTP_201_CREATED)


def request_too_large(request, what):
    """413 for a request whose body is larger than an upload of `what` may be (its form included), else None."""
    limit = settings.API_MAX_UPLOAD_BYTES
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > limit + MULTIPART_OVERHEAD:
        return too_large(f"the request has {length:,} bytes; {what} may have at most {limit:,}")
    return None


def too_large(message):
    return detail(status.HTTP_413_REQUEST_ENTITY_TOO_LARGE, f"Too large: {message}.")


def too_many_uploads(user):
    """429 once the user has sent API_MAX_UPLOADS_PER_HOUR uploads this hour (each one read counts, stored or not;
    the count is in the shared cache), else None."""
    limit = settings.API_MAX_UPLOADS_PER_HOUR
    count, wait = throttle.hit(f"run-uploads:{user.pk}", 3600)
    if count <= limit:
        return None
    minutes = max(1, round(wait / 60))
    response = detail(
        status.HTTP_429_TOO_MANY_REQUESTS,
        f"Too many uploads: at most {limit} an hour per user (API_MAX_UPLOADS_PER_HOUR). "
        f"Try again in {minutes} minute{'s' if minutes != 1 else ''}.",
    )
    response["Retry-After"] = str(wait)
    return response


class RunDetail(generics.RetrieveDestroyAPIView):
    """One run; delete it while no pool uses it.

    Who: its owner (a participant sees only their own runs: others' are 404) and organisers.
    """

    permission_classes = [IsParticipantOrOrganiser]
    serializer_class = RunSerializer

    def get_queryset(self):
        return visible_runs(self.request)

    def get_object(self):
        # int() reads "٣" (and the ORM with it) as 3: only an id in ASCII digits names a run.
        if parse_id(self.kwargs[self.lookup_field]) is None:
            raise Http404("No such run.")
        return super().get_object()

    @extend_schema(summary="Get a run")
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Delete a run",
        description="Only while no pool and no assignment uses it (409 after that).",
        responses={204: None, 409: DetailSerializer},
    )
    def delete(self, request, *args, **kwargs):
        run = self.get_object()
        try:
            delete_run(run)
        except RunInUse as exc:
            return detail(status.HTTP_409_CONFLICT, f"{exc}.")
        return Response(status=status.HTTP_204_NO_CONTENT)
