"""Evaluation of a stored run against the current qrels (the judgements so far, or a stored qrel set).

Organisers may evaluate any run. A participant may evaluate its own runs only once the organisers
open evaluation for the run's campaign (Campaign.settings["evaluation_open"] = true), and only against the
qrel set they released to it (Campaign.settings["released_qrels"] = its name): scores computed from the
judgements in progress, or from another campaign's qrels, would leak labels.
"""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.common import detail, visible_runs
from annotation.api.permissions import PARTICIPANT, IsParticipantOrOrganiser, request_role
from annotation.api.serializers import DetailSerializer
from annotation.models import Campaign
from assessments.evaluation.measures import MeasureError, parse_measure
from assessments.evaluation.report import Report
from assessments.evaluation.sources import evaluate_stored, stored_qrels
from assessments.exporters import qrels as qrels_export
from assessments.exporters.common import ExportFailed
from assessments.services.qrels import QrelsRequest, qrels_rows
from assessments.models import QrelSet, Topic
from config.ids import parse_id

DEFAULT_MEASURES = ("AP", "nDCG@10", "P@10", "RR", "Judged@10")
DEFAULT_PLOT_MEASURES = ("N-RODCG@10", "nDCG@10", "RR@10", "Judged@10")
AGGREGATES = tuple(a for a in qrels_export.AGGREGATES if a != "one")


class EvaluationQuerySerializer(serializers.Serializer):
    """Which measures, against which qrels."""

    measure = serializers.ListField(
        child=serializers.CharField(max_length=50), required=False, default=list,
        help_text="Measures in ir_measures' notation (repeat the parameter).",
    )
    qrel_set = serializers.CharField(required=False, max_length=100)
    aggregate = serializers.ChoiceField(choices=AGGREGATES, required=False)
    per_topic = serializers.BooleanField(required=False, default=False)

    def validate(self, attrs):
        if attrs.get("qrel_set") and attrs.get("aggregate"):
            raise serializers.ValidationError("qrel_set is used as it is: no aggregate.")
        measures = []
        for i, text in enumerate(attrs["measure"]):
            try:
                measures.append(parse_measure(text))
            except MeasureError as exc:
                raise serializers.ValidationError({"measure": [f"measure[{i}] {text!r}: {exc}"]}) from None
        attrs["measure"] = measures
        return attrs


class EvaluationSerializer(serializers.Serializer):
    """A run's scores: the mean over topics (`all`), and per topic when asked."""

    run = serializers.CharField()
    qrels = serializers.CharField(help_text="Where the relevance labels came from.")
    measures = serializers.ListField(child=serializers.CharField())
    topics = serializers.IntegerField(help_text="Topics scored.")
    all = serializers.DictField(child=serializers.FloatField())
    per_topic = serializers.DictField(
        child=serializers.DictField(child=serializers.FloatField()), required=False,
    )
    notes = serializers.ListField(child=serializers.CharField())


def judged_qrels(run, topics, aggregate, campaign_id=None) -> dict:
    """{topic: {docid: grade}} from the current judgements of `topics` (of one campaign when given), combined over
    assessors by `aggregate`: the rows the qrels service gives `export_qrels` for the same options."""
    qrels = {}
    if not topics:
        return qrels
    request = QrelsRequest(collection=run.collection.name, topics=tuple(t.external_id for t in topics),
                           aggregate=aggregate, level="page", campaign_id=campaign_id)
    for topic, docid, grade in qrels_rows(request):
        qrels.setdefault(topic, {})[docid] = grade
    return qrels


def evaluate_run(run, measures, *, qrel_set=None, aggregate="majority") -> Report:
    """Score one stored run over its campaign's topics (else the topics it ranks); ExportFailed if impossible.

    The scoring is evaluate_runs' own (assessments.evaluation.sources.evaluate_stored); only the qrels differ:
    a stored set, or the current judgements through the qrels service: the campaign's own (as its results page
    scores its runs), every human label of the collection only for a run of no campaign.
    """
    campaign = Campaign.objects.filter(name=run.track).select_related("track").first() if run.track else None
    if campaign is not None and hasattr(campaign, "track"):
        topics = list(campaign.track.topics.all())
    else:
        topics = list(Topic.objects.filter(run_entries__run=run).distinct())
    plot = any(t.kind == Topic.Kind.PLOT for t in topics)
    measures = measures or [parse_measure(m) for m in (DEFAULT_PLOT_MEASURES if plot else DEFAULT_MEASURES)]
    if qrel_set is not None:
        found = QrelSet.objects.filter(name=qrel_set, collection=run.collection).first()
        if found is None:
            raise ExportFailed(f"no qrel set named {qrel_set!r} in collection {run.collection.name!r}", "qrel_set")
        report = evaluate_stored([run], None, measures, topics=topics, qrels=stored_qrels(found))
        report.notes.append(f"qrels: stored set {found.name}")
        return report
    qrels = judged_qrels(run, topics, aggregate, campaign_id=campaign.pk if campaign is not None else None)
    report = evaluate_stored([run], None, measures, topics=topics, qrels=qrels)
    report.notes.append(f"qrels: current judgements, aggregate={aggregate}, page level")
    return report


