"""Corpora: collections of passages, and books split into sentences and chunks.

This layer knows nothing of topics, pools or people: text in, ranked passage ids out.
"""

from django.db import models
from django.db.models import Count


class CollectionQuerySet(models.QuerySet):
    def with_counts(self):
        """Annotate each collection with its number of passages."""
        return self.annotate(passage_count=Count("passages", distinct=True))


class Collection(models.Model):
    """A corpus that passages belong to (CAR paragraphs, a book's chunks, Cranfield abstracts)."""

    class Kind(models.TextChoices):
        PASSAGES = "passages", "Passages"
        BOOK = "book", "Book chunks"
        DOCUMENTS = "documents", "Documents"

    class Fields(models.TextChoices):
        """What retrievers index of each passage (and re-rankers read)."""

        TITLE_TEXT = "title+text", "Title and text"
        TEXT = "text", "Text (the title when there is no text)"
        TITLE = "title", "Title (the text when there is no title)"

    name = models.SlugField(max_length=100, unique=True, help_text="Short unique name, used on the command line.")
    title = models.CharField(max_length=300, blank=True)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.PASSAGES)
    indexed_fields = models.CharField(
        max_length=20, choices=Fields.choices, default=Fields.TITLE_TEXT,
        help_text="Which fields of its passages retrievers index: title and text (as published Cranfield figures "
        "use), text alone, or title alone. Changing it makes new indexes; runs record it.",
    )
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = CollectionQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Book(models.Model):
    """A book split into sentences; its chunks are passages of the book's collection."""

    collection = models.OneToOneField(Collection, on_delete=models.CASCADE, related_name="book")
    slug = models.SlugField(max_length=100, unique=True)
    title = models.CharField(max_length=300)
    sentences_per_chunk = models.PositiveSmallIntegerField(default=3)
    sentence_count = models.PositiveIntegerField(default=0)
    source_name = models.CharField(max_length=300, blank=True, help_text="File the text was read from.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["title"]

    def __str__(self):
        return self.title


class Sentence(models.Model):
    """One sentence of a book, numbered from 0 in reading order."""

    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="sentences")
    index = models.PositiveIntegerField()
    paragraph = models.PositiveIntegerField(help_text="Index of the paragraph the sentence belongs to.")
    text = models.TextField(help_text="The sentence with the file's markup removed (retrieval.markup).")
    source_start = models.PositiveIntegerField(null=True, blank=True, help_text="Offset of its first character in the file.")
    source_end = models.PositiveIntegerField(null=True, blank=True, help_text="Offset just after its last character.")
    source_map = models.JSONField(
        default=list, blank=True,
        help_text="[[i, offset], …]: character j of the text is at offset + (j − i) in the file, for the last i ≤ j.",
    )
    emphasis = models.JSONField(default=list, blank=True, help_text="[[start, end], …] of the text: italics in the file.")

    class Meta:
        ordering = ["book", "index"]
        constraints = [models.UniqueConstraint(fields=["book", "index"], name="unique_sentence_index")]

    def __str__(self):
        return f"{self.book.slug}#{self.index}"


class PassageQuerySet(models.QuerySet):
    def in_collection(self, name):
        """Passages of the collection with this name."""
        return self.filter(collection__name=name)

    def by_external_ids(self, collection, external_ids):
        """A dict external id → passage for the ids that exist in `collection`."""
        found = {}
        ids = list(external_ids)
        for start in range(0, len(ids), 500):
            for passage in self.filter(collection=collection, external_id__in=ids[start : start + 500]):
                found[passage.external_id] = passage
        return found


class Passage(models.Model):
    """A retrievable unit of text: a paragraph, a document, or a chunk of consecutive book sentences."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="passages")
    external_id = models.CharField(max_length=200, help_text="The id used in runs and qrels (e.g. CAR para_id).")
    title = models.CharField(max_length=500, blank=True)
    text = models.TextField(blank=True)
    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="chunks", null=True, blank=True)
    first_sentence = models.PositiveIntegerField(null=True, blank=True)
    last_sentence = models.PositiveIntegerField(null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = PassageQuerySet.as_manager()

    class Meta:
        ordering = ["collection", "id"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "external_id"], name="unique_passage_external_id"),
            models.CheckConstraint(
                condition=models.Q(book__isnull=True)
                | models.Q(first_sentence__isnull=False, last_sentence__gte=models.F("first_sentence")),
                name="chunk_sentence_range",
            ),
        ]
        indexes = [models.Index(fields=["book", "first_sentence"], name="passage_book_position")]

    def __str__(self):
        return self.external_id

    @property
    def position(self) -> float | None:
        """A chunk's position in its book: the mean of its sentence indices (seed 000, N-RODCG)."""
        if self.first_sentence is None or self.last_sentence is None:
            return None
        return (self.first_sentence + self.last_sentence) / 2
