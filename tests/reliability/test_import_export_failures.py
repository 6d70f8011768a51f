"""Disk full or a database error in the middle of an import or export: a clear error, no partial rows, and no
truncated file left where the complete one would be.

The disk is made full for real: /dev/full answers every write with ENOSPC, and RLIMIT_FSIZE makes the kernel
refuse (EFBIG) a write past a size, part way through an export. The database error is raised by Django's
execute hook on the second batch of an import's INSERTs, as a connection cut by a restart would.
"""

import os
import resource
import signal
import stat
import threading
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import OperationalError, connection

from assessments.models import Judgement, Topic
from tests import factories
from tests.factories import db_snapshot

FILE_LIMIT = 64 * 1024


@pytest.fixture
def many_changes(db):
    """300 judgement changes (about 120 KB of audit lines) and 300 judgements (page-level qrels)."""
    coll = factories.collection("web")
    topic = factories.topic(coll, "301", kind=Topic.Kind.ADHOC)
    judge = factories.user("judge")
    start = datetime(2024, 5, 1, tzinfo=UTC)
    for i in range(300):
        passage = factories.passage(coll, f"doc-{i:04d}")
        factories.judgement(judge, topic, passage, layer="notes", value="n" * 200,
                            client_time=start + timedelta(seconds=i), session_id="s")
    return coll


@contextmanager
def files_limited_to(size):
    """Writes past `size` bytes fail with EFBIG (SIGXFSZ ignored, so the write returns the error)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


def test_export_audit_to_a_full_disk_says_so(many_changes):
    with pytest.raises(CommandError, match=r"cannot write '/dev/full': No space left on device; nothing was written"):
        call_command("export_audit", "--out", "/dev/full")
    assert stat.S_ISCHR(Path("/dev/full").stat().st_mode)  # written to, never replaced


def test_export_qrels_to_a_full_disk_says_so_and_leaves_the_device_alone(many_changes):
    Judgement.objects.update(layer="plot_grade", value=1, grade=1)
    with pytest.raises(CommandError, match=r"cannot write '/dev/full': No space left on device"):
        call_command("export_qrels", "--collection", "web", "--aggregate", "max", "--out", "/dev/full")
    assert stat.S_ISCHR(Path("/dev/full").stat().st_mode)  # a rename over it would have replaced the device
    assert not [p for p in Path("/dev").iterdir() if p.name.startswith(".full.")]


def test_an_export_to_a_pipe_goes_through_the_pipe(many_changes, tmp_path):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_text()))
    reader.start()
    call_command("export_audit", "--out", str(pipe))
    reader.join(10)
    assert received and received[0].count("\n") == 300
    assert stat.S_ISFIFO(pipe.lstat().st_mode)


def test_an_export_audit_cut_short_leaves_no_file(many_changes, tmp_path):
    out = tmp_path / "audit.jsonl"
    with files_limited_to(FILE_LIMIT), pytest.raises(CommandError, match="File too large; nothing was written"):
        call_command("export_audit", "--out", str(out))
    assert list(tmp_path.iterdir()) == []  # neither the file nor its temporary


def test_an_export_audit_cut_short_keeps_the_previous_complete_file(many_changes, tmp_path):
    out = tmp_path / "audit.jsonl"
    call_command("export_audit", "--out", str(out))
    complete = out.read_bytes()
    assert len(complete) > FILE_LIMIT
    out.write_bytes(b'{"previous": true}\n')
    with files_limited_to(FILE_LIMIT), pytest.raises(CommandError):
        call_command("export_audit", "--out", str(out))
    assert out.read_bytes() == b'{"previous": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["audit.jsonl"]


def test_a_qrels_export_cut_short_leaves_no_file(many_changes, tmp_path):
    Judgement.objects.update(layer="plot_grade", value=1, grade=1)  # gradeable labels, so every row is a qrel
    out = tmp_path / "qrels.txt"
    with files_limited_to(2048), pytest.raises(CommandError, match="File too large"):
        call_command("export_qrels", "--collection", "web", "--aggregate", "max", "--out", str(out))
    assert list(tmp_path.iterdir()) == []


def test_a_database_error_in_the_middle_of_an_import_leaves_no_rows(db, tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("".join(f"301 Q0 doc-{i:05d} {i + 1} {3000 - i} big\n" for i in range(2500)))
    inserts = []

    def cut_at_the_run(execute, sql, params, many, context):
        # Rows are written in bulk (COPY on PostgreSQL, executemany on SQLite); the run's own row comes after the
        # collection, the topic and 2,500 new passages: the connection is cut there, in the middle of the import.
        if sql.lstrip().upper().startswith("INSERT"):
            inserts.append(sql)
            if sql.startswith('INSERT INTO "assessments_run" '):
                raise OperationalError("server closed the connection unexpectedly")
        return execute(sql, params, many, context)

    before = db_snapshot()
    with connection.execute_wrapper(cut_at_the_run), pytest.raises(CommandError) as failed:
        call_command("import_trec_run", str(run), "--collection", "web", "--create-missing", "--no-progress")
    assert str(failed.value) == (
        "nothing was imported: the database failed while writing (OperationalError: server closed the connection "
        "unexpectedly); the transaction was rolled back, run the command again once the database is back"
    )
    assert any('"assessments_topic"' in sql for sql in inserts[:-1])  # it did fail after rows were written
    assert db_snapshot() == before
