"""Practice labels (an assessor's answers in qualification units, scored against the gold) are no relevance
judgements in any output: the ad hoc and plot record exports, the forced-choice and pair-rating results, the judging
order's sequence and stopping estimate (and the dashboard's stopping table), the pairs a machine annotator skips as
judged, and the machine's anchoring figures. Each world: one topic, amy holding only a qualification unit of it
(practice), ben a formal unit; both label the same candidates, and only ben's labels may show. The one rule is
Judgement.objects.without_practice (Assignment.objects.practice_labels)."""

import functools
import io

import pytest
from django.core.management import call_command

from annotation.models import Campaign
from annotation.reports.stopping import stopping
from annotation.services import judging_order
from assessments.exporters.adhoc import adhoc_records
from assessments.exporters.car_y3 import export_car_assessments
from assessments.exporters.common import Scope
from assessments.exporters.plot import choice_rows, plot_label_records, resolve_pools
from assessments.machine.annotator import judged_pairs
from assessments.machine.compare import anchoring
from assessments.models import Layer, MachineLabelSource, Pool, PoolCandidate, StudyItem, Topic
from assessments.studies import forced_choice_accuracy, pair_ratings
from tests import factories
from tests.annotation.adhoc_setup import adhoc_world
from tests.annotation.test_practice_labels import world as practice_world  # noqa: F401

pytestmark = pytest.mark.django_db


# --- ad hoc: the record export, the judging order, the machine ------------------------------------------------


@pytest.fixture
def adhoc():
    """Ad hoc topic 301 served in depth order with a budget of 2 judgements: ben (formal) grades the first document
    3, amy (practice) grades the second and third (the machine's label was shown to both)."""
    amy, ben = factories.user("amy"), factories.user("ben")
    world = adhoc_world(ben, settings={"judging_order": "depth", "judging_budget": 2})
    campaign, topic, docs = world["campaign"], world["topic"], world["documents"]
    practice = factories.assignment(amy, topic, campaign=campaign, pool=world["pool"], qualification=True)
    for user, doc, value in ((ben, docs[0], 3), (amy, docs[1], 2), (amy, docs[2], 0)):
        factories.judgement(user, topic, doc, layer=Layer.GRADE, value=value, campaign=campaign, machine_shown=True)
    return {**world, "practice": practice, "users": (amy, ben)}


def test_the_adhoc_records_hold_the_formal_labels_only(adhoc):
    records = list(adhoc_records(adhoc["campaign"].pk))
    assert [(r["assessor"], r["docid"], r["grade"]) for r in records] == [("ben", "LA010189-0001", 3)]


def test_the_judging_order_and_its_stop_count_no_practice_label(adhoc):
    campaign, pool, topic, docs = adhoc["campaign"], adhoc["pool"], adhoc["topic"], adhoc["documents"]
    state = judging_order.topic_state(campaign, pool, topic.pk)
    assert state.sequence == [docs[0].pk] and state.estimate.judged == 1
    assert not state.stopped  # amy's two practice grades would have reached the budget of 2
    served, _ = judging_order.served_candidates(adhoc["unit"])
    assert served == [docs[0].pk, docs[1].pk]  # ben goes on in depth order: amy's grade of docs[1] is no judgement


def test_the_dashboards_stopping_table_counts_no_practice_label(adhoc):
    row = next(r for r in stopping(adhoc["campaign"])["topics"] if r["topic"] == adhoc["topic"].external_id)
    assert (row["judged"], row["stopped"]) == (1, False)


def test_a_practice_unit_is_served_every_candidate(client, adhoc):
    """Its score counts every gold candidate of the unit, and its labels are no part of the topic's sequence (which
    would otherwise serve amy the candidate she has graded again, or stop her at the formal budget)."""
    assert judging_order.served_candidates(adhoc["practice"]) is None
    client.force_login(adhoc["users"][0])
    response = client.get(f"/a/{adhoc['practice'].token}/")
    assert response.status_code == 200
    state = response.context["state"]
    assert len(state["documents"]) == 3 and "ordered" not in state


def test_the_machine_labels_a_pair_judged_only_in_practice(adhoc):
    campaign, topic, docs = adhoc["campaign"], adhoc["topic"], adhoc["documents"]
    source = MachineLabelSource.objects.create(name="annotator", kind="classifier", collection=topic.collection,
                                               campaign_id=campaign.pk, model="features", grades=[0, 1],
                                               status="ready")
    assert judged_pairs(source, {topic.pk}) == {(topic.pk, docs[0].pk)}


