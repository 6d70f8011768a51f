"""Citation support precision and recall (issue 29, items 5 and 6): once a campaign's citations are judged, every
run's scores gain citation_precision (the mean support of its answers' citations: full 1, partial 0.5, none or not
judged 0) and citation_recall (the mean over the sentences of their best citation's support), in
export_nugget_scores' JSON and TSV, the API and the results page, equal to a hand computation."""

import io
import json

import pytest
from django.core.management import call_command

from annotation.roles import Role, ensure_groups
from assessments.evaluation.nuggets import CITATION_MEASURES, MEASURES, nugget_scores
from assessments.models import Layer
from assessments.services import nuggets
from assessments.services.judging import record_judgement
from retrieval.models import Passage
from tests import factories
from tests.annotation.nuggets_setup import DOCS, RUNS, nuggets_world

pytestmark = pytest.mark.django_db

# RUNS[0]: sentence 1 cites doc 0, sentence 2 cites docs 1 and 0; RUNS[1]: sentence 1 cites doc 2.
# amy: full, partial, none; and doc 2 full. ben: only doc 2, partial (a tie of two: the lower, partial).
HAND = {
    RUNS[0]: {"citation_precision": (1 + 0.5 + 0) / 3, "citation_recall": (1 + max(0.5, 0)) / 2},
    RUNS[1]: {"citation_precision": 0.5, "citation_recall": 0.5},
}


@pytest.fixture
def world():
    found = nuggets_world()
    amy, ben = factories.user("amy"), factories.user("ben")
    doc = {p.external_id: p for p in Passage.objects.all()}
    a, b = found["answers"][RUNS[0]], found["answers"][RUNS[1]]
    labels = [(amy, a, 0, DOCS[0][0], "full"), (amy, a, 1, DOCS[1][0], "partial"), (amy, a, 1, DOCS[0][0], "none"),
              (amy, b, 0, DOCS[2][0], "full"), (ben, b, 0, DOCS[2][0], "partial")]
    for who, answer, position, docid, value in labels:
        record_judgement(campaign_id=found["campaign"].pk, assessor=who, layer=Layer.CITATION_SUPPORT, value=value,
                         topic=answer.topic, passage=doc[docid], item=nuggets.citation_item(answer.pk, position))
    return found


def test_the_scores_gain_citation_precision_and_recall_equal_to_a_hand_computation(world):
    runs = nugget_scores(world["campaign"].pk)["runs"]
    for run in RUNS:
        for measure in CITATION_MEASURES:
            assert runs[run][measure] == pytest.approx(HAND[run][measure])
        (topic,) = runs[run]["topics"].values()
        assert topic["citation_precision"] == pytest.approx(HAND[run]["citation_precision"])
    (first,) = runs[RUNS[0]]["topics"].values()
    assert first["citations"] == 3 and first["citations_assessed"] == 3
    assert set(MEASURES) <= set(runs[RUNS[0]])  # the nugget measures stay


def test_a_campaign_without_citation_labels_scores_no_citation_measures(db):
    runs = nugget_scores(nuggets_world()["campaign"].pk)["runs"]
    assert not set(CITATION_MEASURES) & set(runs[RUNS[0]])


def test_the_export_the_api_and_the_results_page_show_them(client, world):
    campaign = world["campaign"]
    out = io.StringIO()
    call_command("export_nugget_scores", "--campaign", campaign.name, "--format", "tsv", stdout=out)
    lines = [line.split("\t") for line in out.getvalue().splitlines()]
    assert lines[0] == ["run", "topic", *MEASURES, *CITATION_MEASURES]
    mean = {row[0]: row for row in lines[1:] if row[1] == "all"}
    for run in RUNS:
        assert mean[run][-2:] == [f"{HAND[run][m]:.4f}" for m in CITATION_MEASURES]
    out = io.StringIO()
    call_command("export_nugget_scores", "--campaign", campaign.name, stdout=out)
    assert json.loads(out.getvalue())["runs"][RUNS[0]]["citation_recall"] == pytest.approx(0.75)

    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(organiser)
    api = client.get(f"/api/campaigns/{campaign.name}/nugget-scores/").json()
    assert api["runs"][RUNS[1]]["citation_precision"] == pytest.approx(0.5)
    page = client.get(f"/campaigns/{campaign.name}/results/").content.decode()
    assert "citation_precision" in page and "citation_recall" in page and "0.7500" in page


def test_a_nuggets_campaign_offers_no_qrels_which_would_be_empty(client, world):
    """The results page offered a qrels download (with CAR's page/section options) that returned an empty file."""
    campaign = world["campaign"]
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(organiser)
    page = client.get(f"/campaigns/{campaign.name}/results/").content.decode()
    assert 'id="qrels-form"' not in page and 'id="download-nugget-scores"' in page
    response = client.get(f"/campaigns/{campaign.name}/results/qrels/")
    assert response.status_code == 400 and "it has no qrels; download its nugget scores" in response.content.decode()


def test_the_results_page_downloads_the_nugget_assignments_as_the_command_writes_them(client, world):
    campaign = world["campaign"]
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(organiser)
    assert 'id="download-nugget-assignments"' in client.get(f"/campaigns/{campaign.name}/results/").content.decode()
    response = client.get(f"/campaigns/{campaign.name}/results/nugget-assignments/")
    out = io.StringIO()
    call_command("export_nugget_assignments", "--campaign", campaign.name, stdout=out)
    assert response.status_code == 200 and response.content.decode() == out.getvalue()
    assert {json.loads(line)["run_id"] for line in out.getvalue().splitlines()} == set(RUNS)
    bad = client.get(f"/campaigns/{campaign.name}/results/nugget-assignments/", {"source": "nope"})
    assert bad.status_code == 400 and "source" in bad.content.decode()
