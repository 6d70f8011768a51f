"""Shift D marks done and never reopens; Shift R reopens after asking in the page; labels missing, Shift D asks why
(issue 32: Shift D after the last label opened a finished article again)."""

import pytest

from tests.browser.test_outline_signed_out import assignment, sign_in  # noqa: F401 (assignment: a fixture)

pytestmark = pytest.mark.django_db(transaction=True)


def stored(assignment):
    assignment.refresh_from_db()
    return assignment.status


def badge(page, text):
    page.wait_for_function("t => document.getElementById('status-badge').textContent === t", arg=text)


def test_done_and_reopen_are_separate_keys_and_reopening_asks_first(new_page, assignment):
    page = new_page()
    sign_in(page)
    page.goto(f"/a/{assignment.token}/")
    page.wait_for_selector("body[data-ready=outline]")
    kb = page.keyboard
    kb.press("1")
    kb.press("m")
    page.wait_for_selector('#savestate[data-state="saved"]')

    # Labels missing: Shift D asks why, in the page; Esc keeps working.
    kb.press("Shift+D")
    page.wait_for_selector("#ask #ask-reason")
    assert "not labelled yet" in page.text_content("#ask-text")
    kb.press("j")  # typed into the question, not the page's key
    kb.press("Escape")
    page.wait_for_selector("#ask", state="detached")
    assert "Not marked done" in page.text_content("#hint") and stored(assignment) == "in_progress"
    # With a reason it is submitted incomplete.
    kb.press("Shift+D")
    page.fill("#ask-reason", "the other passages are empty")
    kb.press("Enter")
    badge(page, "Done")
    assert stored(assignment) == "done" and assignment.incomplete_reason == "the other passages are empty"
    assert page.is_hidden("#mark-done") and page.is_visible("#reopen")

    # Shift D on a done article leaves it done.
    kb.press("Shift+D")
    page.wait_for_function("() => document.getElementById('hint').textContent.includes('done already')")
    assert page.query_selector("#ask") is None and stored(assignment) == "done"

    # Shift R asks first: cancelled, it stays done; confirmed, it is in progress.
    kb.press("Shift+R")
    page.wait_for_selector("#ask #ask-confirm")
    assert "Open it again?" in page.text_content("#ask-text")
    page.click("#ask-cancel")
    page.wait_for_selector("#ask", state="detached")
    assert stored(assignment) == "done"
    kb.press("Shift+R")
    page.wait_for_selector("#ask #ask-confirm")
    kb.press("Enter")
    badge(page, "In progress")
    assert stored(assignment) == "in_progress" and page.is_visible("#mark-done") and page.is_hidden("#reopen")

    # The last label finishes the article; Shift D then (the key list's "mark done") keeps it done.
    for key in ("j", "1", "m", "j", "1", "m", "Home", "t", "1", "j", "t", "1"):  # passages 2, 3; both transitions
        kb.press(key)
    badge(page, "Done")
    kb.press("Shift+D")
    page.wait_for_function("() => document.getElementById('hint').textContent.includes('done already')")
    assert stored(assignment) == "done" and page.text_content("#status-badge") == "Done"
