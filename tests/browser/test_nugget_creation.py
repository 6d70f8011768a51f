"""An assessor writes a topic's nugget bank in Chromium from the keyboard: starts from the imported bank, adds two
nuggets, marks one vital, moves it up, edits a text, takes one out; a reload shows the bank as saved, and it is
the topic's bank (issue 29, part 2); the unit is done when the assessor marks it done (Shift D), not before."""

import pytest

from annotation.models import Assignment
from annotation.services.assignment import assign_campaign
from assessments.models import Layer
from assessments.services import nuggets
from assessments.services.judging import record_judgement
from tests import factories
from tests.annotation.nuggets_setup import BANK, nuggets_world
from tests.browser.console_steps import sign_in, whole_page_shot

pytestmark = pytest.mark.django_db(transaction=True)


def texts(page):
    return page.locator("#bank-list .nugget-text").all_inner_texts()


def writer_world():
    """nuggets_world assigned at stage create to "writer": (the world, their unit)."""
    factories.user("writer")
    world = nuggets_world()
    assign_campaign(world["campaign"], ["writer"], stage="create")
    return world, Assignment.objects.get(assessor__username="writer")


def bank_page(new_page):
    """The writer signed in, on their bank's page (N from home)."""
    page = new_page()
    sign_in(page, "writer", "pw-writer")
    page.wait_for_selector("body[data-ready=home]")
    page.keyboard.press("N")
    page.wait_for_selector("body[data-ready=nugget_bank]")
    return page


def test_an_assessor_writes_a_bank_from_the_keyboard(new_page, shot):
    world, unit = writer_world()
    page = bank_page(new_page)
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


def test_a_nugget_added_after_one_is_taken_out_takes_a_new_id(new_page):
    """A support label names "It affects therapists" (n4). Taken out and a nugget added: the page gave the new one
    n4 (picked among its bank's ids only), so n4's label would count for the new text; the server names the ids in
    use, the page takes n5 and the save is taken."""
    world, unit = writer_world()
    alpha = world["answers"]["secretrun-alpha"]
    record_judgement(assessor=factories.user("judge"), layer=Layer.NUGGET_SUPPORT, value=nuggets.SUPPORT,
                     topic=unit.topic, item=nuggets.support_item(alpha.pk, "n4"), campaign_id=world["campaign"].pk)
    page = bank_page(new_page)
    kb = page.keyboard
    for _ in range(3):
        kb.press("j")  # "It affects therapists"
    kb.press("x")
    kb.press("a")
    kb.type("Burnout is a different thing")
    kb.press("Enter")
    page.wait_for_selector("#savestate[data-state=saved]")
    assert "Not saved" not in page.inner_text("#hint")
    assert page.locator("#bank-list li.nugget").last.get_attribute("data-id") == "n5"
    bank = nuggets.topic_banks(world["campaign"].pk)[unit.topic_id].value
    assert [(n["id"], n["text"]) for n in bank][3:] == [("n5", "Burnout is a different thing")]


def test_an_edit_on_a_bank_another_device_changed_since_is_refused_and_says_so(new_page):
    """Issue 38 item 9: the page's save is based on the bank's version it saw; another device saved since (not a tab
    of this browser, which would have told this one): refused with a 409 that the page shows, nothing dropped."""
    import uuid

    from django.utils import timezone

    from assessments.models import Judgement

    world, unit = writer_world()
    page = bank_page(new_page)
    elsewhere = [{"id": "n9", "text": "Written on a laptop", "importance": "vital", "origin": "assessor"}]
    record_judgement(assessor=unit.assessor, layer=Layer.NUGGETS, topic=unit.topic, value=elsewhere,
                     campaign_id=world["campaign"].pk, change_id=uuid.uuid4(), client_time=timezone.now())
    page.keyboard.press("a")
    page.keyboard.type("Written in this tab")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('hint').textContent.includes('changed elsewhere')")
    mine = Judgement.objects.get(layer=Layer.NUGGETS, assessor=unit.assessor, adjudicated=False)
    assert [n["text"] for n in mine.value] == ["Written on a laptop"]
