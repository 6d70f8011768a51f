"""N-RODCG@k (seed 000 eq. 1-4) by hand, and N-RODCG, MRR@k, Recall@k on a real plot run against independent computations."""

import math

import ir_measures
import pytest

from assessments.evaluation import evaluate, nrodcg, parse_measure, rod_gain
from assessments.evaluation.sources import evaluate_stored, ground_truth_qrels, plot_scores, stored_ranking
from assessments.models import RunEntry, Topic
from retrieval.models import Sentence
from tests.assessments.plot_data import bm25_pool, load_book
from tests.retrieval.fixtures import index_dir  # noqa: F401

# A book of 30 sentences in chunks of 3: positions (mean sentence index) 1, 4, 7, …, 28.
BOOK = [1.0, 4.0, 7.0, 10.0, 13.0, 16.0, 19.0, 22.0, 25.0, 28.0]
LOG2_3, LOG2_5 = math.log2(3), math.log2(5)


def at(k, **params):
    text = ",".join(f"{key}={value}" for key, value in params.items())
    return parse_measure(f"N-RODCG({text})@{k}" if text else f"N-RODCG@{k}")


def test_the_gain_is_one_over_distance_plus_one_inside_the_window_and_zero_from_alpha_on():
    assert rod_gain(7.0, [7.0]) == 1.0  # d = 0
    assert rod_gain(10.0, [7.0]) == 1 / 4  # d = 3
    assert rod_gain(11.0, [7.0]) == 1 / 5  # d = 4 < α = 5
    assert rod_gain(11.5, [7.0]) == 1 / 5.5  # d = 4.5: a short last chunk has a half position
    assert rod_gain(12.0, [7.0]) == 0.0  # d = 5 is not < α
    assert rod_gain(12.0, [7.0], alpha=6) == 1 / 6
    assert rod_gain(13.0, [7.0, 19.0]) == 0.0  # d = min(6, 6) = 6
    assert rod_gain(16.0, [7.0, 19.0]) == 1 / 4  # the nearest ground truth counts: min(9, 3) = 3
    assert rod_gain(None, [7.0]) == 0.0  # a passage that is no chunk of the book


def test_several_ground_truth_chunks_with_both_ideals():
    # truth at 7 and 19; retrieved 13, 19, 4, 25:
    #   13: d = min(6, 6) = 6 ≥ 5 → 0;  19: d = 0 → 1 at rank 2;  4: d = 3 → 1/4 at rank 3;  25: d = 6 → 0
    #   RODCG@4 = 1/log2(3) + (1/4)/log2(4) = 0.63093 + 0.125 = 0.75593
    # book ideal: gains of the book 0, 1/4, 1, 1/4, 0, 1/4, 1, 1/4, 0, 0 → best four 1, 1, 1/4, 1/4
    #   I-RODCG@4 = 1 + 1/log2(3) + (1/4)/2 + (1/4)/log2(5) = 1.86360
    # retrieved ideal: 1, 1/4, 0, 0 → 1 + (1/4)/log2(3) = 1.15773
    retrieved, truth = [13.0, 19.0, 4.0, 25.0], [7.0, 19.0]
    dcg = 1 / LOG2_3 + 0.25 / 2
    assert nrodcg(retrieved, truth, BOOK, at(4)) == pytest.approx(dcg / (1 + 1 / LOG2_3 + 0.25 / 2 + 0.25 / LOG2_5))
    assert nrodcg(retrieved, truth, BOOK, at(4)) == pytest.approx(0.40563, abs=1e-5)
    assert nrodcg(retrieved, truth, BOOK, at(4, ideal="retrieved")) == pytest.approx(dcg / (1 + 0.25 / LOG2_3))
    assert nrodcg(retrieved, truth, BOOK, at(4, ideal="retrieved")) == pytest.approx(0.65294, abs=1e-5)


def test_ties_in_gain_score_the_same_in_either_order():
    # truth at 7: chunks 4 and 10 are both d = 3 → 1/4 each
    #   RODCG@2 = 1/4 + (1/4)/log2(3) = 0.40773; the retrieved ideal is the same list → 1
    #   book ideal@2 = 1 + (1/4)/log2(3) = 1.15773 → 0.35218
    for retrieved in ([4.0, 10.0], [10.0, 4.0]):
        assert nrodcg(retrieved, [7.0], BOOK, at(2, ideal="retrieved")) == pytest.approx(1.0)
        assert nrodcg(retrieved, [7.0], BOOK, at(2)) == pytest.approx((0.25 + 0.25 / LOG2_3) / (1 + 0.25 / LOG2_3))
        assert nrodcg(retrieved, [7.0], BOOK, at(2)) == pytest.approx(0.35218, abs=1e-5)


