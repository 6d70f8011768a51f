"""Ids (and other whole numbers) from a request or a person's text: the one parser every app uses.

`str.isdigit()` is true of "²", "①" and every other Unicode digit, which `int()` then refuses (a 500); `int()`
alone also takes " 7", "+7", "٧" and "1_000". An id here is ASCII digits only, within a positive 64-bit integer
(PostgreSQL's bigint, the widest id column), or a narrower range the caller names.
"""

import re

ID_MAX = 2**63 - 1


def parse_id(text, *, minimum: int = 1, maximum: int = ID_MAX) -> int | None:
    """The whole number `text` spells in ASCII digits, when it lies from `minimum` to `maximum`; else None (the
    caller answers 404, or 400 naming the field)."""
    text = str(text)
    if not text.isascii() or not text.isdigit() or len(text) > len(str(maximum)):
        return None
    value = int(text)
    return value if minimum <= value <= maximum else None


def past_any_id(text) -> bool:
    """Whether `text` spells a whole number, or several with commas between (an admin `__in` lookup), one of which
    lies past any id (beyond a signed 64-bit integer): the database cannot compare a column with it (SQLite raises
    OverflowError, PostgreSQL an out-of-range error)."""
    for part in str(text).split(","):
        digits = part.strip().removeprefix("-").removeprefix("+")
        if digits.isascii() and digits.isdigit():
            digits = digits.lstrip("0")
            if len(digits) > len(str(ID_MAX)) or (digits and int(digits) > ID_MAX):
                return True
    return False


def natural_key(text: str) -> tuple:
    """Sort ids as people read them: digit runs by number ("2" before "10", "q2" before "q10"), the rest as text."""
    return tuple((0, int(part), "") if part.isascii() and part.isdigit() else (1, 0, part)
                 for part in _DIGITS.split(text) if part)


_DIGITS = re.compile(r"(\d+)", re.ASCII)
LOOKUP_BATCH = 10_000  # ids a query in a lookup by many ids: far under PostgreSQL's 65,535 parameters


def batched(ids, size: int | None = None):
    """`ids` in lists of at most `size` (default LOOKUP_BATCH), for one query each: a single `IN (...)` over every id
    of a big import fails past the database's parameter limit (psycopg: 'number of parameters must be between 0 and
    65535')."""
    ids, size = list(ids), size or LOOKUP_BATCH
    for start in range(0, len(ids), size):
        yield ids[start : start + size]
