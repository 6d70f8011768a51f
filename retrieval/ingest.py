"""Shared plumbing for importers: reading untrusted files, collecting problems with their place, progress bars.

Importers parse and check the whole input first, collecting every problem
(file, line or record, field, message); only a clean input is written, inside
one transaction, so a bad file writes nothing.
"""

import bz2
import gzip
import json
import lzma
import re
import sys
import unicodedata
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError
from tqdm import tqdm

MAX_REPORTED = 50
GZIP_MAGIC = b"\x1f\x8b"
BZ2_MAGIC = re.compile(rb"BZh[1-9](?:1AY&SY|\x17rE8P\x90)")  # a bzip2 header and its first block (or end) marker
XZ_MAGIC = b"\xfd7zXZ\x00"
OTHER_PACKINGS = {  # magic bytes of packings that are not read, so that the message says what the file is
    b"\x28\xb5\x2f\xfd": "zstd", b"PK\x03\x04": "zip", b"7z\xbc\xaf\x27\x1c": "7z", b"\x04\x22\x4d\x18": "lz4",
    b"\x1f\x9d": "compress (.Z)", b"LZIP": "lzip", b"\x89LZO": "lzo", b"Rar!": "rar",
}
READ_BYTES = 256 * 1024  # bytes read from a file (compressed or not) at a time
BATCH_BYTES = 256 * 1024  # unpacked bytes of whole lines handed on at a time
MAX_LINE_BYTES = 16 * 1024 * 1024  # a longer line is refused: nothing reads whole files through it
RATIO_FLOOR = 1024 * 1024  # the compression ratio limit counts past this many unpacked bytes


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input, and where."""

    source: str
    line: int | None
    field: str | None
    message: str

    def __str__(self):
        place = self.source + (f":{self.line}" if self.line is not None else "")
        return f"{place}: {self.field + ': ' if self.field else ''}{self.message}"


class ImportFailed(Exception):
    """An input was rejected; `problems` says every place (up to a cap) and nothing was written."""

    def __init__(self, problems, total=None):
        self.problems = list(problems)
        self.total = total if total is not None else len(self.problems)
        super().__init__(self.report())

    def report(self):
        lines = [str(p) for p in self.problems]
        if self.total > len(self.problems):
            lines.append(f"... and {self.total - len(self.problems)} more problems")
        return "\n".join(lines)


class Problems:
    """Collects problems for one source; raise_if_any() stops with all of them."""

    def __init__(self, source, cap=MAX_REPORTED):
        self.source = str(source)
        self.cap = cap
        self.items: list[Problem] = []
        self.total = 0
        self.warnings: list[Problem] = []  # what was read but repaired (warn): reported, never a failure
        self.warning_total = 0

    def add(self, message, *, line=None, field=None):
        self.total += 1
        if len(self.items) < self.cap:
            self.items.append(Problem(self.source, line, field, message))

    def __bool__(self):
        return self.total > 0

    def warn(self, message, *, line=None, field=None):
        """Note something the reading repaired (the import goes on; its report says so, with the place)."""
        self.warning_total += 1
        if len(self.warnings) < self.cap:
            self.warnings.append(Problem(self.source, line, field, message))

    def fail(self, message, *, line=None, field=None):
        """Add a problem and stop at once."""
        self.add(message, line=line, field=field)
        raise ImportFailed(self.items, self.total)

    def raise_if_any(self):
        if self.total:
            raise ImportFailed(self.items, self.total)

    def stop(self, message):
        """Stop reading at once with what is collected, `message` last (shown even past the cap)."""
        self.total += 1
        self.items.append(Problem(self.source, None, None, message))
        raise ImportFailed(self.items, self.total)


def decode_text(data: bytes, source: str) -> str:
    """Text of an upload or file: gunzipped if gzip, UTF-8 (a BOM allowed), newlines normalised to \\n.

    Raises ImportFailed for an empty input, broken gzip, or bytes that are not UTF-8 text.
    """
    problems = Problems(source)
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            problems.fail(f"broken gzip data ({exc})")
    if not data.strip():
        problems.fail("the file is empty")
    if b"\x00" in data:
        offset = data.index(b"\x00")
        problems.fail(f"not a text file: NUL byte at offset {offset}", line=data[:offset].count(b"\n") + 1)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        problems.fail(f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start}", line=line)
    return text.replace("\r\n", "\n").replace("\r", "\n")


class InputTooLarge(Exception):
    """An input over a limit of text_batches (unpacked bytes or compression ratio): nothing more was read.

    `limit` says which ("bytes" or "ratio") and `value` its setting; the message is for people.
    """

    def __init__(self, message, *, limit, value):
        self.limit, self.value = limit, value
        super().__init__(message)


def _gunzip(chunks: Iterator[bytes], problems: "Problems", max_out: int) -> Iterator[bytes]:
    """The unpacked bytes of gzip data (every member, as gzip.decompress reads them), at most max_out bytes a
    piece however much the data unpacks to: a small compressed bomb never fills the memory."""
    decompressor, pending = zlib.decompressobj(wbits=31), b""
    for chunk in chunks:
        pending += chunk
        while pending:
            if decompressor.eof:  # the next member, or zeros padding the last one
                if not pending.strip(b"\x00"):
                    pending = b""
                    break
                if len(pending) < 2 and GZIP_MAGIC.startswith(pending):
                    break  # the next member's header comes with the next chunk
                if pending[:2] != GZIP_MAGIC:
                    problems.fail("broken gzip data (trailing data after the gzip stream)")
                decompressor = zlib.decompressobj(wbits=31)
            try:
                out = decompressor.decompress(pending, max_out)
            except zlib.error as exc:
                problems.fail(f"broken gzip data ({exc})")
            pending = decompressor.unused_data if decompressor.eof else decompressor.unconsumed_tail
            if out:
                yield out
            elif not decompressor.eof and not pending:
                break  # it needs more input
    if not decompressor.eof:
        problems.fail("broken gzip data (Compressed file ended before the end-of-stream marker was reached)")


def _unpacked(chunks: Iterator[bytes], problems: "Problems", max_out: int, new, name: str) -> Iterator[bytes]:
    """The unpacked bytes of bzip2 or xz data (`new` makes a decompressor; streams one after another are read, as
    bzip2 -d and xz -d read them), at most max_out bytes a piece."""
    errors = (OSError, EOFError, ValueError, lzma.LZMAError)
    decompressor, data, ended = new(), b"", False
    for chunk in chunks:
        data += chunk
        while data:
            if ended:
                if not data.strip(b"\x00"):  # xz stream padding
                    data = b""
                    break
                decompressor, ended = new(), False
            try:
                out = decompressor.decompress(data, max_out)
                data = b""
                while True:
                    if out:
                        yield out
                    if decompressor.eof:
                        data, ended = decompressor.unused_data, True
                        break
                    if decompressor.needs_input:
                        break
                    out = decompressor.decompress(b"", max_out)
            except errors as exc:
                problems.fail(f"broken {name} data ({exc})")
    if not ended:
        problems.fail(f"broken {name} data (the file ends before the end of its compressed stream)")


def _packing(first: bytes, problems: "Problems") -> str | None:
    """'gzip', 'bzip2', 'xz' or None (plain) from a file's first bytes; a packing that is not read is a problem."""
    if first[:2] == GZIP_MAGIC:
        return "gzip"
    if BZ2_MAGIC.match(first):
        return "bzip2"
    if first.startswith(XZ_MAGIC):
        return "xz"
    for magic, name in OTHER_PACKINGS.items():
        if first.startswith(magic):
            problems.fail(f"the file is compressed with {name}, which is not read: give it plain or as gzip, bzip2 or xz")
    return None


