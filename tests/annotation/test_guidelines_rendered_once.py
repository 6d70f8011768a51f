"""A campaign's guidelines are rendered once per change of their text, not on every page load (issue 38 item 11:
100 KB of `![` took every page of the campaign 5-6 s)."""

import uuid

import pytest

from annotation.templatetags import guidelines


@pytest.fixture
def counting_parser(monkeypatch):
    calls = []
    parser = guidelines._parser()

    class Counting:
        def render(self, text):
            calls.append(text)
            return parser.render(text)

    monkeypatch.setattr(guidelines, "_parser", lambda: Counting())
    guidelines._rendered.cache_clear()
    yield calls
    guidelines._rendered.cache_clear()


def test_a_text_is_rendered_once_and_a_changed_text_again(counting_parser):
    text = f"Judge **each** passage ({uuid.uuid4()}). ![" * 3  # a text no cache has (CI's cache is Redis)
    first = guidelines.render_markdown(text)
    assert guidelines.render_markdown(str(text)) == first  # the same text read again from the database
    assert len(counting_parser) == 1
    guidelines._rendered.cache_clear()  # another web process: Django's cache has it
    assert guidelines.render_markdown(text) == first
    assert len(counting_parser) == 1
    assert "<strong>each</strong>" in guidelines.render_markdown(text + " Changed.")
    assert len(counting_parser) == 2


def test_no_text_renders_nothing(counting_parser):
    assert guidelines.render_markdown("") == guidelines.render_markdown(None) == ""
    assert counting_parser == []
