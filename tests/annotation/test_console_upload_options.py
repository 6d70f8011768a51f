"""The console's upload form takes each kind's options from the kind's registration (assessments.importers.registry):
the fields the page shows for a kind, and the options an upload of that kind stores."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation import importers
from annotation.models import DataImport
from annotation.views.console.forms import UploadForm
from tests.browser.console_steps import organiser_account


def registered_fields() -> dict[str, set[str]]:
    """{console field: the kinds whose registered options it gives}."""
    found = {}
    for kind, importer in importers.REGISTRY.items():
        for option in importer.options:
            if option.console_field:
                found.setdefault(option.console_field, set()).add(kind)
    return found


def test_every_registered_field_is_a_field_of_the_form():
    assert set(registered_fields()) - set(UploadForm.base_fields) == set()


@pytest.mark.django_db
def test_the_page_shows_each_field_for_the_kinds_registered_with_it(client):
    client.force_login(organiser_account())
    page = client.get("/data/").content.decode()
    start = page.index('id="upload-form"')
    form = page[start:page.index("</form>", start)]
    shown = {}
    for box in form.split('<div class="kind-options" ')[1:]:
        kinds = set(re.match(r'data-kinds="([^"]*)"', box).group(1).split())
        for field in re.findall(r'name="(\w+)"', box):
            shown[field] = kinds
    assert shown == registered_fields()


BLANK = {  # what each kind's upload stores when its option fields are left as they come
    "car-outlines": {}, "car-assessments": {}, "plot-queries": {}, "nuggets": {}, "nugget-assignments": {},
    "car-runs": {"create_topics": False},
    "trec-run": {"name": "", "create_missing": False},
    "qrels": {"name": "", "create_missing": False},
    "answers": {"create_missing": False},
    "topics": {"format": "auto", "update": False},
    "documents": {"format": "auto", "only_needed": False, "update": False, "retext_judged": False,
                  "encoding": "utf-8", "bad_bytes": "refuse"},
    "book": {"title": "", "slug": "", "sentences_per_chunk": 3},
}


def options_of(kind, **fields):
    form = UploadForm({"kind": kind, **fields}, {"files": SimpleUploadedFile("f.txt", b"x")},
                      kinds=list(DataImport.Kind))
    assert form.is_valid(), form.errors
    return form.options()


@pytest.mark.parametrize("kind", DataImport.Kind.values)
def test_an_upload_stores_the_registered_options_of_its_kind(kind):
    options = options_of(kind)
    assert options == BLANK[kind]
    assert list(options) == [o.name for o in importers.get(kind).options if o.console_field]


def test_a_field_gives_its_option_as_the_registration_reads_it():
    assert options_of("documents", document_format="sgml", bad_bytes="on", encoding="latin-1") == {
        **BLANK["documents"], "format": "sgml", "bad_bytes": "replace", "encoding": "latin-1"}
    assert options_of("topics", topic_format="tsv", update="on") == {"format": "tsv", "update": True}
    assert options_of("book", title="Emma", sentences_per_chunk="5") == {"title": "Emma", "slug": "",
                                                                         "sentences_per_chunk": 5}
