"""Serializers of the REST API: request validation and the JSON shapes of campaigns, topics, runs and pools."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation import importers
from annotation.models import Campaign
from annotation.services.submissions import RunFormat, passages_allowed, run_format, runs_allowed
from assessments.exporters.machine import SOURCES as QRELS_SOURCES
from assessments.exporters.qrels import AGGREGATES, LEVELS, TIES
from assessments.models import Pool, Topic
from config.ids import ID_MAX
from retrieval import fusion as fusion_rules


TOPIC_OPTIONS = {o.name: o for o in importers.get("topics").options}  # the topics importer's registration


class ProblemSerializer(serializers.Serializer):
    """One thing wrong with an upload, and where."""

    line = serializers.IntegerField(allow_null=True, help_text="Line of the file (1 is the first), if any.")
    field = serializers.CharField(allow_null=True, help_text="Column or JSON field, if any.")
    message = serializers.CharField()


class RejectionSerializer(serializers.Serializer):
    """A rejected upload: nothing was stored."""

    detail = serializers.CharField()
    total = serializers.IntegerField(help_text="How many problems there are; `problems` lists the first ones.")
    problems = ProblemSerializer(many=True)


class DetailSerializer(serializers.Serializer):
    """An error with a message."""

    detail = serializers.CharField()


# --- campaigns and topics --------------------------------------------------------------------------------------


class CampaignSerializer(serializers.ModelSerializer):
    """A campaign, and what it takes from participants."""

    accepts_runs = serializers.SerializerMethodField(help_text="Whether runs can be uploaded to it.")
    run_format = serializers.SerializerMethodField(help_text="`car-y3` (JSON lines) or `trec` (six columns).")
    collection = serializers.SerializerMethodField()
    topic_count = serializers.IntegerField(read_only=True)
    max_runs = serializers.SerializerMethodField(help_text="Runs one participant may upload.")
    max_per_topic = serializers.SerializerMethodField(help_text="Passages a run may give one topic.")

    class Meta:
        model = Campaign
        fields = ["name", "title", "task", "accepts_runs", "run_format", "collection", "topic_count", "max_runs",
                  "max_per_topic"]

    def _track(self, campaign):
        return getattr(campaign, "track", None)

    def get_accepts_runs(self, campaign) -> bool:
        return self._track(campaign) is not None

    @extend_schema_field(serializers.ChoiceField(choices=[RunFormat.TREC, RunFormat.CAR_Y3]))
    def get_run_format(self, campaign):
        return run_format(campaign)

    @extend_schema_field(OpenApiTypes.STR)
    def get_collection(self, campaign):
        track = self._track(campaign)
        return track.collection.name if track else None

    @extend_schema_field(OpenApiTypes.INT)
    def get_max_runs(self, campaign):
        track = self._track(campaign)
        return runs_allowed(track) if track else None

    @extend_schema_field(OpenApiTypes.INT)
    def get_max_per_topic(self, campaign):
        track = self._track(campaign)
        return passages_allowed(track) if track else None


class FacetSerializer(serializers.Serializer):
    """A heading of an outline topic."""

    heading_id = serializers.CharField()
    heading = serializers.CharField()


class TopicSerializer(serializers.ModelSerializer):
    """A topic as participants see it: no gold article, no ground truth, no assessor notes."""

    id = serializers.CharField(source="external_id", help_text="The id runs use (TREC column 1, CAR squid).")
    facets = FacetSerializer(many=True, read_only=True)

    class Meta:
        model = Topic
        fields = ["id", "kind", "title", "text", "facets"]


# --- runs ------------------------------------------------------------------------------------------------------


class CampaignField(serializers.SlugRelatedField):
    """A campaign named in a request. The choices the browsable API's form lists are the campaigns the caller may see
    (annotation.api.common.visible_campaigns: a token's own campaign, a participant's that take runs): the form listed
    every campaign's name. Validation still finds any campaign, so that the view says why another is refused."""

    def __init__(self, **kwargs):
        kwargs.setdefault("slug_field", "name")
        kwargs.setdefault("error_messages", {"does_not_exist": "No campaign named '{value}'."})
        super().__init__(**kwargs)

    def get_choices(self, cutoff=None):
        request = self.context.get("request")
        if request is None:
            return {}
        from annotation.api.common import visible_campaigns

        queryset = visible_campaigns(request)
        if cutoff is not None:
            queryset = queryset[:cutoff]
        return {self.to_representation(item): self.display_value(item) for item in queryset}


