"""Files uploaded in the organiser's console, imported by the importers the manage.py commands call, as a job.

start_import() checks the form-level things (a known kind, files present, sizes, the options each kind
needs), stores the files with a DataImport and queues run_data_import after the commit, as every background job is
queued (retrieval.services.background: without a broker, in the web process's background thread, so the import's
page follows its progress). The task is annotation.tasks.run_data_import, queued by its name, so this module
never imports the tasks module that imports it. run_import() claims the job with a
conditional UPDATE, writes the files to a temporary folder under their uploaded names and calls the kind's
importer, registered once for the kind (assessments.importers.registry; the console's form and the kind's command
read the same registration): every importer checks the whole input first, so a bad file writes
nothing, and the job keeps every problem with its file, line and field. Topics the files bring are added to
the campaign that started the import. Progress goes through the cache (background.live; CACHE_URL: shared by every
process in production), since the importers write inside one transaction that no other process sees until it
commits.
"""

import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils.text import get_valid_filename

from annotation import importers
from annotation.models import DataImport, DataImportFile, Track
from annotation.services.errors import ServiceError
from annotation.units import tasks
from assessments.importers.trec import ids_by_external_id, no_progress
from assessments.models import QrelSet, Run, Topic
from retrieval.ingest import ImportFailed, InputTooLarge, Problems
from retrieval.services import background
from retrieval.services.background import TRANSIENT_ERRORS

Kind = DataImport.Kind
NUGGET_KINDS = {kind for kind in Kind if importers.get(kind).campaign_only}  # a nuggets campaign's only (its Data page)
MAX_FILES = 50


class ImportInvalid(ServiceError):
    """An upload that cannot start as asked (no file, too large, a missing option); `field` names the input."""


@dataclass
class Upload:
    """One uploaded file: its name and a binary file object (a Django UploadedFile will do)."""

    name: str
    file: object
    size: int | None = None


def kinds_for(task) -> list:
    """The kinds of data a campaign of `task` takes, most useful first; None: the site's Data page (no campaign)."""
    if task is None:
        return [kind for kind in Kind if kind not in NUGGET_KINDS]
    return list(tasks.get(task).data)


def start_import(*, kind, uploads, collection="", options=None, campaign=None, user=None) -> DataImport:
    """Store the uploads as a DataImport and queue its import; ImportInvalid names the input at fault."""
    if kind not in Kind.values:
        raise ImportInvalid("kind", f"{kind!r} is not one of {', '.join(Kind.values)}")
    kind = Kind(kind)
    importer = importers.get(kind)
    options = dict(options or {})
    uploads = [u for u in uploads if u is not None]
    if not uploads:
        raise ImportInvalid("files", "choose a file to upload")
    if not importer.many_files and len(uploads) > 1:
        raise ImportInvalid("files", f"{kind.label} comes as one file; upload the others separately")
    if len(uploads) > MAX_FILES:
        raise ImportInvalid("files", f"at most {MAX_FILES} files at once")
    most = settings.API_MAX_UPLOAD_BYTES
    known = 0
    for upload in uploads:
        size = upload.size if upload.size is not None else getattr(upload.file, "size", None)
        if size is not None and size > most:
            raise ImportInvalid("files", f"{upload.name} has {size:,} bytes; at most {most:,} bytes a file are taken")
        known += size or 0
    _check_total(known, len(uploads))
    if campaign is not None:
        track = Track.objects.select_related("collection").filter(campaign=campaign).first()
        if track is not None and not importer.own_collection:
            collection = track.collection.name
    collection = (collection or "").strip()
    if importer.needs_collection and not collection:
        raise ImportInvalid("collection", "name the collection the file is about")
    collection = collection or importer.default_collection
    for option in importer.options:
        if option.required and not str(options.get(option.name, "")).strip():
            raise ImportInvalid(option.name, option.required)
    if importer.campaign_only:
        if campaign is None:
            raise ImportInvalid("kind", f"{kind.label} go into a nuggets campaign: upload them on its Data page")
        _nugget_scope(campaign)
    with transaction.atomic():
        data_import = DataImport.objects.create(
            kind=kind, campaign=campaign, collection=collection, options=options, created_by=user,
            file_names=[u.name for u in uploads],
        )
        total = 0
        for position, upload in enumerate(uploads):
            content = _read_all(upload.file)
            if len(content) > most:
                raise ImportInvalid(
                    "files", f"{upload.name} has more than {most:,} bytes; at most {most:,} bytes a file are taken")
            total += len(content)
            _check_total(total, len(uploads))  # sizes a file object did not say: counted as read, nothing kept
            DataImportFile.objects.create(
                data_import=data_import, position=position, name=upload.name[:255], size=len(content), content=content,
            )
        send(data_import.pk)
    return data_import