def text_batches(
    stream: BinaryIO, source: str, *, size=None, max_bytes=None, max_ratio=None, encoding="utf-8", warn=None
) -> Iterator[tuple[int, str]]:
    """Read a file as decode_text does, as a stream: yield (number of the first line, text) for successive
    blocks of whole lines, so that no more than about BATCH_BYTES of text is held at a time.

    Each block's text.split("\n") gives its lines, numbered on from the first as in decode_text(...).split("\n")
    (CRLF and a lone CR end a line too; a UTF-8 BOM at the start is dropped); the line end between two blocks
    belongs to neither. Gzip, bzip2 and xz are unpacked on the way (once: a packing inside another is
    refused; zstd, zip and other packings are named and refused). ImportFailed for an empty file, broken gzip, a NUL byte or bytes that are not UTF-8 (each with
    decode_text's message), or a line longer than MAX_LINE_BYTES; InputTooLarge, as soon as it is seen, for
    gzip that unpacks to more than `max_bytes`, or to more than `max_ratio` times its `size` (the file's bytes;
    the bytes read so far when that is more), counted past the first RATIO_FLOOR unpacked bytes (a small file of
    repeated lines may pack very tightly and still be harmless).

    `encoding`: the text's encoding (check_encoding: UTF-8 or an 8-bit one, e.g. latin-1 for old TREC disks).
    `warn(message, line=)`: given, a byte the encoding cannot read is replaced by U+FFFD and warned about (once per
    block of lines) instead of refused.
    """
    problems = Problems(source)
    packed_read = 0

    def raw_chunks():
        nonlocal packed_read
        while chunk := stream.read(READ_BYTES):
            packed_read += len(chunk)
            yield chunk

    chunks = raw_chunks()
    first = next(chunks, b"")
    packing = _packing(first, problems)
    gzipped = packing is not None  # (any packing: the limits below apply to bzip2 and xz too)

    def all_chunks():
        yield first
        yield from chunks

    if packing == "gzip":
        plain = _gunzip(all_chunks(), problems, BATCH_BYTES)
    elif packing == "bzip2":
        plain = _unpacked(all_chunks(), problems, BATCH_BYTES, bz2.BZ2Decompressor, "bzip2")
    elif packing == "xz":
        plain = _unpacked(all_chunks(), problems, BATCH_BYTES, lzma.LZMADecompressor, "xz")
    else:
        plain = all_chunks()
    carry, offset, newlines, number, content, unpacked = b"", 0, 0, 1, False, 0
    for piece in plain:
        if gzipped:
            inner = _packing(piece[:16], problems) if unpacked == 0 else None
            if inner:
                problems.fail(f"the file is {inner} inside {packing}: compress it once")
            unpacked += len(piece)
            if max_bytes is not None and unpacked > max_bytes:
                raise InputTooLarge(
                    f"the file unpacks to more than {max_bytes:,} bytes, the most that is taken", limit="bytes",
                    value=max_bytes,
                )
            if max_ratio is not None and unpacked > max(max_ratio * max(size or 0, packed_read), RATIO_FLOOR):
                packed = max(size or 0, packed_read)
                raise InputTooLarge(
                    f"the file unpacks to more than {max_ratio:g} times its size (over {unpacked:,} bytes from "
                    f"{packed:,}), the most that is taken", limit="ratio", value=max_ratio,
                )
        carry += piece
        if len(carry) < BATCH_BYTES:
            continue
        cut = carry.rfind(b"\n") + 1
        if not cut:
            if len(carry) > MAX_LINE_BYTES:
                problems.fail(f"a line longer than {MAX_LINE_BYTES:,} bytes", line=newlines + 1)
            continue
        block, carry = carry[:cut], carry[cut:]
        text, content = _decode_block(block, offset, newlines, content, problems, encoding=encoding, warn=warn)
        yield number, text
        number += text.count("\n") + 1
        offset += len(block)
        newlines += block.count(b"\n")
    text, content = _decode_block(carry, offset, newlines, content, problems, last=True, encoding=encoding, warn=warn)
    if not content:
        problems.fail("the file is empty")
    yield number, text