class RunUploadSerializer(serializers.Serializer):
    """A run file for a campaign: TREC six columns or CAR Y3 JSON lines, plain or gzip."""

    campaign = CampaignField(
        queryset=Campaign.objects.select_related("track"),
        help_text="Name of the campaign (track) the run is for; its task decides the format.",
    )
    file = serializers.FileField(
        allow_empty_file=True, help_text="The run file, plain text or gzip; UTF-8, a BOM and CRLF are fine."
    )

    def validate_campaign(self, campaign):
        if getattr(campaign, "track", None) is None:
            raise serializers.ValidationError(f"Campaign {campaign.name!r} takes no runs.")
        return campaign


class TopicUploadSerializer(serializers.Serializer):
    """A topics file for an ad hoc campaign."""

    file = serializers.FileField(allow_empty_file=True, help_text="The topics file; plain, gzip, bzip2 or xz; UTF-8.")
    format = serializers.ChoiceField(choices=TOPIC_OPTIONS["format"].choices, default=TOPIC_OPTIONS["format"].default,
                                     help_text=TOPIC_OPTIONS["format"].help)
    update = serializers.BooleanField(default=False, help_text=TOPIC_OPTIONS["update"].help)


class TopicUploadResultSerializer(serializers.Serializer):
    """What a topics upload did."""

    summary = serializers.CharField(help_text="The importer's summary: topics imported and updated.")
    added_to_campaign = serializers.IntegerField(help_text="Topics new to the campaign.")


class RunSerializer(serializers.Serializer):
    """A run: one uploaded file (or an imported or retrieved run, for organisers)."""

    id = serializers.IntegerField()
    name = serializers.CharField(help_text="The run tag (TREC column 6, CAR run_id).")
    campaign = serializers.CharField(source="track", help_text="The campaign it was uploaded to ('' if none).")
    collection = serializers.CharField(source="collection.name")
    owner = serializers.CharField(source="owner.username", allow_null=True, default=None)
    source = serializers.CharField()
    topic_count = serializers.IntegerField(help_text="Topics it ranks (a run of answers: topics it answers).")
    entry_count = serializers.IntegerField(help_text="Ranked entries (a run of answers: its answers).")
    answer_count = serializers.IntegerField(help_text="Generated answers (TREC RAG), 0 for a ranking.")
    pooled = serializers.BooleanField(help_text="A pool uses it, so it can no longer be deleted.")
    created_at = serializers.DateTimeField()


# --- pools -----------------------------------------------------------------------------------------------------


class PoolCreateSerializer(serializers.Serializer):
    """A pool of a campaign's runs over its topics (or some of them)."""

    name = serializers.SlugField(max_length=100)
    campaign = CampaignField(queryset=Campaign.objects.all())
    runs = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=ID_MAX), min_length=1, max_length=10000,
        help_text="Run ids.",
    )
    topics = serializers.ListField(
        child=serializers.CharField(max_length=200), required=False, default=list, max_length=100000,
        help_text="Topic ids (default: all of the campaign's topics).",
    )
    strategy = serializers.ChoiceField(
        choices=[Pool.Strategy.UNION, Pool.Strategy.RRF], default=Pool.Strategy.UNION,
        help_text="union: TREC depth-k pooling; rrf: the runs' top k fused (see fusion). Pools from our own "
                  "retrievers are made with manage.py build_pool.",
    )
    depth = serializers.IntegerField(min_value=1, max_value=100000, default=20, help_text="k: how deep into each run.")
    per_topic = serializers.IntegerField(
        min_value=1, max_value=100000, required=False, allow_null=True, default=None,
        help_text="At most this many candidates a topic.",
    )
    fusion = serializers.ChoiceField(choices=fusion_rules.METHODS, default="rrf", help_text="For strategy rrf.")
    normalisation = serializers.ChoiceField(
        choices=fusion_rules.NORMALISATIONS, default="minmax", help_text="Score normalisation for combsum/combmnz."
    )