def test_the_machines_anchoring_figures_leave_practice_labels_out(adhoc):
    topic, docs = adhoc["topic"], adhoc["documents"]
    machine = {(topic.external_id, d.external_id): 1 for d in docs}
    figures = anchoring(adhoc["campaign"].pk, machine, binary=True)
    assert figures["shown"] == {"items": 1, "agree": 1.0}  # ben's 3 (relevant, as the machine said); amy's none


# --- plot: the label records, forced choice and pair ratings ---------------------------------------------------


@pytest.fixture
def plot():
    """A plot topic of one pool with a forced-choice item (answer p1) and a pair (p0, p2); ben (formal) and amy
    (practice) each grade p0, mark spans, choose and rate."""
    amy, ben = factories.user("amy"), factories.user("ben")
    coll = factories.collection("plot-coll")
    topic = factories.topic(coll, "q1", kind=Topic.Kind.PLOT, text="the dog learns the law of club and fang")
    chunks = [factories.passage(coll, f"c{i}", text=f"Chunk {i}.") for i in range(3)]
    pool = Pool.objects.create(name="plot-practice", collection=coll, status=Pool.Status.READY)
    pool.topics.set([topic])
    PoolCandidate.objects.bulk_create(PoolCandidate(pool=pool, topic=topic, passage=c, rank=r)
                                      for r, c in enumerate(chunks, start=1))
    campaign, _ = factories.assigned_campaign(topic, [ben], pool=pool, name="plot-practice", task=Campaign.Task.PLOT)
    factories.assignment(amy, topic, campaign=campaign, pool=pool, qualification=True)
    choice = StudyItem.objects.create(pool=pool, kind=StudyItem.Kind.CHOICE, key="choice-1", topic=topic,
                                      answer=chunks[1], retriever_choice=chunks[0])
    choice.candidates.set(chunks[:2])
    pair = StudyItem.objects.create(pool=pool, kind=StudyItem.Kind.PAIR, key="pair-1", topic=topic,
                                    passage=chunks[0], passage2=chunks[2], similarity=0.5, metadata={"group": "most"})
    for user, grade, chosen, rating in ((ben, 2, chunks[1], 8), (amy, 0, chunks[0], 2)):
        label = functools.partial(factories.judgement, user, topic, campaign=campaign)
        label(chunks[0], layer=Layer.PLOT_GRADE, value=grade)
        label(chunks[0], layer=Layer.PLOT_SPANS, value=[[0, 7]])
        label(layer=Layer.CHOICE, item=choice.key, value=chosen.external_id)
        label(pair.passage, passage2=pair.passage2, layer=Layer.RATING, item=pair.key, value=rating)
    return {"campaign": campaign, "pool": pool, "topic": topic}


def test_the_plot_label_records_hold_the_formal_labels_only(plot):
    pools = resolve_pools(campaign=plot["campaign"].name)
    for history in (False, True):
        records = list(plot_label_records(pools, history=history))
        assert {r["assessor"] for r in records} == {"ben"}, history
        assert {r["layer"] for r in records} == {"plot_grade", "plot_spans", "choice", "rating"}
    assert {r["assessor"] for r in plot_label_records(None)} == {"ben"}  # every plot topic: the same rule


def test_the_forced_choice_rows_hold_no_practice_answer(plot):
    pools = resolve_pools(campaign=plot["campaign"].name)
    assert [(r["assessor"], r["chosen"], r["correct"]) for r in choice_rows(pools)] == [("ben", "c1", True)]


def test_the_study_results_count_no_practice_answer(plot):
    accuracy = forced_choice_accuracy(plot["pool"])
    assert [a["assessor"] for a in accuracy["assessors"]] == ["ben"]
    assert accuracy["human"] == {"answered": 1, "correct": 1, "accuracy": 1.0}
    ratings = pair_ratings(plot["pool"])
    assert ratings["all"]["ratings"] == 1 and ratings["all"]["mean"] == 8


# --- outline: the CAR Y3 files (Scope.judgements, already the rule: kept by this test) -------------------------


def test_the_car_y3_files_hold_no_practice_label(tmp_path, practice_world):
    campaign, formal = practice_world["campaign"], practice_world["formal"]
    call_command("export_car_assessments", "--out", str(tmp_path / "all"), "--collection", "pr-coll",
                 stdout=io.StringIO())
    mine = Scope(collection=formal.collection, campaign_id=campaign.pk)
    export_car_assessments(mine, tmp_path / "campaign")
    for folder in ("all", "campaign"):
        text = " ".join(path.read_text() for path in (tmp_path / folder).rglob("*.json"))
        assert "pr-T0-p0" in text and "pr-T1" not in text, folder
