"""Active time per change (autosave.js): time between inputs counts, idle time beyond a minute does not; the outline
page sends it too. Chromium with Playwright's clock, so minutes pass at once."""

import pytest

from annotation.services import plot
from assessments.models import JudgementChange, Layer
from tests.annotation import plot_setup as ps
from tests.browser.test_plot_labelling import sign_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def assignment(tmp_path):
    return ps.labelling(tmp_path, size=3, lines=ps.EXCERPT)


def active_times(assessor):
    return list(JudgementChange.objects.filter(assessor=assessor).order_by("client_seq").values_list("active_ms", flat=True))


def test_idle_time_is_not_counted_and_time_at_work_is(new_page, assignment):
    page = new_page()
    page.clock.install()
    sign_in(page)
    page.goto(f"/a/{assignment.token}/")
    page.wait_for_selector("body[data-ready=plot]")
    kb = page.keyboard

    kb.press("2")  # soon after the page opened
    page.clock.fast_forward("05:00")  # five minutes away from the keyboard
    kb.press("j")
    kb.press("1")
    page.clock.fast_forward("00:40")  # forty seconds reading, a key, forty seconds more
    kb.press("ArrowRight")
    page.clock.fast_forward("00:40")
    kb.press("j")
    kb.press("0")
    page.wait_for_selector('#savestate[data-state="saved"]')

    first, idle, busy = active_times(assignment.assessor)
    assert 0 <= first < 20_000
    assert 60_000 <= idle < 65_000  # at most a minute after the last input counts
    assert 80_000 <= busy < 85_000  # two gaps of 40 s, each under a minute, count in full
    order = [c.passage_id for c in plot.candidates(assignment)]
    grades = dict(JudgementChange.objects.filter(layer=Layer.PLOT_GRADE).values_list("judgement__passage_id", "value"))
    assert grades == {order[0]: 2, order[1]: 1, order[2]: 0}


def test_the_outline_page_sends_active_time_too(new_page):
    assignment = ps.outline_assignment()
    page = new_page()
    page.clock.install()
    sign_in(page)
    page.goto(f"/a/{assignment.token}/")
    page.wait_for_selector("body[data-ready=outline]")
    page.keyboard.press("1")
    page.clock.fast_forward("00:30")
    page.keyboard.press("m")
    page.wait_for_selector('#savestate[data-state="saved"]')
    (ms,) = active_times(assignment.assessor)
    assert 30_000 <= ms < 35_000
