"""Project Gutenberg markup removed from a book's text, every kept character remembering where it came from.

What is indexed and shown must not hold the plain-text edition's markup (a query saying `now`
does not find `_now_`), yet ground-truth spans and exports must still point into the file. So
the text is edited as a `Mapped`: the text, the offset in the original of each character, and
whether the character was emphasised. Removed, in this order:

1. `[Illustration]` and `[Illustration: caption]` blocks (the caption may span lines);
2. separators and elisions: three or more asterisks with only spaces between them
   (`*       *       *`, `* * * * * *`, `*****`), left as one space (a line of them only
   becomes blank, so it ends the paragraph);
3. footnote marks: `[1]` … `[999]`, `[A]` … `[Z]`, `[*]`, `[**]`, `[†]`, `[‡]`, `[§]` (a footnote's
   own text, e.g. `[*] Southwestern for "afternoon"`, keeps its words);
4. italics: `_word_` and `_several words_` (inside one paragraph; `misch_ee_vous` too) keep the
   words, which are marked as emphasis.

A `_` without a partner and any other bracket (`[Groan.]`, stage directions) is text and stays.
Offsets are into the text as `retrieval.ingest.read_text` returns it (UTF-8 decoded, newlines
`\\n`). Pure functions and numpy, no database.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

ILLUSTRATION = re.compile(r"\[Illustration\b[^\]]{0,2000}\]", re.IGNORECASE)
STARS = re.compile(r"[ \t]*\*(?:[ \t]*\*){2,}[ \t]*")
FOOTNOTE_MARK = re.compile(r"\[(?:[0-9]{1,3}|[A-Z]|\*{1,3}|[†‡§])\]")
ITALICS = re.compile(r"_([^_\s](?:[^_]{0,2000}?[^_\s])?)_")
BLANK_LINE = re.compile(r"\n[ \t\f\v]*\n")
WHITESPACE = re.compile(r"\s{2,}|[^\S ]")  # runs that are not already one plain space


@dataclass(frozen=True)
class Keep:
    """Part of the matched text kept as it is (start, end in the text being edited), emphasised or not."""

    start: int
    end: int
    emphasis: bool = False


@dataclass(frozen=True)
class Insert:
    """New text standing for what was matched; its characters point at `source` (a position in the text being edited)
    and are emphasised when that character is."""

    text: str
    source: int


class Mapped:
    """Text whose every character knows its offset in the original (`source`) and whether it is emphasised."""

    __slots__ = ("text", "source", "emphasis")

    def __init__(self, text: str, source: np.ndarray, emphasis: np.ndarray):
        if not len(text) == len(source) == len(emphasis):
            raise ValueError("text, source and emphasis differ in length")
        self.text, self.source, self.emphasis = text, source, emphasis

    @classmethod
    def of(cls, text: str, offset: int = 0) -> "Mapped":
        """Text taken as it is: character i comes from offset + i."""
        return cls(text, np.arange(offset, offset + len(text), dtype=np.int64), np.zeros(len(text), dtype=bool))

    def __len__(self):
        return len(self.text)

    def __getitem__(self, index: slice) -> "Mapped":
        return Mapped(self.text[index], self.source[index], self.emphasis[index])

    def __repr__(self):
        return f"Mapped({self.text!r})"

    def edit(self, pattern: re.Pattern, replace: Callable) -> "Mapped":
        """Replace every match of `pattern` by the pieces `replace(match)` gives (Keep or Insert); the rest is kept."""
        texts, sources, marks, at = [], [], [], 0

        def keep(start, end, emphasis=None):
            if end > start:
                texts.append(self.text[start:end])
                sources.append(self.source[start:end])
                mark = self.emphasis[start:end]
                marks.append(mark | emphasis if emphasis else mark)

        for match in pattern.finditer(self.text):
            keep(at, match.start())
            for piece in replace(match):
                if isinstance(piece, Keep):
                    keep(piece.start, piece.end, piece.emphasis)
                elif piece.text:
                    texts.append(piece.text)
                    inside = piece.source < len(self.source)
                    source = self.source[piece.source] if inside else self.end_source()
                    sources.append(np.full(len(piece.text), source, dtype=np.int64))
                    marks.append(np.full(len(piece.text), inside and bool(self.emphasis[piece.source])))
            at = match.end()
        if at == 0:
            return self
        keep(at, len(self.text))
        if not texts:
            return Mapped("", np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool))
        return Mapped("".join(texts), np.concatenate(sources), np.concatenate(marks))

    def end_source(self) -> int:
        """The original offset just after the last character (0 for an empty text)."""
        return int(self.source[-1]) + 1 if len(self.source) else 0

    def strip(self) -> "Mapped":
        """Leading and trailing whitespace removed."""
        start = len(self.text) - len(self.text.lstrip())
        end = len(self.text.rstrip())
        return self[start:end] if start < end else self[0:0]

    def source_span(self) -> tuple[int, int]:
        """(start, end) in the original: the first character's offset and one past the last one's."""
        if not len(self.source):
            return 0, 0
        return int(self.source[0]), int(self.source[-1]) + 1

    def source_map(self) -> list[list[int]]:
        """Breakpoints [[i, original offset of character i], …]: character j maps to o + (j − i) for the last i ≤ j."""
        if not len(self.source):
            return []
        jumps = np.flatnonzero(np.diff(self.source) != 1) + 1
        starts = np.concatenate(([0], jumps))
        return [[int(i), int(self.source[i])] for i in starts]

    def emphasis_spans(self) -> list[list[int]]:
        """[[start, end], …] of the runs of emphasised characters."""
        if not self.emphasis.any():
            return []
        padded = np.concatenate(([False], self.emphasis, [False])).astype(np.int8)
        edges = np.flatnonzero(np.diff(padded))
        return [[int(a), int(b)] for a, b in zip(edges[::2], edges[1::2])]


def to_source(source_map: list, index: int) -> int:
    """The original offset of character `index` of a text with this source_map (see Mapped.source_map)."""
    if not source_map:
        raise ValueError("an empty text has no characters to map")
    low, high = 0, len(source_map) - 1
    while low < high:  # the last breakpoint at or before index
        middle = (low + high + 1) // 2
        if source_map[middle][0] <= index:
            low = middle
        else:
            high = middle - 1
    start, source = source_map[low]
    return source + (index - start)


def _delete(match):
    return ()


def _one_space(match):
    return (Insert(" ", match.start()),)


def _italics(match):
    inner = match.group(1)
    if BLANK_LINE.search(inner):  # a lone underscore paired with one in another paragraph: leave both
        return (Keep(match.start(), match.end()),)
    return (Keep(match.start(1), match.end(1), emphasis=True),)


def remove_markup(text: Mapped) -> Mapped:
    """Illustrations, star separators, footnote marks and italic underscores removed (the module's rules)."""
    text = text.edit(ILLUSTRATION, _delete)
    text = text.edit(STARS, _one_space)
    text = text.edit(FOOTNOTE_MARK, _delete)
    return text.edit(ITALICS, _italics)


def clean_span(text: str) -> str:
    """A span typed or copied from the book with its markup removed, so it matches the cleaned text."""
    return remove_markup(Mapped.of(text)).text


def paragraphs(text: Mapped) -> list[Mapped]:
    """Paragraphs (separated by blank lines), each with every run of whitespace one space and stripped."""
    result, at = [], 0
    for match in [*BLANK_LINE.finditer(text.text), None]:
        end = match.start() if match else len(text)
        block = text[at:end].edit(WHITESPACE, _one_space).strip()
        if len(block):
            result.append(block)
        if match:
            at = match.end()
    return result
