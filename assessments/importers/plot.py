"""Plot-retrieval queries (PlotRetrieval, seed 000): JSON lines, checked whole, then written in one transaction.

Each line is an object with `query_id`, `book` (the slug of an imported book),
`query` (the reader's description) and optionally `ground_truth_text`, a
verbatim span of the book. Each line becomes a PLOT Topic in the book's
collection; its ground truth is every chunk the span overlaps (a span may cross
sentence and chunk boundaries).

The span is matched after normalising both sides: curly quotes become straight
ones (the sample queries are typed with straight quotes, the books use curly
ones) and runs of whitespace become one space (stored sentences have their
hard-wrapped lines joined). The books' Gutenberg markup is removed from their
sentences (retrieval.markup), and from the span too, so `now` and `_now_` both
match the italic word. A match must begin and end at word boundaries, so
"men." does not match inside "women.". A span found nowhere, or more than once,
is a problem. Where the book's sentences know their place in the file, the
topic's metadata `ground_truth_source` is the span's [start, end) in the book's
file (offsets into the text as read, markup included).
"""

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction

from assessments.models import Topic
from retrieval.ingest import ImportFailed, Problems, parse_json_lines, read_text
from retrieval.markup import clean_span, to_source
from retrieval.models import Book, Passage, Sentence

BATCH_SIZE = 1000
MAX_EXTERNAL_ID = 200  # Topic.external_id
TITLE_LENGTH = 80
SHOWN_PLACES = 5  # chunks named in an "ambiguous" problem

_QUOTES = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"', "‟": '"'})
_SPACE = re.compile(r"\s+")


def no_progress(iterable=None, **kwargs):
    """Stand-in for ImportCommand.progress when no bar is wanted."""
    return iterable


def normalise(text: str) -> str:
    """Curly quotes made straight and whitespace collapsed to single spaces, for matching ground-truth spans."""
    return _SPACE.sub(" ", text.translate(_QUOTES)).strip()


def short_title(query: str, limit: int = TITLE_LENGTH) -> str:
    """A topic title from a query: the query itself when short, else its first words up to `limit` characters + '…'."""
    query = _SPACE.sub(" ", query).strip()
    if len(query) <= limit:
        return query
    cut = query[: limit - 1]
    if query[limit - 1] != " " and " " in cut:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:.-") + "…"


@dataclass(frozen=True)
class Chunk:
    id: int
    external_id: str
    first_sentence: int
    last_sentence: int


