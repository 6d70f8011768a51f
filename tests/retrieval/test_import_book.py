"""manage.py import_book: a plain-text book becomes a book collection with its sentences and chunks, or nothing."""

import gzip
import math

import pytest
from django.core.management import CommandError, call_command

from retrieval.models import Book, Collection, Passage, Sentence
from tests.factories import collection, db_snapshot

pytestmark = pytest.mark.django_db

# With paragraphs joined, the Gutenberg header and footer and the markup removed, pysbd finds these (retrieval/books.py;
# data/README.md's 4,059 / 7,876 / 5,732 for the last three counted star separators and split at italics and footnote marks).
DOCUMENTED_SENTENCES = {
    "call-of-the-wild": 1643,
    "tom-sawyer": 4058,
    "moby-dick": 7874,
    "a-tale-of-two-cities": 5722,
}
LAST_SENTENCES = {
    "call-of-the-wild": "as he sings a song of the younger world, which is the song of the pack.",
    "tom-sawyer": "therefore it will be wisest not to reveal any of that part of their lives at present.",
    "moby-dick": "in her retracing search after her missing children, only found another orphan.",
    "a-tale-of-two-cities": "it is a far, far better rest that I go to than I have ever known.”",
}

SMALL_BOOK = """\
The Project Gutenberg eBook of A Small Tale

*** START OF THE PROJECT GUTENBERG EBOOK A SMALL TALE ***

A Small Tale

The fox ran into the wood. It was
late, and the moon was up.

“Who goes there?” said the owl. The fox
said nothing at all.

*** END OF THE PROJECT GUTENBERG EBOOK A SMALL TALE ***

Section 1. General Terms of Use. More licence text.
"""
SMALL_SENTENCES = [  # (paragraph, text)
    (0, "A Small Tale"),
    (1, "The fox ran into the wood."),
    (1, "It was late, and the moon was up."),
    (2, "“Who goes there?” said the owl."),
    (2, "The fox said nothing at all."),
]


def import_book(path, *args):
    out = []

    class Out:
        def write(self, text):
            out.append(text)

        def flush(self):
            pass

    call_command("import_book", str(path), *args, "--no-progress", stdout=Out())
    return "".join(out)


def rejected(path, *args):
    """Run import_book expecting a rejection; returns the message after checking that nothing was written."""
    before = db_snapshot()
    with pytest.raises(CommandError) as excinfo:
        import_book(path, *args)
    assert db_snapshot() == before
    message = str(excinfo.value)
    assert message.startswith("nothing was imported:")
    return message


@pytest.fixture
def small_book(tmp_path):
    path = tmp_path / "a-small-tale.txt"
    path.write_text(SMALL_BOOK, encoding="utf-8")
    return path


# --- the four real books --------------------------------------------------------------------------------------


@pytest.mark.parametrize("slug", list(DOCUMENTED_SENTENCES))
def test_it_imports_each_real_book_with_the_documented_sentence_count_and_ceil_n_over_3_chunks(data_dir, slug):
    expected_sentences = DOCUMENTED_SENTENCES[slug]
    expected_chunks = math.ceil(expected_sentences / 3)

    summary = import_book(data_dir / "books" / f"{slug}.txt", "--title", slug.replace("-", " ").title())

    book = Book.objects.get(slug=slug)
    assert book.sentence_count == expected_sentences
    assert book.sentences_per_chunk == 3
    assert book.source_name == f"{slug}.txt"
    assert book.collection.name == slug and book.collection.kind == Collection.Kind.BOOK
    assert f"{expected_sentences:,} sentences in {expected_chunks:,} chunks of 3" in summary

    sentences = list(Sentence.objects.filter(book=book).order_by("index").values_list("index", "paragraph", "text"))
    assert [index for index, _, _ in sentences] == list(range(expected_sentences))
    assert all(text == text.strip() and text for _, _, text in sentences)
    paragraphs = [paragraph for _, paragraph, _ in sentences]
    assert paragraphs == sorted(paragraphs)
    assert sentences[-1][2].endswith(LAST_SENTENCES[slug])  # the Gutenberg footer and licence are gone
    assert not any("PROJECT GUTENBERG EBOOK" in text.upper() for _, _, text in sentences)

    chunks = list(Passage.objects.filter(collection=book.collection).order_by("first_sentence"))
    assert len(chunks) == expected_chunks
    texts = [text for _, _, text in sentences]
    for number, chunk in enumerate(chunks):
        assert chunk.external_id == f"{slug}:{number}"
        assert chunk.book_id == book.pk
        assert (chunk.first_sentence, chunk.last_sentence) == (3 * number, min(3 * number + 2, expected_sentences - 1))
        assert chunk.text == " ".join(texts[chunk.first_sentence : chunk.last_sentence + 1])


# --- a small hand-made book -----------------------------------------------------------------------------------


def test_it_strips_the_gutenberg_header_and_footer_and_joins_wrapped_lines(small_book):
    summary = import_book(small_book, "--title", "A Small Tale")

    book = Book.objects.get()
    assert book.slug == "a-small-tale"  # the file name's stem
    assert book.title == "A Small Tale" and book.collection.title == "A Small Tale"
    assert list(book.sentences.order_by("index").values_list("paragraph", "text")) == SMALL_SENTENCES
    assert list(
        book.chunks.order_by("first_sentence").values_list("external_id", "first_sentence", "last_sentence", "text")
    ) == [
        ("a-small-tale:0", 0, 2, "A Small Tale The fox ran into the wood. It was late, and the moon was up."),
        ("a-small-tale:1", 3, 4, "“Who goes there?” said the owl. The fox said nothing at all."),
    ]
    assert summary.strip() == (
        "Imported 'A Small Tale' as a-small-tale: 5 sentences in 2 chunks of 3; "
        "Project Gutenberg header and footer removed."
    )