class RunEvaluation(APIView):
    """A run scored against the current qrels: the judgements so far (combined over assessors) or a stored set.

    Who: organisers, any run; a participant, its own runs once the campaign's evaluation is open.
    """

    permission_classes = [IsParticipantOrOrganiser]

    @extend_schema(
        summary="Evaluate a run",
        description=(
            "Measures in ir_measures' notation (AP, nDCG@10, P@10, R@100, RR, Rprec, Judged@10, N-RODCG@10 for "
            "plot topics...); by default AP, nDCG@10, P@10, RR and Judged@10 (plot runs: N-RODCG@10, nDCG@10, "
            "RR@10, Judged@10). The topics are the run's campaign's; those with qrels are scored, a judged topic "
            "the run lacks scoring 0 (as trec_eval -c does). Judged@10 says how much of the top 10 is judged."
        ),
        parameters=[
            OpenApiParameter("measure", {"type": "array", "items": {"type": "string"}}, explode=True,
                             description="A measure (repeat the parameter)."),
            OpenApiParameter("qrel_set", str, description="Score against this stored qrel set instead."),
            OpenApiParameter("aggregate", str, enum=AGGREGATES,
                             description="How assessors' grades combine (default majority)."),
            OpenApiParameter("per_topic", bool, description="Include each topic's values."),
        ],
        responses={
            200: EvaluationSerializer,
            400: DetailSerializer,
            403: OpenApiResponse(DetailSerializer, description="Evaluation is not open for this campaign yet."),
            404: DetailSerializer,
        },
    )
    def get(self, request, pk):
        run_id = parse_id(pk)
        run = visible_runs(request).filter(pk=run_id).first() if run_id is not None else None
        if run is None:
            return detail(status.HTTP_404_NOT_FOUND, "No such run.")
        query = EvaluationQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        options = dict(query.validated_data)
        if request_role(request) == PARTICIPANT:
            campaign = Campaign.objects.filter(name=run.track).first()
            settings = campaign.settings if campaign is not None and isinstance(campaign.settings, dict) else {}
            if not settings.get("evaluation_open"):
                return detail(status.HTTP_403_FORBIDDEN,
                              f"Evaluation of campaign {run.track!r} is not open to participants yet.")
            released = settings.get("released_qrels")
            if not released:
                return detail(status.HTTP_403_FORBIDDEN,
                              f"No qrels are released to campaign {run.track!r} yet: participants evaluate against "
                              "the qrels the organisers release, never the judgements in progress.")
            if options.get("qrel_set") not in (None, released) or options.get("aggregate"):
                return detail(status.HTTP_403_FORBIDDEN,
                              f"Participants evaluate against the released qrels ({released!r}) only.")
            options["qrel_set"] = released
        try:
            report = evaluate_run(run, options["measure"], qrel_set=options.get("qrel_set"),
                                  aggregate=options.get("aggregate") or "majority")
        except ExportFailed as exc:
            return Response({"detail": f"Nothing was evaluated: {exc.message}", "field": exc.field},
                            status=status.HTTP_400_BAD_REQUEST)
        scores = report.runs[0]
        data = {
            "run": run.name,
            "qrels": next((n for n in report.notes if n.startswith("qrels: ")), "").removeprefix("qrels: "),
            "measures": [str(m) for m in report.measures],
            "topics": len(scores.per_topic),
            "all": {str(m): v for m, v in scores.all(report.measures).items()},
            "notes": [n for n in report.notes if not n.startswith("qrels: ")],
        }
        if options["per_topic"]:
            data["per_topic"] = {
                topic: {str(m): v for m, v in values.items()} for topic, values in sorted(scores.per_topic.items())
            }
        return Response(data)
