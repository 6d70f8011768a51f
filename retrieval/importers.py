"""Importing a plain-text book: check and split it first (prepare_book), then write it in one transaction (write_book).

A book becomes a Collection of kind BOOK named by its slug, a Book, its
Sentences, and its chunks: Passages `slug:0`, `slug:1`, ... of m consecutive
sentences each (retrieval.books). Sentences and chunks hold the text with the
Gutenberg markup removed; each sentence keeps its offsets in the file and its
emphasis spans, and each chunk's metadata holds `source_span` ([start, end) in
the file) and, when it has any, `emphasis` ([[start, end]…] of its text).
"""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import IntegrityError, transaction
from django.utils.text import slugify

from retrieval import books
from retrieval.ingest import ImportFailed, Option, Problems, read_text
from retrieval.models import Book, Collection, Passage, Sentence

BATCH_SIZE = 1000
MAX_SLUG = 100  # Book.slug and Collection.name
MAX_TITLE = 300  # Book.title and Collection.title
MAX_SENTENCES_PER_CHUNK = 32767  # Book.sentences_per_chunk is a PositiveSmallIntegerField
TEXT_SUFFIXES = (".gz", ".txt")
OPTIONS = (  # a book's, registered as kind `book` (assessments.importers.registry); manage.py import_book's flags
    Option("title", help="The book's title.", required="give the book's title"),
    Option("slug", help="Short unique name of the book and its collection (default: the file name)."),
    Option("sentences_per_chunk", type=int, default=books.DEFAULT_SENTENCES_PER_CHUNK, metavar="N",
           help=f"Sentences per chunk (plot), m in PlotRetrieval (default {books.DEFAULT_SENTENCES_PER_CHUNK})."),
)


def no_progress(iterable=None, **kwargs):
    """Stand-in for ImportCommand.progress when no bar is wanted."""
    return iterable


@dataclass
class PreparedBook:
    """A checked book, split and chunked, ready to write."""

    slug: str
    title: str
    source_name: str
    sentences_per_chunk: int
    sentences: list[books.BookSentence]  # in reading order
    chunks: list[tuple[int, int]]  # (first, last) sentence index, inclusive
    header_removed: bool
    footer_removed: bool


def default_slug(path) -> str:
    """The slug a file gives a book: its name less .txt / .gz, slugified (call-of-the-wild.txt → call-of-the-wild)."""
    name = Path(path).name
    for suffix in TEXT_SUFFIXES:
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return slugify(name)


def _check_options(problems: Problems, path, title, slug, sentences_per_chunk):
    """Problems with the command-line options; returns the slug to use (or None) and the stripped title."""
    if not 1 <= sentences_per_chunk <= MAX_SENTENCES_PER_CHUNK:
        problems.add(
            f"must be a whole number from 1 to {MAX_SENTENCES_PER_CHUNK}, not {sentences_per_chunk}",
            field="--sentences-per-chunk",
        )
    title = (title or "").strip()
    if not title:
        problems.add("must not be empty", field="--title")
    elif len(title) > MAX_TITLE:
        problems.add(f"is {len(title)} characters long; at most {MAX_TITLE} are allowed", field="--title")

    field = "--slug"
    if slug is None:
        slug = default_slug(path)
        if not slug:
            problems.add(
                f"cannot make a slug from the file name {Path(path).name!r}; give one with --slug", field=field
            )
            return None, title
    try:
        validate_slug(slug)
    except ValidationError:
        problems.add(f"{slug!r} is not a slug: use letters, digits, hyphens and underscores only", field=field)
        return None, title
    if len(slug) > MAX_SLUG:
        problems.add(f"{slug!r} is {len(slug)} characters long; at most {MAX_SLUG} are allowed", field=field)
        return None, title
    existing = Book.objects.filter(slug=slug).first()
    if existing is not None:
        problems.add(
            f"a book with slug {slug!r} already exists ({existing.title!r}, {existing.sentence_count:,} sentences); "
            "choose another --slug, or delete that book first",
            field=field,
        )
    elif Collection.objects.filter(name=slug).exists():
        problems.add(f"a collection named {slug!r} already exists; choose another --slug", field=field)
    return slug, title


