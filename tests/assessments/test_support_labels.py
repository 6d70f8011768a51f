"""The label registry's nugget and citation support sets (issue 40 item 4): the stored values, their order and the
words each page shows. The values are stored in judgements and written to files: a change to one must fail here."""

from annotation.services import adjudication, browser, citation_support, nugget_support, review
from assessments.labels import (
    CITATION_SUPPORT, CITATION_SUPPORT_NAMES, NUGGET_SUPPORT, NUGGET_SUPPORT_NAMES, NUGGET_SUPPORT_SAID,
    CitationSupport, NuggetSupport,
)
from assessments.services import nuggets


def test_the_registry_values_are_the_stored_values():
    assert NuggetSupport.values == ["support", "partial_support", "not_support"]
    assert CitationSupport.values == ["full", "partial", "none"]
    assert (nuggets.SUPPORT, nuggets.PARTIAL, nuggets.NOT_SUPPORT) == ("support", "partial_support", "not_support")
    assert nuggets.SUPPORT_VALUES == ("support", "partial_support", "not_support")
    assert nuggets.CITATION_VALUES == ("full", "partial", "none")
    assert all(type(v) is str for v in nuggets.SUPPORT_VALUES + nuggets.CITATION_VALUES)


def test_each_set_has_its_order_worst_first():
    assert nuggets.SUPPORT_ORDER == {"not_support": 0, "partial_support": 1, "support": 2}
    assert list(nuggets.SUPPORT_ORDER) == ["not_support", "partial_support", "support"]
    assert nuggets.CITATION_ORDER == {"none": 0, "partial": 1, "full": 2}
    assert list(nuggets.CITATION_ORDER) == ["none", "partial", "full"]
    assert NuggetSupport.SUPPORT.rank == 2 and CitationSupport.NONE.rank == 0


def test_the_pages_words_come_from_the_registry():
    assert nugget_support.VALUES == NUGGET_SUPPORT == [
        ["support", "Support", "s"], ["partial_support", "Partial support", "p"], ["not_support", "No support", "n"]]
    assert citation_support.VALUES == CITATION_SUPPORT == [
        ["full", "Full support", "f"], ["partial", "Partial support", "p"], ["none", "No support", "n"]]
    assert adjudication.SUPPORT_NAMES == NUGGET_SUPPORT_NAMES == {
        "support": "support", "partial_support": "partial support", "not_support": "no support"}
    assert adjudication.CITATION_NAMES == review.CITATION_WORDS == CITATION_SUPPORT_NAMES == {
        "full": "full support", "partial": "partial support", "none": "no support"}
    assert review.SUPPORT_WORDS is browser.SUPPORT_WORDS is NUGGET_SUPPORT_SAID
    assert NUGGET_SUPPORT_SAID == {
        "support": "supported", "partial_support": "partly supported", "not_support": "not supported"}
