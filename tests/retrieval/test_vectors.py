"""FAISS indexes: exact inner product by default, IVF and HNSW on request, saved and loaded, ids mapped back."""

import numpy as np
import pytest

from retrieval import vectors
from retrieval.vectors import IndexSpec


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    base = rng.normal(size=(400, 16)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    ids = np.arange(1000, 1400, dtype=np.int64)
    queries = base[:10] + 0.05 * rng.normal(size=(10, 16)).astype(np.float32)
    return base, ids, queries


def exact(base, ids, queries, k):
    scores = queries @ base.T
    return [[int(ids[i]) for i in np.argsort(-row, kind="stable")[:k]] for row in scores]


def test_the_default_index_is_exact_inner_product(data):
    base, ids, queries = data
    index = vectors.build(base)
    assert type(index).__name__ == "IndexFlatIP"
    hits = vectors.search(index, ids, queries, 5)
    assert [[pid for pid, _ in row] for row in hits] == exact(base, ids, queries, 5)
    assert hits[0][0][1] == pytest.approx(float(queries[0] @ base[0]), rel=1e-5)


@pytest.mark.parametrize("spec", [IndexSpec("ivf", nlist=8, nprobe=8), IndexSpec("hnsw", m=16, ef_search=64)])
def test_approximate_indexes_find_the_true_nearest_neighbours_here(data, spec):
    base, ids, queries = data
    hits = vectors.search(vectors.build(base, spec), ids, queries, 1)
    assert [row[0][0] for row in hits] == [row[0] for row in exact(base, ids, queries, 1)]


def test_a_saved_index_loads_with_its_search_settings(data, tmp_path):
    base, ids, queries = data
    spec = IndexSpec("ivf", nlist=4, nprobe=2)
    vectors.save(vectors.build(base, spec), tmp_path / spec.filename)
    loaded = vectors.load(tmp_path / spec.filename, IndexSpec("ivf", nlist=4, nprobe=4))
    assert loaded.ntotal == 400 and loaded.nprobe == 4
    assert [row[0][0] for row in vectors.search(loaded, ids, queries, 1)] == list(ids[:10])


def test_k_beyond_the_index_size_returns_what_there_is(data):
    base, ids, queries = data
    hits = vectors.search(vectors.build(base[:3]), ids[:3], queries[:1], 10)
    assert len(hits[0]) == 3
    assert vectors.search(vectors.build(base[:0]), ids[:0], queries[:2], 10) == [[], []]


def test_unknown_index_kinds_are_refused():
    with pytest.raises(ValueError, match="unknown index kind"):
        IndexSpec("annoy")
