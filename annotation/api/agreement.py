"""A campaign's agreement report (organisers): JSON, CSV or a text table, as `manage.py agreement_report` prints it."""

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import renderers, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.agreement import LAYERS, AgreementFailed, campaign_report
from annotation.api.common import detail, visible_campaigns
from annotation.api.permissions import IsOrganiser
from annotation.api.serializers import DetailSerializer
from assessments.agreement.formats import report_csv, report_text


class AgreementCsvRenderer(renderers.BaseRenderer):
    """The report as CSV (one row per layer, pair, topic and ranking pair)."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return report_csv(data).encode(self.charset)


class AgreementTextRenderer(renderers.BaseRenderer):
    """The report as readable tables."""

    media_type = "text/plain"
    format = "text"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return report_text(data).encode(self.charset)


class AgreementQuerySerializer(serializers.Serializer):
    """Which part of the report."""

    topic = serializers.CharField(required=False, max_length=200)
    layer = serializers.ListField(child=serializers.ChoiceField(choices=LAYERS), required=False)


class CampaignAgreement(APIView):
    """Agreement between the campaign's assessors: per label layer Krippendorff's α, Fleiss' κ, all/none agree,
    per assessor pair Cohen's κ (weighted for ordinal scales) with the confusion matrix, the same per topic, and
    the stability of the runs' ranking under each assessor's qrels (Kendall's τ).

    `?format=json` (default), `csv` or `text`. A figure that cannot be computed is null, with the reason in
    `reasons`. Who: organisers (a token limited to a campaign: that campaign).
    """

    permission_classes = [IsOrganiser]
    renderer_classes = [renderers.JSONRenderer, AgreementCsvRenderer, AgreementTextRenderer,
                        renderers.BrowsableAPIRenderer]

    @extend_schema(
        summary="Get a campaign's agreement report",
        parameters=[
            OpenApiParameter("topic", str, description="Only this topic (its id)."),
            OpenApiParameter("layer", {"type": "array", "items": {"type": "string", "enum": list(LAYERS)}},
                             explode=True, description="Only these label layers (repeat the parameter)."),
            OpenApiParameter("format", str, enum=["json", "csv", "text"],
                             description="json (default), csv (one row per figure set) or text (tables)."),
        ],
        responses={
            (200, "application/json"): OpenApiResponse(
                OpenApiTypes.OBJECT, description="The report: see annotation.agreement.campaign_report."),
            (200, "text/csv"): OpenApiTypes.STR,
            (200, "text/plain"): OpenApiTypes.STR,
            400: OpenApiResponse(DetailSerializer),
            404: OpenApiResponse(DetailSerializer),
        },
    )
    def get(self, request, name):
        campaign = get_object_or_404(visible_campaigns(request), name=name)
        query = AgreementQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        try:
            report = campaign_report(campaign, topic=query.validated_data.get("topic"),
                                     layers=query.validated_data.get("layer"))
        except AgreementFailed as exc:
            return detail(status.HTTP_400_BAD_REQUEST, f"No report: {exc}")
        return Response(report)

    def finalize_response(self, request, response, *args, **kwargs):
        """Anything but a report (an error, OPTIONS) is JSON whatever format was asked: CSV and text draw reports."""
        response = super().finalize_response(request, response, *args, **kwargs)
        drawn = isinstance(getattr(response, "accepted_renderer", None), (AgreementCsvRenderer, AgreementTextRenderer))
        if drawn and not (isinstance(response.data, dict) and "layers" in response.data):
            response.accepted_renderer = renderers.JSONRenderer()
            response.accepted_media_type = "application/json"
        return response
