"""POST /api/campaigns/NAME/machine/zero-shot/ (issue 28, item 3): a zero-shot source (fusion of the pool's runs or
encoder similarity, no human label) and its labelling job, through the one service the command and the console
call; 400 naming the field for a bad method or another campaign's pool; a token of another campaign gets 404. Every
machine job the API starts records who started it."""

import pytest
from rest_framework.test import APIClient

from annotation.services.tokens import issue_token
from assessments.models import MachineJob, MachineLabel, MachineLabelSource, Pool
from tests.api.machine_setup import BASE, boss, campaign, client, model_dir, others, world  # noqa: F401
from tests.assessments.test_llm_judge import server  # noqa: F401 — the loopback OpenAI-compatible server

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def their_pool(others):  # noqa: F811
    """The other campaign's own pool, 'theirs', of the same collection: out of this campaign's reach."""
    others.pools.add(Pool.objects.create(name="theirs", collection=Pool.objects.get(name="aero-pool").collection))


@pytest.mark.parametrize("method", ["fusion", "encoder"])
def test_an_organiser_labels_a_pool_zero_shot_and_finds_the_source_in_the_list(boss, world, method,
                                                                                django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = boss.post(BASE + "zero-shot/", {"method": method, "pools": ["aero-pool"]}, format="json")
    assert response.status_code == 202, response.content
    job = response.json()
    assert job["kind"] == "label" and job["status"] == "queued"  # as it was when answered; it ran on commit
    done = boss.get(f"{BASE}jobs/{job['id']}/").json()
    assert done["status"] == "done" and done["done"] == done["total"] == 8  # the unjudged candidates

    sources = boss.get(BASE).json()["sources"]
    assert len(sources) == 1
    source = sources[0]
    assert source["id"] == job["source"] and source["name"] == f"{method}-{source['id']}"
    assert source["kind"] == "zero_shot" and source["model"] == method and source["status"] == "ready"
    assert source["campaign"] == world.pk and source["labels"] == 8
    assert source["cross_validation"] is None and source["training_labels"] is None  # nothing was trained
    assert source["requests"] == 0 and source["settings"]["method"] == method
    assert MachineLabel.objects.filter(source_id=source["id"]).count() == 8


def test_a_name_and_the_judged_candidates_too(boss, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = boss.post(BASE + "zero-shot/", {"method": "fusion", "pools": ["aero-pool"], "name": "rrf",
                                                   "include_judged": True}, format="json")
    assert response.status_code == 202, response.content
    source = MachineLabelSource.objects.get()
    assert source.name == "rrf" and MachineLabel.objects.filter(source=source).count() == 40


@pytest.mark.parametrize("body, field", [
    ({"method": "magic", "pools": ["aero-pool"]}, "method"),
    ({"pools": ["aero-pool"]}, "method"),
    ({"method": "fusion"}, "pools"),
    ({"method": "fusion", "pools": []}, "pools"),
    ({"method": "fusion", "pools": ["nope"]}, "pools"),
    ({"method": "fusion", "pools": ["theirs"]}, "pools"),  # another campaign's pool
    ({"method": "fusion", "pools": ["aero-pool", "theirs"]}, "pools"),
    ({"method": "fusion", "pools": ["aero-pool"], "name": "x" * 201}, "name"),
    ({"method": "fusion", "pools": ["aero-pool"], "batch_size": 0}, "batch_size"),
])
def test_what_cannot_be_done_is_a_400_naming_the_field_and_starts_nothing(boss, body, field):
    response = boss.post(BASE + "zero-shot/", body, format="json")
    assert response.status_code == 400, response.content
    data = response.json()
    assert data.get("field") == field or field in data, data
    assert not MachineJob.objects.exists() and not MachineLabelSource.objects.exists()


def test_a_token_of_another_campaign_or_a_participant_cannot_reach_it(world):
    other = client(issue_token(username="boss", role="organiser", campaign="other")[1])
    assert other.post(BASE + "zero-shot/", {"method": "fusion", "pools": ["aero-pool"]},
                      format="json").status_code == 404
    response = other.post("/api/campaigns/other/machine/zero-shot/", {"method": "fusion", "pools": ["aero-pool"]},
                          format="json")
    assert response.status_code == 400 and response.json()["field"] == "pools"  # not its campaign's pool
    team = client(issue_token(username="team-a", role="participant")[1])
    assert team.post(BASE + "zero-shot/", {"method": "fusion", "pools": ["aero-pool"]},
                     format="json").status_code == 403
    assert APIClient().post(BASE + "zero-shot/", {}, format="json").status_code == 401
    assert not MachineJob.objects.exists()


def test_every_machine_job_the_api_starts_records_who_started_it(boss, world, server, settings):  # noqa: F811
    settings.LLM_JUDGE_BASE_URL, settings.LLM_JUDGE_MODEL = server.url, "judge-1"
    started = [boss.post(BASE + "zero-shot/", {"method": "fusion", "pools": ["aero-pool"]}, format="json")]
    source = MachineLabelSource.objects.get()
    started.append(boss.post(BASE + "label/", {"annotator": source.pk, "pools": ["aero-pool"],
                                               "include_judged": True}, format="json"))
    started.append(boss.post(BASE + "judge/", {"pools": ["aero-pool"], "limit": 1}, format="json"))
    started.append(boss.post(BASE + "train/", {"model": "features", "folds": 2}, format="json"))
    assert [r.status_code for r in started] == [202] * 4, [r.content for r in started]
    # not committed here: the jobs wait, queued, with who started them
    jobs = MachineJob.objects.order_by("pk")
    assert [j.kind for j in jobs] == ["label", "label", "llm", "train"]
    assert {j.created_by.username for j in jobs} == {"boss"}
