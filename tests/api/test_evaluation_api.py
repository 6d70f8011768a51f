"""GET /api/runs/{id}/evaluation/: a run scored against the current judgements or a stored qrel set."""

import ir_measures
import pytest
from ir_measures import Qrel as IrQrel
from ir_measures import ScoredDoc

from rest_framework.test import APIClient

from annotation.models import Campaign
from annotation.services.campaigns import create_campaign
from annotation.services.submissions import upload_run
from annotation.services.tokens import issue_token
from assessments.models import Judgement, Layer, Qrel, QrelSet, Topic
from retrieval.models import Passage
from tests import factories

RUN = """301 Q0 d1 1 9 sys
301 Q0 d2 2 8 sys
301 Q0 d3 3 7 sys
302 Q0 d4 1 9 sys
302 Q0 d5 2 8 sys
"""
# Grades per (topic, doc) from two assessors; majority of two = the higher grade.
GRADES = {
    "alice": {("301", "d2"): 1, ("301", "d3"): 0, ("302", "d5"): 1, ("302", "d4"): 0},
    "bob": {("301", "d2"): 0, ("301", "d1"): 0, ("302", "d5"): 1},
}


@pytest.fixture
def run(adhoc, keys):
    from django.contrib.auth import get_user_model

    owner = get_user_model().objects.get(username="team-a")
    return upload_run(campaign=adhoc, owner=owner, data=RUN.encode())


@pytest.fixture
def judged(run):
    """GRADES as labels of the run's campaign (a campaign's run is scored by its campaign's labels)."""
    campaign = Campaign.objects.get(name=run.track)
    for name, grades in GRADES.items():
        assessor = factories.user(name)
        for (qid, docid), grade in grades.items():
            factories.judgement(assessor, Topic.objects.get(external_id=qid), Passage.objects.get(external_id=docid),
                                layer=Layer.PLOT_GRADE, value=grade, campaign=campaign)
    return run


def ir_measures_values(measures, qrels, run_rows):
    parsed = [ir_measures.parse_measure(m) for m in measures]
    return {str(m): v for m, v in ir_measures.calc_aggregate(parsed, qrels, run_rows).items()}


