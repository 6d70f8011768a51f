"""With a real broker an import runs on a worker after the upload's answer: its page follows it through the JSON
status (progress bar, step), then shows what it did. Here the test plays the worker."""

import pytest
from django.core.cache import cache

from annotation.models import DataImport, DataImportFile
from annotation.services import data_imports
from retrieval.services import background
from tests.browser.console_steps import organiser_account, sign_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_import_page_follows_a_queued_import_until_it_has_ended(new_page):
    organiser_account()
    queued = DataImport.objects.create(kind=DataImport.Kind.QRELS, collection="web", file_names=["q.txt"],
                                       options={"create_missing": True})
    DataImportFile.objects.create(data_import=queued, position=0, name="q.txt", content=b"1 0 d1 1\n1 0 d2 0\n")
    page = new_page()
    sign_in(page, "boss", "pw-boss")
    page.goto(f"/data/imports/{queued.pk}/")
    page.wait_for_selector("body[data-ready=console]")
    assert page.is_visible(".job-follow") and page.text_content(".job-status") == "Queued"

    cache.set(background.live_key(queued), {"desc": "reading qrels", "done": 3, "total": 12}, 60)
    page.wait_for_selector(".job-step:has-text('reading qrels (3 of 12)')")
    assert page.get_attribute("[data-role=meter]", "aria-valuenow") == "25"

    data_imports.run_import(queued.pk)  # the worker
    page.wait_for_selector(".job-summary:has-text('Imported qrel set')")
    assert page.text_content(".job-status") == "Done" and page.is_hidden(".job-follow")
