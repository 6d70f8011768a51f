"""The Machine page's upload of an outside judge's labels (issue 41 item 1): the same importer as manage.py
import_machine_labels and the API; a good file is a source of its own (no human label), a bad one lists its
problems by line and stores nothing."""

import gzip

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from assessments.models import Judgement, MachineLabel, MachineLabelSource
from tests.api.machine_setup import campaign, model_dir, others, world  # noqa: F401
from tests.factories import db_snapshot

pytestmark = pytest.mark.django_db

PAGE = "/campaigns/aero-judging/machine/"


@pytest.fixture
def browser_boss(others):  # noqa: F811
    from django.contrib.auth import get_user_model

    c = Client()
    c.force_login(get_user_model().objects.get(username="boss"))
    return c


def post(c, data, name, **fields):
    return c.post(PAGE, {"action": "import", "file": SimpleUploadedFile(name, data), "name": "umbrela-console",
                         "format": "auto", **fields})


def test_an_organiser_imports_umbrela_qrels_on_the_machine_page(browser_boss, world):
    judgements = Judgement.objects.count()
    page = browser_boss.get(PAGE).content.decode()
    assert 'id="import-form"' in page and 'enctype="multipart/form-data"' in page
    done = post(browser_boss, gzip.compress(b"1 0 1-d9 3\n1 0 1-d10 0\n2 0 2-d9 2\n"), "umbrela.qrels.gz",
                model="gpt-4o", prompt="Grade it.")
    assert done.status_code == 302, done.content.decode()[:2000]
    source = MachineLabelSource.objects.get(name="umbrela-console")
    assert source.kind == "imported" and source.campaign_id == world.pk and source.model == "gpt-4o"
    assert done["Location"].endswith(f"#source-{source.pk}")
    assert MachineLabel.objects.filter(source=source).count() == 3 and Judgement.objects.count() == judgements
    listed = browser_boss.get(PAGE).content.decode()
    assert f'id="source-{source.pk}"' in listed and "umbrela-console" in listed


def test_a_bad_file_lists_its_problems_by_line_and_stores_nothing(browser_boss):
    before = db_snapshot()
    refused = post(browser_boss, b"1 0 1-d9 3\n1 0 nowhere 1\n1 0 1-d10 7\n", "bad.qrels")
    assert refused.status_code == 400
    html = refused.content.decode()
    assert 'id="problems"' in html and "7 is not a grade 0 to 3" in html and "bad.qrels" in html
    assert db_snapshot() == before
    no_file = browser_boss.post(PAGE, {"action": "import", "name": "x", "format": "auto"})
    assert no_file.status_code == 400 and db_snapshot() == before
