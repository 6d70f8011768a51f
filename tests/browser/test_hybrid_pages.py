"""A hybrid campaign's pages in Chromium (issue 41): the assessor's page serves one document and, once the budget is
spent, says there is nothing more to judge; the dashboard draws the budget spent and left; the results page lists
each run's MAP and nDCG@10 with its 95% interval."""

import pytest

from tests.annotation.test_hybrid_live import judge_what_is_served, set_hybrid, world  # noqa: F401 - the fixture
from tests.browser.console_steps import organiser_account, sign_in, whole_page_shot

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_budget_and_the_intervals_show_in_the_browser(new_page, shot, client, world):  # noqa: F811
    set_hybrid(world, budget=6)
    organiser_account()
    unit = next(iter(world["units"].values()))
    page = new_page()
    sign_in(page, "judge", "pw-judge")
    page.goto(f"/a/{unit.token}/")
    page.wait_for_selector("body[data-ready=adhoc]")
    assert "machine" not in page.inner_text("body").lower()
    judge_what_is_served(client, world)  # the budget spent, as the other tests do it
    page.goto(f"/a/{unit.token}/")
    page.wait_for_selector("body[data-ready=adhoc]")
    assert "budget of 6 judgements" in page.inner_text("#served-note")

    boss = new_page()
    sign_in(boss, "boss", "pw-boss")
    boss.goto(f"/campaigns/{world['campaign'].name}/dashboard/")
    bar = boss.locator("#chart-hybrid-budget")
    assert bar.is_visible() and bar.locator("svg rect").count() >= 1
    assert boss.inner_text("#hybrid-budget [data-role=left]") == "0"
    assert boss.inner_text("#hybrid-budget [data-role=spent]") == "6"
    whole_page_shot(boss, shot, "hybrid-dashboard")
    boss.goto(f"/campaigns/{world['campaign'].name}/results/")
    table = boss.locator("#hybrid-intervals table")
    assert table.is_visible() and table.locator("tbody tr").count() == 3
    low, high = boss.inner_text("#hybrid-intervals tr[data-run=run-0] [data-role=map-interval]").split("–")
    assert float(low) <= float(high)
    whole_page_shot(boss, shot, "hybrid-results")
