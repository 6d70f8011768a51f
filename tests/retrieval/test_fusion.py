"""Fusion of rankings: RRF, CombSUM, CombMNZ and score normalisation, checked by hand."""

import math

import pytest

from retrieval.fusion import combmnz, combsum, fuse, normalise, rrf

A = [("a", 10.0), ("b", 8.0), ("c", 6.0)]
B = [("c", 0.9), ("a", 0.5), ("d", 0.1)]


def test_rrf_adds_one_over_k_plus_rank_and_ignores_scores():
    fused = dict(rrf([A, B], k=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert fused["d"] == pytest.approx(1 / 63)
    assert [pid for pid, _ in rrf([A, B], k=60)] == ["a", "c", "b", "d"]


def test_rrf_depth_cuts_each_ranking_first():
    assert [pid for pid, _ in rrf([A, B], depth=1)] == ["a", "c"]


def test_min_max_maps_to_zero_one_and_constant_scores_to_one():
    assert normalise(A, "minmax") == [("a", 1.0), ("b", 0.5), ("c", 0.0)]
    assert normalise([("x", 3.0), ("y", 3.0)], "minmax") == [("x", 1.0), ("y", 1.0)]


def test_z_score_has_mean_zero_and_unit_spread():
    values = [score for _, score in normalise(A, "zscore")]
    assert math.fsum(values) == pytest.approx(0.0, abs=1e-12)
    assert math.fsum(v * v for v in values) / len(values) == pytest.approx(1.0)


def test_combsum_adds_normalised_scores_and_combmnz_multiplies_by_the_hits():
    # A min-max: a 1, b .5, c 0; B min-max: c 1, a .5, d 0
    assert dict(combsum([A, B])) == pytest.approx({"a": 1.5, "b": 0.5, "c": 1.0, "d": 0.0})
    assert dict(combmnz([A, B])) == pytest.approx({"a": 3.0, "b": 0.5, "c": 2.0, "d": 0.0})


def test_ties_are_broken_by_id_so_fusion_is_deterministic():
    assert [pid for pid, _ in rrf([[("z", 1)], [("y", 1)], [("x", 1)]])] == ["x", "y", "z"]


def test_fuse_by_name_rejects_unknown_methods():
    assert fuse([A, B], "combmnz") == combmnz([A, B])
    with pytest.raises(ValueError, match="unknown fusion"):
        fuse([A], "borda")
    with pytest.raises(ValueError, match="unknown normalisation"):
        normalise(A, "rank")
