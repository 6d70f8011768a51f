"""Data in the browser: upload topics, documents, runs, qrels and books (/data/, or a campaign's
/campaigns/<name>/data/; a nuggets campaign's also takes nugget banks and assignments), follow an import
(/data/imports/<pk>/; its JSON status is every job's, /jobs/import/<pk>/), see what a collection holds and preview
one of its documents (/data/documents/)."""

import json
import re

from django.contrib import messages
from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from annotation.models import DataImport
from annotation.services import data_imports
from annotation.services.data_imports import ImportInvalid, Upload
from annotation.views.console.common import campaign_of, organisers_only
from annotation.views.console.forms import UploadForm
from assessments.models import QrelSet, Run
from assessments.services.runs import run_labels
from config.ids import parse_id
from retrieval.models import Book, Collection, Passage

SAMPLE_DOCUMENTS = 10  # documents of the campaign's collection listed on its data page
PREVIEW_CHARS = 200_000  # of a document's text shown by the preview
PREVIEW_FIELD_CHARS = 2_000  # of each metadata field


_FLAG = re.compile(r"--([a-z][a-z-]*)")
_FLAG_HINT = re.compile(r"\s*\([^()]*--[a-z][^()]*\)$")


def _in_form_words(data_import) -> list:
    """An import's problems as this form names its options: the importers speak to command-line users ("(--update
    replaces it)"), so a flag the form offers for the files' kind becomes its label ("“Replace what the collection
    has”"), and a hint naming one it does not offer is cut (as the API cuts them)."""

    def label(match):
        option = match.group(1).replace("-", "_")
        field = UploadForm.base_fields.get(option)
        return f"“{field.label}”" if field is not None and option in (data_import.options or {}) else match.group()

    return [{**p, "message": _FLAG_HINT.sub("", _FLAG.sub(label, p.get("message") or ""))}
            for p in data_import.problems]


def _campaign_runs(campaign) -> list:
    """The campaign's own runs (reports.results.campaign_runs: never another campaign's of the same collection),
    each with its label (owner/name where teams share a name), its topic and entry counts (a run of generated
    answers: its answers), and the name of the file it came from (not a path on the server)."""
    from annotation.reports.results import campaign_runs

    ids = [run.pk for run in campaign_runs(campaign)]
    runs = list(Run.objects.filter(pk__in=ids).select_related("owner").with_counts().order_by("name"))
    labels = run_labels(runs)
    for run in runs:
        run.label = labels[run.pk]
        run.file_name = re.split(r"[\\/]", run.source_file or "")[-1]
        run.unit = "answers" if run.answer_count else ""
    return runs


def _context(campaign, form, **extra):
    context = {"form": form, "campaign": campaign, "tab": "data", **extra}
    if campaign is not None:
        track = getattr(campaign, "track", None)
        context["kinds"] = data_imports.kinds_for(campaign.task)
        context["imports"] = DataImport.objects.filter(campaign=campaign).select_related("created_by")[:20]
        if track is not None:
            context["runs"] = _campaign_runs(campaign)
            context["topic_count"] = track.topics.count()
            context["qrel_sets"] = QrelSet.objects.filter(collection=track.collection).order_by("name")
            # the first by id: the (collection, external_id) index reads them without a scan
            context["documents"] = Passage.objects.filter(collection=track.collection).order_by(
                "external_id").only("pk", "external_id", "title")[:SAMPLE_DOCUMENTS]
    else:
        context["imports"] = DataImport.objects.select_related("created_by", "campaign")[:20]
        context["collections"] = Collection.objects.order_by("name").annotate(
            topic_count=Count("topics", distinct=True), run_count=Count("runs", distinct=True))
        context["books"] = Book.objects.order_by("title")
    return context


