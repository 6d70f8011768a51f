"""Uploads are read as a stream: limits on what gzip unpacks to (bytes and ratio) and on the lines a campaign
can take stop the reading at once, memory stays bounded whatever the file, and uploads per user and hour are
limited (429)."""

import gzip
import tracemalloc

import pytest
from django.core.cache import cache

from assessments.models import Run
from tests.api.helpers import problem, rejected, upload

pytestmark = pytest.mark.django_db


def lines(count, qid="301", tag="teamA"):
    return "".join(f"{qid} Q0 d{i} {i} {1000 - i / 1000} {tag}\n" for i in range(1, count + 1))


def test_gzip_that_unpacks_past_the_ratio_limit_is_413_naming_the_setting(adhoc, team_a, settings):
    settings.API_MAX_COMPRESSION_RATIO = 20
    bomb = gzip.compress(b"301 Q0 d1 1 3 teamA\n" + b" " * 5_000_000)
    body = rejected(team_a, "adhoc", bomb, status=413)
    assert "unpacks to more than 20 times its size" in body["detail"]
    assert "API_MAX_COMPRESSION_RATIO" in body["detail"]


def test_the_unpacked_size_limit_names_its_setting(adhoc, team_a, settings):
    settings.API_MAX_UNCOMPRESSED_BYTES = 1000
    body = rejected(team_a, "adhoc", gzip.compress(lines(200).encode()), status=413)
    assert "unpacks to more than 1,000 bytes" in body["detail"] and "API_MAX_UNCOMPRESSED_BYTES" in body["detail"]


def test_a_run_longer_than_the_campaign_can_take_stops_the_reading(adhoc, team_a):
    """Campaign 'adhoc' has 2 topics of at most 1,000 documents: line 2,001 is one too many."""
    body = rejected(team_a, "adhoc", gzip.compress(lines(5000).encode()))
    assert body["problems"][-1]["message"] == (
        "more than 2,000 lines (stopped reading at line 2,001): campaign 'adhoc' has 2 topics of at most "
        "1,000 documents"
    )


def test_a_file_of_problems_stops_after_a_thousand(adhoc, team_a):
    body = rejected(team_a, "adhoc", "".join(f"301 Q0 d{i} one 1 teamA\n" for i in range(5000)))
    assert body["total"] == 1001
    assert body["problems"][-1]["message"] == "stopped reading at line 1,001, after 1,000 problems"


def test_memory_stays_bounded_whatever_the_file_unpacks_to(adhoc, team_a, settings):
    """56 MB of run lines (each a new document) in a 2.7 MB gzip: refused after the lines the campaign can take,
    holding a few MB besides the request itself (the test client builds the 2.7 MB body in memory too)."""
    settings.API_MAX_COMPRESSION_RATIO = 1000
    pad = "x" * 150
    data = gzip.compress("".join(f"301 Q0 d{i}{pad} {i} {1000 - i / 1000} teamA\n" for i in range(1, 300_001)).encode())
    assert len(data) < 3_000_000
    rejected(team_a, "adhoc", "301 Q0 d1 one 1 teamA\n")  # the first request imports the site's modules
    tracemalloc.start()
    try:
        body = rejected(team_a, "adhoc", data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "more than 2,000 lines" in body["problems"][-1]["message"]
    assert peak < 16 * 1024 * 1024, peak


def test_uploads_per_user_and_hour_are_limited(adhoc, team_a, client_as, settings):
    settings.API_MAX_UPLOADS_PER_HOUR = 2
    cache.clear()
    assert upload(team_a, "adhoc", "301 Q0 d1 1 3 a1\n").status_code == 201
    assert upload(team_a, "adhoc", "301 Q0 d1 1 3 bad x\n").status_code == 400  # a refused one counts too
    response = upload(team_a, "adhoc", "301 Q0 d1 1 3 a2\n")
    assert response.status_code == 429
    assert response.json()["detail"] == (
        "Too many uploads: at most 2 an hour per user (API_MAX_UPLOADS_PER_HOUR). Try again in 60 minutes."
    )
    assert 3500 < int(response["Retry-After"]) <= 3600
    assert not Run.objects.filter(name="a2").exists()
    assert upload(client_as("participant_b"), "adhoc", "301 Q0 d2 1 3 b1\n").status_code == 201


def test_a_gzip_run_is_read_as_before(adhoc, team_a):
    response = upload(team_a, "adhoc", gzip.compress(lines(3).encode()), name="run.txt.gz")
    assert response.status_code == 201, response.content
    assert response.json()["entry_count"] == 3