def test_k_larger_than_the_list_and_the_empty_list():
    # one chunk, exactly the plot; k = 10:
    #   RODCG@10 = 1; book ideal@10 = 1 (7) + (1/4)/log2(3) (4 or 10) + (1/4)/log2(4) (the other) = 1.28273
    #   retrieved ideal = 1 → 1.0 (a short list is not penalised by the paper's literal ideal)
    assert nrodcg([7.0], [7.0], BOOK, at(10)) == pytest.approx(1 / (1 + 0.25 / LOG2_3 + 0.25 / 2))
    assert nrodcg([7.0], [7.0], BOOK, at(10)) == pytest.approx(0.77959, abs=1e-5)
    assert nrodcg([7.0], [7.0], BOOK, at(10, ideal="retrieved")) == 1.0
    # the list is cut at k: the plot at rank 3 does not count at k = 2
    assert nrodcg([25.0, 28.0, 7.0], [7.0], BOOK, at(2)) == 0.0
    assert nrodcg([], [7.0], BOOK, at(5)) == 0.0
    assert nrodcg([], [7.0], BOOK, at(5, ideal="retrieved")) == 0.0  # 0/0 is taken as 0
    assert nrodcg([25.0], [7.0], BOOK, at(1, ideal="retrieved")) == 0.0


def test_alpha_widens_the_window():
    # α = 7, truth 7, retrieved 13 (d = 6 → 1/7), book ideal@1 = 1
    assert nrodcg([13.0], [7.0], BOOK, at(1, alpha=7)) == pytest.approx(1 / 7)
    assert str(at(1, alpha=7)) == "N-RODCG(alpha=7)@1"


# --- a real plot run: BM25 over The Call of the Wild with the sample queries -------------------------------------


@pytest.fixture
def plot(db, tmp_path, index_dir):  # noqa: F811
    book, topics = load_book(tmp_path)
    pool, run = bm25_pool(book, topics, depth=30)
    return book, topics, run


def independent_nrodcg(topic, run, k, ideal):
    """Eq. 1-4 written out: positions as the mean of the chunk's sentence indices, natural-log discount."""
    def position(chunk):
        indices = list(Sentence.objects.filter(book=chunk.book, index__gte=chunk.first_sentence,
                                               index__lte=chunk.last_sentence).values_list("index", flat=True))
        return sum(indices) / len(indices)

    def gain(s, truth):
        d = min(abs(s - t) for t in truth)
        return 1 / (d + 1) if d < 5 else 0

    def dcg(gains):
        return sum(g / math.log(i + 1) for i, g in enumerate(gains, start=1))

    truth = [position(c) for c in topic.ground_truth.all()]
    ranked = [e.passage for e in RunEntry.objects.filter(run=run, topic=topic).order_by("rank").select_related("passage")]
    gains = [gain(position(p), truth) for p in ranked[:k]]
    if ideal == "book":
        every = [gain((c.first_sentence + c.last_sentence) / 2, truth) for c in topic.book.chunks.all()]
    else:
        every = gains
    best = dcg(sorted(every, reverse=True)[:k])
    return dcg(gains) / best if best else 0.0


@pytest.mark.django_db
def test_n_rodcg_of_a_real_run_agrees_with_a_straightforward_reimplementation(plot):
    book, topics, run = plot
    measures = [parse_measure(m) for m in ("N-RODCG@10", "N-RODCG@30", "N-RODCG(ideal=retrieved)@10")]
    ours = plot_scores(run, measures)
    assert sorted(ours) == [t.external_id for t in topics]
    for topic in topics:
        for measure in measures:
            theirs = independent_nrodcg(topic, run, measure.cutoff, measure.ideal)
            assert ours[topic.external_id][measure] == pytest.approx(theirs, abs=1e-12), (topic, measure)
    assert any(ours[t.external_id][measures[1]] > 0 for t in topics)  # BM25 comes near at least one plot


@pytest.mark.django_db
def test_mrr_and_recall_of_a_real_run_against_the_ground_truth_agree_with_ir_measures(plot):
    book, topics, run = plot
    qrels = ground_truth_qrels(topics)
    ranking = stored_ranking(run)
    names = ["RR@10", "RR@30", "R@5", "R@10", "R@30", "RR"]
    ours = evaluate(qrels, ranking, [parse_measure(n) for n in names])
    ir_qrels = [ir_measures.Qrel(t, d, g) for t, docs in qrels.items() for d, g in docs.items()]
    # scores that give exactly the stored order (ir_measures sorts by score)
    ir_run = [ir_measures.ScoredDoc(t, d, -float(rank)) for t, docs in ranking.items() for rank, d in enumerate(docs, 1)]
    theirs = {(m.query_id, str(m.measure)): m.value
              for m in ir_measures.iter_calc([ir_measures.parse_measure(n) for n in names], ir_qrels, ir_run)}
    for topic in qrels:
        for name in names:
            assert ours[topic][parse_measure(name)] == pytest.approx(theirs[(topic, name)], abs=1e-9), (topic, name)
    assert any(ours[t][parse_measure("RR")] > 0 for t in qrels)  # BM25 finds at least one plot (demo-1 at rank 12)


@pytest.mark.django_db
def test_a_plot_topic_the_run_lacks_scores_zero_unless_only_the_runs_topics_count(plot):
    book, topics, run = plot
    RunEntry.objects.filter(run=run, topic=topics[1]).delete()
    measure = parse_measure("N-RODCG@10")
    every = evaluate_stored([run], None, [measure]).runs[0].per_topic
    assert every[topics[1].external_id][measure] == 0.0 and topics[0].external_id in every
    only = evaluate_stored([run], None, [measure], only_run_topics=True).runs[0].per_topic
    assert list(only) == [topics[0].external_id]
    Topic.objects.filter(pk=topics[0].pk).first().ground_truth.clear()  # no ground truth: nothing to score
    assert topics[0].external_id not in plot_scores(run, [measure])
