"""An assessor judges three documents of an ad hoc campaign in Chromium from the keyboard alone: a grade each, an
evidence span chosen with the arrow keys, the narrative opened; a reload keeps everything; the organiser then
downloads the campaign's qrels from its results page and finds exactly those grades (issue 27)."""

import pytest

from annotation.services import plot
from assessments.models import Judgement, Layer
from tests import factories
from tests.annotation.adhoc_setup import adhoc_world
from tests.browser.console_steps import download, organiser_account, qrels_lines, sign_in, sign_out, whole_page_shot

pytestmark = pytest.mark.django_db(transaction=True)

GRADES = ["3", "0", "2"]  # keys pressed for documents 1..3, in the order shown


def saved(page):
    page.wait_for_selector("#savestate[data-state=saved]")


def test_an_assessor_grades_three_documents_from_the_keyboard_and_the_qrels_say_so(new_page, shot, tmp_path):
    judge = factories.user("judge")
    world = adhoc_world(judge)
    order = [c.passage for c in plot.candidates(world["unit"])]

    page = new_page()
    sign_in(page, "judge", "pw-judge")
    page.wait_for_selector("body[data-ready=home]")
    page.keyboard.press("N")
    page.wait_for_selector("body[data-ready=adhoc]")
    assert "plot" not in page.inner_text("body").lower()
    assert page.locator(".adhoc-doc .d-seg.is-term").count() > 0  # the topic's words are marked
    assert page.locator("#candidate-1 .doc-para").count() == 2  # paragraphs: split at the blank line

    kb = page.keyboard
    assert not page.locator("#narrative").evaluate("n => n.open")
    kb.press("n")
    assert page.locator("#narrative").evaluate("n => n.open")
    words = order[0].text.split()
    for i, key in enumerate(GRADES, start=1):
        assert page.is_visible(f"#candidate-{i}") and page.locator(".adhoc-doc:visible").count() == 1
        kb.press(key)
        if i == 1:  # the first two words of the first document, chosen with the arrows, as evidence
            kb.press("ArrowRight")
            kb.press("Shift+ArrowRight")
            kb.press("e")
            expected = " ".join(words[:2])
            assert page.locator("#candidate-1 [data-role=evidence] .span-text").all_text_contents() == [f"“{expected}”"]
            shot(page, "adhoc-page")
        kb.press("j")
    saved(page)
    whole_page_shot(page, shot, "adhoc-page-done")

    grades = {j.passage_id: j.value for j in Judgement.objects.filter(layer=Layer.GRADE)}
    assert grades == {doc.pk: int(key) for doc, key in zip(order, GRADES)}
    evidence = Judgement.objects.get(layer=Layer.EVIDENCE)
    assert evidence.passage_id == order[0].pk
    start, end = evidence.value[0]
    assert order[0].text[start:end] == " ".join(words[:2])

    page.reload()
    page.wait_for_selector("body[data-ready=adhoc]")
    for i, key in enumerate(GRADES, start=1):
        page.click(f".cand-dot[data-n='{i}']")
        assert page.get_attribute(".adhoc-grades button.answer[aria-pressed=true]", "data-value") == key
    assert page.locator("#candidate-1 [data-role=evidence] .span-text").count() == 1
    assert "done" in page.text_content("#status-badge").lower()

    sign_out(page)
    organiser_account()
    sign_in(page, "boss", "pw-boss")
    page.goto(f"/campaigns/{world['campaign'].name}/results/")
    qrels = qrels_lines(download(page, lambda: page.click("#download-qrels"), tmp_path, "adhoc.qrels"))
    assert qrels == {("301", doc.external_id): int(key) for doc, key in zip(order, GRADES)}


