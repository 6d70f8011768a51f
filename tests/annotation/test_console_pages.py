"""The organiser's console through the test client: a CAR campaign from an empty site to qrels, form by form."""

import io
import zipfile

import pytest
from django.utils import timezone

from annotation.models import Assignment, Campaign, DataImport
from assessments.models import Pool, Run, Topic
from tests import factories
from tests.factories import DATA

pytestmark = pytest.mark.django_db(transaction=True)

OUTLINES = DATA / "car-y3" / "tqa-heading-cast-and-more-6.json"
RUNS = sorted((DATA / "car-y3" / "runs").glob("*.json"))


def test_an_organiser_runs_a_car_campaign_from_forms_alone(client, organiser):
    with OUTLINES.open("rb") as outlines:
        response = client.post("/campaigns/new/", {
            "name": "car", "title": "CAR", "task": "outline", "collection": "car-y3", "topics_from": "file",
            "topic_file": outlines, "guidelines": "Read *all* of it.", "overlap": 2, "qualification_threshold": 90,
            "qualification_attempts": 2, "review_sample_size": 0, "review_threshold": 95, "mode": "label",
            "plot_scale": "2 Yes\n1 Partly\n0 No", "context_sentences": 5, "choice_candidates": 20,
        })
    assert response.status_code == 302, response.content.decode()[response.content.decode().find("<main"):][:6000]
    campaign = Campaign.objects.get(name="car")
    assert campaign.track.topics.count() == 132 and campaign.overlap == 2 and campaign.review_sample_size == 0

    files = [path.open("rb") for path in RUNS]
    response = client.post("/campaigns/car/data/", {"kind": "car-runs", "files": files, "create_topics": "on"})
    for f in files:
        f.close()
    assert response.status_code == 302, response.content.decode()[response.content.decode().find("<main"):][:6000]
    assert DataImport.objects.get().status == DataImport.Status.DONE
    assert campaign.track.topics.count() == 132 + 4
    runs = list(Run.objects.order_by("name"))
    assert len(runs) == 5

    query = {"name": "car-pool", "runs": [r.pk for r in runs], "strategy": "union", "fusion": "rrf", "depth": 20,
             "only_ranked": "on", "preview": "1"}
    response = client.post("/campaigns/car/pools/", query)
    assert response.status_code == 200 and b"Candidates per topic" in response.content
    query.pop("preview")
    response = client.post("/campaigns/car/pools/", query)
    assert response.status_code == 302, response.content.decode()[response.content.decode().find("<main"):][:6000]
    pool = Pool.objects.get(name="car-pool")
    assert pool.status == Pool.Status.READY and pool.topics.count() == 4

    for name in ("ann", "bob"):
        response = client.post("/people/", {"action": "create", "username": name, "roles": ["assessor"],
                                            "sign_in": "password"})
        assert response.status_code == 200 and name.encode() in response.content
    response = client.post("/campaigns/car/work/", {"action": "assign", "assessors": ["ann", "bob"], "overlap": 2,
                                                    "seed": 0})
    assert response.status_code == 302, response.content.decode()[response.content.decode().find("<main"):][:6000]
    units = Assignment.objects.filter(campaign=campaign)
    assert units.filter(assessor__username="ann").count() == units.filter(assessor__username="bob").count() == 14
    for page in ("", "data/", "pools/", "work/", "results/"):
        assert client.get(f"/campaigns/car/{page}").status_code == 200, page
    assert client.get("/campaigns/").status_code == 200
    response = client.get("/campaigns/car/results/qrels/?level=page&aggregate=majority")
    assert response.status_code == 200
    response = client.get("/campaigns/car/results/y3/")
    assert response.status_code == 200
    assert zipfile.ZipFile(io.BytesIO(response.getvalue())).namelist() == []
    assert Topic.objects.count() == 136


def test_the_campaign_list_shows_failed_and_running_work(client, organiser):
    DataImport.objects.create(kind=DataImport.Kind.QRELS, status=DataImport.Status.FAILED, problem_total=3,
                              file_names=["q.txt"], finished_at=timezone.now())
    coll = factories.collection("c")
    Pool.objects.create(name="slow", collection=coll, status=Pool.Status.BUILDING)
    page = client.get("/campaigns/").content.decode()
    assert 'id="background-work"' in page
    assert "3 problems" in page and "Pool slow" in page
    assert "Make the first one" in page  # no campaign yet


def test_a_pool_build_is_followed_through_its_json_status(client, organiser):
    coll = factories.collection("web")
    factories.topic(coll, "1", kind="adhoc")
    from annotation.services.campaigns import create_campaign

    campaign = create_campaign(name="w", task="adhoc")
    pool = Pool.objects.create(name="p", collection=coll, status=Pool.Status.BUILDING)
    campaign.pools.add(pool)
    data = client.get("/campaigns/w/pools/p/status/").json()
    assert data == {"status": "building", "label": "Building", "error": "", "finished": False, "candidates": 0,
                    "jobs": []}
    assert client.get("/campaigns/w/pools/nope/status/").status_code == 404
    page = client.get("/campaigns/w/pools/").content.decode()
    assert 'data-status-url="/campaigns/w/pools/p/status/"' in page