def _check_total(total: int, files: int) -> None:
    """One import's files together (documents come as many) hold no more than one file may unpack to
    (API_MAX_UNCOMPRESSED_BYTES): 50 files of 20 MB were a gigabyte stored from one request."""
    most = settings.API_MAX_UNCOMPRESSED_BYTES
    if total > most:
        raise ImportInvalid("files", f"the {files} files have {total:,} bytes or more together; at most {most:,} "
                                     "bytes are taken at once (API_MAX_UNCOMPRESSED_BYTES): upload them in parts")


def _read_all(file) -> bytes:
    if hasattr(file, "chunks"):
        return b"".join(file.chunks())
    return file.read()


def send(import_id: int) -> None:
    """Queue the import for the workers when the current transaction commits (at once outside one)."""
    background.queue(DataImport(pk=import_id).task_name(), import_id)


def resend_queued(**_) -> int:
    """After a worker died (retrieval's node_died): send the queued imports again, whose message it may have taken.
    An import is claimed once, so a second message does nothing."""
    return background.resend_unfinished(DataImport)


def claim(import_id: int, redelivered: bool = False) -> bool:
    """Take a queued import (or a running one whose message came back: its worker died); False if someone has it."""
    return background.claim(DataImport, import_id, redelivered=redelivered)


def run_import(import_id: int, redelivered: bool = False) -> DataImport | None:
    """Import a claimed DataImport's files; store the summary or every problem. None when someone else has it."""
    if not claim(import_id, redelivered):
        return None
    data_import = DataImport.objects.select_related("campaign").get(pk=import_id)
    report, names = background.live(data_import), {}
    try:
        with tempfile.TemporaryDirectory(prefix="pooljudge-import-") as folder:
            paths, names = _write_files(data_import, Path(folder))
            summary, topic_ids = import_files(
                data_import.kind, paths, data_import.collection, data_import.options, progress=report,
                campaign=data_import.campaign, owner=data_import.created_by,
            )
            _name_sources(names)
            for path, name in names.items():  # a warning names its file as uploaded, not the temporary path
                summary = summary.replace(path, name)
            added = _add_topics(data_import.campaign, topic_ids, data_import.kind)
    except ImportFailed as exc:
        problems = [_problem(p, names) for p in exc.problems]
        _finish(import_id, DataImport.Status.FAILED, problems=problems, problem_total=exc.total)
    except InputTooLarge as exc:
        _finish(import_id, DataImport.Status.FAILED, problems=[_message(str(exc))], problem_total=1)
    except TRANSIENT_ERRORS:
        DataImport.objects.filter(pk=import_id).update(status=DataImport.Status.QUEUED)  # the task retries it
        raise
    except Exception as exc:  # noqa: BLE001 — a bug must not leave the job running for ever; it is logged by Celery
        _finish(import_id, DataImport.Status.FAILED, problems=[_message(f"the import failed: {exc}")], problem_total=1)
        raise
    else:
        note = f" {added:,} topics added to campaign {data_import.campaign.name!r}." if added else ""
        _finish(import_id, DataImport.Status.DONE, summary=summary + note)
    return DataImport.objects.get(pk=import_id)


def give_up(import_id: int, message: str) -> None:
    """Fail an import for good (the task's retries are spent): nothing was imported, and it says why."""
    _finish(import_id, DataImport.Status.FAILED, problems=[_message(message)], problem_total=1)


def _finish(import_id, status, **fields):
    problems = fields.get("problems") or []
    error = ""
    if status == DataImport.Status.FAILED and problems:
        first = problems[0]
        where = ":".join(str(part) for part in (first["source"], first["line"], first["field"]) if part)
        total = fields.get("problem_total") or len(problems)
        where = f"{where}: " if where else ""
        error = f"{total:,} problem{'s' if total != 1 else ''}; the first: {where}{first['message']}"
    step = progress_of(import_id)  # its last step's counts stay on the row
    ended = DataImport(pk=import_id, items_done=step.get("done") or 0, rate=step.get("rate"))
    with transaction.atomic():
        background.end(ended, status, error=error, items_total=step.get("total") or 0, **fields)
        DataImportFile.objects.filter(data_import_id=import_id).update(content=b"")