@pytest.mark.parametrize("view", ["list", "one"])
def test_the_grade_bar_never_covers_the_text_it_grades(new_page, shot, view):
    """The sticky grade bar hid the first line of the document moved to (issue 39 item 12): in the list view the
    document moved to starts below the bar; in either view the bar stays below the page's top bar, and the evidence
    cursor brought into sight lands below both."""
    from retrieval.models import Passage

    judge = factories.user("judge")
    world = adhoc_world(judge, settings={"adhoc_view": view})
    long_text = "\n\n".join(f"Paragraph {n} of a long report on wind farm proposals and the county's vote. " * 3
                             for n in range(1, 25))
    Passage.objects.filter(pk__in=[d.pk for d in world["documents"]]).update(text=long_text)

    page = new_page(height=600)
    sign_in(page, "judge", "pw-judge")
    page.goto(f"/a/{world['unit'].token}/")
    page.wait_for_selector("body[data-ready=adhoc]")
    below_bar = """s => document.querySelector(s).getBoundingClientRect().top
                    >= document.querySelector('#adhoc-controls').getBoundingClientRect().bottom - 1"""
    n = 1
    if view == "list":
        for n in (2, 3):
            page.keyboard.press("j")
            page.wait_for_selector(f"#candidate-{n}.is-current")
            page.wait_for_function(below_bar, arg=f"#candidate-{n} .doc-title")
    else:
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")  # the page scrolled past the document's top
        page.wait_for_function("() => window.scrollY > 0")
    bar_top = page.locator("#adhoc-controls").evaluate("e => e.getBoundingClientRect().top")
    assert bar_top >= page.locator(".topbar").evaluate("e => e.getBoundingClientRect().bottom") - 1
    page.keyboard.press("ArrowRight")  # the evidence cursor on the document's first word, scrolled into sight
    page.wait_for_selector(f"#candidate-{n} .d-seg.is-cursor")
    page.wait_for_function(below_bar, arg=f"#candidate-{n} .d-seg.is-cursor")
    shot(page, f"adhoc-grade-bar-{view}")


def test_find_in_the_document_highlights_steps_and_puts_the_evidence_cursor_on_a_match(new_page, shot):
    """Find-in-document on the judging page (issue 39 item 13): / opens it, every place is marked in the current
    document, Enter steps through them, Esc goes back to the keys with the cursor on the match, so e marks it."""
    from retrieval.models import Passage

    judge = factories.user("judge")
    world = adhoc_world(judge)
    Passage.objects.filter(pk__in=[d.pk for d in world["documents"]]).update(
        text="Turbines at sea. A Turbine proposal.\n\nMore turbines near the coast.")
    page = new_page()
    sign_in(page, "judge", "pw-judge")
    page.goto(f"/a/{world['unit'].token}/")
    page.wait_for_selector("body[data-ready=adhoc]")
    word, expected = "turbine", 3

    page.keyboard.press("/")
    page.wait_for_function("() => document.activeElement && document.activeElement.id === 'find-text'")
    page.keyboard.type(word.upper())  # any case
    page.wait_for_function("n => document.getElementById('find-count').textContent === '1 of ' + n", arg=expected)
    assert page.locator("#candidate-1 .d-seg.is-found").count() >= expected
    page.keyboard.press("Enter")
    page.wait_for_function("n => document.getElementById('find-count').textContent === '2 of ' + n", arg=expected)
    shot(page, "adhoc-find")
    page.keyboard.press("Shift+Enter")
    page.keyboard.press("Shift+Enter")  # back past the first: the last
    page.wait_for_function("n => document.getElementById('find-count').textContent === n + ' of ' + n", arg=expected)
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.activeElement && document.activeElement.id !== 'find-text'")
    assert Judgement.objects.filter(layer=Layer.EVIDENCE).count() == 0  # typing in the box graded nothing
    assert not Judgement.objects.filter(layer=Layer.GRADE).exists()
    page.keyboard.press("e")
    page.wait_for_selector("#candidate-1 [data-role=evidence] .span-text")
    marked = page.locator("#candidate-1 [data-role=evidence] .span-text").first.inner_text()
    assert marked == "“turbines”"  # the last place's word: the cursor was on it
    page.wait_for_selector("#savestate[data-state=saved]")
    page.keyboard.press("/")
    page.keyboard.type("zzzz-nowhere")
    page.wait_for_function("() => document.getElementById('find-count').textContent === 'not in this document'")