def _upload(request, campaign):
    template = "annotation/console/data.html"
    form = UploadForm(request.POST, request.FILES, kinds=data_imports.kinds_for(campaign.task) if campaign else None)
    if not form.is_valid():
        return render(request, template, _context(campaign, form), status=400)
    files = [Upload(f.name, f, f.size) for f in form.cleaned_data["files"]]
    try:
        started = data_imports.start_import(
            kind=form.cleaned_data["kind"], uploads=files, collection=form.cleaned_data["collection"],
            options=form.options(), campaign=campaign, user=request.user,
        )
    except ImportInvalid as exc:
        form.add_service_error(exc.field, exc.message)
        return render(request, template, _context(campaign, form), status=400)
    started.refresh_from_db()  # without a broker it may have run before the request answered (BACKGROUND_THREADS off)
    if started.status == DataImport.Status.FAILED:
        return render(request, template, _context(
            campaign, form, failed=started, problems=_in_form_words(started),
            more_problems=max(0, started.problem_total - len(started.problems)),
        ), status=400)
    if started.status == DataImport.Status.DONE:
        messages.success(request, started.summary)
        here = reverse("annotation:console_data", args=[campaign.name]) if campaign else reverse(
            "annotation:console_site_data")
        return redirect(here)
    return redirect("annotation:console_import", pk=started.pk)


@require_http_methods(["GET", "POST"])
@organisers_only
def site_data(request):
    """Every collection with its topics and runs, books, recent imports, and the form to upload more."""
    if request.method == "POST":
        return _upload(request, None)
    return render(request, "annotation/console/data.html", _context(None, UploadForm()))


@require_http_methods(["GET", "POST"])
@organisers_only
def campaign_data(request, name):
    """A campaign's topics, runs and qrels, and the form to upload more into its collection."""
    campaign = campaign_of(name)
    if request.method == "POST":
        return _upload(request, campaign)
    kinds = data_imports.kinds_for(campaign.task)
    first = DataImport.Kind.CAR_RUNS if DataImport.Kind.CAR_RUNS in kinds else kinds[0]
    return render(request, "annotation/console/data.html",
                  _context(campaign, UploadForm(kinds=kinds, initial={"kind": first})))


@require_GET
@organisers_only
def import_page(request, pk):
    """One import: its progress while it runs (the page follows it), then what it did or every problem."""
    found = get_object_or_404(DataImport.objects.select_related("campaign", "created_by"), pk=pk)
    return render(request, "annotation/console/import.html", {
        "data_import": found, "campaign": found.campaign, "tab": "data", "problems": _in_form_words(found),
        "more_problems": max(0, found.problem_total - len(found.problems)), "progress": data_imports.progress_of(pk),
    })


@require_GET
@organisers_only
def document_preview(request):
    """One document as imported, for checking an import: title, text (its paragraphs) and metadata fields, all
    shown as text (uploaded text is untrusted). ?passage=<id>, or ?collection=<name>&id=<the document's id>."""
    passages = Passage.objects.select_related("collection")
    error, found = None, None
    if "passage" in request.GET:
        pk = parse_id(request.GET["passage"])
        if pk is None:
            error = ("passage", "not a passage id (a whole number)")
        else:
            found = passages.filter(pk=pk).first()
    else:
        name, docid = request.GET.get("collection", "").strip(), request.GET.get("id", "").strip()
        if not name:
            error = ("collection", "name the document's collection")
        elif not docid:
            error = ("id", "give the document's id")
        elif len(docid) > Passage._meta.get_field("external_id").max_length:
            error = ("id", "longer than any document id")
        else:
            found = passages.filter(collection__name=name, external_id=docid).first()
    lookup = {"tab": "data", "lookup_collections": Collection.objects.order_by("name").only("name"),
              "chosen_collection": request.GET.get("collection", ""), "chosen_id": request.GET.get("id", "")}
    if error is not None:
        return render(request, "annotation/console/document.html", {**lookup, "error": error}, status=400)
    if found is None:
        raise Http404("No such document.")
    text = found.text[:PREVIEW_CHARS]
    return render(request, "annotation/console/document.html", {
        **lookup, "chosen_collection": found.collection.name, "passage": found,
        "paragraphs": [p for p in text.split("\n\n") if p.strip()], "cut": len(found.text) > PREVIEW_CHARS,
        "fields": _fields(found.metadata),
    })


def _fields(metadata) -> list[tuple[str, str]]:
    """A passage's metadata as (name, text) rows: a string as it is, a list of strings one a line, else JSON."""
    rows = []
    for key, value in (metadata.items() if isinstance(metadata, dict) else []):
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = "\n".join(value)
        elif not isinstance(value, str):
            value = json.dumps(value, ensure_ascii=False)
        if len(value) > PREVIEW_FIELD_CHARS:
            value = value[: PREVIEW_FIELD_CHARS - 1] + "…"
        rows.append((str(key), value))
    return rows
