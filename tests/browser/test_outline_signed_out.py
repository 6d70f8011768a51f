"""Signing out in another tab: the page keeps the changes, says so, and sends them once the assessor signs in again."""

import pytest

from annotation.models import Assignment
from assessments.models import Judgement, JudgementChange, Layer
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def assignment():
    coll = factories.collection("car")
    topic = factories.topic(coll, "tqa2:L_0001", title="Water", facets=[("tqa2:L_0001/T_1", "Droughts")])
    passages = [factories.passage(coll, f"{i:040x}", text=f"Passage {i}.") for i in range(1, 4)]
    run = factories.run(coll, "guir", {topic: passages})
    return Assignment.objects.create(assessor=factories.user("judge"), topic=topic, run=run)


def sign_in(page):
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "judge")
    page.fill("input[name=password]", "pw-judge")
    page.click("button[type=submit]")
    page.wait_for_selector("body[data-ready=home]")


def test_changes_made_while_signed_out_wait_and_are_sent_after_signing_in_again(new_page, assignment):
    page = new_page()
    sign_in(page)
    page.goto(f"/a/{assignment.token}/")
    page.wait_for_selector("body[data-ready=outline]")

    other_tab = page.context.new_page()
    other_tab.goto("/")
    other_tab.click("text=Sign out")
    other_tab.wait_for_selector("input[name=username]")

    page.keyboard.press("1")
    page.keyboard.press("m")
    page.wait_for_selector("#signed-out", state="visible")
    assert page.get_attribute("#savestate", "data-state") == "pending"
    assert not JudgementChange.objects.exists()

    sign_in(other_tab)
    page.wait_for_selector('#savestate[data-state="saved"]')
    assert page.is_hidden("#signed-out")
    assert JudgementChange.objects.count() == 1
    judgement = Judgement.objects.get(layer=Layer.FACET)
    assert judgement.value == [{"facet": "tqa2:L_0001/T_1", "relevance": "must"}]
