"""The console's Machine assistance page through the test client: train an annotator on the campaign's labels (a
tiny BERT on CPU), see its k-fold figures beside the human–human κ, label a pool with it, follow the jobs, edit
the LLM prompt, and be refused what the commands refuse; other campaigns' pools, annotators and jobs stay out."""

import pytest

from annotation.models import Campaign
from assessments.models import MachineJob, MachineLabel, MachineLabelSource, Pool
from assessments.machine import llm
from tests import factories
from tests.assessments.machine_setup import campaign, model_dir, tiny, world  # noqa: F401 — four topics, two runs, two assessors

pytestmark = pytest.mark.django_db

PAGE = "/campaigns/aero-judging/machine/"


def train_form(tiny, **overrides):  # noqa: F811
    return {"action": "train", "learn_from": "campaign", "model_choice": "other", "model_name": tiny, "folds": 3,
            "epochs": 1, "max_length": 16, "batch_size": 8, "learning_rate": 3e-5, "threshold": 1, **overrides}


def test_an_organiser_trains_labels_and_follows_the_jobs_in_the_browser(client, organiser, world, tiny,  # noqa: F811
                                                                         django_capture_on_commit_callbacks):
    page = client.get(PAGE)
    assert page.status_code == 200
    html = page.content.decode()
    assert "Human–human Cohen's κ of this campaign's labels now" in html and "0.750" in html  # 28 of 32, chance 1/2
    assert "No LLM endpoint is configured" in html and 'id="start-judging" disabled' in html
    assert "Anchoring" in html and "None yet: train one below." in html

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(PAGE, train_form(tiny))
    assert response.status_code == 302, response.content.decode()[:3000]
    source = MachineLabelSource.objects.get()
    job = source.jobs.get()
    assert response["Location"] == f"{PAGE}#job-{job.pk}"
    assert source.campaign_id == world.pk and source.status == "ready" and job.status == "done"
    assert len(source.metrics["folds"]) == 3

    html = client.get(PAGE).content.decode()
    row = html[html.index(f'id="source-{source.pk}"'):]
    row = row[: row.index("</tr>")]
    assert f"{source.metrics['kappa']:.3f}" in row and "0.750" in row  # its κ beside the human–human κ
    assert "3-fold cross-validation split by topic, fold by fold" in html and f"Train and cross-validate #{job.pk}" in html

    status = client.get(f"/jobs/machine/{job.pk}/").json()
    assert status["finished"] and status["status"] == "done"
    assert status["progress"]["done"] == status["progress"]["total"] > 0 and "done" in status["progress"]["desc"]

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(PAGE, {"action": "label", "annotator": source.pk, "pools": ["aero-pool"]})
    assert response.status_code == 302, response.content.decode()[:3000]
    labelling = MachineJob.objects.get(kind="label")
    assert labelling.status == "done" and labelling.items_done == 8
    assert MachineLabel.objects.filter(source=source).count() == 8  # the unjudged candidates only


def test_a_running_job_is_followed_by_the_page_and_its_json_says_the_time_left(client, organiser, world, tiny):  # noqa: F811
    response = client.post(PAGE, train_form(tiny))  # not committed here: the job waits, queued
    assert response.status_code == 302
    job = MachineJob.objects.get()
    MachineJob.objects.filter(pk=job.pk).update(status="running", items_done=30, items_total=90, rate=2.0)
    html = client.get(PAGE).content.decode()
    assert f'data-status-url="/jobs/machine/{job.pk}/"' in html  # the one progress endpoint of background work
    status = client.get(f"/jobs/machine/{job.pk}/").json()
    assert status["finished"] is False and status["eta_seconds"] == 30.0
    assert "30/90" in status["progress"]["desc"] and "ETA 0:00:30" in status["progress"]["desc"]
    overview = client.get("/campaigns/").content.decode()  # the organisers' list of background work
    assert f"Train and cross-validate #{job.pk}: annotator-" in overview and f'href="{PAGE}"' in overview


