"""The same assignment open in two tabs: each tab is told the other is open and shows the other's changes."""

import pytest

from tests.annotation import plot_setup as ps
from tests.browser.test_plot_labelling import pressed_grade, sign_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def assignment(tmp_path):
    return ps.labelling(tmp_path, size=3, lines=ps.EXCERPT)


def open_twice(new_page, assignment, ready):
    """Two tabs of one browser, signed in, on the assignment's page."""
    first = new_page()
    sign_in(first)
    tabs = [first, first.context.new_page()]
    for tab in tabs:
        tab.goto(f"/a/{assignment.token}/")
        tab.wait_for_selector(f"body[data-ready={ready}]")
    return tabs


def test_a_change_in_one_tab_shows_in_the_other_with_a_notice(new_page, assignment):
    first, second = open_twice(new_page, assignment, "plot")
    first.wait_for_selector("#other-tab", state="visible")
    second.wait_for_selector("#other-tab", state="visible")

    first.keyboard.press("2")
    first.keyboard.press("s")
    second.wait_for_selector("#candidate-1 button.answer[aria-pressed=true]")
    assert pressed_grade(second, 1) == "2"
    second.wait_for_selector("#query-text .is-marked")
    assert "another tab" in second.text_content("#hint")

    second.keyboard.press("0")  # and back again
    first.wait_for_selector('#candidate-1 button.answer[data-value="0"][aria-pressed=true]')

    second.close()
    first.wait_for_selector("#other-tab", state="hidden")


def test_the_outline_page_shows_the_other_tabs_changes_too(new_page):
    first, second = open_twice(new_page, ps.outline_assignment(), "outline")
    first.keyboard.press("1")
    first.keyboard.press("s")
    second.wait_for_selector('#passage-1 button.facet[data-grade="should"]')
    second.wait_for_selector("#other-tab", state="visible")
