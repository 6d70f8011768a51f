"""Ground truth is found through Gutenberg markup (italics, illustrations, footnote marks, separators) and points at the file."""

import json
import re

import pytest
from django.core.management import call_command

from assessments.importers.plot import normalise
from assessments.models import Topic
from retrieval.ingest import read_text
from retrieval.markup import clean_span

pytestmark = pytest.mark.django_db

TITLES = {
    "call-of-the-wild": "The Call of the Wild",
    "tom-sawyer": "The Adventures of Tom Sawyer",
    "moby-dick": "Moby-Dick; or, The Whale",
    "a-tale-of-two-cities": "A Tale of Two Cities",
}
QUOTES = {"'": "['‘’]", '"': '["“”]'}


def call(name, *args):
    class Quiet:
        def write(self, text):
            pass

        def flush(self):
            pass

    call_command(name, *[str(a) for a in args], "--no-progress", stdout=Quiet())


def locate(raw, span):
    """The span's (start, end) in the raw book: its words with any whitespace between them, quotes either way."""
    words = ["".join(QUOTES.get(char, re.escape(char)) for char in word) for word in span.split()]
    pattern = r"\s+".join(words)
    matches = list(re.finditer(pattern, raw))
    assert len(matches) == 1, span
    return matches[0].span()


def with_markup(raw, span):
    """The book with markup around and inside the span's paragraph: an illustration before it, its second word in
    italics, a footnote mark after it, a star separator after the paragraph. Returns (text, the italic word)."""
    start, end = locate(raw, span)
    second = re.search(r"\s(\w+)", raw[start:end])
    word_start, word_end = start + second.start(1), start + second.end(1)
    paragraph_start = raw.rfind("\n\n", 0, start) + 2
    paragraph_end = raw.find("\n\n", end)
    return (
        raw[:paragraph_start]
        + "[Illustration: “A scene\nof the story”]\n\n"
        + raw[paragraph_start:word_start] + "_" + raw[word_start:word_end] + "_" + raw[word_end:end] + "[1]"
        + raw[end:paragraph_end]
        + "\n\n       *       *       *       *       *"
        + raw[paragraph_end:]
    ), second.group(1)


def test_the_sample_queries_find_their_ground_truth_in_books_with_markup_in_and_around_it(data_dir, tmp_path):
    samples = [json.loads(line) for line in (data_dir / "plot" / "sample-queries.jsonl").read_text().splitlines() if line]
    raw_books, italic = {}, {}
    for slug in sorted({s["book"] for s in samples}):
        raw = read_text(data_dir / "books" / f"{slug}.txt")
        for sample in (s for s in samples if s["book"] == slug):
            raw, italic[sample["query_id"]] = with_markup(raw, sample["ground_truth_text"])
        raw_books[slug] = raw
        path = tmp_path / f"{slug}.txt"
        path.write_text(raw, encoding="utf-8")
        call("import_book", path, "--title", TITLES[slug])
    for slug, raw in raw_books.items():  # the shared books hold no illustrations of their own: one per query added
        assert raw.count("[Illustration") == sum(1 for s in samples if s["book"] == slug)

    call("import_plot_queries", data_dir / "plot" / "sample-queries.jsonl")  # the file as it is

    for sample in samples:
        topic = Topic.objects.get(external_id=sample["query_id"])
        chunks = list(topic.ground_truth.order_by("first_sentence"))
        joined = " ".join(chunk.text for chunk in chunks)
        assert normalise(sample["ground_truth_text"]) in normalise(joined)
        assert not re.search(r"_|\[1\]|\[Illustration|\*\s+\*", joined)
        # The span's place in the file holds the span with the markup added inside it.
        start, end = topic.metadata["ground_truth_source"]
        in_file = raw_books[sample["book"]][start:end]
        assert f"_{italic[sample['query_id']]}_" in in_file
        assert normalise(clean_span(in_file)) == normalise(sample["ground_truth_text"])
        # The italic word is emphasis on its chunk.
        emphasised = [chunk.text[a:b] for chunk in chunks for a, b in chunk.metadata.get("emphasis", [])]
        assert italic[sample["query_id"]] in emphasised


def test_an_italic_word_inside_a_ground_truth_passage_matches_typed_plainly_or_copied_with_underscores(data_dir, tmp_path):
    call("import_book", data_dir / "books" / "tom-sawyer.txt", "--title", TITLES["tom-sawyer"])
    raw = read_text(data_dir / "books" / "tom-sawyer.txt")
    assert "_now_ his future lay plain before him" in raw  # an italic of the book itself
    path = tmp_path / "queries.jsonl"
    path.write_text(
        json.dumps({"query_id": "plain", "book": "tom-sawyer", "query": "He sees his future in a flash.",
                    "ground_truth_text": "now his future lay plain before him, and glowing with unimaginable splendor"})
        + "\n"
        + json.dumps({"query_id": "copied", "book": "tom-sawyer", "query": "Again his future.",
                      "ground_truth_text": "That was it! _now_ his future lay plain before him"})
        + "\n"
    )

    call("import_plot_queries", path)

    plain, copied = Topic.objects.get(external_id="plain"), Topic.objects.get(external_id="copied")
    assert list(plain.ground_truth.all()) == list(copied.ground_truth.all())
    chunk = plain.ground_truth.get()
    assert "now his future lay plain" in chunk.text and "_now_" not in chunk.text
    a, b = next((a, b) for a, b in chunk.metadata["emphasis"] if chunk.text[a:b] == "now")
    assert chunk.text[a:b + len(" his future")] == "now his future"
    start, end = plain.metadata["ground_truth_source"]
    assert raw[start - 1 : end].replace("\n", " ") == (
        "_now_ his future lay plain before him, and glowing with unimaginable splendor"
    )
