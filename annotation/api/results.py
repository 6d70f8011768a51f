"""Results (organisers): qrels, and the TREC CAR Y3 detailed assessments, from assessments.exporters."""

from django.http import FileResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.views import APIView

from annotation.api.permissions import IsUnscopedOrganiser
from annotation.models import Campaign
from annotation.api.serializers import QrelsQuerySerializer
from rest_framework.response import Response

from assessments.exporters import qrels
from assessments.exporters.car_y3 import zipped
from assessments.exporters.common import ExportFailed, resolve_scope
from assessments.services.qrels import QrelsRequest, qrels_text


def export_failed(exc):
    """400 naming the option at fault: {"detail": "Nothing was exported: …", "field": "assessor"}."""
    return Response({"detail": f"Nothing was exported: {exc.message}", "field": exc.field},
                    status=status.HTTP_400_BAD_REQUEST)


SCOPE_PARAMETERS = [
    OpenApiParameter("collection", str, description="Collection of the topics (default: the only one judged)."),
    OpenApiParameter("pool", str, description="Only the topics of this pool."),
    OpenApiParameter("topic", {"type": "array", "items": {"type": "string"}}, explode=True,
                     description="Only these topics (repeat the parameter)."),
    OpenApiParameter("assessor", str, description="Only this assessor's judgements."),
]


class Qrels(APIView):
    """TREC qrels (`topic 0 docid grade`, text/plain) from the judgements or a stored qrel set.

    The options are those of `manage.py export_qrels`. Who: organisers (a token not limited to a campaign).
    """

    permission_classes = [IsUnscopedOrganiser]

    @extend_schema(
        summary="Download qrels",
        parameters=[
            *SCOPE_PARAMETERS,
            OpenApiParameter("aggregate", str, enum=qrels.AGGREGATES,
                             description="How assessors' grades combine (default: one with assessor, else majority)."),
            OpenApiParameter("ties", str, enum=qrels.TIES,
                             description="Where majority (and adjudicated's unresolved lines) send a tie, e.g. two "
                             "assessors grading 1 and 2: higher (default: the higher grade) or lower."),
            OpenApiParameter("level", str, enum=qrels.LEVELS, description="page (default) or section (CAR)."),
            OpenApiParameter("qrel_set", str, description="Export this stored qrel set as it is."),
            OpenApiParameter("campaign", str, description="Only the labels made in this campaign (default: every "
                             "human label of the collection)."),
            OpenApiParameter("source", str, enum=("human", "machine", "filled"),
                             description="Whose labels: human (default), machine, or filled (machine only where no "
                             "human judged)."),
            OpenApiParameter("machine_source", str, description="The machine label source (id or name)."),
        ],
        responses={(200, "text/plain"): OpenApiTypes.STR},
    )
    def get(self, request):
        query = QrelsQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        options = dict(query.validated_data)
        try:
            if "campaign" in options:  # as export_qrels --campaign
                name = options.pop("campaign")
                options["campaign_id"] = Campaign.objects.filter(name=name).values_list("pk", flat=True).first()
                if options["campaign_id"] is None:
                    raise ExportFailed(f"no campaign named {name!r}", "campaign")
            lines = qrels_text(QrelsRequest(topics=tuple(options.pop("topic")), **options))
        except ExportFailed as exc:  # a problem shows before the first line: it is still a 400
            return export_failed(exc)
        return StreamingHttpResponse(lines, content_type="text/plain; charset=utf-8")


class ScopeQuerySerializer(serializers.Serializer):
    """Which judgements to export."""

    collection = serializers.CharField(required=False, max_length=100)
    pool = serializers.CharField(required=False, max_length=100)
    topic = serializers.ListField(child=serializers.CharField(max_length=200), required=False, default=list)
    assessor = serializers.CharField(required=False, max_length=150)


def car_assessments_zip(*, collection=None, pool=None, topic=(), assessor=None) -> bytes:
    """The Y3 assessment files `manage.py export_car_assessments` writes, zipped; ExportFailed if impossible."""
    with car_assessments_file(collection=collection, pool=pool, topic=topic, assessor=assessor) as handle:
        return handle.read()


def car_assessments_file(*, collection=None, pool=None, topic=(), assessor=None):
    """The same zip as a temporary file, rewound (a download streams it); ExportFailed if impossible."""
    return zipped(resolve_scope(collection=collection, topics=topic, pool=pool, assessor=assessor))


class CarAssessments(APIView):
    """The TREC CAR Y3 detailed assessments: a zip of one JSON file per topic and assessor.

    Who: organisers (a token not limited to a campaign).
    """

    permission_classes = [IsUnscopedOrganiser]

    @extend_schema(
        summary="Download the Y3 assessments",
        parameters=SCOPE_PARAMETERS,
        responses={(200, "application/zip"): OpenApiTypes.BINARY},
    )
    def get(self, request):
        query = ScopeQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        try:
            data = car_assessments_file(**query.validated_data)
        except ExportFailed as exc:
            return export_failed(exc)
        # Streamed from the temporary file (closed, and so removed, when the response is done).
        response = FileResponse(data, content_type="application/zip")
        response["Content-Disposition"] = 'attachment; filename="car-y3-assessments.zip"'
        return response
