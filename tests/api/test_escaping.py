"""Run names and any text from an upload are data, never markup: the browsable API shows them escaped."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.api.helpers import upload

pytestmark = pytest.mark.django_db

EVIL = "<script>alert(1)</script>"


def test_a_run_name_with_markup_is_shown_escaped_in_the_browsable_api(adhoc, team_a):
    run = upload(team_a, "adhoc", f"301 Q0 d1 1 3 {EVIL}\n").json()
    assert run["name"] == EVIL  # stored as sent: it is data
    page = team_a.get(f"/api/runs/{run['id']}/", HTTP_ACCEPT="text/html")
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")
    html = page.content.decode()
    assert EVIL not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_problems_quoting_markup_from_a_file_are_shown_escaped(adhoc, team_a):
    response = team_a.post(
        "/api/runs/", {"campaign": "adhoc", "file": SimpleUploadedFile("run.txt", f"301 Q0 {EVIL} 1 3 x\n".encode())}, format="multipart",
        HTTP_ACCEPT="text/html",
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert EVIL not in html and "&lt;script&gt;" in html


def test_text_downloads_are_plain_text_that_browsers_do_not_sniff(adhoc, team_a):
    response = team_a.get("/api/campaigns/adhoc/topics/trec/")
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["X-Content-Type-Options"] == "nosniff"

