"""The relevance model's cluster and neighbour-topic features (assessments.machine.model): what each reads, that a
topic's own labels never reach its own rows, and that a saved model keeps what it learnt."""

import numpy as np
import pytest

from assessments.machine import model


def unit(*rows):
    vectors = np.array(rows, dtype=np.float64)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_cluster_features_average_the_text_score_of_the_nearest_candidates_and_the_runs_agreement():
    # one topic of four candidates: 0 and 1 point one way, 2 and 3 another; the text score is high for 1 only
    vectors = unit([1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9])
    bm25 = np.array([0.0, 9.0, 0.0, 0.0])
    cosine = np.array([0.1, 0.1, 0.1, 0.1])
    ranks = np.array([[1, 2], [2, 0], [0, 1], [3, 3]])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(model, "CLUSTER_NEIGHBOURS", 1)
        out = model.cluster_features(vectors, bm25, cosine, np.zeros(4, int), ranks)
    # text score: min-max BM25 (1 for candidate 1, else 0) plus min-max cosine (1 for all: the cosines are equal);
    # candidate 0's nearest is 1, 1's is 0, 2 and 3 are each other's
    assert out[:, 0].tolist() == [2.0, 1.0, 1.0, 1.0]
    assert out[:, 1].tolist() == [0.5] * 4  # two of four candidates were brought by both runs


def test_cluster_features_of_a_topic_of_one_candidate_are_zero_and_topics_do_not_mix():
    vectors = unit([1, 0], [1, 0], [0, 1])
    out = model.cluster_features(vectors, np.array([5.0, 1.0, 3.0]), np.zeros(3), np.array([1, 2, 2]),
                                 np.array([[1], [1], [2]]))
    assert out[0, 0] == 0.0  # alone in topic 1: nothing to average, never topic 2's candidates
    # topic 2's two candidates read each other's text score (min-max BM25 0 and 1, plus 1 for the equal cosines)
    assert out[1, 0] == 2.0 and out[2, 0] == 1.0


def context_of(labels_by_topic):
    """Four topics with query embeddings, passages 1..4 each, vectors by passage; labels_by_topic gives the labels."""
    queries = {10: unit([1, 0, 0])[0], 11: unit([0.9, 0.1, 0])[0], 12: unit([0, 1, 0])[0], 13: unit([0, 0, 1])[0]}
    passage_vectors = {1: [1, 0, 0], 2: [0, 1, 0], 3: [0, 0, 1], 4: [1, 1, 0]}
    groups, passages, vectors, labels = [], [], [], []
    for topic, topic_labels in labels_by_topic.items():
        for passage, label in zip((1, 2, 3, 4), topic_labels):
            groups.append(topic)
            passages.append(passage)
            vectors.append(passage_vectors[passage])
            labels.append(label)
    context = model.TextContext(np.array(groups), np.array(passages), unit(*vectors), queries)
    return context, np.array(labels)


def test_neighbour_features_read_the_nearest_labelled_topics_never_the_rows_own():
    context, labels = context_of({10: [1, 0, 0, 0], 11: [1, 0, 0, 1], 12: [0, 1, 0, 0], 13: [0, 0, 1, 0]})
    learnt = model.NeighbourTopics.learn(context, labels)
    assert learnt.topics.tolist() == [10, 11, 12, 13] and learnt.relevant == [[1], [1, 4], [2], [3]]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(model, "NEIGHBOUR_TOPICS", 1)
        out = learnt.features(context, k=1)
    rows = np.flatnonzero(context.groups == 10)
    # topic 10's nearest other topic is 11 (query cosine 0.994), which judged passages 1 and 4 relevant
    similarity = float(context.queries[10] @ context.queries[11])
    assert out[rows, 0].tolist() == pytest.approx([similarity, 0, 0, similarity])
    # never its own labels: flipping topic 10's labels changes nothing in topic 10's rows
    flipped = labels.copy()
    flipped[rows] = 1 - flipped[rows]
    again = model.NeighbourTopics.learn(context, flipped).features(context, k=1)
    assert np.array_equal(out[rows], again[rows])
    # but another topic's rows read them: topic 11's nearest is topic 10
    others = np.flatnonzero(context.groups == 11)
    assert not np.array_equal(out[others], again[others])


def test_a_model_fitted_with_context_needs_it_to_predict_and_keeps_its_neighbours_when_saved():
    rng = np.random.default_rng(3)
    labels_by_topic = {10: [1, 0, 0, 1], 11: [1, 0, 0, 1], 12: [0, 1, 0, 0], 13: [0, 0, 1, 0]}
    context, labels = context_of(labels_by_topic)
    x = rng.normal(size=(len(labels), 3)) + labels[:, None]
    fitted = model.RelevanceModel().fit(x, labels, context.groups, context=context, tune_threshold=False)
    with pytest.raises(model.ModelInvalid, match="text context"):
        fitted.predict(x)
    data, checksum = fitted.dumps()
    loaded = model.RelevanceModel.loads(data)
    assert np.allclose(loaded.predict(x, context), fitted.predict(x, context))
    assert loaded.neighbours.relevant == fitted.neighbours.relevant and len(checksum) == 64


def test_a_model_saved_before_neighbour_features_loads_without_them():
    import io

    import joblib

    labels = np.array([0, 1] * 10)
    x = np.arange(20, dtype=np.float64)[:, None] + labels[:, None] * 5
    fitted = model.RelevanceModel().fit(x, labels, tune_threshold=False)
    buffer = io.BytesIO()
    joblib.dump({"kind": "logistic", "c": 0.1, "seed": 0, "threshold": 0.5, "estimator": fitted.estimator}, buffer)
    old = model.RelevanceModel.loads(buffer.getvalue())
    assert old.neighbours is None and np.allclose(old.predict(x), fitted.predict(x))


def test_feature_names_count_every_column_of_the_matrix():
    ranks = np.array([[1, 0], [2, 1], [0, 2]])
    scores = np.array([[3.0, np.nan], [2.0, 0.5], [np.nan, 0.4]])
    x = model.candidate_features(ranks, scores, np.array([1.0, 2.0, 0.0]), np.array([0.2, 0.5, 0.1]),
                                 np.array([1, 1, 1]), unit([1, 0], [0, 1], [1, 1]), np.array([1, 2, 1]))
    assert x.shape[1] == len(model.feature_names(["a", "b"]))
    assert model.feature_names(["a", "b"], neighbours=True)[-3:] == model.NEIGHBOUR_NAMES


def test_cluster_features_are_the_same_computed_in_blocks(monkeypatch):
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(50, 8))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    groups = np.repeat([1, 2], 25)
    bm25, cosine, ranks = rng.random(50) * 5, rng.random(50), rng.integers(0, 4, size=(50, 2))
    whole = model.cluster_features(vectors, bm25, cosine, groups, ranks)
    monkeypatch.setattr(model, "SIMILARITY_BLOCK", 7)
    assert np.array_equal(model.cluster_features(vectors, bm25, cosine, groups, ranks), whole)
