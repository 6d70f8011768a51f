"""manage.py import_plot_queries: JSON-lines plot queries become PLOT topics; ground truth = the chunks of a span."""

import json

import pytest
from django.core.management import CommandError, call_command

from assessments.importers.plot import normalise, short_title
from assessments.models import Topic
from retrieval.models import Book
from tests.factories import db_snapshot, topic

pytestmark = pytest.mark.django_db

BOOK_TITLES = {
    "call-of-the-wild": "The Call of the Wild",
    "tom-sawyer": "The Adventures of Tom Sawyer",
    "moby-dick": "Moby-Dick; or, The Whale",
    "a-tale-of-two-cities": "A Tale of Two Cities",
}

# Ten sentences, three to a chunk: tale:0 = 0-2, tale:1 = 3-5, tale:2 = 6-8, tale:3 = 9.
TALE = """\
*** START OF THE PROJECT GUTENBERG EBOOK A SMALL TALE ***

A Small Tale

The fox ran into the wood. It was
late, and the moon was up.

“Who goes there?” said the owl. The fox
said nothing at all.

The women came at dawn. The men
came later. They found the fox’s den
empty.

The owl said: “Who goes there?” Nobody answered.

*** END OF THE PROJECT GUTENBERG EBOOK A SMALL TALE ***
"""


def call(name, *args):
    lines = []

    class Out:
        def write(self, text):
            lines.append(text)

        def flush(self):
            pass

    call_command(name, *[str(a) for a in args], "--no-progress", stdout=Out())
    return "".join(lines)


@pytest.fixture
def tale(tmp_path):
    path = tmp_path / "tale.txt"
    path.write_text(TALE, encoding="utf-8")
    call("import_book", path, "--title", "A Small Tale")
    return Book.objects.get(slug="tale")


@pytest.fixture
def queries_file(tmp_path):
    """Write JSON lines (dicts are dumped, strings written as they are) and return the path."""

    def write(*lines, name="queries.jsonl"):
        path = tmp_path / name
        path.write_text("".join((json.dumps(line) if isinstance(line, dict) else line) + "\n" for line in lines))
        return path

    return write


def q(query_id="q1", book="tale", query="The fox hides.", **fields):
    return {"query_id": query_id, "book": book, "query": query, **fields}


def ground_truth(query_id):
    return list(
        Topic.objects.get(external_id=query_id)
        .ground_truth.order_by("first_sentence")
        .values_list("external_id", flat=True)
    )


def rejected(path):
    """Run the import expecting a rejection; returns the message after checking that nothing was written."""
    before = db_snapshot()
    with pytest.raises(CommandError) as excinfo:
        call("import_plot_queries", path)
    assert db_snapshot() == before
    message = str(excinfo.value)
    assert message.startswith("nothing was imported:")
    return message


# --- the sample queries on the real books ---------------------------------------------------------------------


@pytest.mark.long
def test_every_sample_query_resolves_to_at_least_one_chunk_of_its_book(data_dir):
    samples = [
        json.loads(line)
        for line in (data_dir / "plot" / "sample-queries.jsonl").read_text().splitlines()
        if line.strip()
    ]
    for slug in sorted({sample["book"] for sample in samples}):
        call("import_book", data_dir / "books" / f"{slug}.txt", "--title", BOOK_TITLES[slug])

    summary = call("import_plot_queries", data_dir / "plot" / "sample-queries.jsonl")

    assert summary.startswith(f"Imported {len(samples)} plot queries")
    for sample in samples:
        t = Topic.objects.get(external_id=sample["query_id"])
        book = Book.objects.get(slug=sample["book"])
        assert (t.kind, t.collection, t.book, t.text) == (Topic.Kind.PLOT, book.collection, book, sample["query"])
        assert t.ground_truth_text == sample["ground_truth_text"]
        assert t.title == short_title(sample["query"]) and len(t.title) <= 80
        chunks = list(t.ground_truth.order_by("first_sentence"))
        assert chunks, sample["query_id"]
        assert all(chunk.book_id == book.pk for chunk in chunks)
        joined = " ".join(chunk.text for chunk in chunks)
        assert normalise(sample["ground_truth_text"]) in normalise(joined)


# --- matching ground truth ------------------------------------------------------------------------------------


def test_it_creates_a_plot_topic_in_the_books_collection_with_the_chunk_holding_the_span(tale, queries_file):
    path = queries_file(
        q("q1", query="Someone finds an empty home.", ground_truth_text="They found the fox's den empty.")
    )

    summary = call("import_plot_queries", path)

    t = Topic.objects.get()
    assert (t.collection, t.book, t.kind, t.external_id) == (tale.collection, tale, Topic.Kind.PLOT, "q1")
    assert (t.title, t.text) == ("Someone finds an empty home.", "Someone finds an empty home.")
    assert t.ground_truth_text == "They found the fox's den empty."
    assert ground_truth("q1") == ["tale:2"]
    assert summary.strip() == "Imported 1 plot queries (tale 1) with 1 ground-truth chunks."


def test_a_span_across_a_chunk_boundary_gives_every_chunk_it_overlaps(tale, queries_file):
    path = queries_file(
        q("q1", ground_truth_text='It was late, and the moon was up. "Who goes there?" said the owl.'),
        q("q2", ground_truth_text='The owl said: "Who goes there?" Nobody answered.'),
    )

    call("import_plot_queries", path)

    assert ground_truth("q1") == ["tale:0", "tale:1"]
    assert ground_truth("q2") == ["tale:2", "tale:3"]


