"""Web-side modules of retrieval (tasks, services, specs, admin, commands) import no model libraries."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse

from retrieval.models import Job
from tests import factories

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys, django
django.setup()
from config.celery import app
app.loader.import_default_modules()  # what a process that sends tasks imports: every app's tasks module
import retrieval.tasks, retrieval.services, retrieval.specs, retrieval.admin, retrieval.fusion
import assessments.services.pooling, assessments.tasks
from django.core.management import load_command_class
for name in ("build_pool", "evaluate_runs", "export_run", "resume_job"):
    app_name = "retrieval" if name == "resume_job" else "assessments"
    load_command_class(app_name, name)
heavy = sorted(m for m in ("torch", "transformers", "faiss", "bm25s", "sentence_transformers") if m in sys.modules)
print("HEAVY:" + ",".join(heavy))
"""


def test_sending_work_to_the_workers_imports_no_model_library():
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="config.settings")
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "HEAVY:\n" in result.stdout


@pytest.mark.django_db
def test_organisers_see_job_progress_in_the_admin(client):
    admin = factories.user("boss", is_staff=True, is_superuser=True)
    client.force_login(admin)
    coll = factories.collection()
    Job.objects.create(
        kind=Job.Kind.ENCODE, key="k", collection=coll, status=Job.Status.FAILED, shard_count=4, shards_done=3,
        items_total=400, items_done=300, rate=12.5, error="shard 4 of 4 failed: RuntimeError: boom",
    )
    page = client.get(reverse("admin:retrieval_job_changelist"))
    assert page.status_code == 200
    text = page.content.decode()
    assert "3/4" in text and "300/400" in text and "12.5" in text and "RuntimeError: boom" in text
