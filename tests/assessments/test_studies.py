"""Study items (forced choice, pair rating) and forced-choice accuracy, on a real sample book and a real BM25 run."""

import io

import pytest

from assessments.models import Judgement, Layer, RunEntry, StudyItem
from assessments.services.judging import record_judgement
from assessments.studies import (
    StudyError, encode_passages, forced_choice_accuracy, item_key, make_forced_choice_items, make_pair_items,
    ranked_pairs,
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


# --- pair rating (seed 003) ------------------------------------------------------------------------------------


def test_ranked_pairs_orders_by_cosine_and_leaves_out_neighbours_and_near_duplicates():
    # four unit vectors; passages without book positions are always far enough apart
    from types import SimpleNamespace

    vectors = [[1, 0], [0.8, 0.6], [0, 1], [-1, 0]]
    passages = [SimpleNamespace(book_id=None, first_sentence=None) for _ in vectors]
    # cosines: (0,1) 0.8, (0,2) 0, (0,3) -1, (1,2) 0.6, (1,3) -0.8, (2,3) 0
    ranked = ranked_pairs(vectors, passages)
    assert [(i, j) for _, i, j in ranked] == [(0, 1), (1, 2), (0, 2), (2, 3), (1, 3), (0, 3)]  # ties by (i, j)
    assert [round(s, 6) for s, _, _ in ranked] == [0.8, 0.6, 0.0, 0.0, -0.8, -1.0]
    assert [(i, j) for _, i, j in ranked_pairs(vectors, passages, max_similarity=0.7)][0] == (1, 2)
    near = [SimpleNamespace(book_id=1, first_sentence=3 * n, last_sentence=3 * n + 2, position=3 * n + 1)
            for n in range(4)]  # positions 1, 4, 7, 10
    # positions 6 or more apart: (0,2) cos 0, (1,3) -0.8, (0,3) -1
    assert [(i, j) for _, i, j in ranked_pairs(vectors, near, min_distance=6)] == [(0, 2), (1, 3), (0, 3)]


@pytest.fixture
def book_pool(tmp_path, index_dir):  # noqa: F811
    book, topics = load_book(tmp_path)
    pool = factories.pool(book.collection, topics, [], name="pairs")
    return book, pool, topics


@pytest.mark.long
def test_pairs_are_the_encoders_most_and_least_similar_far_apart_chunks_each_with_a_plot_topic(book_pool):
    book, pool, topics = book_pool
    chunks = list(book.chunks.order_by("first_sentence")[:40])
    items = make_pair_items(pool, passages=chunks, count=6, min_distance=30)

    most = [i for i in items if i.metadata["group"] == "most"]
    least = [i for i in items if i.metadata["group"] == "least"]
    assert len(most) == 3 and len(least) == 3 and all(i.kind == StudyItem.Kind.PAIR for i in items)
    assert [i.similarity for i in most] == sorted((i.similarity for i in most), reverse=True)
    assert min(i.similarity for i in most) > max(i.similarity for i in least)
    assert all(abs(i.passage.position - i.passage2.position) >= 30 for i in items)
    assert all(i.topic in topics for i in items)
    # the stored similarity is the cosine of the two chunks, each encoded on its own
    _, vectors = encode_passages("dense", [most[0].passage.text, most[0].passage2.text])
    assert most[0].similarity == pytest.approx(float(vectors[0] @ vectors[1]), abs=1e-4)
    # the most similar pair is the best of every allowed pair
    _, every = encode_passages("dense", [c.text for c in chunks])
    best = max(float(every[a] @ every[b]) for a in range(len(chunks)) for b in range(a + 1, len(chunks))
               if abs(chunks[a].position - chunks[b].position) >= 30)
    assert most[0].similarity == pytest.approx(best, abs=1e-5)

    again = make_pair_items(pool, passages=chunks, count=6, min_distance=30)
    assert [(i.pk, i.topic_id) for i in again] == [(i.pk, i.topic_id) for i in items]
    assert StudyItem.objects.filter(pool=pool).count() == 6


def test_pairs_need_a_plot_topic_of_the_book_and_enough_chunks(book_pool):
    book, pool, topics = book_pool
    chunks = list(book.chunks.order_by("first_sentence")[:12])
    # positions 1, 4, …, 34: 24 sentences apart means 8 chunks apart: 4 + 3 + 2 + 1 = 10 pairs
    with pytest.raises(StudyError, match="only 10 pairs of chunks are far enough apart; 30 were asked for"):
        make_pair_items(pool, passages=chunks, count=30, min_distance=24)
    pool.topics.clear()
    with pytest.raises(StudyError, match="no plot topic about the passages' book"):
        make_pair_items(pool, passages=chunks, count=2)
    with pytest.raises(StudyError, match="no book 'nope'"):
        make_pair_items(pool, book="nope", count=2)
    assert not StudyItem.objects.exists()


def test_the_command_makes_both_kinds_and_says_what_is_wrong(plot):
    from django.core.management import CommandError, call_command

    pool, run, _ = plot
    out = io.StringIO()
    call_command("make_study_items", "--pool", pool.name, "--kind", "choice", "--run", run.name, "--n", "3", stdout=out)
    assert out.getvalue().startswith(f"2 forced-choice items of 3 candidates in pool {pool.name} from run {run.name}")
    out = io.StringIO()
    call_command("make_study_items", "--pool", pool.name, "--kind", "pair", "--count", "4", "--max-passages", "30",
                 "--no-progress", stdout=out)
    assert out.getvalue().startswith(f"4 pairs in pool {pool.name}: 2 most similar")
    assert StudyItem.objects.filter(pool=pool, kind="pair").count() == 4
    assert all(i.metadata["passages"] == 30 for i in StudyItem.objects.filter(kind="pair"))
    with pytest.raises(CommandError, match="--kind choice needs --run"):
        call_command("make_study_items", "--pool", pool.name, "--kind", "choice")
    with pytest.raises(CommandError, match="--run: collection 'call-of-the-wild' has no run 'nope'"):
        call_command("make_study_items", "--pool", pool.name, "--kind", "choice", "--run", "nope")
    with pytest.raises(CommandError, match="--pool: no pool named 'nope'"):
        call_command("make_study_items", "--pool", "nope", "--kind", "pair")