@pytest.mark.django_db
def test_organiser_gets_the_scores_ir_measures_gives_for_the_majority_qrels(organiser, judged):
    measures = ["AP", "nDCG@10", "P@2", "RR", "R@2"]
    response = organiser.get(f"/api/runs/{judged.pk}/evaluation/", {"measure": measures, "per_topic": "true"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["run"] == "sys" and body["topics"] == 2
    assert body["qrels"] == "current judgements, aggregate=majority, page level"
    majority = {("301", "d1"): 0, ("301", "d2"): 1, ("301", "d3"): 0, ("302", "d4"): 0, ("302", "d5"): 1}
    qrels = [IrQrel(q, d, g) for (q, d), g in majority.items()]
    rows = [ScoredDoc(*line.split()[0:3:2], float(line.split()[4])) for line in RUN.splitlines()]
    expected = ir_measures_values(measures, qrels, rows)
    assert body["all"] == pytest.approx(expected, abs=1e-9)
    assert body["all"]["P@2"] == pytest.approx(0.5)  # 301: d2 of d1,d2; 302: d5 of d4,d5
    assert set(body["per_topic"]) == {"301", "302"}


@pytest.mark.django_db
def test_a_stored_qrel_set_and_the_defaults(organiser, run, web):
    qrel_set = QrelSet.objects.create(name="official", collection=web)
    Qrel.objects.create(qrel_set=qrel_set, topic=Topic.objects.get(external_id="301"),
                        passage=Passage.objects.get(external_id="d3"), grade=2)
    body = organiser.get(f"/api/runs/{run.pk}/evaluation/", {"qrel_set": "official"}).json()
    assert body["qrels"] == "stored set official"
    assert body["measures"] == ["AP", "nDCG@10", "P@10", "RR", "Judged@10"]
    assert body["all"]["RR"] == pytest.approx(1 / 3)
    assert body["topics"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize("query, message", [
    ({"measure": "Banana@3"}, "measure[0] 'Banana@3'"),
    ({"qrel_set": "nope"}, "no qrel set named 'nope'"),
    ({"qrel_set": "x", "aggregate": "max"}, "no aggregate"),
    ({"aggregate": "one"}, "aggregate"),
])
def test_bad_options_are_a_400_that_says_which(organiser, run, query, message):
    response = organiser.get(f"/api/runs/{run.pk}/evaluation/", query)
    assert response.status_code == 400
    assert message in response.content.decode()


@pytest.mark.django_db
def test_participants_wait_until_the_campaign_opens_evaluation(client_as, judged):
    team_a, team_b = client_as("participant_a"), client_as("participant_b")
    url = f"/api/runs/{judged.pk}/evaluation/"
    closed = team_a.get(url)
    assert closed.status_code == 403 and "not open to participants" in closed.json()["detail"]
    campaign = Campaign.objects.get(name="adhoc")
    campaign.settings = {"evaluation_open": True}
    campaign.save()
    unreleased = team_a.get(url)  # open, but the judgements in progress are never a participant's qrels
    assert unreleased.status_code == 403 and "No qrels are released" in unreleased.json()["detail"]
    other = QrelSet.objects.create(name="other-campaigns", collection=judged.collection)
    released = QrelSet.objects.create(name="adhoc-final", collection=judged.collection)
    Qrel.objects.create(qrel_set=released, topic=Topic.objects.get(external_id="301"),
                        passage=Passage.objects.get(external_id="d1"), grade=1)
    campaign.settings = {"evaluation_open": True, "released_qrels": released.name}
    campaign.save()
    assert team_a.get(url, {"qrel_set": other.name}).status_code == 403
    assert team_a.get(url, {"aggregate": "max"}).status_code == 403
    body = team_a.get(url).json()
    assert body["qrels"] == "stored set adhoc-final"
    assert team_b.get(url).status_code == 404  # another team's run does not exist for B
    assert client_as("anonymous").get(url).status_code == 401
    assert client_as("assessor").get(url).status_code == 403
    assert client_as("organiser").get("/api/runs/999999/evaluation/").status_code == 404
    assert client_as("organiser").get("/api/runs/x1/evaluation/").status_code == 404


@pytest.mark.django_db
def test_adjudicated_labels_do_not_count_as_an_assessors_vote(organiser, judged):
    boss = Judgement.objects.model._meta.get_field("assessor").related_model.objects.get(username="boss")
    factories.judgement(boss, Topic.objects.get(external_id="301"), Passage.objects.get(external_id="d1"),
                        layer=Layer.PLOT_GRADE, value=1, source="adjudication", campaign=Campaign.objects.get(name="adhoc"))
    body = organiser.get(f"/api/runs/{judged.pk}/evaluation/", {"measure": "P@1"}).json()
    # Under majority, d1 stays 0 (bob's 0): the organiser's adjudicated label is not a third assessor.
    assert body["all"]["P@1"] == pytest.approx(0.0)


@pytest.mark.django_db
def test_a_campaigns_run_is_scored_by_that_campaigns_labels_only(run, organiser):
    """The results page scores a campaign's runs by its own labels; the API scored them by every campaign's labels of
    the collection, so even a token limited to campaign adhoc read scores made of another campaign's judgements."""
    adhoc = Campaign.objects.get(name="adhoc")
    pilot = create_campaign(name="adhoc-pilot", task="adhoc", topics=["301", "302"])
    topic, d1 = Topic.objects.get(external_id="301"), Passage.objects.get(external_id="d1")
    factories.judgement(factories.user("ann"), topic, d1, layer=Layer.PLOT_GRADE, value=0, campaign=adhoc)
    for name in ("pat", "sam"):  # the pilot's two assessors: d1 relevant
        factories.judgement(factories.user(name), topic, d1, layer=Layer.PLOT_GRADE, value=2, campaign=pilot)
    scoped = APIClient()
    scoped.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(username='boss', role='organiser', campaign='adhoc')[1]}")
    for client in (scoped, organiser):
        body = client.get(f"/api/runs/{run.pk}/evaluation/", {"measure": "P@1", "per_topic": "true"}).json()
        assert body["all"] == {"P@1": 0.0} and body["per_topic"] == {"301": {"P@1": 0.0}}, body
