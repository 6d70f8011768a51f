"""Shared plumbing for importers: reading untrusted files, collecting problems with their place, progress bars.

Importers parse and check the whole input first, collecting every problem
(file, line or record, field, message); only a clean input is written, inside
one transaction, so a bad file writes nothing.
"""

import gzip
import json
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError
from tqdm import tqdm

MAX_REPORTED = 50


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

    def add(self, message, *, line=None, field=None):
        self.total += 1
        if len(self.items) < self.cap:
            self.items.append(Problem(self.source, line, field, message))

    def __bool__(self):
        return self.total > 0

    def fail(self, message, *, line=None, field=None):
        """Add a problem and stop at once."""
        self.add(message, line=line, field=field)
        raise ImportFailed(self.items, self.total)

    def raise_if_any(self):
        if self.total:
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


def read_text(path) -> str:
    """Read a file as text (see decode_text); a missing or unreadable file is an ImportFailed too."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImportFailed([Problem(str(path), None, None, f"cannot read: {exc.strerror or exc}")]) from None
    return decode_text(data, str(path))


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


def parse_json_lines(text: str, problems: Problems):
    """Yield (line number, object) for each non-blank line; a line that is not a JSON object is a problem."""
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.add(f"invalid JSON: {exc.msg} at column {exc.colno}", line=number)
            continue
        except RecursionError:
            problems.add("invalid JSON: nested too deeply", line=number)
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

    def progress(self, iterable=None, **kwargs):
        """A progress bar that honours --no-progress."""
        return progress(iterable, enabled=self.show_progress, **kwargs)