def _write_files(data_import, folder: Path):
    """Write the import's files into `folder` (one sub-folder each, under the uploaded name); (paths, names)."""
    paths, names = [], {}
    for item in data_import.files.order_by("position"):
        directory = folder / str(item.position)
        directory.mkdir()
        path = directory / (get_valid_filename(Path(item.name).name) or f"file{item.position}")
        path.write_bytes(bytes(item.content))
        paths.append(path)
        names[str(path)] = item.name
    return paths, names


def _name_sources(names):
    """The runs and qrels an import wrote name their source by the uploaded file's name, not the temporary path
    the importer read (the folder is gone once the import ends)."""
    for path, name in names.items():
        for model in (Run, QrelSet):
            model.objects.filter(source_file=path).update(source_file=name[:500])


def _problem(problem, names) -> dict:
    source = names.get(problem.source, Path(problem.source).name if problem.source.startswith("/") else problem.source)
    field = (problem.field or "").lstrip("-") or None
    return {"source": source, "line": problem.line, "field": field, "message": problem.message}


def _message(text) -> dict:
    return {"source": "", "line": None, "field": None, "message": text}


def import_files(kind, paths, collection, options, *, progress=None, campaign=None, owner=None
                 ) -> tuple[str, list[int]]:
    """Import files of one kind with its registered importer (the one the kind's command reads); (summary, ids of
    the topics they name). Nugget banks and assignments go into `campaign` (a nuggets campaign), under the commands'
    default users. A TREC run uploaded for a campaign is submitted to it (track) by `owner` (who uploaded it), as a
    run uploaded over the API is: it is the campaign's, listed by `GET /api/runs/?campaign=` and scored on its
    results page.

    Raises ImportFailed (nothing written) with every problem the importer found.
    """
    return importers.get(Kind(kind)).run(paths, collection, options, progress=progress or no_progress,
                                         campaign=campaign, owner=owner)


def _nugget_scope(campaign):
    """ImportInvalid unless `campaign` takes nugget files (a nuggets campaign with topics: nuggets.campaign_scope)."""
    from annotation.services.nuggets import campaign_scope

    try:
        campaign_scope(campaign)
    except ServiceError as exc:
        raise ImportInvalid(exc.field, exc.message) from None


def import_campaign_topics(campaign, path, *, fmt="auto", update=False, own_only=False) -> tuple[str, int]:
    """A topics file into the campaign's collection (import_topics: checked whole, ImportFailed with every problem
    and nothing written), its topics joining the campaign: (the importer's summary, topics new to the campaign). The
    API's topic upload; the console's uploads run the same importer as a job (import_files). `own_only` (a token
    limited to the campaign): a topic the collection has that is not the campaign's is a problem, as the update would
    change a topic outside the campaign (another campaign's)."""
    from assessments.importers.topics import read_topics, write_topics

    track = Track.objects.filter(campaign=campaign).select_related("collection").first()
    if track is None:
        raise ImportInvalid("campaign", f"campaign {campaign.name!r} has no collection to import topics into")
    problems, notes = Problems(path), []
    records = read_topics(path, problems, fmt, notes)
    if own_only:
        own = set(track.topics.values_list("external_id", flat=True))
        theirs = set(ids_by_external_id(Topic.objects.filter(collection=track.collection),
                                        [r.qid for r in records])) - own  # batched: 70,000 ids in one IN failed
        for record in records:
            if record.qid in theirs:
                problems.add(f"topic {record.qid!r} is not a topic of campaign {campaign.name!r}: a token for it "
                             "changes no topic outside it", line=record.line, field="id")
    with transaction.atomic():
        result = write_topics(records, problems, track.collection.name, update=update, notes=notes)
        return result.summary(), _add_topics(campaign, result.topic_ids, Kind.TOPICS)


def _add_topics(campaign, topic_ids, kind) -> int:
    """Add the imported topics of the campaign's collection and task to its track; how many were new to it."""
    if campaign is None or not topic_ids or kind == Kind.QRELS:
        return 0
    from annotation.services.campaigns import add_topics

    return add_topics(campaign, topic_ids)


# Progress -----------------------------------------------------------------------------------------------------


def progress_of(import_id) -> dict:
    """{"desc", "done", "total", "rate"} of a running import's step as its work last wrote it ({} when unknown)."""
    return background.live_progress(DataImport(pk=import_id))


def progress_reporter(import_id):
    """A `progress` callable for the importers (as ImportCommand.progress): wraps an iterable, or returns a bar."""
    return background.live(DataImport(pk=import_id))
