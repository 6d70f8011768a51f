"""THE importer registry: each kind of data import (annotation.DataImport.Kind's values) registered once.

A registration says what its files are and take (the importer's options: retrieval.ingest.Option, whose names are
the keys of a data import's options, the command's flags and the console form's fields), whether it needs a
collection, whether several files may go at once, and the callable that imports them:
`run(paths, collection, options, *, progress, campaign, owner) -> (summary, ids of the topics the files name)`.
The console's data imports dispatch through it (annotation.services.data_imports), the console's upload form builds
its per-kind options from it, and each manage.py import_… command reads its flags from it. The kinds that go into a
nuggets campaign are registered by annotation.importers (this app does not import annotation); `campaign` is opaque
here (its `name` is the track a run uploaded for it joins).

To add an importer: register it here (or, knowing campaigns, in annotation.importers) with a DataImport.Kind value.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Max

from assessments.importers import car, plot, topics, trec
from assessments.importers.car.assessments import import_car_assessments
from assessments.importers.documents import import_collection_documents
from assessments.models import RunEntry, Topic
from retrieval import documents, importers as books
from retrieval.bulk import no_progress
from retrieval.ingest import Option


@dataclass(frozen=True)
class Importer:
    """One kind of data import: its command, options and the callable that imports its files."""

    kind: str
    command: str
    run: Callable
    options: tuple[Option, ...] = ()
    many_files: bool = False
    needs_collection: bool = False
    default_collection: str = ""  # the collection when none is named (CAR: car-y3)
    own_collection: bool = False  # it makes its own collection (a book): a campaign's is not imposed
    campaign_only: bool = False  # its files go into a campaign (a nuggets campaign's Data page)


REGISTRY: dict[str, Importer] = {}


def register(kind: str, *, command: str, **fields) -> Callable:
    """Decorator: register `run` as the importer of `kind` (one registration a kind)."""

    def decorate(run):
        if kind in REGISTRY:
            raise ValueError(f"importer {kind!r} is registered twice")
        REGISTRY[kind] = Importer(kind=str(kind), command=command, run=run, **fields)
        return run

    return decorate


def get(kind: str) -> Importer:
    """The registered importer of `kind`; KeyError when none is."""
    return REGISTRY[str(kind)]


# The options, with the help their commands show ---------------------------------------------------------------

CREATE_MISSING = "Create the collection, unknown topics (ad hoc) and unknown documents (without text)."
UPDATE_HELP = "Replace {} already in the collection."

CAR_OUTLINE_OPTIONS = (
    Option("include_train", type=bool, field=None,
           help="Also import the train pages (trainTitles), marked {\"train\": true} in the topic's metadata."),
    Option("update", type=bool, field=None,
           help="Make topics that already exist with different title or facets match the file."),
)
CAR_RUN_OPTIONS = (
    Option("create_topics", type=bool,
           help="Create unknown topics from the pages (title, and facets from query_facets)."),
)
TREC_RUN_OPTIONS = (
    Option("name", help="Run name (default: the file's tag, column 6); allows mixed tags."),
    Option("create_missing", type=bool, help=CREATE_MISSING),
)
QRELS_OPTIONS = (
    Option("name", help="Qrel set name (a slug; default: the file name's stem, slugified)."),
    Option("create_missing", type=bool, help=CREATE_MISSING),
)
TOPIC_OPTIONS = (
    Option("format", choices=topics.FORMATS, default="auto", field="topic_format",
           help="The file's format (default: told from the content)."),
    Option("update", type=bool, help=UPDATE_HELP.format("topics")),
)
DOCUMENT_OPTIONS = (
    Option("format", choices=documents.FORMATS, default="auto", field="document_format",
           help="The files' format (default: told from the content)."),
    Option("only_needed", type=bool, help="Import only the documents the collection's runs, pools, qrels and "
                                          "answers name (import those first)."),
    Option("update", type=bool, help=UPDATE_HELP.format("documents")),
    Option("retext_judged", type=bool, help="With --update, change the text of a document people judged (their "
           "grades then stand for the new text; the summary says how many). Without it, such a change is refused. "
           "Text under evidence spans never changes."),
    Option("encoding", default="utf-8", help="The files' encoding: UTF-8 (the default) or an 8-bit one, e.g. "
                                             "latin-1 or cp1252 for old TREC disks."),
    Option("bad_bytes", choices=documents.BAD_BYTES, default="refuse",
           from_field=lambda checked: "replace" if checked else "refuse",  # the console's field is a checkbox
           help="A byte the encoding cannot read: refuse the files (the default), or replace it by U+FFFD with a "
                "warning naming the place (web crawls such as GOV2 mix encodings)."),
)


# The importers ---------------------------------------------------------------------------------------------------


@register("car-outlines", command="import_car_outlines", options=CAR_OUTLINE_OPTIONS,
          default_collection=car.DEFAULT_COLLECTION)
def _car_outlines(paths, collection, options, *, progress=no_progress, campaign=None, owner=None):
    result = car.import_outlines(
        paths[0], collection, include_train=bool(options.get("include_train")),
        update=bool(options.get("update")), progress=progress,
    )
    pages = car.read_outlines(paths[0], include_train=bool(options.get("include_train"))).pages
    found = Topic.objects.filter(collection__name=collection, external_id__in=[p.page_id for p in pages])
    return result.summary(), list(found.values_list("pk", flat=True))


@register("car-runs", command="import_car_run", options=CAR_RUN_OPTIONS, many_files=True,
          default_collection=car.DEFAULT_COLLECTION)
def _car_runs(paths, collection, options, *, progress=no_progress, campaign=None, owner=None):
    before = RunEntry.objects.aggregate(last=Max("pk"))["last"] or 0
    result = car.import_car_runs(paths, collection, create_topics=bool(options.get("create_topics")),
                                 progress=progress)
    return result.summary(), _entry_topics(before, collection)


@register("car-assessments", command="import_car_assessments", many_files=True,
          default_collection=car.DEFAULT_COLLECTION)
def _car_assessments(paths, collection, options, *, progress=no_progress, campaign=None, owner=None):
    """Judgements of topics already there."""
    return import_car_assessments(paths, collection, progress=progress).summary(), []


@register("trec-run", command="import_trec_run", options=TREC_RUN_OPTIONS, needs_collection=True)
def _trec_run(paths, collection, options, *, progress=no_progress, campaign=None, owner=None):
    """A run uploaded for a campaign is submitted to it (its track) by `owner`, as a run uploaded over the API is."""
    submitted = {"track": campaign.name, "owner": owner} if campaign is not None and owner is not None else {}
    result = trec.import_run(
        paths[0], collection, name=options.get("name") or None,
        create_missing=bool(options.get("create_missing")), progress=progress, run_fields=submitted,
    )
    found = Topic.objects.filter(run_entries__run=result.run).distinct()
    return result.summary(), list(found.values_list("pk", flat=True))


@register("qrels", command="import_qrels", options=QRELS_OPTIONS, needs_collection=True)
def _qrels(paths, collection, options, *, progress=no_progress, campaign=None, owner=None):
    result = trec.import_qrels(
        paths[0], collection, name=options.get("name") or None,
        create_missing=bool(options.get("create_missing")), progress=progress,
    )
    return result.summary(), []


@register("topics", command="import_topics", options=TOPIC_OPTIONS, needs_collection=True)
def _topics(paths, collection, options, *, progress=no_progress, campaign=None, owner=None):
    result = topics.import_topics(paths[0], collection, fmt=options.get("format") or "auto",
                                  update=bool(options.get("update")), progress=progress)
    return result.summary(), result.topic_ids


@register("documents", command="import_documents", options=DOCUMENT_OPTIONS, many_files=True,
          needs_collection=True)
def _documents(paths, collection, options, *, progress=no_progress, campaign=None, owner=None):
    result = import_collection_documents(
        paths, collection, fmt=options.get("format") or "auto", update=bool(options.get("update")),
        only_needed=bool(options.get("only_needed")), progress=progress,
        encoding=options.get("encoding") or "utf-8", bad_bytes=options.get("bad_bytes") or "refuse",
        max_bytes=settings.API_MAX_UNCOMPRESSED_BYTES,  # an upload's limit, as a run's (the command has none)
        retext_judged=bool(options.get("retext_judged")),
    )
    return result.summary(), []


@register("book", command="import_book", options=books.OPTIONS, own_collection=True)
def _book(paths, collection, options, *, progress=no_progress, campaign=None, owner=None):
    book, prepared = books.import_book(
        paths[0], title=str(options.get("title", "")).strip(), slug=options.get("slug") or None,
        sentences_per_chunk=int(options.get("sentences_per_chunk") or 3), progress=progress,
    )
    return (f"Imported {book.title!r} as {book.slug}: {book.sentence_count:,} sentences in "
            f"{len(prepared.chunks):,} chunks of {book.sentences_per_chunk}.", [])


@register("plot-queries", command="import_plot_queries")
def _plot_queries(paths, collection, options, *, progress=no_progress, campaign=None, owner=None):
    queries = plot.prepare_plot_queries(paths[0], progress=progress)
    written = plot.write_plot_queries(queries, progress=progress, source=str(paths[0]))
    names = ", ".join(sorted({q.book.slug for q in queries}))
    return f"Imported {len(written)} plot queries ({names}).", [t.pk for t in written]


def _entry_topics(before, collection) -> list[int]:
    """Topics of the run entries written after entry id `before` in `collection` (what an import just added)."""
    rows = RunEntry.objects.filter(pk__gt=before, topic__collection__name=collection)
    return sorted(set(rows.values_list("topic_id", flat=True)))
