"""Plain-text books to sentences and chunks: pure functions, no database.

The steps, in order (seed 000 §3.2 and §4.2, PlotRetrieval: a plot is a chunk
of m consecutive sentences, m = 3):

1. strip_gutenberg(): drop a Project Gutenberg header and footer when the text
   has them ("*** START OF THE PROJECT GUTENBERG EBOOK ... ***", "*** END OF
   ...", or the older "End of the Project Gutenberg EBook of ...").
2. paragraphs(): the books are hard-wrapped, so the lines of each paragraph
   (paragraphs are separated by blank lines) are stripped and joined with one
   space; a sentence splitter run on raw lines splits at nearly every line break.
3. split_sentences(): pysbd (English, clean=False) on each paragraph; sentences
   are stripped and blank ones dropped.
4. chunk_ranges(): every m consecutive sentences across the whole book, the
   last chunk possibly shorter.

With these steps pysbd 0.3.4 finds 1,643 / 4,059 / 7,876 / 5,732 sentences in
data/books/ call-of-the-wild / tom-sawyer / moby-dick / a-tale-of-two-cities.
"""

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pysbd

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
_BLANK_LINES = re.compile(r"\n[ \t\f\v]*\n")
# Characters no plain-text book contains: C0 controls other than tab, newline, vertical tab, form feed
# and carriage return; DEL; C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Body:
    """A book's text with any Project Gutenberg header and footer removed."""

    text: str
    header_removed: bool
    footer_removed: bool


def strip_gutenberg(text: str) -> Body:
    """Remove everything up to and including the START marker line, and from the first END marker line on."""
    header = footer = False
    start = _START.search(text)
    if start:
        text = text[start.end() :]
        header = True
    end = _END.search(text)
    if end:
        text = text[: end.start()]
        footer = True
    return Body(text, header, footer)


def find_control_character(text: str) -> tuple[int, str] | None:
    """(line number, character name) of the first control character that no text file should hold, or None."""
    match = _CONTROL.search(text)
    if not match:
        return None
    char = match.group()
    name = unicodedata.name(char, f"U+{ord(char):04X}")
    return text.count("\n", 0, match.start()) + 1, name


def paragraphs(text: str) -> list[str]:
    """Paragraphs (separated by blank lines), each with its lines stripped and joined by one space."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    result = []
    for block in _BLANK_LINES.split(text):
        paragraph = " ".join(line.strip() for line in block.split("\n") if line.strip())
        if paragraph:
            result.append(paragraph)
    return result


def segmenter() -> pysbd.Segmenter:
    """The sentence splitter: pysbd, English, non-destructive (clean=False)."""
    return pysbd.Segmenter(language="en", clean=False)


def split_paragraph(paragraph: str, splitter: pysbd.Segmenter | None = None) -> list[str]:
    """The stripped, non-blank sentences of one paragraph."""
    splitter = splitter or segmenter()
    return [s.strip() for s in splitter.segment(paragraph) if s.strip()]


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
