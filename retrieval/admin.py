"""Admin pages for corpora: collections, books, sentences, passages."""

from django.contrib import admin

from retrieval.models import Book, Collection, Passage, Sentence


@admin.register(Collection)
class CollectionAdmin(admin.ModelAdmin):
    """Collections with their passage counts."""

    list_display = ["name", "title", "kind", "passages", "created_at"]
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