class PoolSerializer(serializers.ModelSerializer):
    """A pool and how far its build is."""

    collection = serializers.CharField(source="collection.name")
    campaigns = serializers.SlugRelatedField(slug_field="name", many=True, read_only=True)
    runs = serializers.PrimaryKeyRelatedField(many=True, read_only=True)
    topic_count = serializers.IntegerField(read_only=True)
    run_count = serializers.IntegerField(source="run_total", read_only=True)  # as the console: our retrievers' runs too
    candidate_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Pool
        fields = ["name", "collection", "campaigns", "strategy", "depth", "per_topic", "status", "error", "runs",
                  "topic_count", "run_count", "candidate_count", "created_at", "built_at"]


class CandidateSourceSerializer(serializers.Serializer):
    """A run that brought a candidate, and at what rank."""

    run = serializers.IntegerField(source="run_id")
    run_name = serializers.CharField(source="run.name")
    rank = serializers.IntegerField()
    score = serializers.FloatField(allow_null=True)


class CandidateSerializer(serializers.Serializer):
    """A passage to judge for a topic of the pool."""

    topic = serializers.CharField(source="topic.external_id")
    passage = serializers.CharField(source="passage.external_id")
    rank = serializers.IntegerField()
    sources = CandidateSourceSerializer(many=True)


# --- results ---------------------------------------------------------------------------------------------------


class QrelsQuerySerializer(serializers.Serializer):
    """The options of `manage.py export_qrels`, as query parameters."""

    collection = serializers.CharField(required=False, max_length=100)
    campaign = serializers.CharField(required=False, max_length=100,
                                     help_text="Only the labels made in this campaign (default: every human label).")
    pool = serializers.CharField(required=False, max_length=100)
    topic = serializers.ListField(child=serializers.CharField(max_length=200), required=False, default=list)
    assessor = serializers.CharField(required=False, max_length=150)
    aggregate = serializers.ChoiceField(choices=AGGREGATES, required=False)
    ties = serializers.ChoiceField(choices=TIES, required=False,
                                   help_text="Where majority sends a tie: higher (default) or lower grade.")
    level = serializers.ChoiceField(choices=LEVELS, required=False)
    qrel_set = serializers.CharField(required=False, max_length=100)
    source = serializers.ChoiceField(choices=QRELS_SOURCES, required=False,
                                     help_text="human (default), machine, or filled (human, machine where no human judged).")
    machine_source = serializers.CharField(required=False, max_length=200,
                                           help_text="The machine label source (id or name) for machine or filled.")

    def validate(self, attrs):
        if attrs.get("qrel_set") and any(attrs.get(option) for option in ("assessor", "aggregate", "level", "ties")):
            raise serializers.ValidationError(
                "qrel_set exports a stored set as it is: no assessor, aggregate, level, ties.")
        if attrs.get("aggregate") == "one" and not attrs.get("assessor"):
            raise serializers.ValidationError("aggregate=one needs an assessor.")
        return attrs


class MeSerializer(serializers.Serializer):
    """Who the API takes the caller for."""

    username = serializers.CharField()
    role = serializers.CharField(allow_null=True, help_text="participant, organiser, or null (no API access).")
    campaign = serializers.CharField(allow_null=True, help_text="The campaign the token is limited to, if any.")
    token = serializers.CharField(allow_null=True, help_text="The token's prefix (null in a browser session).")