class BookText:
    """A book's sentences as one normalised string, with the map from character offsets back to sentences and chunks."""

    def __init__(self, book: Book):
        self.book = book
        pieces, self.starts, self.source_maps = [], [], []
        offset = 0
        rows = Sentence.objects.filter(book=book).order_by("index").values_list("text", "source_map")
        for text, source_map in rows:
            piece = normalise(text)
            self.starts.append(offset)
            # Offsets in the file only where normalising kept every character in place (books imported with sources).
            self.source_maps.append(source_map if source_map and len(piece) == len(text) else None)
            pieces.append(piece)
            offset += len(piece) + 1  # the joining space
        self.text = " ".join(pieces)
        chunks = Passage.objects.filter(book=book).order_by("first_sentence")
        self.chunks = [
            Chunk(c.id, c.external_id, c.first_sentence, c.last_sentence)
            for c in chunks.only("id", "external_id", "first_sentence", "last_sentence")
        ]
        self._chunk_firsts = [c.first_sentence for c in self.chunks]

    def sentence_at(self, offset: int) -> int:
        """Index of the sentence the character at `offset` belongs to (the space after a sentence counts as its)."""
        return bisect_right(self.starts, offset) - 1

    def find_offsets(self, span: str) -> list[tuple[int, int]]:
        """(start, end) in self.text of every occurrence of the span (markup removed, normalised) on word boundaries."""
        needle = normalise(clean_span(span))
        found, start = [], self.text.find(needle)
        while needle and start != -1:
            end = start + len(needle)
            before = self.text[start - 1] if start else " "
            after = self.text[end] if end < len(self.text) else " "
            if not (needle[0].isalnum() and before.isalnum()) and not (needle[-1].isalnum() and after.isalnum()):
                found.append((start, end))
            start = self.text.find(needle, start + 1)
        return found

    def find(self, span: str) -> list[tuple[int, int]]:
        """(first, last) sentence of every occurrence of the span that starts and ends on a word boundary."""
        return [(self.sentence_at(start), self.sentence_at(end - 1)) for start, end in self.find_offsets(span)]

    def source_span(self, start: int, end: int) -> tuple[int, int] | None:
        """[start, end) in the book's file of self.text[start:end]; None when the sentences do not know their place."""
        first, last = self.sentence_at(start), self.sentence_at(end - 1)
        first_map, last_map = self.source_maps[first], self.source_maps[last]
        if first_map is None or last_map is None:
            return None
        return to_source(first_map, start - self.starts[first]), to_source(last_map, end - 1 - self.starts[last]) + 1

    def chunks_overlapping(self, first: int, last: int) -> list[Chunk]:
        """The chunks that hold any of the sentences first..last."""
        i = max(bisect_right(self._chunk_firsts, first) - 1, 0)
        result = []
        while i < len(self.chunks) and self.chunks[i].first_sentence <= last:
            if self.chunks[i].last_sentence >= first:
                result.append(self.chunks[i])
            i += 1
        return result


@dataclass
class PlotQuery:
    """One checked line of a plot-queries file."""

    line: int
    query_id: str
    book: Book
    query: str
    ground_truth_text: str = ""
    ground_truth: list[Chunk] = field(default_factory=list)
    source_span: tuple[int, int] | None = None  # the ground-truth span's [start, end) in the book's file


def _string_field(obj, name, problems, number, *, required=True):
    value = obj.get(name)
    if value is None:
        if required:
            problems.add("missing", line=number, field=name)
        return None
    if not isinstance(value, str):
        problems.add(f"must be a string, not {type(value).__name__}", line=number, field=name)
        return None
    if not value.strip():
        hint = "" if required else " (leave the field out when there is no ground truth)"
        problems.add(f"is empty{hint}", line=number, field=name)
        return None
    return value


def _describe_places(book_text: BookText, places) -> str:
    names = []
    for first, last in places[:SHOWN_PLACES]:
        chunks = book_text.chunks_overlapping(first, last)
        sentences = f"sentence {first}" if first == last else f"sentences {first}-{last}"
        names.append(f"{sentences} (chunk {', '.join(c.external_id for c in chunks)})")
    more = f" and {len(places) - SHOWN_PLACES} more" if len(places) > SHOWN_PLACES else ""
    return "; ".join(names) + more


