"""Writing many rows fast: PostgreSQL's COPY (executemany elsewhere), for the importers of every app."""

import json

from django.db import connection
from django.db.models.fields import NOT_PROVIDED
from django.utils import timezone

COPY_ROWS = 50_000  # rows between progress updates while copying


def no_progress(iterable=None, **kwargs):
    """Stand-in for ImportCommand.progress when no bar is wanted."""
    return iterable


def insert_rows(model, fields, rows, *, total=None, progress=no_progress, desc="", plain_text=False):
    """Insert `rows` (tuples of database-ready values of the model's `fields`, by attribute name, e.g. topic_id)
    straight into the model's table: PostgreSQL's COPY, else executemany; no model instances, no signals.

    Every other column gets its field's default (auto_now_add: now), computed once; a column with a database
    default is left to the database. plain_text: the caller vouches that no text value holds a backslash, tab,
    newline or carriage return (nor is None), so COPY's text lines are formatted in one step per row (on
    PostgreSQL a caller may instead pass texts it escaped itself with copy_escaped). Returns how many rows were
    written.
    """
    opts = model._meta
    given = [opts.get_field(name) for name in fields]
    names = {f.attname for f in given}
    now = timezone.now()
    fixed = []
    for f in opts.concrete_fields:
        if f.attname in names or f.primary_key or getattr(f, "generated", False):
            continue
        if getattr(f, "db_default", NOT_PROVIDED) is not NOT_PROVIDED:
            continue
        value = now if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False) else f.get_default()
        fixed.append((f, f.get_db_prep_save(value, connection)))
    columns = [f.column for f in given] + [f.column for f, _ in fixed]
    extra = tuple(value for _, value in fixed)
    table = connection.ops.quote_name(opts.db_table)
    column_list = ", ".join(connection.ops.quote_name(c) for c in columns)
    bar = progress(total=total, desc=desc, unit="row")
    written = 0

    def tick(n):
        if bar is not None:
            bar.update(n)

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({column_list}) FROM STDIN") as copy:
                if plain_text:
                    line = "\t".join([_copy_placeholder(f) for f in given] + [_copy_text(v) for v in extra]) + "\n"
                    chunk = []
                    for row in rows:
                        chunk.append(line % row)
                        if len(chunk) == COPY_ROWS:
                            copy.write("".join(chunk))
                            written += len(chunk)
                            chunk.clear()
                            tick(COPY_ROWS)
                    copy.write("".join(chunk))
                    written += len(chunk)
                else:
                    for row in rows:
                        copy.write_row(row + extra)
                        written += 1
                        if written % COPY_ROWS == 0:
                            tick(COPY_ROWS)
        else:
            sql = f"INSERT INTO {table} ({column_list}) VALUES ({', '.join(['%s'] * len(columns))})"
            batch = []
            for row in rows:
                batch.append(row + extra)
                if len(batch) == COPY_ROWS:
                    cursor.executemany(sql, batch)
                    written += len(batch)
                    batch.clear()
                    tick(COPY_ROWS)
            if batch:
                cursor.executemany(sql, batch)
                written += len(batch)
    tick(written % COPY_ROWS)
    if bar is not None:
        bar.close()
    return written


COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def copy_escaped(text: str) -> str:
    """A text as COPY's text format writes it (backslash, tab, newline and carriage return escaped)."""
    if "\\" in text or "\t" in text or "\n" in text or "\r" in text:
        return text.translate(COPY_ESCAPES)
    return text


def has_copy_specials(values) -> bool:
    """Whether any of the texts holds a character COPY's text format must escape (see insert_rows plain_text)."""
    joined = "".join(values)
    return any(c in joined for c in "\\\t\n\r")


def _copy_placeholder(field):
    """The %-format of one column of a COPY text line: integers as %d, floats in full (%r), the rest as text."""
    internal = field.get_internal_type()
    if internal.endswith(("IntegerField", "AutoField")) or field.is_relation:
        return "%d"
    if internal == "FloatField":
        return "%r"
    return "%s"


def _copy_text(value) -> str:
    """One fixed value in COPY's text format (\\N for NULL), with %% doubled for the line's %-format."""
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        text = "t" if value else "f"
    elif hasattr(value, "obj"):  # psycopg's Json/Jsonb wrapper
        text = json.dumps(value.obj, ensure_ascii=False)
    elif hasattr(value, "isoformat"):
        text = value.isoformat()
    else:
        text = str(value)
    return text.translate(COPY_ESCAPES).replace("%", "%%")
