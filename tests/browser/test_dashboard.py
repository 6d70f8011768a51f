"""The organiser's dashboard in real Chromium: charts drawn, numbers a click away, nothing wider than the screen.

Screenshots are saved to /tmp/screens/ (and to POOLJUDGE_SCREENSHOTS when set).
"""

from pathlib import Path

import pytest

from tests.annotation.test_dashboard import judged_campaign

pytestmark = pytest.mark.django_db(transaction=True)
SCREENS = Path("/tmp/screens")


def sign_in(page, username, password):
    page.goto("/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_load_state()


def test_the_dashboard_draws_its_charts_and_shows_the_numbers_on_a_click(new_page, shot):
    judged_campaign()
    page = new_page(width=1400, height=900)
    sign_in(page, "org", "pw-org")
    page.click("text=dashboard")
    page.wait_for_selector("#chart-progress svg polyline")

    assert page.locator("figure.chart svg").count() >= 8
    bars = page.locator("#chart-per-assessor rect.bar")
    assert bars.count() == 3 and all(bars.nth(i).bounding_box()["width"] > 0 for i in range(3))
    assert page.locator("text=<i>cy</i>").count() >= 1  # the name shown as text, never as markup
    assert page.locator("i:text('cy')").count() == 0
    table = page.locator("#chart-active-time details table")
    assert not table.is_visible()
    page.click("#chart-active-time summary")
    assert table.is_visible() and "median s" in table.inner_text().lower()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")

    SCREENS.mkdir(parents=True, exist_ok=True)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(SCREENS / "dashboard-top.png"))
    page.screenshot(path=str(SCREENS / "dashboard.png"), full_page=True)
    page.locator("#agreement").scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENS / "dashboard-agreement.png"))
    shot(page, "dashboard", full_page=True)

    page.click("text=adjudication")
    page.wait_for_selector("#disagreements")
    page.screenshot(path=str(SCREENS / "adjudication.png"), full_page=True)


def test_an_assessor_sees_the_reviewers_remarks_on_the_batch_to_revise(new_page):
    judged_campaign()
    page = new_page(width=1200, height=800)
    sign_in(page, "<i>cy</i>", "pw-<i>cy</i>")
    remarks = page.locator(".review-remarks")
    assert remarks.count() == 1 and "passage" in remarks.inner_text() and "no" in remarks.inner_text()
    assert page.locator("tr.is-next .status-revise").count() == 1  # "Continue" goes to the batch to revise
    assert page.locator("text=dashboard").count() == 0  # no organiser links for an assessor
    assert "6 assignments for you, 5 done." in page.inner_text("main")
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS / "queue-revise.png"), full_page=True)
