"""The machine-assistance API: start training, labelling and the LLM judge, read a job and the sources with their
figures; organisers only, scoped to the campaign in the URL (a campaign token to its own); the same refusals as
the commands and the console (400 naming the field); nothing sent to an LLM unless the site configures one."""

import pytest
from rest_framework.test import APIClient

from annotation.models import Campaign
from annotation.services.tokens import issue_token
from assessments.models import MachineJob, MachineLabel, MachineLabelSource, Pool
from tests.api.machine_setup import BASE, boss, campaign, client, model_dir, others, world  # noqa: F401
from tests.assessments.machine_setup import tiny  # noqa: F401 — a tiny BERT to train
from tests.assessments.test_llm_judge import server  # noqa: F401 — the loopback OpenAI-compatible server

pytestmark = pytest.mark.django_db


def test_an_organiser_trains_labels_and_reads_the_figures_through_the_api(boss, tiny,  # noqa: F811
                                                                           django_capture_on_commit_callbacks):
    empty = boss.get(BASE).json()
    assert empty["sources"] == [] and empty["jobs"] == [] and empty["llm"]["configured"] is False
    assert empty["human_kappa"]["kappa"] == pytest.approx(3 / 4)

    with django_capture_on_commit_callbacks(execute=True):
        response = boss.post(BASE + "train/", {"model": tiny, "folds": 3, "max_length": 16, "batch_size": 8},
                             format="json")
    assert response.status_code == 202, response.content
    job = response.json()
    assert job["kind"] == "train" and job["status"] == "queued"  # as it was when answered; it ran on commit
    done = boss.get(f"{BASE}jobs/{job['id']}/").json()
    assert done["status"] == "done" and done["finished"] and done["done"] == done["total"] > 0

    sources = boss.get(BASE).json()["sources"]
    assert len(sources) == 1
    source = sources[0]
    assert source["kind"] == "classifier" and source["status"] == "ready" and source["campaign"] == Campaign.objects.get(
        name="aero-judging").pk
    assert set(source["cross_validation"]) >= {"precision", "recall", "f1", "auc", "kappa", "folds"}
    assert len(source["cross_validation"]["folds"]) == 3 and source["human_kappa"] == pytest.approx(3 / 4)

    with django_capture_on_commit_callbacks(execute=True):
        response = boss.post(BASE + "label/", {"annotator": source["id"], "pools": ["aero-pool"]}, format="json")
    assert response.status_code == 202, response.content
    assert boss.get(f"{BASE}jobs/{response.json()['id']}/").json()["done"] == 8
    assert MachineLabel.objects.filter(source_id=source["id"]).count() == 8


@pytest.mark.parametrize("path, body, field", [
    ("train/", {"folds": 1}, "folds"),
    ("train/", {"model": "not a model!"}, "model"),
    ("train/", {"threshold": 3}, "campaign"),  # 0 relevant labels
    ("train/", {"learn_from": "qrels", "qrels": "x", "pool": "elsewhere"}, "pool"),
    ("label/", {"annotator": 99, "pools": ["aero-pool"]}, "annotator"),
    ("label/", {"annotator": 1}, "pools"),
    ("judge/", {"pools": ["aero-pool"]}, "endpoint"),
    ("judge/", {"pools": ["nope"]}, "pools"),
])
def test_what_cannot_be_done_is_a_400_naming_the_field_and_starts_nothing(boss, path, body, field, settings):
    settings.LLM_JUDGE_BASE_URL = ""
    response = boss.post(BASE + path, body, format="json")
    assert response.status_code == 400, response.content
    data = response.json()
    assert data.get("field") == field or field in data, data
    assert not MachineJob.objects.exists() and not MachineLabelSource.objects.exists()


def test_a_campaign_token_reaches_its_own_campaign_only(world, tiny):  # noqa: F811
    theirs = MachineLabelSource.objects.create(name="theirs", kind="classifier", status="ready", grades=[0, 1],
                                               collection=Pool.objects.get(name="aero-pool").collection,
                                               campaign_id=Campaign.objects.get(name="other").pk)
    their_job = MachineJob.objects.create(source=theirs, kind="label")
    scoped = client(issue_token(username="boss", role="organiser", campaign="aero-judging")[1])
    other = client(issue_token(username="boss", role="organiser", campaign="other")[1])

    assert scoped.get(BASE).status_code == 200
    assert other.get(BASE).status_code == 404
    assert other.post(BASE + "train/", {}, format="json").status_code == 404
    assert scoped.get(f"{BASE}jobs/{their_job.pk}/").status_code == 404  # another campaign's job
    assert scoped.get(f"{BASE}jobs/abc/").status_code == 404
    response = scoped.post(BASE + "label/", {"annotator": theirs.pk, "pools": ["aero-pool"]}, format="json")
    assert response.status_code == 400 and response.json()["field"] == "annotator"
    assert [s["name"] for s in scoped.get(BASE).json()["sources"]] == []


def test_participants_and_the_anonymous_are_refused(world):
    team = client(issue_token(username="team-a", role="participant")[1])
    assert team.get(BASE).status_code == 403
    assert team.post(BASE + "train/", {}, format="json").status_code == 403
    assert APIClient().post(BASE + "train/", {}, format="json").status_code == 401
    assert not MachineJob.objects.exists()


def test_the_llm_judge_uses_the_sites_endpoint_and_the_campaigns_prompt(boss, server, settings,  # noqa: F811
                                                                         django_capture_on_commit_callbacks):
    settings.LLM_JUDGE_BASE_URL, settings.LLM_JUDGE_MODEL = server.url, "judge-1"
    settings.LLM_JUDGE_REQUESTS_PER_MINUTE = 0
    prompt = "Grade it.\nQuery: {query}\nPassage: {passage}\nAnswer ##final score: N"
    world = Campaign.objects.get(name="aero-judging")
    world.settings = {**world.settings, "llm_prompt": prompt}
    world.save()
    with django_capture_on_commit_callbacks(execute=True):
        response = boss.post(BASE + "judge/", {"pools": ["aero-pool"], "limit": 5}, format="json")
    assert response.status_code == 202, response.content
    job = boss.get(f"{BASE}jobs/{response.json()['id']}/").json()
    # the loopback server answers these passages in prose: each an unreadable answer, counted, never a 0
    assert job["status"] == "done" and job["done"] == 5 and job["requests"] == 5 and job["errors"] == 5
    assert {r["model"] for r in server.requests} == {"judge-1"} and len(server.requests) == 5
    judge = [s for s in boss.get(BASE).json()["sources"] if s["kind"] == "llm"][0]
    assert judge["labels"] == 0 and judge["unreadable"] == 5 and judge["requests"] == 5 and judge["tokens"] == 500
    assert MachineLabelSource.objects.get(pk=judge["id"]).settings["prompt"] == prompt
    assert judge["settings"]["prompt"] == f"{len(prompt)} characters"  # its text is not sent back
