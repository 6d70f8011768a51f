"""retrieval.ingest.load_json, the one reader of uploaded JSON: whatever json cannot read (broken text, an integer
of more digits than Python converts, nesting deeper than the parser recurses) is one InvalidJSON with its line,
its column (both from 1) and what is wrong in words; parse_json_lines makes it a problem of its line."""

import pytest

from retrieval.ingest import InvalidJSON, Problems, load_json, parse_json_lines

BIG = "1" * 5000  # past Python's 4,300 digits: json.loads raises a plain ValueError


def invalid(text, first_line=1) -> InvalidJSON:
    with pytest.raises(InvalidJSON) as excinfo:
        load_json(text, first_line=first_line)
    return excinfo.value


def test_an_integer_of_too_many_digits_is_named_at_its_place():
    error = invalid('{"s": "' + "9" * 5000 + '", "f": ' + BIG + '.5,\n "run_id": -' + BIG + "}", first_line=7)
    assert (error.line, error.column) == (8, 12)
    assert error.message == "invalid JSON: a number of 5,000 digits (at most 4,300 are taken) at column 12"


def test_broken_json_has_its_column_from_1_and_no_doubled_word():
    error = invalid('{"run_id": "teamA-1", "title": "Wat')
    assert (error.line, error.column) == (1, 32)  # the quote that opens the unclosed string
    assert error.message == "invalid JSON: a string that is never closed starts at column 32"
    assert invalid("x").message == "invalid JSON: Expecting value at column 1"
    assert (invalid('{\n  "a": [1,,2]}').line, invalid('{\n  "a": [1,,2]}').column) == (2, 11)


def test_nesting_deeper_than_the_parser_recurses_is_named_where_it_gets_deep():
    error = invalid('{"a": ' + "[" * 100_000)
    assert (error.line, error.column) == (1, 105)
    assert error.message == "invalid JSON: lists and objects nested too deeply (level 100 starts here) at column 105"


def test_json_lines_with_a_huge_integer_are_a_problem_of_their_line():
    problems = Problems("run.jsonl")
    lines = list(parse_json_lines('{"a": 1}\n{"run_id": ' + BIG + "}\n", problems, first=3))
    assert [n for n, _ in lines] == [3]
    assert [str(p) for p in problems.items] == [
        "run.jsonl:4: invalid JSON: a number of 5,000 digits (at most 4,300 are taken) at column 12"
    ]


@pytest.mark.parametrize("text, column, what", [
    ('{"text": "a\\u0000b"}', 12, "a NUL character (\\u0000), which no database stores"),
    ('{"qid": "1", "text": "a\\ud800b"}', 24, "a lone surrogate (\\ud800), which is not text"),
    ('{"a": "\\uDC00"}', 8, "a lone surrogate (\\uDC00), which is not text"),
    ('{"a": "\\ud83d\\ude00 \\ud800\\ud83d\\ude00"}', 21, "a lone surrogate (\\ud800), which is not text"),
    ('{"\\u0000": 1}', 3, "a NUL character (\\u0000), which no database stores"),
    ('{"a": "\\\\ud83d\\ude00"}', 15, "a lone surrogate (\\ude00), which is not text"),  # \\ then the letters ud83d
])
def test_an_escape_of_text_no_database_stores_is_named_at_its_place(text, column, what):
    """json reads "\\u0000" and a lone "\\ud800" as str, which passed every check and then failed the write
    (UnicodeEncodeError: a traceback from import_topics / import_documents / import_rag_answers and a 500 from
    POST /api/campaigns/NAME/topics/; PostgreSQL refuses NUL in text and jsonb)."""
    error = invalid(text, first_line=3)
    assert (error.line, error.column) == (3, column)
    assert error.message == f"invalid JSON: {what} at column {column}"


def test_escapes_of_storable_text_are_read():
    assert load_json('{"a": "\\ud83d\\ude00 \\u00e9 \\\\u0000 \\\\\\u00e9 \\\\ud800"}') == {
        "a": "\U0001F600 \u00e9 \\u0000 \\\u00e9 \\ud800"}