def test_the_span_matches_across_the_books_line_breaks_and_with_straight_quotes(tale, queries_file):
    path = queries_file(q(ground_truth_text='"Who goes there?"  said\nthe owl. The fox said   nothing'))

    call("import_plot_queries", path)

    assert ground_truth("q1") == ["tale:1"]


def test_the_span_must_match_whole_words(tale, queries_file):
    path = queries_file(q(ground_truth_text="men came"))  # not the end of "women came"

    call("import_plot_queries", path)

    assert ground_truth("q1") == ["tale:2"]


def test_a_query_without_ground_truth_text_gets_a_topic_without_ground_truth(tale, queries_file):
    summary = call("import_plot_queries", queries_file(q()))

    assert ground_truth("q1") == []
    assert Topic.objects.get().ground_truth_text == ""
    assert "1 without ground truth" in summary


def test_a_long_query_gets_a_short_title_and_keeps_its_full_text(tale, queries_file):
    query = (
        "The fox runs into the dark wood while the moon rises, and an owl calls out to ask who goes there, "
        "but nobody answers it."
    )
    call("import_plot_queries", queries_file(q(query=query)))

    t = Topic.objects.get()
    assert t.text == query
    assert t.title == "The fox runs into the dark wood while the moon rises, and an owl calls out to…"
    assert len(t.title) <= 80


def test_short_title_and_normalise():
    assert short_title("  A short   query. ") == "A short query."
    assert short_title("x" * 100) == "x" * 79 + "…"
    assert normalise("“It’s  a\n‘test’,” he said.") == "\"It's a 'test',\" he said."


# --- rejections: each writes nothing --------------------------------------------------------------------------


def test_it_rejects_an_unknown_book_and_writes_nothing(tale, queries_file):
    path = queries_file(q(book="war-and-peace"))

    message = rejected(path)

    assert f"{path}:1: book: unknown book 'war-and-peace' (imported books: tale)" in message
    assert "manage.py import_book" in message


def test_it_rejects_ground_truth_text_not_found_in_the_book_and_writes_nothing(tale, queries_file):
    path = queries_file(q(ground_truth_text="The wolf ran into the wood."))

    assert f"{path}:1: ground_truth_text: not found in book 'tale'" in rejected(path)


def test_it_rejects_ground_truth_text_found_more_than_once_and_says_where(tale, queries_file):
    path = queries_file(q(ground_truth_text='"Who goes there?"'))

    message = rejected(path)

    assert (
        f"{path}:1: ground_truth_text: ambiguous: found 2 times in book 'tale', "
        "at sentence 3 (chunk tale:1); sentence 8 (chunk tale:2)"
    ) in message


def test_it_rejects_a_duplicate_query_id_in_the_file_and_writes_nothing(tale, queries_file):
    path = queries_file(q("q1"), q("q2"), q("q1"))

    assert f"{path}:3: query_id: duplicate query_id 'q1': also on line 1" in rejected(path)


def test_it_rejects_a_query_id_already_in_the_database_and_writes_nothing(tale, queries_file):
    topic(tale.collection, "q1", kind=Topic.Kind.PLOT, book=tale)
    path = queries_file(q("q2"), q("q1"))

    assert f"{path}:2: query_id: a topic 'q1' already exists in collection 'tale'" in rejected(path)


def test_importing_the_same_file_twice_is_rejected_the_second_time(tale, queries_file):
    path = queries_file(q("q1", ground_truth_text="Nobody answered."))
    call("import_plot_queries", path)

    assert "a topic 'q1' already exists" in rejected(path)
    assert Topic.objects.count() == 1


def test_it_rejects_an_invalid_json_line_and_writes_nothing(tale, queries_file):
    path = queries_file(q("q1"), '{"query_id": "q2", "book": "tale",', '["not", "an", "object"]')

    message = rejected(path)

    assert f"{path}:2: invalid JSON" in message
    assert f"{path}:3: expected a JSON object, got a list" in message


@pytest.mark.parametrize("missing", ["query_id", "book", "query"])
def test_it_rejects_a_missing_field_and_writes_nothing(tale, queries_file, missing):
    line = q(ground_truth_text="Nobody answered.")
    del line[missing]
    path = queries_file(q("q0"), line)

    assert f"{path}:2: {missing}: missing" in rejected(path)


@pytest.mark.parametrize("empty", ["query_id", "book", "query", "ground_truth_text"])
def test_it_rejects_an_empty_field_and_writes_nothing(tale, queries_file, empty):
    line = q(ground_truth_text="Nobody answered.")
    line[empty] = "  "
    path = queries_file(line)

    assert f"{path}:1: {empty}: is empty" in rejected(path)


def test_it_rejects_a_field_that_is_not_a_string_and_writes_nothing(tale, queries_file):
    path = queries_file(q(query_id=7))

    assert f"{path}:1: query_id: must be a string, not int" in rejected(path)


def test_it_rejects_an_empty_file_and_writes_nothing(tale, tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n")

    assert f"{path}: the file is empty" in rejected(path)


def test_it_rejects_binary_garbage_and_writes_nothing(tale, tmp_path):
    path = tmp_path / "garbage.jsonl"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))

    assert f"{path}:3: not a text file: NUL byte at offset 8" in rejected(path)


def test_it_reports_every_bad_line_and_writes_none_of_the_good_ones(tale, queries_file):
    path = queries_file(
        q("good", ground_truth_text="Nobody answered."),
        q("bad-book", book="nowhere"),
        q("bad-span", ground_truth_text="No such words in the tale."),
    )

    message = rejected(path)

    assert f"{path}:2: book: unknown book 'nowhere'" in message
    assert f"{path}:3: ground_truth_text: not found" in message
    assert not Topic.objects.exists()
