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

from assessments.importers.topic_ids import topic_id
from assessments.models import Judgement, Pool, Topic
from retrieval.models import Collection


class ExportFailed(Exception):
    """An export that cannot be done or could not be finished; the message says why and where.

    `field` names the option at fault in words every caller understands (`assessor`, `collection`…): the
    commands show it as a flag (`--assessor: …`), the API as the field of its 400, pages beside the input.
    """

    def __init__(self, message, field=None):
        super().__init__(message)
        self.field = field
        self.message = message

    def __str__(self):
        return f"{self.field}: {self.message}" if self.field else self.message

    def as_flag(self) -> str:
        """The message as a command line shows it: `--field: message`."""
        return f"--{self.field.replace('_', '-')}: {self.message}" if self.field else self.message


@dataclass(frozen=True)
class Scope:
    """The judgements to export: one collection, optionally some of its topics and one assessor."""

    collection: Collection
    topic_ids: tuple[int, ...] | None = None  # None: every topic of the collection
    assessor: object | None = None  # a user, or None for every assessor
    campaign_id: int | None = None  # one campaign's own labels, or None for every human label of the collection

    def judgements(self):
        """Judgement rows in scope, without the model's default ordering (it would join the topic table); never
        practice labels (qualification answers: Judgement.objects.without_practice)."""
        rows = Judgement.objects.filter(topic__collection=self.collection).without_practice(self.campaign_id).order_by()
        if self.campaign_id is not None:
            rows = rows.filter(campaign_id=self.campaign_id)
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


def resolve_scope(*, collection=None, topics=(), pool=None, assessor=None, campaign_id=None) -> Scope:
    """The Scope named by these options; ExportFailed names the option that does not exist or is ambiguous.

    Without a collection, the collection is the one the named topics (or pool) belong to, or else the only
    collection that has judgements.
    """
    user = None
    if assessor:
        user = get_user_model().objects.filter(username=assessor).first()
        if user is None:
            raise ExportFailed(f"no user named {assessor!r}", "assessor")

    coll = None
    if collection:
        coll = Collection.objects.filter(name=collection).first()
        if coll is None:
            raise ExportFailed(f"no collection named {collection!r}", "collection")

    pool_topic_ids = None
    if pool:
        found = Pool.objects.filter(name=pool).select_related("collection").first()
        if found is None:
            raise ExportFailed(f"no pool named {pool!r}", "pool")
        if coll is not None and found.collection_id != coll.pk:
            raise ExportFailed(
                f"pool {pool!r} belongs to collection {found.collection.name!r}, not {collection!r}", "pool"
            )
        coll = found.collection
        pool_topic_ids = set(found.topics.values_list("pk", flat=True))

    topic_ids = None
    if topics:
        wanted = list(dict.fromkeys(topics))
        # as written, or as the one rule stores it (topic_ids.topic_id: --topic 051 is topic 51)
        rows = Topic.objects.filter(external_id__in={*wanted, *map(topic_id, wanted)})
        if coll is not None:
            rows = rows.filter(collection=coll)
        matches = list(rows.values_list("external_id", "pk", "collection__name", "collection_id"))
        stored = {m[0] for m in matches}
        missing = [t for t in wanted if t not in stored and topic_id(t) not in stored]
        where = f" in collection {coll.name!r}" if coll is not None else ""
        if missing:
            raise ExportFailed(f"no topic {', '.join(map(repr, missing))}{where}", "topic")
        collections = {m[3]: m[2] for m in matches}
        if len(collections) > 1:
            names = ", ".join(sorted(collections.values()))
            raise ExportFailed(f"the topics are in several collections ({names}); name one", "collection")
        if coll is None:
            coll = Collection.objects.get(pk=next(iter(collections)))
        topic_ids = {m[1] for m in matches}
        if pool_topic_ids is not None:
            outside = sorted(m[0] for m in matches if m[1] not in pool_topic_ids)
            if outside:
                raise ExportFailed(f"{', '.join(map(repr, outside))} not in pool {pool!r}", "topic")
    elif pool_topic_ids is not None:
        topic_ids = pool_topic_ids

    if coll is None:
        judged = Collection.objects.filter(Exists(Judgement.objects.filter(topic__collection=OuterRef("pk"))))
        names = list(judged.values_list("name", flat=True)[:10])
        if not names:
            raise ExportFailed("there are no judgements to export")
        if len(names) > 1:
            raise ExportFailed(f"there are judgements of several collections ({', '.join(names)}): name one", "collection")
        coll = judged.get()

    return Scope(coll, tuple(sorted(topic_ids)) if topic_ids is not None else None, user, campaign_id)


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
