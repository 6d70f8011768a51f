"""The Celery app; configuration comes from Django settings under CELERY_*."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("pooljudge")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
