"""Helpers of the API tests: uploading, expecting a rejection, finding a problem, making files."""

import gzip
import json

from django.core.files.uploadedfile import SimpleUploadedFile

from tests.factories import db_snapshot

ACTORS = ("anonymous", "participant_a", "participant_b", "assessor", "organiser")
PARA = [f"{i:040x}" for i in range(1, 31)]  # 40-hex paragraph ids of the CAR collection


def upload(client, campaign, content, name="run.txt"):
    """POST a run file (str → UTF-8) to a campaign."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    return client.post(
        "/api/runs/", {"campaign": campaign, "file": SimpleUploadedFile(name, data)}, format="multipart"
    )


def rejected(client, campaign, content, name="run.txt", status=400):
    """Upload expecting a rejection with `status`; assert nothing was written; return the JSON body."""
    before = db_snapshot()
    response = upload(client, campaign, content, name)
    assert response.status_code == status, response.content
    assert db_snapshot() == before
    return response.json()


def problem(body, line, field):
    """The message of the problem at (line, field) of a 400 body (AssertionError listing them if none)."""
    for item in body["problems"]:
        if item["line"] == line and item["field"] == field:
            return item["message"]
    raise AssertionError(f"no problem at line {line} field {field!r}: {body['problems']}")


def gz(text):
    return gzip.compress(text.encode("utf-8"))


def page(squid="tqa2:L_0001", run_id="teamA-1", paragraphs=PARA[:3], **extra):
    """One Y3 submission line."""
    obj = {
        "title": "Water",
        "squid": squid,
        "run_id": run_id,
        "query_facets": [{"heading": "Droughts", "heading_id": f"{squid}/T_0001"}],
        "paragraphs": [{"para_id": pid} for pid in paragraphs],
        **extra,
    }
    return json.dumps(obj)
