"""Clamp assessors' clocks stored before the window the save path now keeps (2000-01-01 on, UTC).

Before it, a save could store any zoned time: `0001-01-01T00:00:00+14:00` is a date before the year 1 in UTC, which
PostgreSQL keeps but psycopg cannot read back, so the audit, the Y3 export and campaign deletion failed on it. Such
rows get 2000-01-01T00:00Z (the history keeps the change; only its clock moves to the window's start). The UPDATE
compares in the database, never reading the bad value into Python.
"""

from django.db import migrations

EARLIEST = "2000-01-01 00:00:00"


def clamp(apps, schema_editor):
    connection = schema_editor.connection
    quote = connection.ops.quote_name
    earliest = EARLIEST + ("+00:00" if connection.vendor == "postgresql" else "")
    with connection.cursor() as cursor:
        for model in ("JudgementChange", "Judgement"):
            table = quote(apps.get_model("assessments", model)._meta.db_table)
            column = quote("client_time")
            cursor.execute(f"UPDATE {table} SET {column} = %s WHERE {column} < %s", [earliest, earliest])


class Migration(migrations.Migration):

    dependencies = [
        ("assessments", "0011_topic_facets_version"),
    ]

    operations = [
        migrations.RunPython(clamp, migrations.RunPython.noop),
    ]
