"""Request bodies are limited: an oversized save is refused with 400 (never stored, never a 500)."""

import json
import uuid

import pytest
from django.urls import reverse

from assessments.models import JudgementChange


@pytest.mark.django_db
def test_a_save_body_over_the_limit_is_refused(world, client_for, settings):
    client = client_for("assessor")
    body = json.dumps({
        "change_id": str(uuid.uuid4()), "layer": "notes", "passage": world["passages"][0].pk,
        "value": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1),
        "client_time": "2024-05-01T12:00:00.000Z", "client_seq": 1, "session_id": "page-1",
    })
    response = client.post(reverse("annotation:save", args=[world["token"]]), body, content_type="application/json")
    assert response.status_code == 400
    assert not JudgementChange.objects.exists()


@pytest.mark.django_db
def test_a_form_with_too_many_fields_is_refused(client, settings):
    fields = {f"f{i}": "x" for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1)}
    response = client.post(reverse("login"), {"username": "u", "password": "p", **fields})
    assert response.status_code == 400
