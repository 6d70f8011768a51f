"""Forced choice in Chromium: the assessor picks among an item's candidates with the keys, reloads, finds the picks."""

import pytest

from assessments.models import Judgement, Layer, StudyItem
from assessments.studies import forced_choice_accuracy
from tests import factories
from tests.annotation import plot_setup as ps
from tests.browser.test_plot_labelling import sign_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def assignment(tmp_path):
    topic = ps.load_query(tmp_path, lines=ps.EXCERPT)
    pool, picked = ps.plot_pool(topic, size=12)
    truth = topic.ground_truth.get()
    ps.choice_item(pool, topic, picked[:12], answer=truth, key="a-twelve")
    ps.choice_item(pool, topic, picked[:3], answer=picked[2], key="b-three")
    return ps.assign(factories.user("judge"), topic, pool, ps.campaign(mode="choice"))


def shown(page, n):
    return page.eval_on_selector_all(f"#item-{n} button.option", "bs => bs.map(b => b.dataset.value)")


def test_an_assessor_does_forced_choice_items_with_the_keyboard(new_page, assignment, shot):
    page = new_page()
    sign_in(page)
    page.keyboard.press("N")
    page.wait_for_selector("body[data-ready=choice]")
    real = {ps.handle(assignment, key): key for key in ("a-twelve", "b-three")}  # the page names items by handles
    keys = {n: real[page.get_attribute(f"#item-{n}", "data-key")] for n in (1, 2)}
    truth = assignment.topic.ground_truth.get().external_id

    # Each item: cursor down to the wanted candidate and Enter (the twelve), or its digit (the three).
    picks = {}
    for n in (1, 2):
        options = shown(page, n)
        if len(options) == 12:
            target = options.index(truth)
            for _ in range(target + 1):
                page.keyboard.press("ArrowDown")
            page.keyboard.press("Enter")
            picks[keys[n]] = truth
        else:
            page.keyboard.press("3")
            picks[keys[n]] = options[2]
        assert page.get_attribute(f"#item-{n} button.option[aria-pressed=true]", "data-value") == picks[keys[n]]
        if n == 1:
            page.keyboard.press("n")
            page.wait_for_selector("#item-2:not([hidden])")
    page.wait_for_selector('#savestate[data-state="saved"]')
    assert page.text_content("#work-done") == "2" and page.is_visible("#done-banner")
    shot(page, "forced-choice")

    page.reload()
    page.wait_for_selector("body[data-ready=choice]")
    for n in (1, 2):
        assert page.get_attribute(f"#item-{n} button.option[aria-pressed=true]", "data-value") == picks[keys[n]]
    stored = dict(Judgement.objects.filter(assessor=assignment.assessor, layer=Layer.CHOICE).values_list("item", "value"))
    assert stored == picks

    # The organiser's results count these picks: the twelve's is right; the three's is candidate 3 as shown.
    results = forced_choice_accuracy(assignment.pool)
    three = StudyItem.objects.get(pool=assignment.pool, key="b-three")
    right = 1 + (picks["b-three"] == three.answer.external_id)
    assert results["human"] == {"answered": 2, "correct": right, "accuracy": right / 2}
