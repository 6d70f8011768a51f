"""Cross-encoder re-ranking with sequence-classification models, and ensembles averaging normalised scores."""

import numpy as np
import pytest
import torch

from retrieval import runtime
from retrieval.rerankers import CrossEncoder, RerankerSpec, ensemble, load_cross_encoder, rerank

QUERY = "what is the heat transfer in laminar boundary layers"
PASSAGES = [
    "heat transfer through a laminar boundary layer on a flat plate",
    "the buckling of thin cylindrical shells under axial compression",
    "supersonic flow past a cone at an angle of attack",
]


def test_a_one_label_model_scores_pairs_by_its_logit(tiny_cross_encoders):
    model = CrossEncoder(RerankerSpec(tiny_cross_encoders[0]), device="cpu")
    scores = model.score(QUERY, PASSAGES)
    batch = model.tokenizer([QUERY], [PASSAGES[1]], return_tensors="pt")
    with torch.no_grad():
        logit = model.model(**batch).logits[0, 0].item()
    assert scores.shape == (3,) and scores[1] == pytest.approx(logit, abs=1e-5)


def test_a_two_label_model_scores_by_the_log_probability_of_relevant(tiny_cross_encoders):
    model = CrossEncoder(RerankerSpec(tiny_cross_encoders[1]), device="cpu")
    scores = model.score(QUERY, PASSAGES)
    assert np.all(scores <= 0)
    batch = model.tokenizer([QUERY], [PASSAGES[2]], return_tensors="pt")
    with torch.no_grad():
        expected = torch.log_softmax(model.model(**batch).logits, dim=-1)[0, 1].item()
    assert scores[2] == pytest.approx(expected, abs=1e-5)


def test_scores_do_not_depend_on_the_batching(tiny_cross_encoders):
    model = CrossEncoder(RerankerSpec(tiny_cross_encoders[0]), device="cpu")
    np.testing.assert_allclose(model.score(QUERY, PASSAGES, batch_size=1), model.score(QUERY, PASSAGES, batch_size=8), atol=1e-5)


def test_an_ensemble_averages_min_max_normalised_scores():
    first = [("a", 10.0), ("b", 0.0), ("c", 5.0)]
    second = [("a", -3.0), ("b", -1.0), ("c", -2.0)]
    third = [("a", 1.0), ("b", 0.0), ("c", 0.0)]
    # min-max: first → a 1, b 0, c .5; second → a 0, b 1, c .5; third → a 1, b 0, c 0
    assert dict(ensemble([first, second])) == pytest.approx({"a": 0.5, "b": 0.5, "c": 0.5})
    fused = ensemble([first, second, third])
    assert [pid for pid, _ in fused] == ["a", "b", "c"]  # b and c tie: by id
    assert [score for _, score in fused] == pytest.approx([2 / 3, 1 / 3, 1 / 3])
    assert ensemble([first]) == [("a", 1.0), ("c", 0.5), ("b", 0.0)]


def test_rerank_with_two_models_keeps_each_models_raw_scores(tiny_cross_encoders):
    models = [load_cross_encoder(RerankerSpec(path), device="cpu") for path in tiny_cross_encoders]
    fused, per_model = rerank(QUERY, list(enumerate(PASSAGES)), models)
    assert sorted(pid for pid, _ in fused) == [0, 1, 2]
    assert [pid for pid, _ in per_model[0]] == [0, 1, 2]
    assert fused[0][1] >= fused[-1][1] and all(0.0 <= score <= 1.0 for _, score in fused)
    assert load_cross_encoder(RerankerSpec(tiny_cross_encoders[0]), device="cpu") is models[0]
    assert runtime.models.loads >= 2