@pytest.mark.parametrize("overrides, field, message", [
    ({"folds": 1}, "folds", "Ensure this value is greater than or equal to 2."),
    ({"model_name": "/nowhere/model"}, "model_name", "is not a folder holding a Hugging Face model"),
    ({"model_name": "not a name!"}, "model_name", "give features, minilm, a model folder, or a Hugging Face name"),
    ({"model_name": "someone/huge-model"}, "model_name", "not on this site's MODEL_ALLOW_LIST"),  # no download
    ({"threshold": 3}, None, "all 32 human labels are non-relevant"),
    ({"topics": "1\n2"}, None, "only 16 human labels: an annotator needs at least 20"),
    ({"run_blind": "on"}, "run_blind", "only the feature model reads the runs"),
    ({"learn_from": "qrels"}, "qrels", "choose one to learn from a qrel set"),
])
def test_the_page_refuses_what_the_command_refuses_and_starts_nothing(client, organiser, world, tiny, overrides,  # noqa: F811
                                                                       field, message):
    response = client.post(PAGE, train_form(tiny, **overrides))
    assert response.status_code == 400
    form = response.context["forms"]["train"]
    errors = form.errors.get(field or "__all__") or form.errors.get("model_name") or form.errors.get("__all__")
    assert any(message in e for e in errors), form.errors
    assert not MachineLabelSource.objects.exists() and not MachineJob.objects.exists()


def test_another_campaigns_pool_annotator_and_job_are_out_of_reach(client, organiser, world, tiny,  # noqa: F811
                                                                     django_capture_on_commit_callbacks):
    other = factories.campaign("other", Campaign.Task.ADHOC)
    theirs = MachineLabelSource.objects.create(name="theirs", kind="classifier", collection=Pool.objects.get(
        name="aero-pool").collection, campaign_id=other.pk, status="ready", grades=[0, 1])
    their_job = MachineJob.objects.create(source=theirs, kind="label")
    response = client.post(PAGE, {"action": "label", "annotator": theirs.pk, "pools": ["aero-pool"]})
    assert response.status_code == 400 and "annotator" in response.context["forms"]["label"].errors
    # the job's progress address is one for all organisers (/jobs/machine/<id>/); this campaign's page lists it not
    assert f"/jobs/machine/{their_job.pk}/" not in client.get(PAGE).content.decode()
    Pool.objects.create(name="not-ours", collection=theirs.collection)
    response = client.post(PAGE, train_form(tiny, learn_from="qrels", qrels="x", pool="not-ours"))
    assert response.status_code == 400  # not a choice: the campaign's pools only
    assert MachineJob.objects.count() == 1


def test_the_llm_prompt_is_the_campaigns_own_once_saved_and_checked_like_the_commands(client, organiser, world):
    page = client.get(PAGE).content.decode()
    assert "##final score: score" in page and "(the default)" in page
    response = client.post(PAGE, {"action": "prompt", "which": "llm_prompt", "prompt": "Grade {query} only."})
    assert response.status_code == 400
    assert "has no {passage}" in " ".join(response.context["prompts"][0]["form"].errors["prompt"])
    prompt = "Query: {query}\nPassage: {passage}\nAnswer ##final score: N (0-3)."
    response = client.post(PAGE, {"action": "prompt", "which": "llm_prompt", "prompt": prompt})
    assert response.status_code == 302
    world.refresh_from_db()
    assert world.settings["llm_prompt"] == prompt
    assert llm.prompt_for(llm.JudgeRequest(campaign_settings=world.settings)) == prompt
    assert "(this campaign's own)" in client.get(PAGE).content.decode()
    client.post(PAGE, {"action": "prompt", "which": "llm_prompt", "prompt": "", "reset": "1"})
    world.refresh_from_db()
    assert "llm_prompt" not in world.settings
    response = client.post(PAGE, {"action": "prompt", "which": "llm_prompt", "prompt": prompt + " {answer}"})
    assert response.status_code == 400  # a {name} the judge does not fill would reach the LLM as it is
    assert "has {answer}, which nothing fills" in " ".join(response.context["prompts"][0]["form"].errors["prompt"])


def test_the_nugget_prompts_are_a_nuggets_campaigns_only(client, organiser, world):
    page = client.get(PAGE).content.decode()
    assert 'id="prompt-llm_prompt"' in page and 'id="prompt-llm_nugget_assign_prompt"' not in page
    response = client.post(PAGE, {"action": "prompt", "which": "llm_nugget_assign_prompt",
                                  "prompt": "{query} {answer} {nuggets}"})
    assert response.status_code == 400
    world.refresh_from_db()
    assert "llm_nugget_assign_prompt" not in (world.settings or {})


