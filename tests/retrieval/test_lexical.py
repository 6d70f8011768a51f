"""BM25 with bm25s: stemming and stop words by default, parameters settable, saved and loaded whole."""

import bm25s
import pytest
import Stemmer

from retrieval.lexical import BM25Index, BM25Spec
from tests.retrieval.tiny_models import cranfield_documents, cranfield_queries

DOCS = cranfield_documents(300)
IDS = [int(doc_id) for doc_id, _ in DOCS]
TEXTS = [text for _, text in DOCS]


@pytest.fixture(scope="module")
def index():
    return BM25Index.build(IDS, TEXTS)


def test_it_ranks_the_same_as_bm25s_called_directly(index):
    queries = cranfield_queries(20)
    stemmer = Stemmer.Stemmer("english")
    direct = bm25s.BM25(k1=1.2, b=0.75)
    direct.index(bm25s.tokenize(TEXTS, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    rows, scores = direct.retrieve(
        bm25s.tokenize(queries, stopwords="en", stemmer=stemmer, show_progress=False), k=10, show_progress=False
    )
    ours = index.search(queries, k=10)
    for q, hits in enumerate(ours):
        expected = {IDS[r]: float(s) for r, s in zip(rows[q], scores[q]) if s > 0}
        assert dict(hits) == pytest.approx(expected)


def test_an_english_stemmer_makes_inflected_forms_match(index):
    plain = BM25Index.build([1, 2], ["the wings were tested", "a boundary layer"], BM25Spec(stemmer=""))
    stemmed = BM25Index.build([1, 2], ["the wings were tested", "a boundary layer"])
    assert plain.search(["wing test"], k=2) == [[]]
    assert [pid for pid, _ in stemmed.search(["wing test"], k=2)[0]] == [1]


def test_stop_words_alone_match_nothing(index):
    assert index.search(["the of and a"], k=5) == [[]]
    kept = BM25Index.build([1, 2], ["the cat", "a dog"], BM25Spec(stopwords=""))
    assert [pid for pid, _ in kept.search(["the"], k=5)[0]] == [1]


def test_k1_and_b_change_the_scores():
    a = BM25Index.build(IDS, TEXTS, BM25Spec(k1=0.5, b=0.3)).search(["shear flow past a flat plate"], k=5)[0]
    b = BM25Index.build(IDS, TEXTS, BM25Spec(k1=2.0, b=0.9)).search(["shear flow past a flat plate"], k=5)[0]
    assert a[0][1] != pytest.approx(b[0][1])


def test_results_are_best_first_ties_by_id_and_capped_at_the_collection_size(index):
    hits = index.search(["pressure distribution on a cylinder"], k=1000)[0]
    assert 0 < len(hits) <= len(IDS)
    assert hits == sorted(hits, key=lambda hit: (-hit[1], hit[0]))
    tied = BM25Index.build([7, 3, 5], ["jet", "jet", "jet"]).search(["jet"], k=3)[0]
    assert [pid for pid, _ in tied] == [3, 5, 7]


def test_a_saved_index_loads_with_its_settings_and_ranks_alike(index, tmp_path):
    index.save(tmp_path / "bm25")
    index.save(tmp_path / "bm25")  # saving again replaces the folder whole
    loaded = BM25Index.load(tmp_path / "bm25")
    assert loaded.spec == index.spec
    queries = cranfield_queries(5)
    assert loaded.search(queries, k=20) == index.search(queries, k=20)
