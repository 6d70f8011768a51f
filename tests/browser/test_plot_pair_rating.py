"""Pair rating in Chromium: two passages, rated 1-10 from the keyboard (0 is 10), kept over a reload."""

import pytest

from assessments.models import Judgement, Layer
from tests import factories
from tests.annotation import plot_setup as ps
from tests.browser.test_plot_labelling import sign_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_assessor_rates_pairs_with_the_keyboard(new_page, tmp_path, shot):
    topic = ps.load_query(tmp_path, lines=ps.EXCERPT)
    pool, picked = ps.plot_pool(topic, size=4)
    ps.pair_item(pool, topic, picked[0], picked[1], key="pair-a")
    ps.pair_item(pool, topic, picked[2], picked[3], key="pair-b")
    assignment = ps.assign(factories.user("judge"), topic, pool, ps.campaign(mode="pair"))

    page = new_page()
    sign_in(page)
    page.goto(f"/a/{assignment.token}/")
    page.wait_for_selector("body[data-ready=pair]")
    real = {ps.handle(assignment, key): key for key in ("pair-a", "pair-b")}  # the page names items by handles
    first = real[page.get_attribute("#item-1", "data-key")]
    page.keyboard.press("7")
    page.keyboard.press("n")
    page.keyboard.press("0")
    page.wait_for_selector('#savestate[data-state="saved"]')
    assert page.is_visible("#done-banner")
    shot(page, "pair-rating")
    page.reload()
    page.wait_for_selector("body[data-ready=pair]")
    assert page.get_attribute("#item-2 .rate[aria-pressed=true]", "data-value") == "10"
    second = real[page.get_attribute("#item-2", "data-key")]
    stored = dict(Judgement.objects.filter(layer=Layer.RATING).values_list("item", "value"))
    assert stored == {first: 7, second: 10}
