"""CSV cells a spreadsheet cannot run: every CSV writer passes its rows through safe_row.

A spreadsheet (Excel, LibreOffice, Google Sheets) takes a cell that starts with `=`, `+`, `-` or `@` as a
formula, and some also after a leading tab or carriage return; a run name, topic id, assessor name or query
text such as `=HYPERLINK(...)` or `@SUM(...)` would then run when an organiser opens the export. Such a text
gets a leading `'` (the OWASP advice: the spreadsheet shows it as text). Numbers stay numbers: an agreement of
-0.25, given as a number or as the plain decimal text "-0.25", is left as it is.
"""

import re

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\Z")


def spreadsheet_safe(value):
    """The value as a cell no spreadsheet runs as a formula: a text starting with one of FORMULA_START gets a
    leading `'` unless it is a plain decimal number; everything that is not text is returned unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not PLAIN_NUMBER.match(value):
        return "'" + value
    return value


def safe_row(row: dict) -> dict:
    """A CSV row (column → value) with every cell passed through spreadsheet_safe."""
    return {key: spreadsheet_safe(value) for key, value in row.items()}
