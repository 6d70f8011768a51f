"""The web process never imports torch: only retrieval workers load models."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys, django
django.setup()
from django.urls import get_resolver
from django.contrib import admin
get_resolver().url_patterns
admin.autodiscover()
import config.urls, assessments.services.judging, assessments.services.pooling, assessments.tasks
heavy = sorted(m for m in ("torch", "transformers", "faiss") if m in sys.modules)
print("HEAVY:" + ",".join(heavy))
"""


def test_loading_the_site_does_not_import_torch():
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="config.settings")
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "HEAVY:\n" in result.stdout
