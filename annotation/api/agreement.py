"""A campaign's agreement report (organisers): JSON, CSV or a text table, as `manage.py agreement_report` prints it."""

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import renderers, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.reports.agreement import LAYERS, AgreementFailed, campaign_report
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


# --- the report's shape, for the schema (the view returns campaign_report's dict as it is) -------------------


class ConfusionSerializer(serializers.Serializer):
    """A pair's confusion matrix: rows are a's labels, columns b's, over the layer's labels in order (past 32
    labels, as a facet layer has on a large campaign, only the labels the pair used: the rest would be zeros)."""

    labels = serializers.ListField(child=serializers.JSONField(), help_text="Labels (numbers or text), in order.")
    matrix = serializers.ListField(child=serializers.ListField(child=serializers.IntegerField()))


class AgreementPairSerializer(serializers.Serializer):
    """Two assessors over the units both labelled."""

    a = serializers.CharField()
    b = serializers.CharField()
    units = serializers.IntegerField()
    cohen_kappa = serializers.FloatField(allow_null=True)
    weighted_kappa = serializers.FloatField(allow_null=True, help_text="Linear weights; null for nominal labels.")
    confusion = ConfusionSerializer(allow_null=True)
    span_jaccard = serializers.FloatField(allow_null=True, required=False, help_text="Span layers (plot_spans, evidence) only.")
    reasons = serializers.DictField(child=serializers.CharField(), help_text="Why a figure is null.")


class AgreementFiguresSerializer(serializers.Serializer):
    """The figures of a set of units (a layer, or one topic of it)."""

    units = serializers.IntegerField(help_text="Units labelled by two assessors or more.")
    assessors = serializers.IntegerField(help_text="Assessors with a label on one of those units.")
    alpha = serializers.FloatField(allow_null=True, help_text="Krippendorff's α at the layer's level.")
    fleiss_kappa = serializers.FloatField(allow_null=True)
    fleiss_units = serializers.IntegerField(help_text="Units behind Fleiss' κ (those with fleiss_raters labels).")
    fleiss_raters = serializers.IntegerField()
    all_agree = serializers.FloatField(allow_null=True, help_text="Share of units where every assessor agrees.")
    none_agree = serializers.FloatField(allow_null=True, help_text="Share of units where all labels differ.")
    span_jaccard = serializers.FloatField(allow_null=True, required=False, help_text="Span layers (plot_spans, evidence) only.")
    reasons = serializers.DictField(child=serializers.CharField(), help_text="Why a figure is null.")


class AgreementTopicSerializer(AgreementFiguresSerializer):
    """One topic's figures (no pairs)."""

    topic = serializers.CharField(allow_null=True, help_text="The topic's id (null: pair ratings without a topic).")


class AgreementLayerSerializer(AgreementFiguresSerializer):
    """One label layer at one level of measurement."""

    layer = serializers.ChoiceField(choices=LAYERS)
    level = serializers.ChoiceField(choices=["nominal", "ordinal", "interval", "ratio", "spans"])
    pairs = AgreementPairSerializer(many=True)
    topics = AgreementTopicSerializer(many=True)


class RankingPairSerializer(serializers.Serializer):
    """Kendall's τ between the runs' rankings under two assessors' qrels."""

    a = serializers.CharField()
    b = serializers.CharField()
    topics = serializers.IntegerField(help_text="Topics both judged.")
    runs = serializers.IntegerField()
    tau = serializers.FloatField(allow_null=True)
    p_value = serializers.FloatField(allow_null=True)
    reasons = serializers.DictField(child=serializers.CharField())


class RankingStabilitySerializer(serializers.Serializer):
    """System-ranking stability."""

    layer = serializers.CharField(allow_null=True, help_text="relevance or plot_grade: whose grades make the qrels.")
    measure = serializers.CharField(allow_null=True)
    runs = serializers.IntegerField()
    pairs = RankingPairSerializer(many=True)
    reasons = serializers.DictField(child=serializers.CharField())


class AgreementReportSerializer(serializers.Serializer):
    """A campaign's agreement report (annotation.reports.agreement.campaign_report)."""

    campaign = serializers.CharField()
    task = serializers.CharField()
    topic = serializers.CharField(allow_null=True)
    layers = AgreementLayerSerializer(many=True)
    ranking_stability = RankingStabilitySerializer()
    notes = serializers.ListField(child=serializers.CharField())


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
            (200, "application/json"): AgreementReportSerializer,
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
