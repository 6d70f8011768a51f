"""In Chromium an organiser makes pair-rating items from two runs on a pair campaign's pools page (issue 30, item 3);
the assessor's pair page then shows those pairs, and no run name reaches it."""

import pytest

from annotation.models import Assignment
from assessments.models import StudyItem
from tests import factories
from tests.assessments.test_ranked_pair_items import pair_campaign, world  # noqa: F401 - the fixture
from tests.browser.console_steps import organiser_account, sign_in, sign_out

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_organiser_makes_pairs_from_two_runs_and_the_assessor_rates_them_blind(new_page, world, shot):  # noqa: F811
    campaign = pair_campaign(world)
    organiser_account()
    page = new_page()
    sign_in(page, "boss", "pw-boss")
    page.goto(f"/campaigns/{campaign.name}/pools/")
    form = page.locator("#pool-plot-pool form.pair-form[data-sources=runs]")
    form.locator("select[name=first]").select_option(label="secret-alpha")
    form.locator("select[name=second]").select_option(label="secret-beta")
    form.locator("input[name=depth]").fill("4")
    shot(page, "console-pair-items")
    form.locator("button[type=submit]").click()
    page.wait_for_selector("text=2 pairs to rate made from the two runs")
    assert StudyItem.objects.filter(pool=world["pool"], kind=StudyItem.Kind.PAIR).count() == 2
    sign_out(page)

    unit = Assignment.objects.create(assessor=factories.user("rater"), topic=world["topic"], pool=world["pool"],
                                     campaign=campaign)
    sign_in(page, "rater", "pw-rater")
    page.goto(f"/a/{unit.token}/")
    page.wait_for_selector("body[data-ready=pair]")
    assert page.locator("section.study-item").count() == 2
    assert "secret" not in page.content()
