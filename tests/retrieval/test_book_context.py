"""A book's chunks are indexed with a sentence of the book on each side, so a chunk is found by the scene around it."""

import pytest

from retrieval import services
from retrieval.importers import import_book
from retrieval.models import Passage
from retrieval.services import work
from retrieval.specs import SpecError, context_for, parse
from tests import factories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_celery")]

# Seven sentences: chunks [0-2], [3-5], [6]. Only sentence 2 names the walrus; sentence 3 begins the chunk after it.
TEXT = """\
The ship left the harbour at dawn. The crew sang as they worked. A walrus watched them from the ice.

It dived when the anchor fell. Nobody saw where it went. The sailors forgot it by noon.

The voyage went on for a year.
"""


@pytest.fixture
def book(tmp_path, index_dir):
    path = tmp_path / "voyage.txt"
    path.write_text(TEXT, encoding="utf-8")
    book, _ = import_book(path, title="Voyage", slug="voyage")
    return book


def chunk(book, index):
    return Passage.objects.get(book=book, external_id=f"voyage:{index}")


def found(book, spec, query):
    job = services.ensure_index(book.collection, parse(spec))
    job.refresh_from_db()
    return [pid for pid, _ in services.results(services.ensure_search(book.collection, parse(spec), [("q", query)], 10))["q"]]


def test_a_chunk_is_found_by_the_sentence_of_the_book_just_before_it(book):
    assert found(book, "bm25", "walrus") == [chunk(book, 0).pk, chunk(book, 1).pk]


def test_context_0_indexes_each_chunk_alone(book):
    assert found(book, "bm25:context=0", "walrus") == [chunk(book, 0).pk]


def test_the_indexed_text_stops_at_the_book_s_first_and_last_sentences(book):
    first, last = chunk(book, 0).pk, chunk(book, 2).pk
    rows = dict(work.passage_rows(book.collection.pk, first, last, "title+text", context=1))
    assert rows[first] == ("The ship left the harbour at dawn. The crew sang as they worked. "
                           "A walrus watched them from the ice. It dived when the anchor fell.")
    assert rows[last] == "The sailors forgot it by noon. The voyage went on for a year."


def test_books_get_one_sentence_of_context_by_default_and_other_collections_none(book):
    assert context_for(parse("bm25"), book.collection) == 1
    assert context_for(parse("dense:context=2"), book.collection) == 2
    assert context_for(parse("bm25"), factories.collection("plain")) == 0


def test_a_spec_names_context_only_when_given_and_refuses_a_negative_one():
    assert "context" not in parse("bm25") and parse("bm25:context=0")["context"] == 0
    with pytest.raises(SpecError, match="context"):
        parse("bm25:context=-1")
    with pytest.raises(SpecError, match="context"):
        parse("rerank:/models/x,context=1")


def test_an_index_of_passages_that_are_not_book_chunks_keeps_its_configuration():
    index = services.index_for(factories.collection("plain"), parse("bm25"))
    assert "context" not in index.config
