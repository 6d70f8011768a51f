"""An assessor judges the citations of two answers in Chromium from the keyboard alone (f / p / n, j / k, Backspace),
through the nugget support page's script; a reload keeps the labels; no run name on the pages (issue 29, item 5)."""

import pytest

from annotation.models import Assignment
from annotation.services.assignment import assign_campaign
from assessments.models import Judgement, Layer
from tests import factories
from tests.annotation.nuggets_setup import DOCS, RUNS, nuggets_world
from tests.browser.console_steps import sign_in, whole_page_shot

pytestmark = pytest.mark.django_db(transaction=True)

KEYS = {RUNS[0]: "fpn", RUNS[1]: "p"}  # the answers' cited pairs: three and one
VALUE = {"f": "full", "p": "partial", "n": "none"}
FIRST = {RUNS[0]: DOCS[0][2], RUNS[1]: DOCS[2][2]}  # the passage each answer's first pair cites


def test_an_assessor_judges_citations_from_the_keyboard(new_page, shot):
    factories.user("citer")
    world = nuggets_world()
    assign_campaign(world["campaign"], ["citer"], stage="citations")
    page = new_page()
    sign_in(page, "citer", "pw-citer")
    page.wait_for_selector("body[data-ready=home]")
    assert "Citation support" in page.content() and "secretrun" not in page.content()
    kb = page.keyboard
    kb.press("N")
    for number in (1, 2):
        page.wait_for_selector("body[data-ready=citations]")
        assert "secretrun" not in page.content()
        token = page.url.rstrip("/").split("/")[-1]
        run = Assignment.objects.get(token=token).run.name
        if number == 1:
            # the cited passage, open beside its sentence (either answer may come first: units are queued blind)
            assert FIRST[run] in page.locator("#pair-1").inner_text()
            kb.press("n")
            kb.press("k")
            kb.press("Backspace")  # cleared again
            page.wait_for_selector("#savestate[data-state=saved]")
            page.reload()
            page.wait_for_selector("body[data-ready=citations]")
            assert page.locator(".citation-pair button.answer[aria-pressed=true]").count() == 0
        for key in KEYS[run]:
            kb.press(key)
            kb.press("j")  # a label keeps the page on its pair: j moves on
        page.wait_for_selector("#savestate[data-state=saved]")
        page.wait_for_function("() => document.getElementById('status-badge').textContent.toLowerCase().includes('done')")
        pressed = page.locator(".citation-pair button.answer[aria-pressed=true]")
        assert pressed.evaluate_all("bs => bs.map(b => b.dataset.value)") == [VALUE[k] for k in KEYS[run]]
        if number == 1:
            whole_page_shot(page, shot, "citation-support-page")
        kb.press("N")
        page.wait_for_url(lambda url, token=token: token not in url)
    page.wait_for_selector("body[data-ready=home]")
    stored = sorted(Judgement.objects.filter(layer=Layer.CITATION_SUPPORT).values_list("item", "value"))
    a, b = world["answers"][RUNS[0]].pk, world["answers"][RUNS[1]].pk
    assert stored == sorted([(f"{a}:0", "full"), (f"{a}:1", "partial"), (f"{a}:1", "none"), (f"{b}:0", "partial")])
    assert set(Assignment.objects.values_list("status", flat=True)) == {"done"}
