"""In Chromium an organiser assigns a nuggets campaign at stage create from the work page's form (issue 30, item 3),
and the assessor's unit opens the nugget creation page."""

import pytest

from annotation.models import Assignment
from tests.annotation.nuggets_setup import nuggets_world
from tests.annotation.test_console_assign_stage import assessor
from tests.browser.console_steps import organiser_account, sign_in, sign_out

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_organiser_picks_the_creation_stage_on_the_work_page(new_page, shot):
    world = nuggets_world()
    assessor("writer")
    organiser_account()
    page = new_page()
    sign_in(page, "boss", "pw-boss")
    page.goto(f"/campaigns/{world['campaign'].name}/work/")
    assert page.is_checked("#assign-form input[name=stage][value=support]")
    page.check("#assign-form input[name=stage][value=create]")
    page.check("#assign-form input[name=assessors][value=writer]")
    page.fill("#id_overlap", "1")
    shot(page, "console-assign-stage")
    page.click("#assign")
    page.wait_for_selector("text=assignments new")
    unit = Assignment.objects.get(campaign=world["campaign"])
    assert unit.kind == Assignment.Kind.NUGGET_CREATION
    sign_out(page)

    sign_in(page, "writer", "pw-writer")
    page.goto(f"/a/{unit.token}/")
    page.wait_for_selector("body[data-ready]")
    assert page.get_attribute("body", "data-ready") == "nugget_bank"
