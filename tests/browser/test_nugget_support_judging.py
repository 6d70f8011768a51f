"""An assessor labels the nuggets of two answers in Chromium from the keyboard alone (s / p / n, j / k), a cited
passage opened on the way; no run name on the pages; the organiser's results page then shows each run's five
nugget scores equal to a hand computation (issue 29, part 2)."""

import pytest

from annotation.models import Assignment
from assessments.models import Judgement, Layer
from tests import factories
from tests.annotation.nuggets_setup import DOCS, RUNS, nuggets_world
from tests.browser.console_steps import organiser_account, sign_in, sign_out, whole_page_shot

pytestmark = pytest.mark.django_db(transaction=True)

KEYS = {RUNS[0]: "spsn", RUNS[1]: "nnps"}  # keys pressed for the four nuggets, in bank order
VALUE = {"s": "support", "p": "partial_support", "n": "not_support"}
MEASURES = ("all", "vital", "strict_all", "strict_vital", "weighted")
# By hand over the bank (vital, vital, okay, okay): support 1, partial 0.5 (0 when strict); weighted: vital 1, okay 0.5.
EXPECTED = {
    RUNS[0]: [(1 + 0.5 + 1 + 0) / 4, (1 + 0.5) / 2, (1 + 0 + 1 + 0) / 4, (1 + 0) / 2, (1 + 0.5 + 0.5 + 0) / 3],
    RUNS[1]: [(0 + 0 + 0.5 + 1) / 4, 0.0, (0 + 0 + 0 + 1) / 4, 0.0, (0 + 0 + 0.25 + 0.5) / 3],
}


def test_an_assessor_labels_two_answers_from_the_keyboard_and_the_results_page_scores_them(new_page, shot):
    judge = factories.user("judge")
    world = nuggets_world(judge)
    page = new_page()
    sign_in(page, "judge", "pw-judge")
    page.wait_for_selector("body[data-ready=home]")
    assert "secretrun" not in page.content()
    kb = page.keyboard
    kb.press("N")  # the first unit; Shift N on a page goes on to the next one
    for number in (1, 2):
        page.wait_for_selector("body[data-ready=nuggets]")
        assert "secretrun" not in page.content()
        token = page.url.rstrip("/").split("/")[-1]
        run = Assignment.objects.get(token=token).run.name
        assert page.locator(".nugget.is-current").get_attribute("data-n") == "1"
        if number == 1:
            page.locator("button.cite").first.click()
            cited = page.locator("details.cited[open]")
            assert cited.count() == 1 and (DOCS[0][1] in cited.inner_text() or DOCS[2][1] in cited.inner_text())
        kb.press("j")
        kb.press("k")  # back to the first
        for key in KEYS[run]:
            kb.press(key)  # a label keeps the page on its nugget (every page's convention): j moves on
            kb.press("j")
        page.wait_for_selector("#savestate[data-state=saved]")
        page.wait_for_function("() => document.getElementById('status-badge').textContent.toLowerCase().includes('done')")
        pressed = page.locator(".nugget button.answer[aria-pressed=true]")
        assert pressed.evaluate_all("bs => bs.map(b => b.dataset.value)") == [VALUE[k] for k in KEYS[run]]
        if number == 1:
            whole_page_shot(page, shot, "nugget-support-page")
        kb.press("N")
        page.wait_for_url(lambda url, token=token: token not in url)
    page.wait_for_selector("body[data-ready=home]")  # nothing left

    labels = {(j.item, j.value) for j in Judgement.objects.filter(layer=Layer.NUGGET_SUPPORT)}
    expected = {(f"{world['answers'][run].pk}:{n['id']}", VALUE[k])
                for run in RUNS for n, k in zip(world["bank"], KEYS[run])}
    assert labels == expected
    assert set(Assignment.objects.filter(assessor=judge).values_list("status", flat=True)) == {"done"}

    sign_out(page)
    organiser_account()
    sign_in(page, "boss", "pw-boss")
    page.goto(f"/campaigns/{world['campaign'].name}/results/")
    rows = page.locator("#nugget-scores-table tbody tr")
    shown = {rows.nth(i).locator("td").first.inner_text(): rows.nth(i).locator("td.num").all_inner_texts()
             for i in range(rows.count())}
    assert shown == {run: [f"{v:.4f}" for v in EXPECTED[run]] for run in RUNS}
    assert page.locator("#nugget-chart, [id*=nugget-chart]").count() >= 1
    whole_page_shot(page, shot, "nugget-scores-results")
