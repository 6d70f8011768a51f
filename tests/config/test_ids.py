"""config.ids.parse_id: ASCII digits within a range, or None (issue 31, finding 5); past_any_id: a number no id
column holds."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from config.ids import ID_MAX, natural_key, parse_id, past_any_id


@pytest.mark.parametrize("text, value", [("1", 1), ("42", 42), ("007", 7), (str(ID_MAX), ID_MAX), (12, 12)])
def test_ascii_digits_in_range_are_the_number(text, value):
    assert parse_id(text) == value


@pytest.mark.parametrize("text", [
    "", "0", "-1", "+1", " 1", "1 ", "1_000", "1.0", "²", "①", "٣", "３", "𝟕", "½", "1²", str(ID_MAX + 1),
    "9" * 40, None,
])
def test_anything_else_is_none(text):
    assert parse_id(text) is None


def test_the_caller_names_the_range():
    assert parse_id("0", minimum=0) == 0
    assert parse_id("1000", maximum=1000) == 1000
    assert parse_id("1001", maximum=1000) is None


@given(st.text(st.characters(categories=["Nd", "No"]), min_size=1, max_size=30))
def test_every_unicode_digit_is_refused_or_read_as_int_reads_it(text):
    value = parse_id(text)
    if value is not None:
        assert text.isascii() and value == int(text) and 1 <= value <= ID_MAX
    else:
        assert not text.isascii() or not text.isdigit() or not 1 <= int(text) <= ID_MAX


@pytest.mark.parametrize("text, past", [
    (str(2**63 - 1), False), (str(2**63), True), ("-" + str(2**63), True), ("0" * 40 + "7", False),
    ("1," + "9" * 20, True), ("9" * 5000, True), ("abc", False), ("9" * 20 + "x", False), ("", False),
    ("²" * 30, False),
])
def test_past_any_id(text, past):
    assert past_any_id(text) is past


def test_natural_key_sorts_digit_runs_by_number_and_never_fails():
    ids = ["10", "2", "q10", "q2", "abc", "²", "051", "1a", "1", "", "٣"]
    assert sorted(ids, key=natural_key) == ["", "1", "1a", "2", "10", "051", "abc", "q2", "q10", "²", "٣"]