def test_the_llm_judge_sends_nothing_when_no_endpoint_is_configured(client, organiser, world, settings):
    settings.LLM_JUDGE_BASE_URL = ""
    response = client.post(PAGE, {"action": "judge", "pools": ["aero-pool"]})
    assert response.status_code == 400
    assert "no LLM endpoint is configured" in " ".join(response.context["forms"]["judge"].errors["__all__"])
    assert not MachineJob.objects.exists()


def test_people_who_are_not_organisers_get_404(client, world):
    client.force_login(factories.user("alice-2"))
    assert client.get(PAGE).status_code == 404
    assert client.post(PAGE, {"action": "label"}).status_code == 404


def test_the_api_refuses_too_few_labels_or_one_class_naming_the_field(client, organiser, world):
    for body, message in (({"topics": ["1", "2"]}, "only 16 human labels"),
                          ({"threshold": 3}, "all 32 human labels are non-relevant")):
        response = client.post("/api/campaigns/aero-judging/machine/train/", body,
                               content_type="application/json")
        assert response.status_code == 400, response.content
        errors = response.json()
        assert message in errors["detail"] and errors["field"] == "campaign", errors
    assert not MachineLabelSource.objects.exists()


def test_the_api_trains_a_run_blind_annotator_and_refuses_run_blind_where_it_means_nothing(client, organiser, world,
                                                                                          tiny):  # noqa: F811
    url = "/api/campaigns/aero-judging/machine/train/"
    for body, field in (({"run_blind": "maybe"}, "run_blind"), ({"run_blind": True, "model": tiny}, "run_blind")):
        response = client.post(url, body, content_type="application/json")
        assert response.status_code == 400, response.content
        assert field in response.content.decode(), response.content
    assert not MachineLabelSource.objects.exists()
    response = client.post(url, {"run_blind": True, "folds": 2}, content_type="application/json")
    assert response.status_code == 202, response.content
    blind = MachineLabelSource.objects.get()
    assert blind.settings["run_blind"] is True  # what the job trains with (model.run_blind_names)
    client.post(url, {"folds": 2}, content_type="application/json")
    assert "run_blind" not in MachineLabelSource.objects.exclude(pk=blind.pk).get().settings


def test_the_page_trains_a_run_blind_features_annotator_when_ticked(client, organiser, world, tiny):  # noqa: F811
    assert 'name="run_blind"' in client.get(PAGE).content.decode()
    for ticked in ({"run_blind": "on"}, {}):
        response = client.post(PAGE, train_form(tiny, model_choice="features", folds=2, **ticked))
        assert response.status_code == 302, response.content.decode()[:3000]
    blind, default = MachineLabelSource.objects.order_by("pk")
    assert blind.settings["run_blind"] is True and "run_blind" not in default.settings


def test_the_page_shows_the_fusion_baseline_beside_each_annotator_and_a_red_note_where_it_does_not_beat_it(
        client, organiser, world):
    collection = Pool.objects.get(name="aero-pool").collection

    def annotator(name, auc, kappa):
        return MachineLabelSource.objects.create(
            name=name, kind="classifier", collection=collection, campaign_id=world.pk, status="ready", grades=[0, 1],
            model="features", metrics={"auc": auc, "kappa": kappa, "baseline_auc": 0.7111, "baseline_kappa": 0.3222,
                                       "folds": [], "folds_by": "topic"})

    worse, better = annotator("worse", 0.6543, 0.2, ), annotator("better", 0.8123, 0.4)
    html = client.get(PAGE).content.decode()
    for source in (worse, better):
        row = html[html.index(f'id="source-{source.pk}"'):]
        row = row[: row.index("</tr>")]
        assert "0.711" in row and "0.322" in row  # the baseline beside its figures
    assert f'id="below-baseline-{worse.pk}"' in html and f'id="below-baseline-{better.pk}"' not in html
    note = html[html.index(f'id="below-baseline-{worse.pk}"'):]
    assert 'class="error"' in note[:200] and "does not beat reciprocal-rank fusion" in note[:400]
