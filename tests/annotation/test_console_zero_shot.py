"""The console's Machine assistance page makes zero-shot sources (issue 28, item 3) through the one service
(assessments.services.machine.zero_shot, as `machine_label --zero-shot` does): fusion of the pool's runs or encoder
similarity labels the campaign's pools with no human label; the source is listed as zero-shot (no training, no
cross-validation), never as an LLM judge; bad input is a 400 naming the field; other campaigns' pools stay out."""

import pytest

from annotation.models import Campaign
from assessments.models import MachineJob, MachineLabel, MachineLabelSource, Pool
from tests import factories
from tests.assessments.machine_setup import campaign, model_dir, world  # noqa: F401 — four topics, two runs, two assessors

pytestmark = pytest.mark.django_db

PAGE = "/campaigns/aero-judging/machine/"


def row_of(html, source):
    row = html[html.index(f'id="source-{source.pk}"'):]
    return row[: row.index("</tr>")]


@pytest.mark.parametrize("method", ["fusion", "encoder"])
def test_the_page_makes_a_zero_shot_source_that_labels_the_unjudged_candidates(
        client, organiser, world, method, django_capture_on_commit_callbacks):
    html = client.get(PAGE).content.decode()
    assert 'id="zero-shot-form"' in html and 'id="zero-shot-method_0"' in html and "Zero-shot sources" in html

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(PAGE, {"action": "zero_shot", "method": method, "pools": ["aero-pool"]})
    assert response.status_code == 302, response.content.decode()[:3000]
    source = MachineLabelSource.objects.get()
    job = source.jobs.get()
    assert response["Location"] == f"{PAGE}#job-{job.pk}"
    assert source.kind == "zero_shot" and source.model == method and source.campaign_id == world.pk
    assert source.name == f"{method}-{source.pk}" and source.training == {}
    assert job.kind == "label" and job.status == "done" and job.items_done == 8 and job.created_by == organiser
    labels = MachineLabel.objects.filter(source=source)
    assert labels.count() == 8 and all(l.score is not None and l.grade in (0, 1) for l in labels)  # the unjudged only

    html = client.get(PAGE).content.decode()
    zero_shot = html[html.index('id="zero-shot"'):html.index('id="judges"')]
    row = row_of(zero_shot, source)  # listed as a zero-shot source, not under the LLM judges
    assert method in row and "aero-pool" in row and "zero-shot: no training" in row and ">8<" in row
    assert ("the annotators' baseline" in row) == (method == "fusion")
    judges = html[html.index('id="judges"'):html.index('id="jobs"')]
    assert f'id="source-{source.pk}"' not in judges
    assert f'id="job-{job.pk}"' in html


def test_a_name_and_the_judged_candidates_too(client, organiser, world, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(PAGE, {"action": "zero_shot", "method": "fusion", "pools": ["aero-pool"],
                                      "name": "rrf first", "include_judged": "on"})
    assert response.status_code == 302, response.content.decode()[:3000]
    source = MachineLabelSource.objects.get()
    assert source.name == "rrf first" and MachineLabel.objects.filter(source=source).count() == 40


@pytest.mark.parametrize("form, field", [
    ({"method": "magic", "pools": ["aero-pool"]}, "method"),
    ({"pools": ["aero-pool"]}, "method"),
    ({"method": "fusion"}, "pools"),
    ({"method": "fusion", "pools": ["theirs"]}, "pools"),  # another campaign's pool is no choice here
    ({"method": "fusion", "pools": ["aero-pool"], "name": "x" * 201}, "name"),
])
def test_bad_input_is_a_400_naming_the_field_and_starts_nothing(client, organiser, world, form, field):
    factories.campaign("other", Campaign.Task.ADHOC, pools=[
        Pool.objects.create(name="theirs", collection=Pool.objects.get(name="aero-pool").collection)])
    response = client.post(PAGE, {"action": "zero_shot", **form})
    assert response.status_code == 400
    assert field in response.context["forms"]["zero_shot"].errors, response.context["forms"]["zero_shot"].errors
    assert 'id="zero-shot-form"' in response.content.decode()
    assert not MachineLabelSource.objects.exists() and not MachineJob.objects.exists()


def test_another_campaigns_zero_shot_source_is_not_listed_and_others_get_404(client, organiser, world):
    other = factories.campaign("other", Campaign.Task.ADHOC)
    theirs = MachineLabelSource.objects.create(name="their-fusion", kind="zero_shot", model="fusion", status="ready",
                                               grades=[0, 1], campaign_id=other.pk,
                                               collection=Pool.objects.get(name="aero-pool").collection)
    assert f'id="source-{theirs.pk}"' not in client.get(PAGE).content.decode()
    client.force_login(factories.user("alice-2"))  # signed in, no organiser
    assert client.post(PAGE, {"action": "zero_shot", "method": "fusion", "pools": ["aero-pool"]}).status_code == 404
    assert MachineLabelSource.objects.count() == 1
