"""The pure text functions behind import_book: Gutenberg stripping, paragraph joining, sentence splitting, chunking."""

import pytest

from retrieval import books

GUTENBERG = """\
The Project Gutenberg eBook of A Small Tale

This eBook is for the use of anyone anywhere.

*** START OF THE PROJECT GUTENBERG EBOOK A SMALL TALE ***

The fox ran into the wood.

*** END OF THE PROJECT GUTENBERG EBOOK A SMALL TALE ***

Section 1. General Terms of Use and Redistributing Project Gutenberg™ electronic works
"""


def test_strip_gutenberg_removes_the_header_and_footer_with_their_marker_lines():
    body = books.strip_gutenberg(GUTENBERG)
    assert body.text.strip() == "The fox ran into the wood."
    assert body.header_removed and body.footer_removed


def test_strip_gutenberg_accepts_the_this_spelling_of_the_markers():
    text = (
        "licence\n*** START OF THIS PROJECT GUTENBERG EBOOK X ***\n"
        "Body.\n*** END OF THIS PROJECT GUTENBERG EBOOK X ***\nlicence"
    )
    assert books.strip_gutenberg(text).text.strip() == "Body."


def test_strip_gutenberg_cuts_at_the_older_end_of_the_project_gutenberg_ebook_footer():
    text = (
        "*** START OF THIS PROJECT GUTENBERG EBOOK MOBY DICK ***\n\nCall me Ishmael.\n\n"
        "End of the Project Gutenberg EBook of Moby Dick, by Herman Melville\n\n"
        "*** END OF THIS PROJECT GUTENBERG EBOOK MOBY DICK ***\nlicence\n"
    )
    assert books.strip_gutenberg(text).text.strip() == "Call me Ishmael."


def test_strip_gutenberg_cuts_at_an_end_of_project_gutenbergs_footer():
    text = "Body.\n\nEnd of Project Gutenberg's The Adventures of Tom Sawyer, by Mark Twain\nlicence"
    body = books.strip_gutenberg(text)
    assert body.text.strip() == "Body."
    assert not body.header_removed and body.footer_removed


def test_strip_gutenberg_leaves_a_text_without_markers_alone():
    text = "Chapter I.\n\nBuck did not read the newspapers.\n"
    body = books.strip_gutenberg(text)
    assert body.text == text
    assert not body.header_removed and not body.footer_removed


def test_strip_gutenberg_ignores_a_mention_of_project_gutenberg_inside_a_line():
    text = "One etext is from\nProject Gutenberg’s archives. The end of the Project Gutenberg story.\n"
    assert books.strip_gutenberg(text).text == text


def test_paragraphs_joins_the_hard_wrapped_lines_of_each_paragraph():
    text = "The fox ran into\n   the wood. It was\nlate.\n\n\n  “Who goes there?” said\nthe owl.  \n \t\nThe end.\n"
    assert books.paragraphs(text) == [
        "The fox ran into the wood. It was late.",
        "“Who goes there?” said the owl.",
        "The end.",
    ]


def test_paragraphs_handles_crlf_line_ends_and_drops_blank_paragraphs():
    assert books.paragraphs("\r\n\r\nOne\r\ntwo.\r\n\r\n\r\nThree.\r\n") == ["One two.", "Three."]
    assert books.paragraphs(" \n\t\n") == []


def test_split_sentences_numbers_paragraphs_from_zero_and_strips_sentences():
    paras = ["The fox ran into the wood. It was late.", "“Who goes there?” said the owl. Nobody answered."]
    assert list(books.split_sentences(paras)) == [
        (0, "The fox ran into the wood."),
        (0, "It was late."),
        (1, "“Who goes there?” said the owl."),
        (1, "Nobody answered."),
    ]


def test_split_sentences_keeps_abbreviations_inside_a_sentence():
    assert books.split_paragraph("Mr. Thatcher and Mrs. Harper met Dr. Robinson. They talked.") == [
        "Mr. Thatcher and Mrs. Harper met Dr. Robinson.",
        "They talked.",
    ]


def test_joining_lines_first_stops_the_splitter_from_splitting_at_line_breaks():
    wrapped = (
        "Buck did not read the newspapers, or he would have known that trouble\nwas brewing, not alone for himself."
    )
    assert len(books.split_paragraph(books.paragraphs(wrapped)[0])) == 1


def test_chunk_ranges_groups_seven_sentences_by_three_into_three_chunks():
    assert books.chunk_ranges(7, 3) == [(0, 2), (3, 5), (6, 6)]


def test_chunk_ranges_covers_exact_multiples_single_sentences_and_empty_books():
    assert books.chunk_ranges(6, 3) == [(0, 2), (3, 5)]
    assert books.chunk_ranges(3, 1) == [(0, 0), (1, 1), (2, 2)]
    assert books.chunk_ranges(2, 5) == [(0, 1)]
    assert books.chunk_ranges(0, 3) == []


@pytest.mark.parametrize("m", [0, -1])
def test_chunk_ranges_rejects_fewer_than_one_sentence_per_chunk(m):
    with pytest.raises(ValueError, match="at least 1"):
        books.chunk_ranges(7, m)


def test_chunk_external_id_is_the_slug_and_the_chunk_index():
    assert books.chunk_external_id("moby-dick", 0) == "moby-dick:0"


def test_find_control_character_reports_the_line_of_the_first_one():
    assert books.find_control_character("fine\ttext\n\fpage two\n") is None
    assert books.find_control_character("one\ntwo\x01\nthree\x7f") == (2, "U+0001")
