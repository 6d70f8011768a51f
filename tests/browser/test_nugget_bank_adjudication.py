"""In Chromium the organiser settles two assessors' nugget banks of a topic on the adjudication page: ticks a nugget
from each bank (the boxes sit in the banks' cell, the button in the final cell: the form attribute ties them), sets
one vital, and the ticked nuggets become the topic's bank (issue 29, item 8)."""

import pytest

from annotation.services.assignment import assign_campaign
from assessments.models import Layer
from assessments.services import nuggets
from assessments.services.judging import record_judgement
from tests import factories
from tests.annotation.nuggets_setup import nuggets_world
from tests.annotation.test_nugget_bank_adjudication import AMY, BEN
from tests.browser.console_steps import organiser_account, sign_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_organiser_merges_two_banks(new_page, shot):
    world = nuggets_world()
    campaign = world["campaign"]
    amy, ben = factories.user("amy"), factories.user("ben")
    assign_campaign(campaign, ["amy", "ben"], overlap=2, stage="create")
    topic = next(iter(nuggets.topic_banks(campaign.pk).values())).topic
    for who, bank in ((amy, AMY), (ben, BEN)):
        record_judgement(campaign_id=campaign.pk, assessor=who, layer=Layer.NUGGETS, value=bank, topic=topic)
    organiser_account()
    page = new_page()
    sign_in(page, "boss", "pw-boss")
    page.goto(f"/campaigns/{campaign.name}/adjudication/?layer=nuggets")
    page.wait_for_selector("tr.disagreement[data-layer=nuggets]")
    page.check("input[name=keep][value='amy/n2']")
    page.check("input[name=keep][value='ben/n2']")
    page.select_option("select[name='importance-ben/n2']", "vital")
    shot(page, "nugget-bank-adjudication", full_page=True)
    page.click("text=Set the ticked nuggets as the bank")
    page.wait_for_selector(".messages")
    bank = nuggets.topic_banks(campaign.pk)[topic.pk]
    assert bank.adjudicated
    assert [(n["text"], n["importance"]) for n in bank.value] == [(AMY[1]["text"], "vital"), (BEN[1]["text"], "vital")]
    assert page.is_visible("text=2 nuggets, 2 vital")
