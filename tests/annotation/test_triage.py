"""Triage with machine scores: likely-relevant candidates go to extra assessors (assign_campaign's `likely`), and
an audit sends a sample of the human labels the machine disagrees with to review, where the reviewer judges the
human label and sees the machine's only as the reason it was sampled; the assessor never sees it."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command

from annotation.models import Assignment, Campaign, Review
from annotation.roles import Role, ensure_groups
from annotation.services import plot
from annotation.services.assignment import assign_campaign
from annotation.services.review import submit_review
from annotation.services.triage import LikelyRelevant, TriageInvalid, audit_review
from assessments.models import Layer, MachineLabel, MachineLabelSource, Pool, PoolCandidate, Topic
from assessments.services import machine
from tests import factories

pytestmark = pytest.mark.django_db

SCORES = [0.9, 0.7, 0.2, 0.1]  # candidates 1 and 2 of each topic are likely relevant at 0.5


@pytest.fixture
def world():
    """An ad hoc campaign over one pool of two topics × four candidates, four assessors, and an annotator of the
    campaign that scored every candidate."""
    ensure_groups()
    coll = factories.collection("triage")
    topics = [factories.topic(coll, t, kind=Topic.Kind.ADHOC, text=f"query {t}") for t in ("t1", "t2")]
    pool = factories.pool(coll, topics, [], name="tri-pool", status=Pool.Status.READY)
    camp = factories.campaign("tri", Campaign.Task.ADHOC, review_sample_size=0, pools=[pool])
    source = MachineLabelSource.objects.create(name="annotator-x", kind="classifier", collection=coll,
                                               campaign_id=camp.pk, status="ready", grades=[0, 1])
    for topic in topics:
        for rank, score in enumerate(SCORES, start=1):
            doc = factories.passage(coll, f"{topic.external_id}-d{rank}", text=f"text {rank}")
            PoolCandidate.objects.create(pool=pool, topic=topic, passage=doc, rank=rank)
            MachineLabel.objects.create(source=source, topic=topic, passage=doc, grade=int(score >= 0.5), score=score)
    people = [factories.user(name) for name in ("ann", "ben", "cat", "dan")]
    for user in people:
        user.groups.add(Group.objects.get(name=Role.ASSESSOR))
    return camp, pool, source, topics


NAMES = ["ann", "ben", "cat", "dan"]


def test_likely_relevant_candidates_get_an_extra_assessor_who_sees_only_them(world):
    camp, pool, source, topics = world
    result = assign_campaign(camp, NAMES, overlap=1, likely=LikelyRelevant(source.pk, 0.5, 1))

    triage = Pool.objects.get(name=f"tri-pool-likely-{source.pk}")
    assert triage.params["triage_of"] == pool.pk and camp.pools.filter(pk=triage.pk).exists()
    assert sorted(triage.candidates.values_list("passage__external_id", flat=True)) == [
        "t1-d1", "t1-d2", "t2-d1", "t2-d2"]
    assert result.created == 4 and result.extra_created == 2
    for topic in topics:
        main = Assignment.objects.get(campaign=camp, topic=topic, pool=pool)
        extra = Assignment.objects.get(campaign=camp, topic=topic, pool=triage)
        assert main.assessor_id != extra.assessor_id
        assert len(plot.candidates(main)) == 4
        shown = [c.passage.external_id for c in plot.candidates(extra)]
        assert sorted(shown) == [f"{topic.external_id}-d1", f"{topic.external_id}-d2"]

    # the extra assessor judges; running the assignment again (with or without triage) gives nobody anything new,
    # and the extra assessor does not become the topic's keeper
    extra = Assignment.objects.filter(pool=triage).first()
    factories.judgement(extra.assessor, extra.topic, triage.candidates.filter(topic=extra.topic).first().passage,
                        layer=Layer.PLOT_GRADE, value=1, campaign=camp)
    assert assign_campaign(camp, NAMES, likely=LikelyRelevant(source.pk, 0.5, 1)).created == 0
    assert assign_campaign(camp, NAMES).created == 0
    assert Assignment.objects.filter(campaign=camp, pool=pool).count() == 2


def test_more_scores_later_grow_the_triage_pool_and_two_extra_assessors_can_be_asked(world):
    camp, pool, source, topics = world
    assign_campaign(camp, NAMES, overlap=1, likely=LikelyRelevant(source.pk, 0.8, 1))
    triage = Pool.objects.get(name=f"tri-pool-likely-{source.pk}")
    assert triage.candidates.count() == 2
    result = assign_campaign(camp, NAMES, likely=LikelyRelevant(source.pk, 0.5, 2))
    assert triage.candidates.count() == 4 and result.extra_created == 2  # one more extra assessor per topic
    for topic in topics:
        people = set(Assignment.objects.filter(campaign=camp, topic=topic).values_list("assessor_id", flat=True))
        assert len(people) == 3


def test_the_scores_a_judging_order_reads(world):
    camp, pool, source, topics = world
    scores = machine.pool_scores(source.pk, pool, topic_ids=[topics[0].pk])
    assert sorted(scores.values(), reverse=True) == SCORES
    assert machine.pool_scores(source.pk, Pool.objects.create(name="empty", collection=pool.collection)) == {}


@pytest.mark.parametrize("change, field", [
    (lambda camp, source: LikelyRelevant(source.pk + 100, 0.5, 1), "likely_source"),
    (lambda camp, source: LikelyRelevant(source.pk, float("nan"), 1), "likely_threshold"),
    (lambda camp, source: LikelyRelevant(source.pk, 0.5, 0), "likely_extra"),
])
def test_triage_refuses_what_it_cannot_do_and_assigns_nothing(world, change, field):
    camp, pool, source, topics = world
    with pytest.raises(TriageInvalid) as caught:
        assign_campaign(camp, NAMES, overlap=1, likely=change(camp, source))
    assert caught.value.field == field
    assert not Assignment.objects.exists() and not Pool.objects.filter(name__contains="likely").exists()


def test_another_campaigns_source_and_an_outline_campaign_are_refused(world):
    camp, pool, source, topics = world
    other = factories.campaign("other", Campaign.Task.ADHOC)
    MachineLabelSource.objects.filter(pk=source.pk).update(campaign_id=other.pk)
    with pytest.raises(TriageInvalid, match="no machine label source"):
        assign_campaign(camp, NAMES, overlap=1, likely=LikelyRelevant(source.pk, 0.5, 1))
    outline = factories.campaign("outline")
    with pytest.raises(TriageInvalid, match="pool-based campaign"):
        assign_campaign(outline, NAMES, likely=LikelyRelevant(source.pk, 0.5, 1))


def test_the_command_takes_the_triage_options(world):
    camp, pool, source, topics = world
    out = StringIO()
    call_command("assign_campaign", "tri", "--assessors", *NAMES, "--overlap", "1", "--likely-source", str(source.pk),
                 "--likely-threshold", "0.5", "--likely-extra", "1", "--no-progress", stdout=out)
    assert "2 of likely-relevant candidates for extra assessors" in out.getvalue()
    with pytest.raises(CommandError, match="--likely-extra: expected a whole number"):
        call_command("assign_campaign", "tri", "--assessors", *NAMES, "--likely-source", str(source.pk),
                     "--likely-extra", "0", stdout=StringIO())


# Audit -------------------------------------------------------------------------------------------------------


@pytest.fixture
def judged(world):
    """ann judges both topics, done: relevant (1) for d1 and d3, not (0) for d2 and d4. The machine says d1, d2
    relevant: it disagrees on d2 and d3 of each topic."""
    camp, pool, source, topics = world
    reviewer = factories.user("rita")
    reviewer.groups.add(Group.objects.get(name=Role.REVIEWER))
    assign_campaign(camp, ["ann"], overlap=1)
    ann = get_user_model().objects.get(username="ann")
    for candidate in PoolCandidate.objects.filter(pool=pool):
        grade = 1 if candidate.rank in (1, 3) else 0
        factories.judgement(ann, candidate.topic, candidate.passage, layer=Layer.PLOT_GRADE, value=grade, campaign=camp)
    Assignment.objects.filter(campaign=camp).update(status=Assignment.Status.DONE)
    return camp, pool, source, topics, reviewer


def test_an_audit_reviews_a_sample_of_the_disagreements_showing_the_machine_only_as_the_reason(judged, client):
    camp, pool, source, topics, reviewer = judged
    done = audit_review(camp, source.pk, size=3, seed=1)
    assert done["disagreeing"] == 4 and done["eligible"] == 4 and done["sampled"] == 3
    reviews = list(Review.objects.filter(pk__in=done["reviews"]))
    items = [item for review in reviews for item in review.items.all()]
    assert len(items) == 3 and all(r.reviewer == reviewer and r.status == "open" for r in reviews)
    assert {i.passage.external_id.split("-")[1] for i in items} <= {"d2", "d3"}
    assert all(i.labels["plot_grade"] in (0, 1) and i.labels["machine"]["name"] == "annotator-x" for i in items)

    client.force_login(reviewer)
    page = client.get(f"/review/{reviews[0].pk}/").content.decode()
    assert "Sampled for audit: the machine label source annotator-x says likely" in page
    assert "Assessor said: <span class=\"said\">grade " in page

    # the reviewer judges the human label; a wrong one goes back to its assessor with the reviewer's words only
    review = reviews[0]
    verdicts = {item.pk: (False, "Read the passage again.") for item in review.items.all()}
    submit_review(review, reviewer, verdicts)
    assert Assignment.objects.get(pk=review.assignment_id).status == Assignment.Status.REVISE
    client.force_login(get_user_model().objects.get(username="ann"))
    home = client.get("/").content.decode()
    assert "Read the passage again." in home and "annotator-x" not in home and "likely relevant" not in home

    # audited batches (one open, one back for revision) are not sampled again; each batch holds 2 disagreements
    again = audit_review(camp, source.pk, size=10, seed=1)
    assert again["disagreeing"] == 4 and again["eligible"] == 2 * (2 - len({r.assignment_id for r in reviews}))


def test_the_audit_command_and_its_refusals(judged):
    camp, pool, source, topics, reviewer = judged
    out = StringIO()
    call_command("machine_audit", "tri", "--source", str(source.pk), "--size", "2", stdout=out)
    assert "4 human labels disagree with the machine, 4 of them in batches that are done; 2 sampled" in out.getvalue()
    with pytest.raises(CommandError, match="--source: no machine label source"):
        call_command("machine_audit", "tri", "--source", "999", stdout=StringIO())
    with pytest.raises(CommandError, match="--size"):
        call_command("machine_audit", "tri", "--source", str(source.pk), "--size", "0", stdout=StringIO())


# The console ------------------------------------------------------------------------------------------------


@pytest.fixture
def boss(client):
    user = factories.user("boss", is_staff=True)
    user.groups.add(Group.objects.get(name=Role.ORGANISER))
    client.force_login(user)
    return user


def test_the_work_page_offers_the_triage_option_and_refuses_a_bad_one(world, boss, client):
    camp, pool, source, topics = world
    page = client.get("/campaigns/tri/work/").content.decode()
    assert "More assessors for likely-relevant candidates" in page and f"annotator-x (#{source.pk})" in page
    form = {"action": "assign", "assessors": NAMES, "overlap": 1, "seed": 0, "likely_source": source.pk,
            "likely_threshold": 0.5, "likely_extra": 1}
    response = client.post("/campaigns/tri/work/", {**form, "likely_threshold": "nan"})
    assert response.status_code == 400 and "likely_threshold" in response.context["form"].errors
    assert not Assignment.objects.exists()
    response = client.post("/campaigns/tri/work/", form)
    assert response.status_code == 302
    assert Assignment.objects.filter(pool__name=f"tri-pool-likely-{source.pk}").count() == 2


def test_the_machine_page_sends_an_audit_sample_to_review(judged, boss, client):
    camp, pool, source, topics, reviewer = judged
    response = client.post("/campaigns/tri/machine/", {"action": "audit", "machine_source": source.pk, "size": 2,
                                                        "seed": 0})
    assert response.status_code == 302
    assert sum(r.items.count() for r in Review.objects.all()) == 2
    response = client.post("/campaigns/tri/machine/", {"action": "audit", "machine_source": source.pk, "size": 0,
                                                        "seed": 0})
    assert response.status_code == 400 and "size" in response.context["forms"]["audit"].errors


def _audit_form(html):
    form = html[html.index('id="audit-form"'):]
    return form[:form.index("</form>")]


def test_a_zero_shot_source_is_offered_audited_and_triaged_like_an_annotator(judged, boss, client):
    camp, pool, source, topics, reviewer = judged
    MachineLabelSource.objects.filter(pk=source.pk).update(kind="zero_shot", model="fusion", name="fusion-x")
    assert f"fusion-x (#{source.pk})" in _audit_form(client.get("/campaigns/tri/machine/").content.decode())
    assert f"fusion-x (#{source.pk})" in client.get("/campaigns/tri/work/").content.decode()

    response = client.post("/campaigns/tri/machine/", {"action": "audit", "machine_source": source.pk, "size": 4,
                                                        "seed": 0})
    assert response.status_code == 302
    items = [i for r in Review.objects.all() for i in r.items.all()]
    assert len(items) == 4 and {i.passage.external_id.split("-")[1] for i in items} == {"d2", "d3"}
    assert all(i.labels["machine"]["name"] == "fusion-x" and i.labels["machine"]["score"] is not None for i in items)
    assert all(i.labels["machine"]["text"] in ("likely relevant", "likely not relevant") for i in items)

    # Its scores are no probabilities: triage compares its grade (its top share of each topic) with the threshold,
    # so a score of 0.9 on a candidate it grades 0 does not make it likely relevant.
    MachineLabel.objects.filter(source=source, passage__external_id__endswith="-d2").update(score=0.95, grade=0)
    MachineLabel.objects.filter(source=source, passage__external_id__endswith="-d3").update(score=0.3, grade=1)
    assign_campaign(camp, NAMES, overlap=1, likely=LikelyRelevant(source.pk, 0.5, 1))
    assert sorted(Pool.objects.get(name=f"tri-pool-likely-{source.pk}").candidates.values_list(
        "passage__external_id", flat=True)) == ["t1-d1", "t1-d3", "t2-d1", "t2-d3"]


def test_a_query_filter_is_neither_offered_nor_audited(judged, boss, client):
    camp, pool, source, topics, reviewer = judged
    MachineLabelSource.objects.filter(pk=source.pk).update(kind="query_filter")
    assert "No machine labels of this campaign yet." in _audit_form(client.get("/campaigns/tri/machine/").content.decode())
    with pytest.raises(TriageInvalid, match="no machine label source"):
        audit_review(camp, source.pk)
    response = client.post("/campaigns/tri/machine/", {"action": "audit", "machine_source": source.pk, "size": 2,
                                                        "seed": 0})
    assert response.status_code == 400 and not Review.objects.exists()
