"""A campaign set to an adaptive judging order serves its candidates in that order in Chromium, and the organiser's
dashboard shows relevant found against judged and the stopping estimate change as the judgements arrive."""

import re

import pytest

from annotation.roles import Role, ensure_groups
from tests import factories
from tests.annotation import plot_setup as ps
from tests.annotation.test_judging_order import by_hand, world  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db(transaction=True)


def sign_in(page, username):
    page.goto("/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "pw-" + username)
    page.click("button[type=submit]")
    page.wait_for_load_state()


def shown(page):
    """The passage id of the candidate on screen, and how many the page holds."""
    page.wait_for_selector("body[data-ready=plot]")
    return int(page.get_attribute(".candidate:visible", "data-pid")), page.locator(".candidate").count()


def dashboard_row(page, campaign, topic):
    page.goto(f"/campaigns/{campaign.name}/dashboard/")
    row = page.locator(f"#stopping-table tr[data-topic='{topic.external_id}']")
    cells = {role: row.locator(f"[data-role={role}]").inner_text() for role in ("judged", "found", "remaining")}
    chart = page.locator(f"#chart-found-{topic.external_id}")
    points = chart.locator("polyline").get_attribute("points") if chart.locator("polyline").count() else ""
    return cells, points


def test_move_to_front_is_served_in_the_browser_and_the_dashboard_follows(new_page, world, shot):  # noqa: F811
    topic, pool, p, runs = world
    campaign = ps.campaign(name="plot-mtf", judging_order="mtf", target_recall=0.9)
    assignment = ps.assign(factories.user("judge"), topic, pool, campaign)
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(ensure_groups()[Role.ORGANISER])

    boss = new_page()
    sign_in(boss, "org")
    cells, points = dashboard_row(boss, campaign, topic)
    assert (cells["judged"], cells["found"]) == ("0", "0") and points == ""

    page = new_page()
    sign_in(page, "judge")
    page.goto(f"/a/{assignment.token}/")
    assert shown(page) == (p[0].pk, 1)  # run A's best: Move-to-Front's first
    assert page.text_content("#work-total") == "6"
    page.keyboard.press("0")  # not relevant: run A loses its turn
    with page.expect_navigation():
        page.keyboard.press("j")
    assert shown(page) == (p[1].pk, 2)  # run B's best
    cells, first_points = dashboard_row(boss, campaign, topic)
    assert (cells["judged"], cells["found"]) == ("1", "0") and cells["remaining"].startswith("–")  # no estimate yet

    page.keyboard.press("2")  # relevant: run B keeps the turn
    with page.expect_navigation():
        page.keyboard.press("j")
    assert shown(page) == (p[3].pk, 3) == (by_hand(runs, [(p[0], 0), (p[1], 2)], "mtf"), 3)  # depth would give p2
    assert page.locator(".candidate:visible .cand-title").inner_text() == "Candidate 3 of 6"
    shot(page, "judging-order-mtf")

    cells, second_points = dashboard_row(boss, campaign, topic)
    assert (cells["judged"], cells["found"]) == ("2", "1")
    assert re.fullmatch(r"\d+\.\d \(\d+\.\d–\d+\.\d\)", cells["remaining"])  # an estimate with its interval
    assert len(second_points.split()) == 2 and second_points != first_points
    shot(boss, "judging-order-dashboard", full_page=True)
