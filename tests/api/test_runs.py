"""GET/DELETE /api/runs/: participants see and touch only their own runs; a pooled run stays."""

import pytest

from rest_framework.test import APIClient

from annotation.services.campaigns import create_pool
from annotation.services.tokens import issue_token
from assessments.models import Run
from tests import factories
from tests.api.helpers import problem, rejected, upload

pytestmark = pytest.mark.django_db


def run_text(tag):
    return f"301 Q0 d1 1 3 {tag}\n302 Q0 d2 1 2 {tag}\n"


@pytest.fixture
def runs(adhoc, team_a, client_as):
    """Run 'a1' of team A and 'b1' of team B, and an imported run 'base' nobody owns; their ids by name."""
    upload(team_a, "adhoc", run_text("a1"))
    upload(client_as("participant_b"), "adhoc", run_text("b1"))
    factories.run(adhoc.track.collection, "base")
    return dict(Run.objects.values_list("name", "pk"))


def names(response):
    assert response.status_code == 200, response.content
    return sorted(r["name"] for r in response.json()["results"])


def test_a_participant_lists_only_its_own_runs(runs, team_a):
    assert names(team_a.get("/api/runs/")) == ["a1"]


def test_an_organiser_lists_every_run(runs, organiser):
    assert names(organiser.get("/api/runs/")) == ["a1", "b1", "base"]


def test_runs_can_be_listed_by_campaign(runs, organiser):
    assert names(organiser.get("/api/runs/?campaign=adhoc")) == ["a1", "b1"]
    assert names(organiser.get("/api/runs/?campaign=other")) == []


def test_a_participant_gets_its_own_run(runs, team_a):
    response = team_a.get(f"/api/runs/{runs['a1']}/")
    assert response.status_code == 200
    assert response.json()["name"] == "a1"


def test_another_teams_run_is_not_found_for_a_participant(runs, team_a):
    assert team_a.get(f"/api/runs/{runs['b1']}/").status_code == 404
    assert team_a.delete(f"/api/runs/{runs['b1']}/").status_code == 404
    assert Run.objects.filter(name="b1").exists()


def test_a_participant_deletes_its_own_run_before_a_pool_uses_it(runs, team_a):
    assert team_a.delete(f"/api/runs/{runs['a1']}/").status_code == 204
    assert not Run.objects.filter(name="a1").exists()


def test_a_run_a_pool_uses_cannot_be_deleted(runs, team_a, adhoc):
    create_pool(campaign=adhoc, name="p1", runs=[runs["a1"], runs["b1"]])
    response = team_a.delete(f"/api/runs/{runs['a1']}/")
    assert response.status_code == 409
    assert response.json()["detail"] == "run 'a1' is in a pool, so it can no longer be deleted."
    assert Run.objects.filter(name="a1").exists()
    assert team_a.get(f"/api/runs/{runs['a1']}/").json()["pooled"] is True


def test_uploading_to_an_unknown_campaign_is_400_in_the_shape_of_a_rejected_run(adhoc, team_a):
    body = rejected(team_a, "nope", run_text("a1"))
    assert body == {
        "detail": "The request was rejected, nothing was stored: 1 problem.", "total": 1,
        "problems": [{"line": None, "field": "campaign", "message": "No campaign named 'nope'."}],
    }


def test_uploading_to_a_campaign_without_topics_is_400(adhoc, team_a):
    factories.campaign("judging-only")
    body = rejected(team_a, "judging-only", run_text("a1"))
    assert problem(body, None, "campaign") == "Campaign 'judging-only' takes no runs."


def test_an_upload_without_a_file_is_400(adhoc, team_a):
    response = team_a.post("/api/runs/", {"campaign": "adhoc"}, format="multipart")
    assert response.status_code == 400
    assert problem(response.json(), None, "file") == "No file was submitted."


def test_an_upload_that_is_not_multipart_is_415(adhoc, team_a):
    response = team_a.post("/api/runs/", {"campaign": "adhoc", "file": "301 Q0 d1 1 1 a1"}, format="json")
    assert response.status_code == 415


def test_a_token_for_one_campaign_uploads_only_to_it(adhoc, outline):
    key = issue_token(username="team-a", role="participant", campaign="car-y3")[1]
    scoped = APIClient()
    scoped.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    response = upload(scoped, "adhoc", run_text("a1"))
    assert response.status_code == 403
    assert response.json()["detail"] == "This token is for campaign 'car-y3' only."
    assert [c["name"] for c in scoped.get("/api/campaigns/").json()["results"]] == ["car-y3"]


def test_the_upload_response_is_the_run_as_listed(adhoc, team_a):
    body = upload(team_a, "adhoc", run_text("a1")).json()
    listed = team_a.get("/api/runs/").json()["results"][0]
    assert listed == body

