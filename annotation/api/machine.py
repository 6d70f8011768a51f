"""Machine assistance (organisers): a campaign's machine label sources with their figures and jobs; start training
an auto-annotator, labelling pools with it or zero-shot, or the LLM judge; follow a job (who started it recorded).

Thin over assessments.services.machine, the service manage.py train_annotator, machine_label and llm_judge and
the console's Machine assistance page call: the same options, bounds and refusals. Everything is scoped to the
campaign in the URL (a campaign token reaches its own campaign only): its pools, its annotators, its jobs. The
work runs in the background (202 with the job; GET the job for its progress).
"""

from django.conf import settings
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.common import invalid_upload, rejection, visible_campaigns
from annotation.api.parsers import JSONParser
from annotation.api.permissions import IsOrganiser
from annotation.api.runs import request_too_large, too_large
from annotation.api.serializers import DetailSerializer, RejectionSerializer
from annotation.services.nuggets import llm_job
from assessments.importers import machine_labels
from assessments.machine.annotator import ZERO_SHOT
from assessments.services import machine
from config.ids import parse_id
from retrieval.ingest import ImportFailed

TEXT = 200
MANY = 1000


class MachineJobSerializer(serializers.Serializer):
    """A machine job: what it does, how far it is, its spend, the time left, and why it stopped or failed."""

    id = serializers.IntegerField()
    kind = serializers.CharField(help_text="train, label, llm, filter, nugget_assign or nugget_suggest.")
    kind_label = serializers.CharField()
    status = serializers.CharField(help_text="queued, running, done, stopped (a limit: run again to go on) or failed.")
    label = serializers.CharField()
    finished = serializers.BooleanField()
    source = serializers.IntegerField(help_text="The machine label source it trains or labels for.")
    source_name = serializers.CharField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    errors = serializers.IntegerField(help_text="Items whose answer could not be read or was refused.")
    requests = serializers.IntegerField()
    tokens = serializers.IntegerField()
    rate = serializers.FloatField(allow_null=True, help_text="Items per second.")
    eta_seconds = serializers.FloatField(allow_null=True, help_text="Seconds left at the current rate.")
    message = serializers.CharField(allow_blank=True)
    error = serializers.CharField(allow_blank=True)
    line = serializers.CharField(help_text="All of it in one line for people.")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class MachineSourceSerializer(serializers.Serializer):
    """A machine label source (an annotator, a zero-shot source or an LLM judge) and what it is worth against
    people."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField(help_text="classifier, zero_shot (fusion or encoder: no training, no "
                                           "cross-validation), llm, query_filter, nugget_assign or nugget_suggest.")
    kind_label = serializers.CharField()
    status = serializers.CharField()
    error = serializers.CharField(allow_blank=True)
    model = serializers.CharField()
    model_version = serializers.CharField(allow_blank=True)
    checksum = serializers.CharField(allow_blank=True)
    grades = serializers.ListField(child=serializers.IntegerField())
    campaign = serializers.IntegerField(allow_null=True)
    snapshot = serializers.CharField(allow_null=True, help_text="Id of the human labels it was trained on.")
    training_labels = serializers.IntegerField(allow_null=True)
    cross_validation = serializers.JSONField(
        allow_null=True, help_text="precision, recall, f1, auc, kappa (the mean over folds), folds, k.")
    human_kappa = serializers.FloatField(allow_null=True, help_text="The human–human κ its κ is read beside.")
    labels = serializers.IntegerField()
    unreadable = serializers.IntegerField()
    requests = serializers.IntegerField()
    tokens = serializers.IntegerField()
    settings = serializers.JSONField()
    created_at = serializers.DateTimeField()


class MachineOverviewSerializer(serializers.Serializer):
    campaign = serializers.CharField()
    human_kappa = serializers.JSONField(help_text="The campaign's human–human κ now: kappa, pairs, reason.")
    llm = serializers.JSONField(help_text="The site's LLM judge: configured, endpoint, model (never the key).")
    sources = MachineSourceSerializer(many=True)
    jobs = MachineJobSerializer(many=True)


class TrainRequestSerializer(serializers.Serializer):
    learn_from = serializers.ChoiceField(choices=["campaign", "qrels"], default="campaign",
                                         help_text="The campaign's judgements, or a qrel set over one of its pools.")
    qrels = serializers.CharField(required=False, max_length=TEXT, help_text="With learn_from qrels: the qrel set.")
    pool = serializers.CharField(required=False, max_length=TEXT, help_text="With learn_from qrels: the pool.")
    topics = serializers.ListField(child=serializers.CharField(max_length=TEXT), max_length=MANY * 10, default=list)
    model = serializers.CharField(default=machine.BUNDLED_MODEL, max_length=300,
                                  help_text="features (default: logistic regression on rank, BM25 and encoder "
                                            "features), or a transformer to fine-tune: minilm (bundled), a Hugging "
                                            "Face name, or a model folder on the workers.")
    folds = serializers.IntegerField(min_value=2, max_value=20, default=5)
    epochs = serializers.IntegerField(min_value=1, max_value=50, default=1)
    max_length = serializers.IntegerField(min_value=8, max_value=512, default=256)
    batch_size = serializers.IntegerField(min_value=1, max_value=512, default=16)
    learning_rate = serializers.FloatField(min_value=1e-8, max_value=0.5, default=3e-5)
    threshold = serializers.IntegerField(min_value=0, max_value=10, default=1)
    max_examples = serializers.IntegerField(min_value=2, max_value=10_000_000, required=False, allow_null=True)
    name = serializers.CharField(required=False, allow_blank=True, max_length=TEXT)
    run_blind = serializers.BooleanField(default=False, help_text="The feature model reads no run's rank or score: "
                                         "for labels that fill qrels ranking those same runs.")


class LabelRequestSerializer(serializers.Serializer):
    annotator = serializers.IntegerField(min_value=1, max_value=2**31 - 1, help_text="One of the campaign's annotators.")
    pools = serializers.ListField(child=serializers.CharField(max_length=TEXT), min_length=1, max_length=MANY)
    include_judged = serializers.BooleanField(default=False)
    batch_size = serializers.IntegerField(min_value=1, max_value=10_000, default=256)


class ZeroShotRequestSerializer(serializers.Serializer):
    method = serializers.ChoiceField(choices=list(ZERO_SHOT), help_text="fusion: reciprocal-rank fusion of the pools' "
                                     "runs; encoder: the bundled encoder's cosine similarity of topic and passage.")
    pools = serializers.ListField(child=serializers.CharField(max_length=TEXT), min_length=1, max_length=MANY,
                                  help_text="The campaign's pools whose candidates it labels.")
    name = serializers.CharField(required=False, allow_blank=True, max_length=TEXT, help_text="Default METHOD-ID.")
    include_judged = serializers.BooleanField(default=False)
    batch_size = serializers.IntegerField(min_value=1, max_value=10_000, default=256)


class JudgeRequestSerializer(serializers.Serializer):
    pools = serializers.ListField(child=serializers.CharField(max_length=TEXT), max_length=MANY, default=list)
    topics = serializers.ListField(child=serializers.CharField(max_length=TEXT), max_length=MANY * 10, default=list)
    filter_queries = serializers.BooleanField(default=False, help_text="Keep the queries that describe a plot, drop those that only express a feeling.")
    limit = serializers.IntegerField(min_value=1, max_value=10_000_000, required=False, allow_null=True)
    max_requests = serializers.IntegerField(min_value=1, max_value=100_000_000, required=False, allow_null=True)
    max_tokens = serializers.IntegerField(min_value=1, max_value=10**12, required=False, allow_null=True)
    retry_errors = serializers.BooleanField(default=False)


class NuggetsRequestSerializer(serializers.Serializer):
    step = serializers.ChoiceField(choices=["assign", "suggest"], help_text="assign: each answer's support of each "
                                   "nugget of its topic's bank; suggest: each topic's atomic nuggets, vital or okay.")
    topics = serializers.ListField(child=serializers.CharField(max_length=TEXT), max_length=MANY * 10, default=list)
    limit = serializers.IntegerField(min_value=1, max_value=10_000_000, required=False, allow_null=True,
                                     help_text="At most this many (answer, nugget) labels, or topics.")
    max_requests = serializers.IntegerField(min_value=1, max_value=100_000_000, required=False, allow_null=True)
    max_tokens = serializers.IntegerField(min_value=1, max_value=10**12, required=False, allow_null=True)
    retry_errors = serializers.BooleanField(default=False)


def _campaign(request, name):
    return get_object_or_404(visible_campaigns(request), name=name)


def _refused(exc):
    return Response({"detail": exc.message, "field": exc.field}, status=status.HTTP_400_BAD_REQUEST)


def _started(job, request):
    machine.send(job, user=request.user)
    return Response(MachineJobSerializer(machine.job_status(job)).data, status=status.HTTP_202_ACCEPTED)


class MachineOverview(APIView):
    """A campaign's machine label sources with their figures (k-fold against people beside the human–human κ,
    labels, unreadable answers, spend) and its latest jobs.

    Who: organisers; a campaign token, its campaign.
    """

    permission_classes = [IsOrganiser]

    @extend_schema(summary="List a campaign's machine label sources and jobs",
                   responses={200: MachineOverviewSerializer})
    def get(self, request, name):
        campaign = _campaign(request, name)
        data = {
            "campaign": campaign.name, "human_kappa": machine.campaign_human_kappa(campaign.pk),
            "llm": machine.llm_configured(),
            "sources": [machine.source_summary(s) for s in machine.campaign_sources(campaign.pk)],
            "jobs": [machine.job_status(j) for j in machine.campaign_jobs(campaign.pk)[:50]],
        }
        return Response(MachineOverviewSerializer(data).data)


class MachineJobDetail(APIView):
    """One machine job of the campaign: progress, spend, time left, and its error.

    Who: organisers; a campaign token, its campaign.
    """

    permission_classes = [IsOrganiser]

    @extend_schema(summary="Get a machine job", responses={200: MachineJobSerializer})
    def get(self, request, name, id):
        campaign = _campaign(request, name)
        job_id = parse_id(id)
        if job_id is None:
            raise Http404("No such job.")
        job = get_object_or_404(machine.campaign_jobs(campaign.pk), pk=job_id)
        return Response(MachineJobSerializer(machine.job_status(job)).data)


class StartJob(APIView):
    """The machine endpoints' one shape: the campaign of the URL (a campaign token reaches its own only), the body
    checked by `request_serializer`, the service started by `start` (a refusal: 400 naming its field), 202 with the
    job, recorded as started by the caller. Subclasses give the serializer, `start` and their schema.

    Who: organisers; a campaign token, its campaign.
    """

    permission_classes = [IsOrganiser]
    parser_classes = [JSONParser]
    request_serializer = None

    def start(self, campaign, data):
        raise NotImplementedError

    def post(self, request, name):
        campaign = _campaign(request, name)
        form = self.request_serializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            job = self.start(campaign, form.validated_data)
        except machine.MachineInvalid as exc:
            return _refused(exc)
        return _started(job, request)


def _schema(summary, serializer):
    return extend_schema_view(post=extend_schema(summary=summary, request=serializer,
                                                 responses={202: MachineJobSerializer}))


@_schema("Train an auto-annotator", TrainRequestSerializer)
class StartTraining(StartJob):
    """Train an auto-annotator on the campaign's labels (or a qrel set over one of its pools): k-fold
    cross-validation first, then the classifier, in the background on the gpu queue (the CPU where none).

    Who: organisers; a campaign token, its campaign.
    """

    request_serializer = TrainRequestSerializer

    def start(self, campaign, data):
        from_campaign = data["learn_from"] == "campaign"
        return machine.train(
            campaign_id=campaign.pk if from_campaign else None, campaign_name=campaign.name,
            qrels=None if from_campaign else data.get("qrels", ""), pool=data.get("pool"), topics=data["topics"],
            model=data["model"], folds=data["folds"], epochs=data["epochs"], max_length=data["max_length"],
            batch_size=data["batch_size"], learning_rate=data["learning_rate"], threshold=data["threshold"],
            max_examples=data.get("max_examples"), name=data.get("name", ""), within=campaign.pk,
            run_blind=data["run_blind"],
        )


@_schema("Label pools with an annotator", LabelRequestSerializer)
class StartLabelling(StartJob):
    """Label the unjudged candidates of the campaign's pools with one of its trained annotators, in batches stored
    as they are made (a stopped job goes on where it stopped).

    Who: organisers; a campaign token, its campaign.
    """

    request_serializer = LabelRequestSerializer

    def start(self, campaign, data):
        return machine.label(data["annotator"], data["pools"], include_judged=data["include_judged"],
                             batch_size=data["batch_size"], within=campaign.pk)


@_schema("Label pools zero-shot", ZeroShotRequestSerializer)
class StartZeroShot(StartJob):
    """Make a zero-shot source (reciprocal-rank fusion of the pools' runs, or the bundled encoder's similarity: no
    human label needed, nothing trained) and label the campaign's pools with it, in the background; the top share
    of each topic's candidates by its score are labelled relevant. Its labels are a source of their own.

    Who: organisers; a campaign token, its campaign.
    """

    request_serializer = ZeroShotRequestSerializer

    def start(self, campaign, data):
        return machine.zero_shot(data["method"], data["pools"], name=data.get("name", ""),
                                 include_judged=data["include_judged"], batch_size=data["batch_size"],
                                 within=campaign.pk)


@_schema("Ask the LLM judge", JudgeRequestSerializer)
class StartJudging(StartJob):
    """Ask the site's LLM judge (LLM_JUDGE_BASE_URL and LLM_JUDGE_MODEL; nothing is sent without them) to grade the
    campaign's pools 0-3 with the campaign's prompt, or to keep or drop its queries; within the spend cap, and
    never asking twice what it has an answer to.

    Who: organisers; a campaign token, its campaign.
    """

    request_serializer = JudgeRequestSerializer

    def start(self, campaign, data):
        return machine.judge(
            pools=data["pools"], topics=data["topics"], campaign_settings=campaign.settings,
            filter_queries=data["filter_queries"], limit=data.get("limit"), max_requests=data.get("max_requests"),
            max_tokens=data.get("max_tokens"), retry_errors=data["retry_errors"], within=campaign.pk,
        )


@_schema("Ask the LLM for nugget assignments or suggestions", NuggetsRequestSerializer)
class StartNuggets(StartJob):
    """Ask the site's LLM (LLM_JUDGE_BASE_URL and LLM_JUDGE_MODEL; nothing is sent without them) about a nuggets
    campaign, as the AutoNuggetizer does: `assign` labels each answer's support of each nugget of its topic's bank,
    `suggest` lists each topic's atomic nuggets for the creation page. Within the spend cap, never asking twice what
    it has an answer to; the labels are a machine source of their own, never in the people's scores unless named.

    Who: organisers; a campaign token, its campaign.
    """

    request_serializer = NuggetsRequestSerializer

    def start(self, campaign, data):
        return llm_job(campaign, data)


class ImportLabelsSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="TSV `topic doc p`, TREC qrels of grades 0-3 (UMBRELA) or JSON lines "
                                           "{topic_id, doc_id, probs}; plain, gzip, bzip2 or xz.")
    name = serializers.CharField(max_length=TEXT, help_text="The source's name (not digits only).")
    format = serializers.ChoiceField(choices=machine_labels.FORMATS, default="auto")
    collection = serializers.CharField(max_length=TEXT, required=False, allow_blank=True,
                                       help_text="Default: the campaign's (its track's, or its pools').")
    model = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")
    prompt = serializers.CharField(max_length=machine_labels.MAX_PROMPT, required=False, allow_blank=True, default="",
                                   trim_whitespace=False)
    replace = serializers.BooleanField(default=False, help_text="Replace the labels of an imported source of this "
                                                                "name (its id kept).")


class ImportLabels(APIView):
    """Import an outside judge's labels (e.g. UMBRELA's) as the campaign's machine label source, as manage.py
    import_machine_labels does: checked whole (400 listing every problem with its line and field; nothing stored),
    stored as a source of kind `imported` with its provenance (model, prompt, file, who, when), never as human
    labels. 201 with the source (200 when `replace` replaced one); 413 for a file over the upload limit.

    Who: organisers; a campaign token, its campaign.
    """

    permission_classes = [IsOrganiser]
    parser_classes = [MultiPartParser, JSONParser]

    @extend_schema(summary="Import machine labels", request={"multipart/form-data": ImportLabelsSerializer},
                   responses={200: MachineSourceSerializer, 201: MachineSourceSerializer,
                              400: RejectionSerializer, 413: DetailSerializer})
    def post(self, request, name):
        campaign = _campaign(request, name)
        oversized = request_too_large(request, "a labels file")
        if oversized is not None:
            return oversized
        form = ImportLabelsSerializer(data=request.data)
        if not form.is_valid():
            return invalid_upload(form.errors)
        data, limit = form.validated_data, settings.API_MAX_UPLOAD_BYTES
        file = data["file"]
        if file.size > limit:
            return too_large(f"the file has {file.size:,} bytes; at most {limit:,} are taken")
        try:
            result = machine_labels.import_machine_labels(
                (file.name or "upload")[:TEXT], data["name"], collection_name=data.get("collection") or None,
                campaign_name=campaign.name, fmt=data["format"], model=data["model"], prompt=data["prompt"],
                user=request.user, replace=data["replace"], stream=file, size=file.size,
            )
        except ImportFailed as exc:
            return rejection(exc, what="The file")
        source = machine.campaign_sources(campaign.pk).get(pk=result.source.pk)
        return Response(MachineSourceSerializer(machine.source_summary(source)).data,
                        status=status.HTTP_200_OK if result.replaced else status.HTTP_201_CREATED)
