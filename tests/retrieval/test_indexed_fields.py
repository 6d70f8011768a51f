"""Which passage fields retrievers index: the collection's setting, or a spec's own `fields=`."""

import pytest

from retrieval import specs
from retrieval.services import index_for
from retrieval.services.work import passage_text
from tests.factories import collection

pytestmark = pytest.mark.django_db


def test_passage_text_for_each_setting():
    assert passage_text("A Title", "The text.", "title+text") == "A Title\nThe text."
    assert passage_text("", "The text.", "title+text") == "The text."
    assert passage_text("A Title", "", "text") == "A Title"
    assert passage_text("A Title", "The text.", "text") == "The text."
    assert passage_text("A Title", "The text.", "title") == "A Title"
    assert passage_text("", "The text.", "title") == "The text."


def test_a_spec_may_name_its_fields_and_its_label_says_so():
    spec = specs.parse("bm25:k1=0.9,fields=title")
    assert spec["fields"] == "title" and specs.label(spec) == "bm25-k1-0.9-fields-title"
    assert specs.parse("bm25")["fields"] is None and specs.label(specs.parse("bm25")) == "bm25"
    assert specs.label(specs.parse("dense:/m/e5,fields=title+text")) == "dense-e5-fields-title-text"
    with pytest.raises(specs.SpecError, match="fields must be title\\+text, text, title"):
        specs.parse("bm25:fields=abstract")


def test_the_index_is_per_fields_and_follows_the_collections_setting(settings, tmp_path):
    settings.RETRIEVAL_INDEX_DIR = tmp_path
    coll = collection("c")
    assert coll.indexed_fields == "title+text"
    both = index_for(coll, specs.parse("bm25"))
    text = index_for(coll, specs.parse("bm25:fields=text"))
    assert both.config["fields"] == "title+text" and text.config["fields"] == "text" and both.pk != text.pk
    coll.indexed_fields = "text"
    assert index_for(coll, specs.parse("bm25")).pk == text.pk