def _decode_block(block: bytes, offset: int, newlines: int, content: bool, problems, last=False, encoding="utf-8",
                  warn=None):
    """(text, whether any non-blank byte was seen so far) of a block of whole lines starting at byte `offset`;
    the block's last line end is dropped unless it is the file's last block."""
    content = content or bool(block.strip())
    if b"\x00" in block:
        at = block.index(b"\x00")
        problems.fail(f"not a text file: NUL byte at offset {offset + at}", line=newlines + block[:at].count(b"\n") + 1)
    try:
        text = block.decode(encoding)
    except UnicodeDecodeError as exc:
        at = exc.start
        named = "UTF-8" if encoding == "utf-8" else encoding
        where = f"byte 0x{block[at]:02x} at offset {offset + at}"
        line = newlines + block[:at].count(b"\n") + 1
        if warn is None:
            problems.fail(f"not {named} text: {where}", line=line)
        text = block.decode(encoding, errors="replace")
        warn(f"not {named} text: {where} replaced by U+FFFD, as is any other such byte in the next "
             f"{len(block) // 1024 or 1:,} KiB", line=line)
    if offset == 0 and text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not last:
        text = text[:-1]  # the block ends with its last line's end
    return text, content


def check_encoding(name: str) -> str:
    """The codec name of `name` if files are read in it here (text_batches cuts lines at the byte \\n, so it must
    write ASCII as ASCII: UTF-8 or an 8-bit encoding such as latin-1 or cp1252, not UTF-16); else ValueError."""
    import codecs

    try:
        codec = codecs.lookup(name).name
    except (LookupError, TypeError):
        raise ValueError(f"{name!r} is not an encoding Python knows (e.g. utf-8, latin-1, cp1252)") from None
    sample = "<DOC>\n\t0 Az"
    try:
        same = sample.encode(codec) == sample.encode("ascii") and b"\n".decode(codec) == "\n"
    except (UnicodeError, LookupError):
        same = False
    if not same or codec in ("utf-7", "utf_7"):
        raise ValueError(f"{name!r} does not write ASCII as ASCII: give UTF-8 or an 8-bit encoding (latin-1, cp1252)")
    return "utf-8" if codec in ("utf-8", "utf_8") else codec


