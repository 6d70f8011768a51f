"""Plain-text books to sentences and chunks: pure functions, no database.

The steps, in order (seed 000 §3.2 and §4.2, PlotRetrieval: a plot is a chunk
of m consecutive sentences, m = 3):

1. strip_gutenberg(): drop a Project Gutenberg header and footer when the text
   has them ("*** START OF THE PROJECT GUTENBERG EBOOK ... ***", "*** END OF
   ...", or the older "End of the Project Gutenberg EBook of ...").
2. clean_paragraphs(): Gutenberg markup removed (retrieval.markup: illustrations,
   star separators, footnote marks; `_italics_` keep their words as emphasis), then
   the book split into paragraphs at blank lines. The books are hard-wrapped, so
   each paragraph's lines are joined, every run of whitespace becoming one space
   (a sentence splitter run on raw lines splits at nearly every line break).
3. split_paragraph() / book_sentences(): pysbd (English, clean=False) on each
   paragraph; sentences are stripped and blank ones dropped. Each sentence keeps
   its offsets in the file (source_start, source_end and a source_map for every
   character) and its emphasis spans.
4. chunk_ranges(): every m consecutive sentences across the whole book, the
   last chunk possibly shorter.

With these steps pysbd 0.3.4 finds 1,643 / 4,058 / 7,874 / 5,722 sentences in
data/books/ call-of-the-wild / tom-sawyer / moby-dick / a-tale-of-two-cities. With
the markup left in (data/README.md's figures) it found 4,059 / 7,876 / 5,732 for the
last three: the star separators of A Tale of Two Cities were "sentences", and an
italic or a footnote mark at a paragraph's start made pysbd split there.
"""

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pysbd

from retrieval.markup import Mapped, remove_markup
from retrieval.markup import paragraphs as mapped_paragraphs

DEFAULT_SENTENCES_PER_CHUNK = 3

_START = re.compile(
    r"^[ \t]*\*{3}[ \t]*START OF (?:THE|THIS) PROJECT GUTENBERG E-?BOOK\b.*$", re.IGNORECASE | re.MULTILINE
)
_END = re.compile(
    # *** END OF THE PROJECT GUTENBERG EBOOK X ***
    r"^[ \t]*(?:\*{3}[ \t]*END OF (?:THE|THIS) PROJECT GUTENBERG E-?BOOK\b"
    # older: End of the Project Gutenberg EBook of X / End of Project Gutenberg's X
    r"|End of (?:the )?Project Gutenberg(?:'s|’s)?\b)"
    r".*$",
    re.IGNORECASE | re.MULTILINE,
)
# Characters no plain-text book contains: C0 controls other than tab, newline, vertical tab, form feed
# and carriage return; DEL; C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Body:
    """A book's text with any Project Gutenberg header and footer removed; `offset` is where it starts in the file."""

    text: str
    header_removed: bool
    footer_removed: bool
    offset: int = 0


def strip_gutenberg(text: str) -> Body:
    """Remove everything up to and including the START marker line, and from the first END marker line on."""
    header = footer = False
    offset = 0
    start = _START.search(text)
    if start:
        offset = start.end()
        text = text[offset:]
        header = True
    end = _END.search(text)
    if end:
        text = text[: end.start()]
        footer = True
    return Body(text, header, footer, offset)


def find_control_character(text: str) -> tuple[int, str] | None:
    """(line number, character name) of the first control character that no text file should hold, or None."""
    match = _CONTROL.search(text)
    if not match:
        return None
    char = match.group()
    name = unicodedata.name(char, f"U+{ord(char):04X}")
    return text.count("\n", 0, match.start()) + 1, name


def clean_paragraphs(body: Body) -> list[Mapped]:
    """The body's paragraphs with markup removed and lines joined, each character mapped to its offset in the file."""
    return mapped_paragraphs(remove_markup(Mapped.of(body.text, body.offset)))


def paragraphs(text: str) -> list[str]:
    """Paragraphs (separated by blank lines) of a text, markup removed, lines joined by one space."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return [paragraph.text for paragraph in mapped_paragraphs(remove_markup(Mapped.of(text)))]


@dataclass(frozen=True)
class BookSentence:
    """A sentence of a book: its paragraph, clean text, where it lies in the file, which characters are emphasised.

    `source_map` ([[i, offset]…], see retrieval.markup.to_source) gives the file offset of every
    character; `emphasis` is [[start, end]…] in the sentence's text (italics in the file).
    """

    paragraph: int
    text: str
    source_start: int
    source_end: int
    source_map: list
    emphasis: list


def mapped_sentences(paragraph: Mapped, splitter: pysbd.Segmenter | None = None) -> list[Mapped]:
    """The stripped, non-blank sentences of one mapped paragraph, in order."""
    splitter = splitter or segmenter()
    result, cursor = [], 0
    for piece in splitter.segment(paragraph.text):
        found = paragraph.text.find(piece, cursor)
        if found < 0:  # pysbd changed the text (it should not with clean=False): look for it stripped
            found = paragraph.text.find(piece.strip(), cursor)
            piece = piece.strip()
        if found < 0:
            raise ValueError(f"the sentence splitter returned text not in the paragraph: {piece[:60]!r}")
        sentence = paragraph[found : found + len(piece)].strip()
        cursor = found + len(piece)
        if len(sentence):
            result.append(sentence)
    return result


def book_sentences(paras: Iterable[Mapped], splitter: pysbd.Segmenter | None = None) -> Iterator[BookSentence]:
    """Every sentence of the mapped paragraphs, in reading order, paragraphs numbered from 0."""
    splitter = splitter or segmenter()
    for number, paragraph in enumerate(paras):
        for sentence in mapped_sentences(paragraph, splitter):
            start, end = sentence.source_span()
            yield BookSentence(number, sentence.text, start, end, sentence.source_map(), sentence.emphasis_spans())


def segmenter() -> pysbd.Segmenter:
    """The sentence splitter: pysbd, English, non-destructive (clean=False)."""
    return pysbd.Segmenter(language="en", clean=False)


def split_paragraph(paragraph: str, splitter: pysbd.Segmenter | None = None) -> list[str]:
    """The stripped, non-blank sentences of one paragraph."""
    return [sentence.text for sentence in mapped_sentences(Mapped.of(paragraph), splitter)]


def split_sentences(paras: Iterable[str], splitter: pysbd.Segmenter | None = None) -> Iterator[tuple[int, str]]:
    """(paragraph index, sentence) for every sentence, in reading order; paragraph indices count from 0."""
    splitter = splitter or segmenter()
    for number, paragraph in enumerate(paras):
        for sentence in split_paragraph(paragraph, splitter):
            yield number, sentence


def chunk_ranges(sentence_count: int, sentences_per_chunk: int = DEFAULT_SENTENCES_PER_CHUNK) -> list[tuple[int, int]]:
    """(first, last) sentence index, inclusive, of each chunk of m consecutive sentences; the last may be shorter."""
    if sentences_per_chunk < 1:
        raise ValueError(f"sentences_per_chunk must be at least 1, not {sentences_per_chunk}")
    if sentence_count < 0:
        raise ValueError(f"sentence_count must not be negative, not {sentence_count}")
    return [
        (first, min(first + sentences_per_chunk, sentence_count) - 1)
        for first in range(0, sentence_count, sentences_per_chunk)
    ]


def chunk_external_id(slug: str, chunk_index: int) -> str:
    """The passage id of a book's chunk: `slug:index`, index from 0."""
    return f"{slug}:{chunk_index}"
