"""/api/pools/ (organisers): create a pool of a campaign's runs, watch its build, read its candidates."""

import pytest

from assessments.models import Pool
from tests import factories
from tests.api.helpers import upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def run_ids(adhoc, team_a, client_as):
    """Runs a1 (team A) and b1 (team B) of campaign 'adhoc'."""
    a1 = upload(team_a, "adhoc", "301 Q0 d1 1 3 a1\n301 Q0 d2 2 2 a1\n302 Q0 d3 1 1 a1\n").json()["id"]
    b1 = upload(client_as("participant_b"), "adhoc", "301 Q0 d2 1 5 b1\n301 Q0 d4 2 4 b1\n").json()["id"]
    return {"a1": a1, "b1": b1}


def test_an_organiser_creates_a_pool_that_is_built_after_the_commit(run_ids, organiser,
                                                                    django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = organiser.post(
            "/api/pools/", {"name": "p1", "campaign": "adhoc", "runs": [run_ids["a1"], run_ids["b1"]], "depth": 10},
            format="json",
        )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["name"] == "p1" and body["campaigns"] == ["adhoc"] and body["collection"] == "web"
    assert body["status"] == "pending" and body["topic_count"] == 2 and body["run_count"] == 2
    assert len(callbacks) == 1

    status = organiser.get("/api/pools/p1/").json()
    assert status["status"] == "ready" and status["candidate_count"] == 4
    candidates = organiser.get("/api/pools/p1/candidates/?topic=301").json()
    assert candidates["next"] is None and candidates["previous"] is None
    assert [c["rank"] for c in candidates["results"]] == [1, 2, 3]
    assert sorted(c["passage"] for c in candidates["results"]) == ["d1", "d2", "d4"]
    by_passage = {c["passage"]: c for c in candidates["results"]}
    assert sorted((s["run_name"], s["rank"]) for s in by_passage["d2"]["sources"]) == [("a1", 2), ("b1", 1)]


def test_a_pool_can_take_some_of_the_campaigns_topics(run_ids, organiser):
    response = organiser.post(
        "/api/pools/", {"name": "p1", "campaign": "adhoc", "runs": [run_ids["a1"]], "topics": ["302"]}, format="json"
    )
    assert response.status_code == 201
    assert list(Pool.objects.get(name="p1").topics.values_list("external_id", flat=True)) == ["302"]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"runs": [999999]}, "campaign 'adhoc' has no runs with ids 999999 (runs of its collection, submitted to it or imported by organisers)."),
        ({"topics": ["303"]}, "topics '303' are not topics of campaign 'adhoc'."),
        ({"name": "taken"}, "a pool named 'taken' already exists."),
    ],
)
def test_a_pool_that_cannot_be_made_is_400_and_nothing_is_stored(run_ids, organiser, adhoc, change, message):
    factories.pool(adhoc.track.collection, [], [], name="taken")
    before = Pool.objects.count()
    request = {"name": "p1", "campaign": "adhoc", "runs": [run_ids["a1"]], **change}
    response = organiser.post("/api/pools/", request, format="json")
    assert response.status_code == 400
    assert response.json() == {"detail": message}
    assert Pool.objects.count() == before


def test_a_run_of_another_collection_cannot_be_pooled(run_ids, organiser, outline):
    car_run = factories.run(outline.track.collection, "car-run")
    response = organiser.post("/api/pools/", {"name": "p1", "campaign": "adhoc", "runs": [car_run.pk]}, format="json")
    assert response.status_code == 400


def test_a_pool_request_with_a_bad_field_is_400(run_ids, organiser):
    response = organiser.post(
        "/api/pools/", {"name": "p 1", "campaign": "nope", "runs": [], "depth": 0, "strategy": "best"}, format="json"
    )
    assert response.status_code == 400
    assert set(response.json()) == {"name", "campaign", "runs", "depth", "strategy"}


def test_participants_cannot_see_or_make_pools(run_ids, team_a):
    assert team_a.get("/api/pools/").status_code == 403
    assert team_a.post("/api/pools/", {"name": "p1", "campaign": "adhoc", "runs": [run_ids["a1"]]},
                       format="json").status_code == 403


def test_pools_are_listed_newest_first(run_ids, organiser):
    for name in ("p1", "p2"):
        organiser.post("/api/pools/", {"name": name, "campaign": "adhoc", "runs": [run_ids["a1"]]}, format="json")
    assert [p["name"] for p in organiser.get("/api/pools/").json()["results"]] == ["p2", "p1"]
    assert organiser.get("/api/pools/nope/").status_code == 404
    assert organiser.get("/api/pools/nope/candidates/").status_code == 404


def test_a_pool_can_fuse_the_runs_with_rrf(run_ids, organiser, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = organiser.post(
            "/api/pools/",
            {"name": "fused", "campaign": "adhoc", "runs": list(run_ids.values()), "strategy": "rrf",
             "fusion": "combmnz", "per_topic": 2},
            format="json",
        )
    assert response.status_code == 201, response.content
    pool = Pool.objects.get(name="fused")
    assert pool.strategy == "rrf" and pool.params["fusion"] == "combmnz"
    assert pool.status == "ready" and pool.candidates.filter(topic__external_id="301").count() == 2


def test_pools_from_retrievers_are_not_made_through_the_api(run_ids, organiser):
    response = organiser.post(
        "/api/pools/", {"name": "p1", "campaign": "adhoc", "runs": [run_ids["a1"]], "strategy": "rerank"}, format="json"
    )
    assert response.status_code == 400
    assert "strategy" in response.json()


def test_a_campaign_token_cannot_pool_another_campaigns_runs(run_ids, client_as, web):
    from annotation.roles import Role, ensure_groups
    from annotation.services.campaigns import create_campaign
    from annotation.services.tokens import issue_token
    from rest_framework.test import APIClient

    create_campaign(name="rival", task="adhoc", topics=["301", "302"])
    factories.user("rival-boss").groups.add(ensure_groups()[Role.ORGANISER])
    scoped = APIClient()
    scoped.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(username='rival-boss', role='organiser', campaign='rival')[1]}")
    response = scoped.post("/api/pools/", {"name": "grab", "campaign": "rival", "runs": [run_ids["a1"]]}, format="json")
    assert response.status_code == 400 and "has no runs with ids" in response.json()["detail"]
    assert not Pool.objects.filter(name="grab").exists()  # adhoc's run a1 stays out of reach


def test_a_campaign_token_sees_a_shared_pool_listing_its_own_campaign_only(run_ids, organiser, web):
    """A pool two campaigns share: a token limited to one of them does not learn the other's name."""
    from annotation.models import Campaign
    from annotation.roles import Role, ensure_groups
    from annotation.services.campaigns import create_campaign
    from annotation.services.tokens import issue_token
    from rest_framework.test import APIClient

    assert organiser.post("/api/pools/", {"name": "shared", "campaign": "adhoc", "runs": [run_ids["a1"]]},
                          format="json").status_code == 201
    create_campaign(name="rival", task="adhoc", topics=["301", "302"])
    Campaign.objects.get(name="rival").pools.add(Pool.objects.get(name="shared"))
    factories.user("rival-boss").groups.add(ensure_groups()[Role.ORGANISER])
    scoped = APIClient()
    scoped.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(username='rival-boss', role='organiser', campaign='rival')[1]}")
    assert scoped.get("/api/pools/shared/").json()["campaigns"] == ["rival"]
    assert [p["campaigns"] for p in scoped.get("/api/pools/").json()["results"]] == [["rival"]]
    assert sorted(organiser.get("/api/pools/shared/").json()["campaigns"]) == ["adhoc", "rival"]
