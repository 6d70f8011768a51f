"""An assessor writes a topic's nugget bank in Chromium from the keyboard: starts from the imported bank, adds two
nuggets, marks one vital, moves it up, edits a text, takes one out; a reload shows the bank as saved, and it is
the topic's bank (issue 29, part 2); the unit is done when the assessor marks it done (Shift D), not before."""

import pytest

from annotation.models import Assignment
from annotation.services.assignment import assign_campaign
from assessments.services import nuggets
from tests import factories
from tests.annotation.nuggets_setup import BANK, nuggets_world
from tests.browser.console_steps import sign_in, whole_page_shot

pytestmark = pytest.mark.django_db(transaction=True)


def texts(page):
    return page.locator("#bank-list .nugget-text").all_inner_texts()


def test_an_assessor_writes_a_bank_from_the_keyboard(new_page, shot):
    factories.user("writer")
    world = nuggets_world()
    assign_campaign(world["campaign"], ["writer"], stage="create")
    unit = Assignment.objects.get(assessor__username="writer")
    page = new_page()
    sign_in(page, "writer", "pw-writer")
    page.wait_for_selector("body[data-ready=home]")
    page.keyboard.press("N")
    page.wait_for_selector("body[data-ready=nugget_bank]")
    assert texts(page) == [t for t, _ in BANK]
    kb = page.keyboard
    kb.press("a")
    kb.type("Peer support helps")
    kb.press("Enter")
    kb.press("a")
    kb.type("Burnout is a related risk")
    kb.press("Enter")
    kb.press("v")  # the new one (current) is vital
    kb.press("Shift+ArrowUp")  # above "Peer support helps"
    kb.press("k")
    kb.press("k")  # "Supervision helps"
    kb.press("e")
    page.fill("#nugget-text", "Supervision helps a lot")
    kb.press("Enter")
    kb.press("j")  # "It affects therapists"
    kb.press("x")
    page.wait_for_selector("#savestate[data-state=saved]")
    expected = [BANK[0][0], BANK[1][0], "Supervision helps a lot", "Burnout is a related risk", "Peer support helps"]
    assert texts(page) == expected
    whole_page_shot(page, shot, "nugget-creation-page")
    page.reload()
    page.wait_for_selector("body[data-ready=nugget_bank]")
    assert texts(page) == expected
    bank = nuggets.topic_banks(world["campaign"].pk)[unit.topic_id].value
    assert [n["text"] for n in bank] == expected
    assert [n["importance"] for n in bank] == ["vital", "vital", "okay", "vital", "okay"]
    assert [n["id"] for n in bank][:3] == [n["id"] for n in world["bank"]][:3]  # ids kept through edits
    assert Assignment.objects.get(pk=unit.pk).status == Assignment.Status.IN_PROGRESS  # saves never make it done
    kb.press("Shift+D")  # the bank holds vital nuggets: marked done without a question
    page.wait_for_selector("#status-badge.status-done")
    assert page.is_visible("#done-banner") and page.locator("#ask").count() == 0
    assert Assignment.objects.get(pk=unit.pk).status == Assignment.Status.DONE
