"""Gutenberg markup removed from books with every kept character's offset in the file (retrieval.markup)."""

import re

import pytest

from retrieval import books, markup
from retrieval.ingest import read_text
from retrieval.markup import Mapped, clean_span, remove_markup, to_source

BOOKS = ["call-of-the-wild", "tom-sawyer", "moby-dick", "a-tale-of-two-cities"]


def cleaned(text):
    return [p.text for p in markup.paragraphs(remove_markup(Mapped.of(text)))]


def test_italics_keep_their_words_and_become_emphasis():
    para = markup.paragraphs(remove_markup(Mapped.of("“Oh, no, _now_. Please, Becky—I’ll _whisper\nit_,” he said.")))[0]

    assert para.text == "“Oh, no, now. Please, Becky—I’ll whisper it,” he said."
    assert [para.text[a:b] for a, b in para.emphasis_spans()] == ["now", "whisper it"]


def test_an_italic_inside_a_word_and_a_lone_underscore():
    assert cleaned("He warn’t misch_ee_vous. A blank: ____ here, and a_b.") == [
        "He warn’t mischeevous. A blank: ____ here, and a_b."
    ]


def test_italics_do_not_pair_underscores_of_two_paragraphs():
    assert cleaned("One _odd mark.\n\nAnother odd_ mark.") == ["One _odd mark.", "Another odd_ mark."]


def test_illustrations_are_removed_even_across_lines():
    text = "The dog ran.\n\n[Illustration: Buck and\nthe man in the red sweater]\n\nHe lay [Illustration] where he fell."
    assert cleaned(text) == ["The dog ran.", "He lay where he fell."]


def test_footnote_marks_go_and_the_footnote_keeps_its_words():
    text = "He’ll play hookey this evening,[*] and I’ll just\nlay him.[1] Then[A] more.\n\n[*] Southwestern for “afternoon”"
    assert cleaned(text) == ["He’ll play hookey this evening, and I’ll just lay him. Then more.",
                             "Southwestern for “afternoon”"]


def test_star_separators_end_a_paragraph_and_elisions_become_a_space():
    text = "End of one.\n        *       *       *       *       *\nStart of two.\n\n“WHALE. * * * Sw. and Dan.”"
    assert cleaned(text) == ["End of one.", "Start of two.", "“WHALE. Sw. and Dan.”"]


def test_brackets_that_are_text_stay():
    assert cleaned("“I forgive you. [Groan.] Everything.” [_A burst of revelry_.]") == [
        "“I forgive you. [Groan.] Everything.” [A burst of revelry.]"
    ]


def test_every_kept_character_maps_to_its_offset_and_the_source_map_reproduces_it():
    raw = "Title\n\n[Illustration: x]\n\nIt was _very_\n   late.[2] *  *  * The _end_."
    para = markup.paragraphs(remove_markup(Mapped.of(raw, offset=100)))[1]

    assert para.text == "It was very late. The end."
    mapping = para.source_map()
    for i, char in enumerate(para.text):
        source = to_source(mapping, i) - 100
        assert source == para.source[i] - 100
        assert raw[source] == char or (char == " " and raw[source] in " \n*")
    assert raw[para.source[para.text.index("very")] - 100 - 1] == "_"
    assert para.source_span() == (100 + raw.index("It was"), 100 + raw.index("_end_.") + len("_end_."))


def test_clean_span_removes_the_markup_a_copied_span_holds():
    assert clean_span("the _Narwhal_ crossed[1]") == "the Narwhal crossed"


@pytest.mark.parametrize("slug", BOOKS)
def test_real_books_lose_their_markup_and_every_sentence_points_at_its_words_in_the_file(data_dir, slug):
    raw = read_text(data_dir / "books" / f"{slug}.txt")
    body = books.strip_gutenberg(raw)
    sentences = list(books.book_sentences(books.clean_paragraphs(body)))

    marked = re.compile(r"(^|\W)_\w|\w_(\W|$)|\[Illustration|\[[0-9A-Z*]\]|\*\s*\*\s*\*")
    assert not [s.text for s in sentences if marked.search(s.text)]
    emphasised = 0
    for sentence in sentences:
        assert raw[sentence.source_start] == sentence.text[0]
        assert raw[sentence.source_end - 1] == sentence.text[-1]
        for i in range(0, len(sentence.text), 7):  # every 7th character: the map is exact
            source = to_source(sentence.source_map, i)
            assert raw[source] == sentence.text[i] or sentence.text[i] == " "
        for start, end in sentence.emphasis:  # an emphasised word stood between underscores (or a sentence's edge)
            emphasised += 1
            assert start == 0 or raw[to_source(sentence.source_map, start) - 1] == "_"
            assert end == len(sentence.text) or raw[to_source(sentence.source_map, end - 1) + 1] == "_"
    # Every underscore of these books opens or closes an italic (4 / 221 / 388 / 91 pairs); none is left, and an
    # italic cut by a sentence boundary is two spans.
    assert not any("_" in s.text for s in sentences)
    assert emphasised >= body.text.count("_") // 2 >= 4