def file_batches(path, *, max_bytes=None, max_ratio=None, encoding="utf-8", warn=None) -> Iterator[tuple[int, str]]:
    """text_batches of a file; a missing or unreadable file is an ImportFailed too."""
    path = Path(path)
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise ImportFailed([Problem(str(path), None, None, f"cannot read: {exc.strerror or exc}")]) from None
    with handle:
        size = path.stat().st_size if path.is_file() else None
        yield from text_batches(handle, str(path), size=size, max_bytes=max_bytes, max_ratio=max_ratio,
                                encoding=encoding, warn=warn)


def read_text(path) -> str:
    """Read a file as text (see decode_text); a missing or unreadable file is an ImportFailed too."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImportFailed([Problem(str(path), None, None, f"cannot read: {exc.strerror or exc}")]) from None
    return decode_text(data, str(path))


def hidden_characters(text: str) -> str | None:
    """A description of the first character of `text` that a reader cannot see or that reorders what they see (a
    control character, a bidirectional override, a zero-width or other format character), or None."""
    import unicodedata

    for i, ch in enumerate(text):
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"):
            name = unicodedata.name(ch, "unnamed")
            return f"character {i + 1} is U+{ord(ch):04X} {name.lower()}, which a reader cannot see"
    return None


FULLWIDTH_ASCII = range(0xFF01, 0xFF5F)  # "Ａ", "１": look like ASCII letters, digits and signs, and are not


def id_problem(value: str) -> str | None:
    """What makes `value` no id a person can read back and type (hidden_characters, or a full-width form of an ASCII
    character, which looks like another id: "１２３" beside "123"), or None. THE check of every id a file or a
    request names: topics, documents, runs."""
    hidden = hidden_characters(value)
    if hidden:
        return hidden
    for i, ch in enumerate(value):
        if ord(ch) in FULLWIDTH_ASCII:
            return (f"character {i + 1} is U+{ord(ch):04X} {unicodedata.name(ch).lower()}, which looks like "
                    f"{chr(ord(ch) - 0xFEE0)!r} and is not")
    return None


def json_type(value) -> str:
    """The JSON name of a decoded value's type, for messages ("expected a list, got a string")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


