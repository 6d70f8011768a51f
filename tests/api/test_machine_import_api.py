"""POST /api/campaigns/NAME/machine/import/ (issue 41, item 1): an outside judge's labels uploaded as the campaign's
machine source, through the importer manage.py import_machine_labels uses: 201 with the source, 400 listing the
file's problems with their lines (nothing stored), --replace's 200, and another campaign's token gets 404."""

import gzip

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotation.services.tokens import issue_token
from assessments.models import Judgement, MachineLabel, MachineLabelSource
from tests.api.machine_setup import BASE, boss, campaign, client, model_dir, others, world  # noqa: F401
from tests.factories import db_snapshot

pytestmark = pytest.mark.django_db

UMBRELA = "1 0 1-d9 3\n1 0 1-d10 0\n2 0 2-d9 2\n"


def upload(c, text, name="umbrela.qrels", **fields):
    data = text.encode()
    if name.endswith(".gz"):
        data = gzip.compress(data)
    return c.post(BASE + "import/", {"file": SimpleUploadedFile(name, data), "name": "umbrela", **fields},
                  format="multipart")


def test_an_organiser_uploads_umbrela_qrels_and_the_source_is_the_campaigns(boss, world):
    judgements = Judgement.objects.count()
    response = upload(boss, UMBRELA, "umbrela.qrels.gz", model="gpt-4o", prompt="Grade it.")

    assert response.status_code == 201, response.content
    source = response.json()
    assert source["kind"] == "imported" and source["name"] == "umbrela" and source["campaign"] == world.pk
    assert source["labels"] == 3 and source["model"] == "gpt-4o" and source["grades"] == [0, 1, 2, 3]
    assert source["settings"]["imported_by"] == "boss" and source["settings"]["file"] == "umbrela.qrels.gz"
    assert MachineLabel.objects.filter(source_id=source["id"], topic__external_id="1", passage__external_id="1-d9",
                                       grade=3).exists()
    assert Judgement.objects.count() == judgements  # never human labels
    assert [s["id"] for s in boss.get(BASE).json()["sources"]] == [source["id"]]  # the collection: its pool's


def test_a_bad_file_is_a_400_naming_its_lines_and_nothing_is_stored(boss):
    before = db_snapshot()
    response = upload(boss, "1 0 1-d9 3\n1 0 nowhere 1\n1 0 1-d10 7\n")

    assert response.status_code == 400
    problems = response.json()["problems"]
    assert {"line": 3, "field": "grade", "message": "7 is not a grade 0 to 3"} in problems
    assert db_snapshot() == before


def test_the_same_name_again_needs_replace(boss):
    first = upload(boss, UMBRELA).json()["id"]

    assert upload(boss, UMBRELA).status_code == 400
    again = upload(boss, "1 0 1-d9 1\n", replace="true")
    assert again.status_code == 200 and again.json()["id"] == first and again.json()["labels"] == 1


def test_another_campaigns_token_gets_404(others):
    stranger = client(issue_token(username="boss", role="organiser", campaign="other")[1])

    assert upload(stranger, UMBRELA).status_code == 404
    assert not MachineLabelSource.objects.exists()


def test_a_file_over_the_upload_limit_is_a_413(boss, settings):
    settings.API_MAX_UPLOAD_BYTES = 20

    assert upload(boss, UMBRELA).status_code == 413
    assert not MachineLabelSource.objects.exists()


def test_the_console_machine_page_lists_an_imported_source(boss):
    assert upload(boss, UMBRELA).status_code == 201
    browser = Client()
    browser.login(username="boss", password="pw-boss")

    page = browser.get("/campaigns/aero-judging/machine/")
    assert page.status_code == 200
    assert "Imported machine labels (an outside LLM judge)" in page.content.decode()  # listed among the judges
