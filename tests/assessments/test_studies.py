"""Study items (forced choice, pair rating) and forced-choice accuracy, on a real sample book and a real BM25 run."""

import pytest

from assessments.models import Judgement, Layer, RunEntry, StudyItem
from assessments.services.judging import record_judgement
from assessments.studies import (
    StudyError, forced_choice_accuracy, item_key, make_forced_choice_items,
)
from tests import factories
from tests.assessments.plot_data import bm25_pool, load_book
from tests.retrieval.fixtures import index_dir  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.fixture
def plot(tmp_path, index_dir):  # noqa: F811
    book, topics = load_book(tmp_path)
    pool, run = bm25_pool(book, topics)
    return pool, run, topics


def shares_a_sentence(a, b):
    return a.first_sentence <= b.last_sentence and b.first_sentence <= a.last_sentence


def test_each_plot_topic_gets_its_ground_truth_and_the_runs_best_chunks_that_do_not_touch_it(plot):
    pool, run, topics = plot
    items = make_forced_choice_items(pool, run, n=20)

    assert [i.topic for i in items] == topics and len(topics) == 2
    for item in items:
        truth = list(item.topic.ground_truth.all())
        candidates = list(item.candidates.all())
        assert item.kind == StudyItem.Kind.CHOICE and item.run == run
        assert len(candidates) == 20 and item.answer in truth and item.answer in candidates
        negatives = [c for c in candidates if c != item.answer]
        assert not any(shares_a_sentence(n, t) for n in negatives for t in truth)
        # the negatives are exactly the run's best-ranked chunks that share no sentence with the ground truth
        ranked = [e.passage for e in RunEntry.objects.filter(run=run, topic=item.topic).order_by("rank")]
        expected = [p for p in ranked if not any(shares_a_sentence(p, t) for t in truth)][:19]
        assert sorted(n.pk for n in negatives) == sorted(p.pk for p in expected)
        # the retriever's choice is the offered candidate the run ranks best
        best = min(candidates, key=lambda c: ranked.index(c) if c in ranked else 10**6)
        assert item.retriever_choice == best
        assert item.metadata["candidates"][0] == item.answer.external_id and item.metadata["n"] == 20


def test_making_the_same_items_again_updates_them_and_never_duplicates(plot):
    pool, run, _ = plot
    first = make_forced_choice_items(pool, run, n=20)
    again = make_forced_choice_items(pool, run, n=20)
    assert [i.pk for i in again] == [i.pk for i in first]
    assert StudyItem.objects.filter(pool=pool).count() == 2
    three = make_forced_choice_items(pool, run, n=3)  # seed 001: three candidates, items of their own
    assert all(i.candidates.count() == 3 for i in three)
    assert StudyItem.objects.filter(pool=pool).count() == 4


def test_one_topic_can_be_chosen(plot):
    pool, run, topics = plot
    items = make_forced_choice_items(pool, run, n=3, topics=[topics[1].external_id])
    assert [i.topic for i in items] == [topics[1]]
    with pytest.raises(StudyError, match="'nope' is not a plot topic of pool 'plot-bm25'"):
        make_forced_choice_items(pool, run, n=3, topics=["nope"])


def test_a_topic_without_ground_truth_or_a_shallow_run_is_refused_and_nothing_is_written(plot):
    pool, run, topics = plot
    with pytest.raises(StudyError, match=r"has \d+ candidates for topic 'demo-1' .*; 200 choices need 199"):
        make_forced_choice_items(pool, run, n=200)
    assert not StudyItem.objects.exists()
    topics[1].ground_truth.clear()
    with pytest.raises(StudyError, match="topic 'demo-2' has no ground-truth chunk"):
        make_forced_choice_items(pool, run, n=3)
    assert not StudyItem.objects.exists()
    with pytest.raises(StudyError, match="at least 2 candidates"):
        make_forced_choice_items(pool, run, n=1)
    other = factories.run(factories.collection("elsewhere"), "other")
    with pytest.raises(StudyError, match="not in pool 'plot-bm25'"):
        make_forced_choice_items(pool, other, n=3)


def choose(user, item, passage, adjudicated=False):
    record_judgement(assessor=user, layer=Layer.CHOICE, topic=item.topic, item=item.key, value=passage.external_id)
    if adjudicated:
        Judgement.objects.filter(assessor=user, item=item.key).update(adjudicated=True)


def test_accuracy_counts_each_assessors_answers_beside_the_retrievers_on_the_same_items(plot):
    pool, run, _ = plot
    one, two = make_forced_choice_items(pool, run, n=3)
    wrong = [c for c in one.candidates.all() if c != one.answer][0]
    ann, bob, judge = factories.user("ann"), factories.user("bob"), factories.user("judge")
    choose(ann, one, one.answer)
    choose(ann, two, two.answer)
    choose(bob, one, wrong)
    choose(judge, two, [c for c in two.candidates.all() if c != two.answer][0], adjudicated=True)  # not an answer

    result = forced_choice_accuracy(pool)

    assert result["items"] == 2 and result["answered_items"] == 2
    assert result["assessors"] == [
        {"assessor": "ann", "answered": 2, "correct": 2, "accuracy": 1.0},
        {"assessor": "bob", "answered": 1, "correct": 0, "accuracy": 0.0},
    ]
    assert result["human"] == {"answered": 3, "correct": 2, "accuracy": 2 / 3}
    hits = sum(i.retriever_choice_id == i.answer_id for i in (one, two))
    [retriever] = result["retrievers"]
    assert retriever["run"] == run.name and retriever["items"] == 2 and retriever["correct"] == hits
    assert retriever["accuracy"] == hits / 2 and retriever["all_items"] == 2


def test_accuracy_of_a_pool_without_answers_is_none_not_a_division_by_zero(plot):
    pool, run, _ = plot
    make_forced_choice_items(pool, run, n=3)
    result = forced_choice_accuracy(pool)
    assert result["human"] == {"answered": 0, "correct": 0, "accuracy": None}
    assert result["retrievers"][0]["items"] == 0 and result["retrievers"][0]["accuracy"] is None


def test_long_keys_keep_a_readable_head_and_stay_unique():
    a, b = item_key("choice", 20, "x" * 300, "t1"), item_key("choice", 20, "x" * 300, "t2")
    assert len(a) == len(b) == 200 and a != b and a.startswith("choice:20:xxx")
