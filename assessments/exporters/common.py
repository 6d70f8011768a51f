"""Shared by the exporters: what to export (collection, topics, assessor), atomic writes, byte-order sorting."""

import os
import tempfile
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import connection, connections
from django.db.models import Exists, F, OuterRef
from django.db.models.functions import Collate
from django.db.models.sql.constants import MULTI

from assessments.models import Judgement, Pool, Topic
from retrieval.models import Collection


class ExportFailed(Exception):
    """An export that cannot be done or could not be finished; the message says why and where."""


@dataclass(frozen=True)
class Scope:
    """The judgements to export: one collection, optionally some of its topics and one assessor."""

    collection: Collection
    topic_ids: tuple[int, ...] | None = None  # None: every topic of the collection
    assessor: object | None = None  # a user, or None for every assessor

    def judgements(self):
        """Judgement rows in scope, without the model's default ordering (it would join the topic table)."""
        rows = Judgement.objects.filter(topic__collection=self.collection).order_by()
        if self.topic_ids is not None:
            rows = rows.filter(topic_id__in=self.topic_ids)
        if self.assessor is not None:
            rows = rows.filter(assessor=self.assessor)
        return rows

    def topics(self):
        """Topic rows in scope."""
        topics = Topic.objects.filter(collection=self.collection)
        if self.topic_ids is not None:
            topics = topics.filter(pk__in=self.topic_ids)
        return topics


def resolve_scope(*, collection=None, topics=(), pool=None, assessor=None) -> Scope:
    """The Scope named by command-line style arguments; ExportFailed says what does not exist or is ambiguous.

    Without a collection, the collection is the one the named topics (or pool) belong to, or else the only
    collection that has judgements.
    """
    user = None
    if assessor:
        user = get_user_model().objects.filter(username=assessor).first()
        if user is None:
            raise ExportFailed(f"--assessor: no user named {assessor!r}")

    coll = None
    if collection:
        coll = Collection.objects.filter(name=collection).first()
        if coll is None:
            raise ExportFailed(f"--collection: no collection named {collection!r}")

    pool_topic_ids = None
    if pool:
        found = Pool.objects.filter(name=pool).select_related("collection").first()
        if found is None:
            raise ExportFailed(f"--pool: no pool named {pool!r}")
        if coll is not None and found.collection_id != coll.pk:
            raise ExportFailed(
                f"--pool: pool {pool!r} belongs to collection {found.collection.name!r}, not {collection!r}"
            )
        coll = found.collection
        pool_topic_ids = set(found.topics.values_list("pk", flat=True))

    topic_ids = None
    if topics:
        wanted = list(dict.fromkeys(topics))
        rows = Topic.objects.filter(external_id__in=wanted)
        if coll is not None:
            rows = rows.filter(collection=coll)
        matches = list(rows.values_list("external_id", "pk", "collection__name", "collection_id"))
        missing = [t for t in wanted if t not in {m[0] for m in matches}]
        where = f" in collection {coll.name!r}" if coll is not None else ""
        if missing:
            raise ExportFailed(f"--topic: no topic {', '.join(map(repr, missing))}{where}")
        collections = {m[3]: m[2] for m in matches}
        if len(collections) > 1:
            names = ", ".join(sorted(collections.values()))
            raise ExportFailed(f"--topic: the topics are in several collections ({names}); name one with --collection")
        if coll is None:
            coll = Collection.objects.get(pk=next(iter(collections)))
        topic_ids = {m[1] for m in matches}
        if pool_topic_ids is not None:
            outside = sorted(m[0] for m in matches if m[1] not in pool_topic_ids)
            if outside:
                raise ExportFailed(f"--topic: {', '.join(map(repr, outside))} not in pool {pool!r}")
    elif pool_topic_ids is not None:
        topic_ids = pool_topic_ids

    if coll is None:
        judged = Collection.objects.filter(Exists(Judgement.objects.filter(topic__collection=OuterRef("pk"))))
        names = list(judged.values_list("name", flat=True)[:10])
        if not names:
            raise ExportFailed("there are no judgements to export")
        if len(names) > 1:
            raise ExportFailed(f"judgements of several collections ({', '.join(names)}): name one with --collection")
        coll = judged.get()

    return Scope(coll, tuple(sorted(topic_ids)) if topic_ids is not None else None, user)


def raw_rows(queryset, chunk_size=2000):
    """Stream the rows of a values_list queryset as the database driver returns them.

    Like queryset.iterator(chunk_size) (one query, a server-side cursor where the backend has them),
    but without Django's per-value conversions, which cost more than the exporters' own work: JSON
    fields stay JSON text, and SQLite's datetimes stay text ('YYYY-MM-DD HH:MM:SS[.ffffff]', UTC).
    Use it only for plain fields, in the order given to values_list.
    """
    db = queryset.db
    compiler = queryset.query.get_compiler(using=db)
    chunked = not connections[db].settings_dict.get("DISABLE_SERVER_SIDE_CURSORS")
    return chain.from_iterable(compiler.execute_sql(MULTI, chunked_fetch=chunked, chunk_size=chunk_size))


def byte_order(field):
    """An order_by expression sorting text by its bytes (code points), as Python sorts str, on every backend."""
    if connection.vendor == "postgresql":
        return Collate(F(field), "C")
    return F(field)  # SQLite compares text with BINARY unless told otherwise


def prepare_directory(path) -> Path:
    """Create the output directory if needed and make sure files can be written in it; ExportFailed if not."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".write-test-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ExportFailed(f"cannot write to directory {str(path)!r}: {exc.strerror or exc}") from None
    return path


@contextmanager
def atomic_file(path, *, fsync=True):
    """A text file open for writing whose content appears at `path` only if the block finishes.

    Written to a hidden temporary file beside `path`, then renamed over it: a failure (or a crash)
    leaves the old file or none, never a truncated one. A `path` that exists and is not a regular file
    (/dev/stdout, /dev/full, a pipe) is written directly: renaming over it would replace the device or the
    pipe with a file. OSError becomes ExportFailed naming the file.
    """
    path = Path(path)
    if path.exists() and not path.is_file():
        try:
            with open(path, "w", encoding="utf-8", newline="\n") as handle:
                yield handle
        except OSError as exc:
            raise ExportFailed(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
        return
    try:
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise ExportFailed(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            os.fchmod(fd, 0o666 & ~_umask())  # as open() would create it; mkstemp makes it private (0600)
            yield handle
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as exc:
        raise ExportFailed(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
    finally:
        with suppress(FileNotFoundError):
            os.unlink(temporary)


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