def prepare_book(
    path,
    *,
    title: str,
    slug: str | None = None,
    sentences_per_chunk: int = books.DEFAULT_SENTENCES_PER_CHUNK,
    progress: Callable = no_progress,
) -> PreparedBook:
    """Read, check and split a book; raises ImportFailed listing every problem. Reads the database, writes nothing."""
    problems = Problems(path)
    slug, title = _check_options(problems, path, title, slug, sentences_per_chunk)

    try:
        text = read_text(path)
    except ImportFailed as exc:  # unreadable, empty, binary: report it with any option problems
        for problem in exc.problems:
            problems.add(problem.message, line=problem.line, field=problem.field)
        problems.raise_if_any()
        raise  # pragma: no cover - exc always holds a problem
    control = books.find_control_character(text)
    if control is not None:
        line, name = control
        problems.add(f"not a plain-text book: control character {name}", line=line)
        problems.raise_if_any()

    body = books.strip_gutenberg(text)
    paras = books.clean_paragraphs(body)
    if not paras:
        where = " after removing the Project Gutenberg header and footer" if body.header_removed else ""
        problems.add(f"no text to split into sentences{where}")
    problems.raise_if_any()  # do not spend time splitting a book that will be rejected

    splitter = books.segmenter()
    sentences = []
    sentences.extend(books.book_sentences(progress(paras, desc=f"Splitting {slug}", unit="paragraph"), splitter))
    if not sentences:
        problems.fail("the sentence splitter found no sentences")

    return PreparedBook(
        slug=slug,
        title=title,
        source_name=Path(path).name,
        sentences_per_chunk=sentences_per_chunk,
        sentences=sentences,
        chunks=books.chunk_ranges(len(sentences), sentences_per_chunk),
        header_removed=body.header_removed,
        footer_removed=body.footer_removed,
    )


def _batches(items, progress, desc, unit):
    bar = progress(total=len(items), desc=desc, unit=unit)
    try:
        for start in range(0, len(items), BATCH_SIZE):
            batch = items[start : start + BATCH_SIZE]
            yield start, batch
            if bar is not None:
                bar.update(len(batch))
    finally:
        if bar is not None:
            bar.close()


def write_book(prepared: PreparedBook, progress: Callable = no_progress) -> Book:
    """Write a prepared book (collection, book, sentences, chunks) in one transaction."""
    slug = prepared.slug
    try:
        with transaction.atomic():
            collection = Collection.objects.create(name=slug, kind=Collection.Kind.BOOK, title=prepared.title)
            book = Book.objects.create(
                collection=collection,
                slug=slug,
                title=prepared.title,
                sentences_per_chunk=prepared.sentences_per_chunk,
                sentence_count=len(prepared.sentences),
                source_name=prepared.source_name,
            )
            for start, batch in _batches(prepared.sentences, progress, "Writing sentences", "sentence"):
                Sentence.objects.bulk_create(
                    [
                        Sentence(
                            book=book, index=start + offset, paragraph=s.paragraph, text=s.text,
                            source_start=s.source_start, source_end=s.source_end, source_map=s.source_map,
                            emphasis=s.emphasis,
                        )
                        for offset, s in enumerate(batch)
                    ],
                    batch_size=BATCH_SIZE,
                )
            for start, batch in _batches(prepared.chunks, progress, "Writing chunks", "chunk"):
                Passage.objects.bulk_create(
                    [
                        _chunk(collection, book, books.chunk_external_id(slug, start + offset),
                               prepared.sentences[first : last + 1], first, last)
                        for offset, (first, last) in enumerate(batch)
                    ],
                    batch_size=BATCH_SIZE,
                )
    except IntegrityError as exc:  # another import took the slug after prepare_book checked it
        raise _conflict(prepared, exc) from exc
    return book


def _chunk(collection, book, external_id, sentences, first, last) -> Passage:
    """A chunk passage: its sentences joined by one space, their emphasis shifted onto the joined text."""
    emphasis, at = [], 0
    for sentence in sentences:
        emphasis.extend([at + a, at + b] for a, b in sentence.emphasis)
        at += len(sentence.text) + 1
    metadata = {"source_span": [sentences[0].source_start, sentences[-1].source_end]}
    if emphasis:
        metadata["emphasis"] = emphasis
    return Passage(
        collection=collection, external_id=external_id, text=" ".join(s.text for s in sentences), book=book,
        first_sentence=first, last_sentence=last, metadata=metadata,
    )


def _conflict(prepared: PreparedBook, exc: IntegrityError) -> ImportFailed:
    problems = Problems(prepared.source_name)
    problems.add(f"could not write book {prepared.slug!r} ({exc}); was it imported meanwhile?", field="--slug")
    return ImportFailed(problems.items, problems.total)


def import_book(path, *, title, slug=None, sentences_per_chunk=books.DEFAULT_SENTENCES_PER_CHUNK, progress=no_progress):
    """Check, split and write a book in one go; returns (Book, PreparedBook)."""
    prepared = prepare_book(path, title=title, slug=slug, sentences_per_chunk=sentences_per_chunk, progress=progress)
    return write_book(prepared, progress=progress), prepared
