"""Upload limits: file size (413), unpacked size of gzip (413), runs per participant and campaign (409)."""

import gzip

import pytest

from assessments.models import Run
from tests.api.helpers import rejected, upload

pytestmark = pytest.mark.django_db


def run_text(tag):
    return f"301 Q0 d1 1 3 {tag}\n301 Q0 d2 2 2 {tag}\n"


def test_a_file_over_the_size_limit_is_413_and_stores_nothing(adhoc, team_a, settings):
    settings.API_MAX_UPLOAD_BYTES = 100
    body = rejected(team_a, "adhoc", run_text("teamA") * 5, status=413)
    assert body["detail"].startswith("Too large:") and "at most 100" in body["detail"]


def test_a_request_body_far_over_the_limit_is_413_before_it_is_read(adhoc, team_a, settings):
    settings.API_MAX_UPLOAD_BYTES = 10
    body = rejected(team_a, "adhoc", "301 Q0 d1 1 3 teamA\n" * 5000, status=413)
    assert "the request has" in body["detail"]


def test_gzip_that_unpacks_past_the_limit_is_413(adhoc, team_a, settings):
    settings.API_MAX_UNCOMPRESSED_BYTES = 1000
    bomb = gzip.compress(b"301 Q0 d1 1 3 teamA\n" + b" " * 100_000)
    assert len(bomb) < settings.API_MAX_UPLOAD_BYTES
    body = rejected(team_a, "adhoc", bomb, status=413)
    assert "unpacks to more than 1,000 bytes" in body["detail"]


def test_a_participant_over_the_run_limit_gets_409_and_nothing_is_stored(adhoc, team_a, settings):
    settings.API_MAX_RUNS_PER_PARTICIPANT = 2
    for tag in ("a1", "a2"):
        assert upload(team_a, "adhoc", run_text(tag)).status_code == 201
    body = rejected(team_a, "adhoc", run_text("a3"), status=409)
    assert "Run limit reached" in body["detail"] and "2 runs" in body["detail"]


def test_the_campaigns_own_run_limit_wins_over_the_setting(adhoc, team_a, settings):
    settings.API_MAX_RUNS_PER_PARTICIPANT = 5
    adhoc.track.max_runs = 1
    adhoc.track.save()
    assert upload(team_a, "adhoc", run_text("a1")).status_code == 201
    rejected(team_a, "adhoc", run_text("a2"), status=409)


def test_the_run_limit_counts_each_participant_apart(adhoc, team_a, client_as, settings):
    settings.API_MAX_RUNS_PER_PARTICIPANT = 1
    assert upload(team_a, "adhoc", run_text("a1")).status_code == 201
    assert upload(client_as("participant_b"), "adhoc", run_text("b1")).status_code == 201


def test_deleting_a_run_makes_room_for_another(adhoc, team_a, settings):
    settings.API_MAX_RUNS_PER_PARTICIPANT = 1
    first = upload(team_a, "adhoc", run_text("a1")).json()
    assert team_a.delete(f"/api/runs/{first['id']}/").status_code == 204
    assert upload(team_a, "adhoc", run_text("a2")).status_code == 201


def test_organisers_have_no_run_limit(adhoc, organiser, settings):
    settings.API_MAX_RUNS_PER_PARTICIPANT = 1
    for tag in ("o1", "o2", "o3"):
        assert upload(organiser, "adhoc", run_text(tag)).status_code == 201
    assert Run.objects.filter(owner__username="boss").count() == 3
