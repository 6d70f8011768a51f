"""An assessor labels a real sample query's candidates in Chromium: grades with the keys, spans by keyboard and by
mouse selection, reloads, and finds everything on the page and in the database."""

import pytest

from annotation.services import plot
from assessments.models import Judgement, JudgementChange, Layer
from tests.annotation import plot_setup as ps

pytestmark = pytest.mark.django_db(transaction=True)

GRADES = ["2", "1", "0", "2", "0", "1"]  # keys pressed for candidates 1..6, shown order


@pytest.fixture
def assignment(tmp_path):
    return ps.labelling(tmp_path, size=6, context_sentences=3)


def sign_in(page, username="judge"):
    page.goto("/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "pw-" + username)
    page.click("button[type=submit]")
    page.wait_for_selector("body[data-ready=home]")


CHAR_BOX = """([at]) => {
  const q = document.getElementById("query-text");
  for (const seg of q.querySelectorAll("[data-start]")) {
    const start = Number(seg.dataset.start), node = seg.firstChild;
    if (at >= start && at < start + node.length) {
      const r = document.createRange(); r.setStart(node, at - start); r.setEnd(node, at - start + 1);
      const b = r.getBoundingClientRect(); return [b.left, b.right, (b.top + b.bottom) / 2];
    }
  }
  return null;
}"""


def drag_select(page, start, end):
    """Select query characters [start, end) with the mouse: press on the first, release on the last."""
    left, _, y1 = page.evaluate(CHAR_BOX, [start])
    _, right, y2 = page.evaluate(CHAR_BOX, [end - 1])
    page.mouse.move(left + 1, y1)
    page.mouse.down()
    page.mouse.move((left + right) / 2, (y1 + y2) / 2, steps=5)
    page.mouse.move(right - 1, y2, steps=5)
    page.mouse.up()


def pressed_grade(page, n):
    return page.get_attribute(f"#candidate-{n} button.answer[aria-pressed=true]", "data-value")


def test_an_assessor_labels_the_candidates_with_the_keys_and_marks_spans_by_keyboard_and_mouse(new_page, assignment, shot):
    text = assignment.topic.text
    order = [c.passage_id for c in plot.candidates(assignment)]
    keyboard_span = [text.index("the dog understands"), text.index("the dog understands") + len("the dog understands")]
    mouse_span = [text.index("who holds the power"), text.index("who holds the power") + len("who holds the power")]

    page = new_page()
    sign_in(page)
    page.keyboard.press("N")
    page.wait_for_selector("body[data-ready=plot]")
    assert page.evaluate("JSON.parse(document.getElementById('plot-data').textContent).candidates.map(c => c.id)") == order
    assert page.text_content("#query-text") == text
    assert page.locator("#candidate-1 mark.chunk").count() == 1

    kb = page.keyboard
    for i, key in enumerate(GRADES, start=1):
        assert page.is_visible(f"#candidate-{i}") and page.locator(".candidate:visible").count() == 1
        kb.press(key)
        if i == 1:  # words 4-6 ("the dog understands") with the keys
            for _ in range(3):
                kb.press("ArrowRight")
            kb.press("Shift+ArrowRight")
            kb.press("Shift+ArrowRight")
            kb.press("s")
            assert page.locator("#span-list .span-text").all_text_contents() == ["“the dog understands”"]
        if i == 2:  # with the mouse
            drag_select(page, *mouse_span)
            page.wait_for_selector("#span-list .span-item")
            assert page.text_content("#span-list .span-text") == "“who holds the power”"
        if i < len(GRADES):
            kb.press("j")
    page.wait_for_selector('#savestate[data-state="saved"]')
    assert page.text_content("#work-done") == "6"
    assert page.is_visible("#done-banner")
    shot(page, "plot-labelled")

    page.reload()
    page.wait_for_selector("body[data-ready=plot]")
    for i, key in enumerate(GRADES, start=1):
        assert pressed_grade(page, i) == key
    page.keyboard.press("Home")
    assert page.locator("#span-list .span-text").all_text_contents() == ["“the dog understands”"]
    assert page.locator("#query-text .is-marked").all_text_contents() == ["the dog understands"]
    page.keyboard.press("j")
    assert page.text_content("#span-list .span-text") == "“who holds the power”"

    judge = assignment.assessor
    grades = dict(Judgement.objects.filter(assessor=judge, layer=Layer.PLOT_GRADE).values_list("passage_id", "value"))
    assert grades == {pid: int(key) for pid, key in zip(order, GRADES)}
    spans = dict(Judgement.objects.filter(assessor=judge, layer=Layer.PLOT_SPANS).values_list("passage_id", "value"))
    assert spans == {order[0]: [keyboard_span], order[1]: [mouse_span]}
    changes = JudgementChange.objects.filter(assessor=judge)
    assert changes.count() == len(GRADES) + 2  # each change once
    assert all(ms is not None and 0 <= ms < 60_000 for ms in changes.values_list("active_ms", flat=True))
    assignment.refresh_from_db()
    assert assignment.status == assignment.Status.DONE


def test_a_span_is_unmarked_with_x_and_the_grade_cleared_with_backspace(new_page, assignment):
    page = new_page()
    sign_in(page)
    page.goto(f"/a/{assignment.token}/")
    page.wait_for_selector("body[data-ready=plot]")
    kb = page.keyboard
    kb.press("1")
    kb.press("s")  # the first word
    page.wait_for_selector("#query-text .is-marked")
    kb.press("x")
    kb.press("Backspace")
    page.wait_for_selector('#savestate[data-state="saved"]')
    assert page.locator("#query-text .is-marked").count() == 0
    assert page.locator("#candidate-1 button.answer[aria-pressed=true]").count() == 0
    first = plot.candidates(assignment)[0].passage_id
    assert Judgement.objects.get(layer=Layer.PLOT_SPANS, passage_id=first).value == []
    assert Judgement.objects.get(layer=Layer.PLOT_GRADE, passage_id=first).value is None
    assert JudgementChange.objects.count() == 4
