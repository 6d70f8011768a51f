"""Admin pages for corpora (collections, books, sentences, passages) and retrieval work (indexes, jobs, nodes)."""

from datetime import timedelta

from django.contrib import admin

from retrieval.models import Book, Collection, Index, Job, Passage, Sentence, Shard, WorkerNode


@admin.register(Collection)
class CollectionAdmin(admin.ModelAdmin):
    """Collections with their passage counts."""

    list_display = ["name", "title", "kind", "indexed_fields", "passages", "created_at"]
    list_filter = ["kind"]
    search_fields = ["name", "title", "description"]

    def get_queryset(self, request):
        return super().get_queryset(request).with_counts()

    @admin.display(ordering="passage_count", description="passages")
    def passages(self, obj):
        return obj.passage_count


@admin.register(Book)
class BookAdmin(admin.ModelAdmin):
    """Books with their sentence and chunk counts."""

    list_display = ["title", "slug", "sentence_count", "sentences_per_chunk", "chunks", "source_name"]
    search_fields = ["title", "slug"]
    readonly_fields = ["collection", "sentence_count", "sentences_per_chunk", "source_name", "created_at"]

    def get_queryset(self, request):
        from django.db.models import Count

        return super().get_queryset(request).annotate(chunk_count=Count("chunks"))

    @admin.display(ordering="chunk_count", description="chunks")
    def chunks(self, obj):
        return obj.chunk_count


@admin.register(Sentence)
class SentenceAdmin(admin.ModelAdmin):
    """Sentences of books, in reading order."""

    list_display = ["book", "index", "paragraph", "text"]
    list_filter = ["book"]
    search_fields = ["text"]
    list_select_related = ["book"]
    show_full_result_count = False


@admin.register(Passage)
class PassageAdmin(admin.ModelAdmin):
    """Passages: search by id or text, filter by collection."""

    list_display = ["external_id", "collection", "title", "short_text", "first_sentence", "last_sentence"]
    list_filter = ["collection"]
    search_fields = ["external_id", "title", "text"]
    list_select_related = ["collection"]
    raw_id_fields = ["book"]
    show_full_result_count = False

    @admin.display(description="text")
    def short_text(self, obj):
        return obj.text[:120] + ("…" if len(obj.text) > 120 else "")


@admin.register(Index)
class IndexAdmin(admin.ModelAdmin):
    """Persisted BM25 and dense indexes, one per collection and configuration."""

    list_display = ["collection", "kind", "model", "status", "passage_count", "dimension", "built_at"]
    list_filter = ["kind", "status"]
    readonly_fields = [f.name for f in Index._meta.fields]
    list_select_related = ["collection"]

    @admin.display(description="model")
    def model(self, obj):
        return obj.config.get("model", "")


class ShardInline(admin.TabularInline):
    model = Shard
    fields = ["number", "status", "items", "worker", "attempts", "seconds", "error"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    """Retrieval jobs with their progress (shards done, passages/s, ETA) and why a failed one failed."""

    list_display = ["__str__", "status", "shards", "items", "speed", "eta", "short_error", "updated_at"]
    list_filter = ["status", "kind", "gpu"]
    readonly_fields = [f.name for f in Job._meta.fields if f.name != "params"] + ["eta"]
    exclude = ["params"]
    inlines = [ShardInline]
    actions = ["resume"]
    list_select_related = ["collection"]

    @admin.display(description="shards")
    def shards(self, obj):
        return f"{obj.shards_done}/{obj.shard_count}"

    @admin.display(description="items")
    def items(self, obj):
        return f"{obj.items_done:,}/{obj.items_total:,}"

    @admin.display(description="per second")
    def speed(self, obj):
        return f"{obj.rate:,.1f}" if obj.rate else "–"

    @admin.display(description="ETA")
    def eta(self, obj):
        seconds = obj.eta_seconds
        if seconds is None or obj.status in (Job.Status.DONE, Job.Status.FAILED):
            return "–"
        return str(timedelta(seconds=round(seconds)))

    @admin.display(description="error")
    def short_error(self, obj):
        return obj.error.splitlines()[0][:120] if obj.error else ""

    @admin.action(description="Resume the selected jobs (failed or stuck shards are done again)")
    def resume(self, request, queryset):
        from retrieval.tasks import resume_job

        count = 0
        for job in queryset.exclude(status=Job.Status.DONE):
            resume_job.delay(job.pk)
            count += 1
        self.message_user(request, f"{count} job(s) sent to be resumed.")


@admin.register(Shard)
class ShardAdmin(admin.ModelAdmin):
    """Shards of retrieval jobs: who holds or did each, how long it took, why it failed."""

    list_display = ["__str__", "status", "items", "worker", "attempts", "seconds", "heartbeat_at"]
    list_filter = ["status", "job__kind"]
    search_fields = ["worker", "error"]
    readonly_fields = [f.name for f in Shard._meta.fields if f.name != "result"]
    exclude = ["result"]
    list_select_related = ["job"]


@admin.register(WorkerNode)
class WorkerNodeAdmin(admin.ModelAdmin):
    """Celery worker nodes by name: when each last started and whether it then stopped cleanly (read-only)."""

    list_display = ["name", "started_at", "stopped_at", "life"]
    search_fields = ["name"]
    readonly_fields = ["name", "started_at", "stopped_at"]

    @admin.display(description="Life")
    def life(self, node):
        if node.stopped_at:
            return "stopped cleanly"
        return "running, or died (its next start sends its work again)"

    def has_add_permission(self, request):
        return False