def test_it_takes_the_slug_and_the_chunk_size_from_the_options(small_book):
    import_book(small_book, "--title", "Tale", "--slug", "tale", "--sentences-per-chunk", "2")

    book = Book.objects.get(slug="tale")
    assert book.sentences_per_chunk == 2
    assert Collection.objects.get().name == "tale"
    assert list(
        book.chunks.order_by("first_sentence").values_list("external_id", "first_sentence", "last_sentence")
    ) == [
        ("tale:0", 0, 1),
        ("tale:1", 2, 3),
        ("tale:2", 4, 4),
    ]


def test_it_reads_a_gzipped_book_and_slugifies_the_file_name(tmp_path):
    path = tmp_path / "A Small Tale.txt.gz"
    path.write_bytes(gzip.compress(SMALL_BOOK.encode("utf-8")))

    import_book(path, "--title", "A Small Tale")

    assert Book.objects.get().slug == "a-small-tale"


def test_it_accepts_a_book_without_a_gutenberg_header(tmp_path):
    path = tmp_path / "plain.txt"
    path.write_text("Chapter I.\n\nBuck did not read the newspapers, or he would\nhave known. Trouble was brewing.\n")

    summary = import_book(path, "--title", "Plain")

    assert Book.objects.get().sentence_count == 3
    assert "removed" not in summary


# --- rejections: each writes nothing --------------------------------------------------------------------------


def test_it_rejects_a_slug_that_already_exists_and_writes_nothing(small_book):
    import_book(small_book, "--title", "A Small Tale")

    message = rejected(small_book, "--title", "Another Tale")

    assert "--slug: a book with slug 'a-small-tale' already exists ('A Small Tale', 5 sentences)" in message
    assert Book.objects.count() == 1


def test_it_rejects_a_slug_taken_by_another_collection_and_writes_nothing(small_book):
    collection("a-small-tale")

    message = rejected(small_book, "--title", "A Small Tale")

    assert "--slug: a collection named 'a-small-tale' already exists" in message


def test_it_rejects_an_empty_file_and_writes_nothing(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("")

    assert f"{path}: the file is empty" in rejected(path, "--title", "Empty")


def test_it_rejects_a_whitespace_only_file_and_writes_nothing(tmp_path):
    path = tmp_path / "blank.txt"
    path.write_text("\n   \n\t\n")

    assert f"{path}: the file is empty" in rejected(path, "--title", "Blank")


def test_it_rejects_binary_garbage_and_writes_nothing(tmp_path):
    path = tmp_path / "garbage.txt"
    path.write_bytes(bytes(range(256)) * 4)

    assert f"{path}:1: not a text file: NUL byte at offset 0" in rejected(path, "--title", "Garbage")


def test_it_rejects_bytes_that_are_not_utf8_and_writes_nothing(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("First line.\n\nCaf\u00e9 au lait.\n".encode("latin-1"))

    assert f"{path}:3: not UTF-8 text: byte 0xe9" in rejected(path, "--title", "Latin-1")


def test_it_rejects_control_characters_and_writes_nothing(tmp_path):
    path = tmp_path / "controls.txt"
    path.write_text("A line.\n\nAnother \x1b[31mline.\n")

    assert f"{path}:3: not a plain-text book: control character U+001B" in rejected(path, "--title", "Controls")


def test_it_rejects_a_text_with_no_sentences_after_the_gutenberg_header_and_writes_nothing(tmp_path):
    path = tmp_path / "hollow.txt"
    path.write_text(
        "*** START OF THE PROJECT GUTENBERG EBOOK HOLLOW ***\n\n\n"
        "*** END OF THE PROJECT GUTENBERG EBOOK HOLLOW ***\nlicence\n"
    )

    message = rejected(path, "--title", "Hollow")

    assert f"{path}: no text to split into sentences after removing the Project Gutenberg header and footer" in message


@pytest.mark.parametrize("m", ["0", "-3"])
def test_it_rejects_fewer_than_one_sentence_per_chunk_and_writes_nothing(small_book, m):
    message = rejected(small_book, "--title", "Tale", "--sentences-per-chunk", m)

    assert f"--sentences-per-chunk: must be a whole number from 1 to 32767, not {m}" in message


def test_it_rejects_a_slug_that_is_not_a_slug_and_writes_nothing(small_book):
    message = rejected(small_book, "--title", "Tale", "--slug", "a tale/of two")

    assert "--slug: 'a tale/of two' is not a slug" in message


def test_it_rejects_an_empty_title_and_writes_nothing(small_book):
    assert "--title: must not be empty" in rejected(small_book, "--title", "   ")


def test_it_rejects_a_missing_file_and_writes_nothing(tmp_path):
    assert "cannot read" in rejected(tmp_path / "nowhere.txt", "--title", "Nowhere")


def test_it_reports_every_problem_at_once(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("")

    message = rejected(path, "--title", "", "--sentences-per-chunk", "0")

    assert "--sentences-per-chunk:" in message
    assert "--title: must not be empty" in message
    assert "the file is empty" in message