JSON_DEPTH_SHOWN = 100  # a document the parser found nested too deeply is shown where it passes this many levels
_JSON_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_JSON_NUMBERS = re.compile(_JSON_STRING + r"|(-?\d+)(\.\d+)?([eE][-+]?\d+)?")
_JSON_BRACKETS = re.compile(_JSON_STRING + r"|[\[{]|[\]}]")
_JSON_WORDS = {  # the json module's messages that end in "at", said without it
    "Unterminated string starting at": "a string that is never closed starts",
    "Invalid control character at": "a control character (a tab, a line break...) inside a string",
}


class InvalidJSON(ValueError):
    """Text that is not JSON, or not JSON that can be read: where (line and column, both from 1) and what, in words.

    `message` is the problem's text ("invalid JSON: ... at column C"); the line goes in the problem's line."""

    def __init__(self, line: int, column: int, what: str):
        self.line, self.column, self.what = line, column, what
        self.message = f"invalid JSON: {what} at column {column}"
        super().__init__(f"line {line}: {self.message}")


_UNSTORABLE_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})")
_HIGH_SURROGATE = re.compile(r"[dD][89abAB][0-9a-fA-F]{2}\Z")
_LOW_SURROGATE = re.compile(r"\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def _unstorable_escape(text: str) -> int | None:
    """Where (an offset) a string of valid JSON `text` has an escape of text no database stores: \\u0000 (NUL,
    which PostgreSQL refuses in text and jsonb) or a surrogate without its pair (\\ud800 alone: not UTF-8); None
    when it has none. Raw NUL bytes and surrogates never get this far (decode_text refuses them)."""
    for match in _UNSTORABLE_ESCAPE.finditer(text):
        start = match.start()
        if _escaped(text, start):  # "\\\\u0000": an escaped backslash, then the letters u0000
            continue
        code = match.group()[2:]
        if code == "0000":
            return start
        if _HIGH_SURROGATE.match(code):
            if not _LOW_SURROGATE.match(text, match.end()):
                return start
        elif (start < 6 or text[start - 6:start - 4] != "\\u" or _escaped(text, start - 6)
              or not _HIGH_SURROGATE.match(text[start - 4:start])):
            return start  # a low surrogate not after a high one
    return None


def _escaped(text: str, at: int) -> bool:
    """Whether the backslash at `at` is itself escaped (an odd number of backslashes just before it)."""
    before = at
    while before and text[before - 1] == "\\":
        before -= 1
    return (at - before) % 2 == 1


def load_json(text: str, *, first_line: int = 1):
    """json.loads(text) of untrusted text; InvalidJSON for anything it cannot read: broken JSON, an integer of
    more digits than Python converts (sys.get_int_max_str_digits, a plain ValueError from json), nesting deeper
    than the parser recurses, and a string no database stores (an escaped NUL or a lone surrogate). The one reader
    of uploaded JSON: every importer's JSON goes through it."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        what = _JSON_WORDS.get(exc.msg, exc.msg)
        raise _invalid(text, exc.pos, first_line, what) from None
    except ValueError as exc:  # json read an integer it may not convert: find it (json does not say where)
        for match in _JSON_NUMBERS.finditer(text):
            digits, fraction, exponent = match.groups()
            if digits and not fraction and not exponent and len(digits.lstrip("-")) > _int_digits():
                what = f"a number of {len(digits.lstrip('-')):,} digits (at most {_int_digits():,} are taken)"
                raise _invalid(text, match.start(), first_line, what) from None
        raise _invalid(text, 0, first_line, f"cannot be read ({exc})") from None
    except RecursionError:
        depth, deepest, place = 0, 0, 0
        for match in _JSON_BRACKETS.finditer(text):
            token = match.group()
            if token in "[{":
                depth += 1
                if depth > deepest:
                    deepest, place = depth, match.start()
                    if depth >= JSON_DEPTH_SHOWN:
                        break
            elif token in "]}":
                depth -= 1
        what = f"lists and objects nested too deeply (level {deepest} starts here)"
        raise _invalid(text, place, first_line, what) from None
    at = _unstorable_escape(text) if "\\u" in text else None
    if at is not None:
        what = ("a NUL character (\\u0000), which no database stores" if text[at + 2:at + 6] == "0000"
                else f"a lone surrogate ({text[at:at + 6]}), which is not text")
        raise _invalid(text, at, first_line, what)
    return obj


def _int_digits():
    return sys.get_int_max_str_digits() or 4300


def _invalid(text, pos, first_line, what) -> InvalidJSON:
    line_start = text.rfind("\n", 0, pos) + 1
    return InvalidJSON(first_line + text.count("\n", 0, pos), pos - line_start + 1, what)


def parse_json_lines(text: str, problems: Problems, first: int = 1):
    """Yield (line number, object) for each non-blank line (the first numbered `first`); a line that is not a
    JSON object is a problem."""
    for number, line in enumerate(text.split("\n"), start=first):
        if not line.strip():
            continue
        try:
            obj = load_json(line, first_line=number)
        except InvalidJSON as exc:
            problems.add(exc.message, line=exc.line)
            continue
        if not isinstance(obj, dict):
            problems.add(f"expected a JSON object, got {json_type(obj)}", line=number)
            continue
        yield number, obj


def progress(iterable=None, *, total=None, desc="", enabled=True, unit="it"):
    """A progress bar on stderr (tqdm), or the bare iterable when disabled."""
    return tqdm(
        iterable, total=total, desc=desc, unit=unit, disable=not enabled, file=sys.stderr, mininterval=0.5, leave=False
    )


@dataclass(frozen=True)
class Option:
    """One option of an importer, registered once (assessments.importers.registry): its key in a data import's
    options, its command's flag (`--create-missing` for create_missing) and the console form's field that gives it.

    `field`: the console's field ("" : the option's name; None: the console does not offer it, the import gets
    nothing). `required`: what to say, beside the field, when it is missing (the command's flag is then required).
    `default`: what an empty field or an absent flag gives; `from_field` turns the console field's value into the
    option's (a checkbox into one of `choices`)."""

    name: str
    type: type = str
    help: str = ""
    default: object = None
    choices: tuple = ()
    required: str = ""
    field: str | None = ""
    metavar: str | None = None
    from_field: object = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def console_field(self) -> str | None:
        return self.name if self.field == "" else self.field

    def add_to(self, parser) -> None:
        """Add the option's flag to a command's argument parser."""
        if self.type is bool:
            parser.add_argument(self.flag, action="store_true", help=self.help)
            return
        extra = {"type": self.type} if self.type is not str else {}
        extra.update({"choices": self.choices} if self.choices else {})
        extra.update({"default": self.default} if self.default is not None else {})
        extra.update({"required": True} if self.required else {})
        extra.update({"metavar": self.metavar} if self.metavar else {})
        parser.add_argument(self.flag, help=self.help, **extra)

    def read(self, data: dict):
        """The option's value from a console form's cleaned data."""
        value = data[self.console_field]
        if self.from_field is not None:
            return self.from_field(value)
        return (value or self.default) if self.default is not None else value


class ImportCommand(BaseCommand):
    """Base for importer commands: --no-progress, and ImportFailed turned into a CommandError listing the problems."""

    def create_parser(self, prog_name, subcommand, **kwargs):
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.add_argument("--no-progress", action="store_true", help="Do not show a progress bar.")
        return parser

    def execute(self, *args, **options):
        self.show_progress = not options.get("no_progress", False)
        try:
            return super().execute(*args, **options)
        except ImportFailed as exc:
            raise CommandError(f"nothing was imported:\n{exc.report()}") from exc
        except DatabaseError as exc:
            # Every importer writes in one transaction: a failure part way rolls all of it back.
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CommandError(
                f"nothing was imported: the database failed while writing ({type(exc).__name__}: {first_line}); "
                "the transaction was rolled back, run the command again once the database is back"
            ) from exc

    def add_options(self, parser, options) -> None:
        """Add the flags of a registered importer's options (Option.add_to)."""
        for option in options:
            option.add_to(parser)

    def progress(self, iterable=None, **kwargs):
        """A progress bar that honours --no-progress."""
        return progress(iterable, enabled=self.show_progress, **kwargs)
