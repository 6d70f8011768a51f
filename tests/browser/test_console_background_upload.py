"""Without a broker (the demo: eager Celery), an upload runs in the web process's background thread: the upload
answers at once with the import's page, whose bar (jobs.js following /jobs/import/<id>/) moves while it runs."""

import time

import pytest

from annotation.models import DataImport
from assessments.models import Run
from config.celery import app
from retrieval.services import background
from tests.browser.console_steps import organiser_account, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

TOPICS, DEPTH = 150, 2000  # 300,000 lines (12 MB): several seconds of importing on this machine


def test_an_upload_without_a_broker_runs_in_the_background_and_its_bar_moves(new_page, settings, tmp_path, shot):
    settings.BACKGROUND_THREADS = True  # as in the demo (the tests' default runs work before the answer)
    assert app.conf.task_always_eager  # no broker
    organiser_account()
    path = tmp_path / "big.run"
    path.write_text("".join(f"{t} Q0 doc-{t}-{r} {r} {1000 - r / 1000} bigrun\n"
                            for t in range(1, TOPICS + 1) for r in range(1, DEPTH + 1)))
    page = new_page()
    sign_in(page, "boss", "pw-boss")
    page.goto("/data/")
    page.select_option("#id_kind", "trec-run")
    page.set_input_files("#id_files", str(path))
    page.fill("#id_collection", "web")
    page.check("#id_create_missing")
    page.click("#upload")
    page.wait_for_url("**/data/imports/*/")  # the answer came before the import ended
    assert DataImport.objects.get().status in (DataImport.Status.QUEUED, DataImport.Status.RUNNING)

    seen, deadline = [], time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            status = page.text_content(".job-status", timeout=2000)
            value = page.get_attribute("[data-role=meter]", "aria-valuenow", timeout=2000)
        except Exception:  # noqa: BLE001 — the page reloads itself once the import has ended
            continue
        if status == "Done":
            break
        if value is not None and (not seen or seen[-1] != value):
            seen.append(value)
            if len(seen) == 3:
                shot(page, "console-import-progress")
        time.sleep(0.05)
    background.wait_for_background()
    page.wait_for_selector(".job-status:has-text('Done')")
    assert len(set(seen)) > 1, seen  # the bar moved: more than one value before the end
    done = DataImport.objects.get()
    assert done.status == DataImport.Status.DONE and done.finished_at is not None, done.problems
    assert Run.objects.get(name="bigrun").entries.count() == TOPICS * DEPTH
    assert page.is_hidden(".job-follow")
