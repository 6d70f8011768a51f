"""Admin pages for the test collection, usable by organisers: search, filters, counts."""

from django import forms
from django.contrib import admin

from assessments.models import (
    Answer,
    AnswerCitation,
    AnswerSentence,
    CandidateSource,
    Facet,
    Judgement,
    JudgementChange,
    MachineJob,
    MachineLabel,
    MachineLabelSource,
    Pool,
    PoolCandidate,
    Qrel,
    QrelSet,
    Run,
    RunEntry,
    StudyItem,
    Topic,
)


class FacetInline(admin.TabularInline):
    model = Facet
    extra = 0
    fields = ["position", "heading_id", "heading", "notes"]


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    """Topics with facet, run-entry and ground-truth counts."""

    list_display = ["external_id", "title", "kind", "collection", "facets", "entries", "ground_truth_chunks"]
    list_filter = ["kind", "collection"]
    search_fields = ["external_id", "title", "text"]
    list_select_related = ["collection"]
    inlines = [FacetInline]
    raw_id_fields = ["book"]
    filter_horizontal = []
    autocomplete_fields = ["ground_truth"]

    def get_queryset(self, request):
        return super().get_queryset(request).with_counts()

    @admin.display(ordering="facet_count")
    def facets(self, obj):
        return obj.facet_count

    @admin.display(ordering="entry_count", description="run entries")
    def entries(self, obj):
        return obj.entry_count

    @admin.display(ordering="ground_truth_count", description="ground truth")
    def ground_truth_chunks(self, obj):
        return obj.ground_truth_count


@admin.register(Facet)
class FacetAdmin(admin.ModelAdmin):
    """Facets (outline headings) in order."""

    list_display = ["heading", "heading_id", "topic", "position"]
    search_fields = ["heading", "heading_id", "topic__external_id"]
    list_select_related = ["topic"]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    """Runs with entry and topic counts."""

    list_display = ["name", "collection", "source", "owner", "track", "topics", "entries", "created_at"]
    list_filter = ["source", "collection", "track"]
    search_fields = ["name", "description", "owner__username"]
    list_select_related = ["collection", "owner"]

    def get_queryset(self, request):
        return super().get_queryset(request).with_counts()

    @admin.display(ordering="topic_count")
    def topics(self, obj):
        return obj.topic_count

    @admin.display(ordering="entry_count")
    def entries(self, obj):
        return obj.entry_count


@admin.register(RunEntry)
class RunEntryAdmin(admin.ModelAdmin):
    """Ranked entries of runs."""

    list_display = ["run", "topic", "rank", "passage", "score"]
    list_filter = ["run"]
    search_fields = ["topic__external_id", "passage__external_id", "run__name"]
    list_select_related = ["run", "topic", "passage"]
    raw_id_fields = ["passage", "topic"]
    show_full_result_count = False


class CandidateSourceInline(admin.TabularInline):
    model = CandidateSource
    extra = 0
    readonly_fields = ["run", "rank", "score"]


class PoolForm(forms.ModelForm):
    """A pool checked as the services check it: its topics and runs belong to its collection."""

    class Meta:
        model = Pool
        fields = "__all__"

    def clean(self):
        data = super().clean()
        collection = data.get("collection")
        if collection is None:
            return data
        for field, name in (("topics", "external_id"), ("runs", "name")):
            outside = [getattr(o, name) for o in data.get(field) or [] if o.collection_id != collection.pk]
            if outside:
                self.add_error(field, f"not of collection {collection.name!r}: {', '.join(outside[:10])}")
        if not data.get("topics"):
            self.add_error("topics", "choose the topics to pool")
        return data