def prepare_plot_queries(path, progress: Callable = no_progress) -> list[PlotQuery]:
    """Read and check a plot-queries file and resolve each ground-truth span to chunks.

    Raises ImportFailed listing every problem; reads the database, writes nothing.
    """
    text = read_text(path)
    problems = Problems(path)
    books: dict[str, Book | None] = {}
    book_texts: dict[int, BookText] = {}
    first_line_of: dict[str, int] = {}
    queries = []

    lines = list(parse_json_lines(text, problems))
    for number, obj in progress(lines, desc="Checking queries", unit="query"):
        query_id = _string_field(obj, "query_id", problems, number)
        slug = _string_field(obj, "book", problems, number)
        query = _string_field(obj, "query", problems, number)
        span = _string_field(obj, "ground_truth_text", problems, number, required=False)

        if query_id is not None:
            if len(query_id) > MAX_EXTERNAL_ID:
                problems.add(
                    f"is {len(query_id)} characters long; at most {MAX_EXTERNAL_ID} are allowed",
                    line=number,
                    field="query_id",
                )
            elif query_id in first_line_of:
                problems.add(
                    f"duplicate query_id {query_id!r}: also on line {first_line_of[query_id]}",
                    line=number,
                    field="query_id",
                )
                query_id = None
            else:
                first_line_of[query_id] = number

        book = None
        if slug is not None:
            if slug not in books:
                books[slug] = Book.objects.select_related("collection").filter(slug=slug).first()
            book = books[slug]
            if book is None:
                known = sorted(Book.objects.values_list("slug", flat=True)[:10])
                listed = f" (imported books: {', '.join(known)})" if known else " (no book has been imported yet)"
                problems.add(
                    f"unknown book {slug!r}{listed}; import it first with "
                    f"manage.py import_book PATH --title TITLE --slug {slug}",
                    line=number,
                    field="book",
                )

        if book is not None and query_id is not None:
            if Topic.objects.filter(collection=book.collection, external_id=query_id).exists():
                problems.add(
                    f"a topic {query_id!r} already exists in collection {book.collection.name!r}",
                    line=number,
                    field="query_id",
                )

        chunks, source_span = [], None
        if book is not None and span is not None:
            if book.pk not in book_texts:
                book_texts[book.pk] = BookText(book)
            book_text = book_texts[book.pk]
            offsets = book_text.find_offsets(span)
            places = [(book_text.sentence_at(start), book_text.sentence_at(end - 1)) for start, end in offsets]
            if not places:
                problems.add(
                    f"not found in book {book.slug!r} (matched after straightening quotes and collapsing whitespace)",
                    line=number,
                    field="ground_truth_text",
                )
            elif len(places) > 1:
                problems.add(
                    f"ambiguous: found {len(places)} times in book {book.slug!r}, "
                    f"at {_describe_places(book_text, places)}; give a longer span",
                    line=number,
                    field="ground_truth_text",
                )
            else:
                chunks = book_text.chunks_overlapping(*places[0])
                source_span = book_text.source_span(*offsets[0])

        if None not in (query_id, book, query):
            queries.append(PlotQuery(number, query_id, book, query, span or "", chunks, source_span))

    if not lines and not problems:
        problems.add("no queries in the file")
    problems.raise_if_any()
    return queries


def write_plot_queries(
    queries: list[PlotQuery], progress: Callable = no_progress, source="plot queries"
) -> list[Topic]:
    """Write checked queries as PLOT topics with their ground-truth chunks, in one transaction."""
    try:
        with transaction.atomic():
            topics = []
            for start in progress(range(0, len(queries), BATCH_SIZE), desc="Writing topics", unit="batch"):
                batch = [
                    Topic(
                        collection=q.book.collection,
                        external_id=q.query_id,
                        kind=Topic.Kind.PLOT,
                        title=short_title(q.query),
                        text=q.query,
                        book=q.book,
                        ground_truth_text=q.ground_truth_text,
                        metadata={"ground_truth_source": list(q.source_span)} if q.source_span else {},
                    )
                    for q in queries[start : start + BATCH_SIZE]
                ]
                topics.extend(Topic.objects.bulk_create(batch))
            if any(t.pk is None for t in topics):  # a database that does not return ids from bulk inserts
                ids = {
                    (t.collection_id, t.external_id): t.pk
                    for t in Topic.objects.filter(external_id__in=[q.query_id for q in queries])
                }
                for t in topics:
                    t.pk = t.id = ids[(t.collection_id, t.external_id)]
            through = Topic.ground_truth.through
            links = [
                through(topic_id=topic.pk, passage_id=chunk.id)
                for topic, q in zip(topics, queries, strict=True)
                for chunk in q.ground_truth
            ]
            through.objects.bulk_create(links, batch_size=BATCH_SIZE)
    except IntegrityError as exc:  # a topic was added between the check and the write
        problems = Problems(source)
        problems.add(f"could not write the topics ({exc}); were they imported meanwhile?")
        raise ImportFailed(problems.items, problems.total) from exc
    return topics