@admin.register(Pool)
class PoolAdmin(admin.ModelAdmin):
    """Pools with their status and counts."""

    form = PoolForm
    list_display = ["name", "collection", "strategy", "depth", "per_topic", "status", "topic_total", "runs_used", "candidates"]
    list_filter = ["status", "strategy", "collection"]
    search_fields = ["name"]
    filter_horizontal = ["topics", "runs"]
    readonly_fields = ["status", "error", "built_at", "created_at"]
    actions = ["build", "download_page_qrels", "download_section_qrels"]

    def get_queryset(self, request):
        return super().get_queryset(request).with_counts()

    @admin.action(description="Download qrels of the selected pool (page level, majority of assessors)")
    def download_page_qrels(self, request, queryset):
        return self._qrels_response(request, queryset, "page")

    @admin.action(description="Download qrels of the selected pool (section level, majority of assessors)")
    def download_section_qrels(self, request, queryset):
        return self._qrels_response(request, queryset, "section")

    def _qrels_response(self, request, queryset, level):
        """Stream the pool's qrels as a file, as `export_qrels --pool NAME --level LEVEL` writes them (one service)."""
        from itertools import chain

        from django.contrib import messages
        from django.http import StreamingHttpResponse

        from assessments.exporters.common import ExportFailed
        from assessments.services.qrels import QrelsRequest, qrels_text

        if queryset.count() != 1:
            self.message_user(request, "Select exactly one pool to download its qrels.", messages.WARNING)
            return None
        pool = queryset.get()
        try:
            lines = qrels_text(QrelsRequest(pool=pool.name, aggregate="majority", level=level))
            first = next(lines, None)
        except ExportFailed as exc:
            self.message_user(request, f"No qrels for pool {pool.name}: {exc}", messages.WARNING)
            return None
        if first is None:
            self.message_user(request, f"Pool {pool.name} has no judgements yet.", messages.WARNING)
            return None
        response = StreamingHttpResponse(chain([first], lines), content_type="text/plain; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{pool.name}-{level}.qrels"'
        return response

    @admin.display(ordering="topic_count", description="topics")
    def topic_total(self, obj):
        return obj.topic_count

    @admin.display(ordering="run_count", description="runs")
    def runs_used(self, obj):
        return obj.run_total

    @admin.display(ordering="candidate_count")
    def candidates(self, obj):
        return obj.candidate_count

    @admin.action(description="Build the selected pools")
    def build(self, request, queryset):
        from django.conf import settings

        from assessments.tasks import queue_build

        pools = list(queryset)
        for pool in pools:
            queue_build(pool.pk)
        if settings.CELERY_TASK_ALWAYS_EAGER:
            self.message_user(request, f"Building {len(pools)} pool(s) in this process: the list shows each "
                                       "one's status and candidates when the page reloads.")
        else:
            self.message_user(request, f"Queued {len(pools)} pool build(s) for the workers: the list shows each "
                                       "one's status (building, ready or failed with the reason).")


@admin.register(PoolCandidate)
class PoolCandidateAdmin(admin.ModelAdmin):
    """Pool candidates with the runs that brought them."""

    list_display = ["pool", "topic", "rank", "passage", "score"]
    list_filter = ["pool"]
    search_fields = ["topic__external_id", "passage__external_id"]
    list_select_related = ["pool", "topic", "passage"]
    raw_id_fields = ["passage", "topic"]
    inlines = [CandidateSourceInline]
    show_full_result_count = False


@admin.register(Judgement)
class JudgementAdmin(admin.ModelAdmin):
    """Current judgement values; history is read-only."""

    list_display = ["assessor", "layer", "topic", "passage", "passage2", "value", "grade", "client_time"]
    list_filter = ["layer", "assessor", "topic__collection"]
    search_fields = ["topic__external_id", "passage__external_id", "assessor__username"]
    list_select_related = ["assessor", "topic", "passage", "passage2"]
    readonly_fields = [f.name for f in Judgement._meta.fields]
    show_full_result_count = False

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(JudgementChange)
class JudgementChangeAdmin(admin.ModelAdmin):
    """Every change ever made, never edited."""

    list_display = ["assessor", "layer", "value", "client_time", "received_at", "session_id", "run_ids", "source", "active_ms"]
    list_filter = ["layer", "source", "assessor"]
    search_fields = ["assessor__username", "session_id", "change_id"]
    list_select_related = ["assessor"]
    readonly_fields = [f.name for f in JudgementChange._meta.fields]
    show_full_result_count = False

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(QrelSet)
class QrelSetAdmin(admin.ModelAdmin):
    """Qrel sets with counts."""

    list_display = ["name", "collection", "qrels", "topics", "created_at"]
    list_filter = ["collection"]
    search_fields = ["name", "description"]

    def get_queryset(self, request):
        return super().get_queryset(request).with_counts()

    @admin.display(ordering="qrel_count")
    def qrels(self, obj):
        return obj.qrel_count

    @admin.display(ordering="topic_count")
    def topics(self, obj):
        return obj.topic_count


@admin.register(Qrel)
class QrelAdmin(admin.ModelAdmin):
    """Individual qrels."""

    list_display = ["qrel_set", "topic", "passage", "subtopic", "grade"]
    list_filter = ["qrel_set", "grade"]
    search_fields = ["topic__external_id", "passage__external_id"]
    list_select_related = ["qrel_set", "topic", "passage"]
    raw_id_fields = ["topic", "passage"]
    show_full_result_count = False


@admin.register(CandidateSource)
class CandidateSourceAdmin(admin.ModelAdmin):
    """Provenance of pool candidates: which run brought which passage at which rank."""

    list_display = ["candidate", "run", "rank", "score"]
    list_filter = ["run", "candidate__pool"]
    search_fields = ["run__name", "candidate__passage__external_id", "candidate__topic__external_id"]
    list_select_related = ["run", "candidate__pool", "candidate__topic", "candidate__passage"]
    raw_id_fields = ["candidate"]
    show_full_result_count = False


@admin.register(StudyItem)
class StudyItemAdmin(admin.ModelAdmin):
    """Human-study items: forced-choice sets and passage pairs to rate."""

    list_display = ["pool", "kind", "key", "topic", "answer", "retriever_choice", "similarity"]
    list_filter = ["kind", "pool"]
    search_fields = ["key", "topic__external_id"]
    list_select_related = ["pool", "topic", "answer", "retriever_choice"]
    raw_id_fields = ["topic", "answer", "retriever_choice", "passage", "passage2", "run"]
    filter_horizontal = ["candidates"]
    show_full_result_count = False


class ReadOnly:
    """Machine records are made by the commands and jobs, never by hand: viewable, not editable."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(MachineLabelSource)
class MachineLabelSourceAdmin(ReadOnly, admin.ModelAdmin):
    """Machine label sources (annotators, LLM judges): model, checksum, settings, training snapshot, figures."""

    list_display = ["name", "kind", "model", "collection", "campaign_id", "status", "kappa", "created_at"]
    list_filter = ["kind", "status", "collection"]
    search_fields = ["name", "model"]
    list_select_related = ["collection"]

    @admin.display(description="cross-validation κ")
    def kappa(self, obj):
        value = (obj.metrics or {}).get("kappa")
        return "–" if value is None else f"{value:.3f}"


@admin.register(MachineLabel)
class MachineLabelAdmin(ReadOnly, admin.ModelAdmin):
    """Machine labels, with the raw answer and the error of an unreadable one."""

    list_display = ["source", "topic", "passage", "grade", "score", "error", "in_training", "created_at"]
    list_filter = ["source", "grade", "in_training"]
    search_fields = ["topic__external_id", "passage__external_id", "error"]
    list_select_related = ["source", "topic", "passage"]
    raw_id_fields = ["topic", "passage"]
    show_full_result_count = False


@admin.register(MachineJob)
class MachineJobAdmin(ReadOnly, admin.ModelAdmin):
    """Training, labelling and LLM jobs: progress, time left, errors, spend."""

    list_display = ["__str__", "status", "progress", "created_at", "finished_at"]
    list_filter = ["kind", "status"]
    list_select_related = ["source"]

    @admin.display(description="progress")
    def progress(self, obj):
        return obj.progress_line()


@admin.register(Answer)
class AnswerAdmin(ReadOnly, admin.ModelAdmin):
    """Generated answers (TREC RAG), as import_rag_answers and the answers upload stored them: read-only."""

    list_display = ["id", "run", "topic", "campaign_id", "response_length", "created_at"]
    list_filter = ["campaign_id"]
    search_fields = ["topic__external_id", "run__name"]
    list_select_related = ["run", "topic"]


@admin.register(AnswerSentence)
class AnswerSentenceAdmin(ReadOnly, admin.ModelAdmin):
    """An answer's sentences in order."""

    list_display = ["answer", "position", "text"]
    search_fields = ["text"]
    list_select_related = ["answer"]


@admin.register(AnswerCitation)
class AnswerCitationAdmin(ReadOnly, admin.ModelAdmin):
    """A sentence's citations: the reference index and the passage it names."""

    list_display = ["sentence", "position", "reference", "passage"]
    search_fields = ["passage__external_id"]
    list_select_related = ["sentence", "passage"]
