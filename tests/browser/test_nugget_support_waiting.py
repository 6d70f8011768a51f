"""A nugget support unit that waits for its topic's nugget bank, in Chromium at 1300x800 (the demo's cranfield-rag
shape, as assessor2 saw it): the queue lists it as waiting, never as the one to continue with; its page says first,
inside the first viewport, that there is nothing to do yet, which step it waits on and when it opens; it offers no
labelling keys, no count of nuggets, and as "next" only a unit that is ready (Shift N goes there); nothing of the
bank being written, no writer's name and no run name reaches the assessor. Once the writer marks the bank done
(through the service layer) a reload makes the page judgeable."""

import pytest

from annotation.models import Assignment
from annotation.services import changes
from annotation.services.assignment import assign_campaign
from assessments.models import Judgement, JudgementChange, Layer
from assessments.services.judging import record_judgement
from tests import factories
from tests.annotation.nuggets_setup import RUNS, nuggets_world
from tests.browser.console_steps import sign_in

pytestmark = pytest.mark.django_db(transaction=True)

WIDTH, HEIGHT = 1300, 800
BANK = [{"id": "n1", "text": "Draft nugget about indirect exposure", "importance": "vital", "origin": "assessor"},
        {"id": "n2", "text": "Draft nugget about supervision", "importance": "okay", "origin": "assessor"}]


def in_first_viewport(page, selector):
    box = page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= HEIGHT


def test_a_waiting_unit_says_so_first_offers_only_a_ready_next_unit_and_opens_once_the_bank_is_done(new_page, shot):
    world = nuggets_world(bank=False)
    campaign = world["campaign"]
    writer, judge = factories.user("bankwriter"), factories.user("judge")
    assign_campaign(campaign, ["bankwriter"], stage="create")
    assign_campaign(campaign, ["judge"], stage="support")
    assign_campaign(campaign, ["judge"], stage="citations")  # citation units do not wait: they are ready now
    creation = Assignment.objects.get(campaign=campaign, assessor=writer)
    topic = creation.topic
    # The writer's bank, saved but not marked done: not yet the topic's bank, and not for the judge's eyes.
    record_judgement(campaign_id=campaign.pk, assessor=writer, layer=Layer.NUGGETS, value=BANK, topic=topic,
                     source=JudgementChange.Source.WEB)
    waiting = Assignment.objects.filter(assessor=judge, kind=Assignment.Kind.NUGGET_SUPPORT).order_by("position", "pk")
    unit = waiting.first()
    ready = Assignment.objects.filter(assessor=judge, kind=Assignment.Kind.CITATION_SUPPORT).order_by(
        "position", "pk").first()

    page = new_page(WIDTH, HEIGHT)
    sign_in(page, "judge", "pw-judge")
    page.goto("/?queue")
    page.wait_for_selector("body[data-ready=home]")
    rows = page.locator("tr.is-waiting")
    assert rows.count() == waiting.count() == 2
    for i in range(rows.count()):
        row = rows.nth(i)
        assert row.locator(".status").inner_text() == "Waiting"
        # The row says there is nothing to do yet and which step it waits on, in the page's words (waiting_on).
        assert "Nothing to label yet: waits for the topic's nuggets." in row.inner_text()
        assert row.locator(".waiting-why").inner_text() == "The topic's nugget writer has not finished the bank yet."
        assert row.locator("td.num").nth(1).inner_text().strip() == "–"  # no "0" items to do
        assert row.locator(".meter").count() == 0
        # Its link stays reachable by keyboard, and a screen reader hears what it leads to.
        link = row.locator("a[href^='/a/']")
        described = link.get_attribute("aria-describedby")
        assert described and "Nothing to label yet" in page.locator(f"#{described}").inner_text()
        assert link.evaluate("a => a.tabIndex") == 0
    assert page.locator("tr.is-next.is-waiting").count() == 0
    assert page.locator("#next-link").get_attribute("href") == f"/a/{ready.token}/"
    html = page.content()
    assert not any(run in html for run in RUNS) and "bankwriter" not in html
    assert not any(n["text"] in html for n in BANK)
    shot(page, "queue-nugget-support-waiting")
    # Tab reaches a waiting row's link, and Enter opens its page (which says what it waits on and when it opens).
    page.locator(f"a[href='/a/{unit.token}/']").focus()
    page.wait_for_function("() => document.activeElement && document.activeElement.tagName === 'A'")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/a/{unit.token}/")
    page.wait_for_selector("body[data-ready=nuggets]")
    assert page.locator("#waiting-why").inner_text().startswith(
        "The topic's nugget writer has not finished the bank yet.")

    page.goto(f"/a/{unit.token}/")
    page.wait_for_selector("body[data-ready=nuggets]")
    shot(page, "nugget-support-waiting")
    # Nothing to do, why, and when: at the top, inside the first viewport.
    assert in_first_viewport(page, "#waiting-note") and in_first_viewport(page, "#waiting-head")
    assert page.locator("#waiting-head").inner_text() == "Not ready: this unit waits for the topic's nuggets"
    assert "nugget writer has not finished the bank yet" in page.locator("#waiting-why").inner_text()
    assert "It opens as soon as the writer marks the bank done" in page.locator("#waiting-when").inner_text()
    assert page.locator("#waiting-note").evaluate(
        "n => n.compareDocumentPosition(document.getElementById('answer-head')) & Node.DOCUMENT_POSITION_FOLLOWING")
    # No labelling keys, no count of nuggets, no progress, nothing to mark.
    assert page.locator(".nugget, button.answer, #mark-done, #status-badge").count() == 0
    side = page.locator("aside.side").inner_text()
    assert "nugget" not in side.lower().replace("nuggets are settled", "")  # no "0 nuggets", no "next nugget"
    assert "Support" not in side and "Shift D" not in side and "Shift R" not in side
    assert page.locator("#waiting-badge").inner_text() == "Waiting" and not page.locator("#progress").is_visible()
    # "Next" is the next ready unit, never the /next/ hop, another waiting unit or this page.
    assert page.locator("#next-ready").get_attribute("href") == f"/a/{ready.token}/"
    assert page.locator("#next-assignment").get_attribute("href") == f"/a/{ready.token}/"
    html = page.content()
    assert "/next/" not in html and not any(f"/a/{u.token}/" in html for u in waiting if u != unit)
    assert not any(run in html for run in RUNS) and "bankwriter" not in html
    assert not any(n["text"] in html for n in BANK)  # the bank being written stays with its writer
    page.keyboard.press("s")  # a labelling key does nothing
    page.keyboard.press("Shift+N")
    page.wait_for_url(f"**/a/{ready.token}/")
    page.wait_for_selector("body[data-ready=citations]")

    # The writer marks the bank done (the save path's mark): the topic's bank is settled; a reload opens the unit.
    changes.mark(Assignment.objects.get(pk=creation.pk))
    page.goto(f"/a/{unit.token}/")
    page.wait_for_selector("body[data-ready=nuggets]")
    assert page.locator("#waiting-note").count() == 0
    assert page.locator(".nugget").count() == len(BANK) and page.locator("#status-badge").inner_text() == "To do"
    assert page.locator("#progress").is_visible() and page.locator("#work-total").inner_text() == str(len(BANK))
    assert page.locator("#next-assignment .next-label").inner_text() == "Next assignment"
    page.keyboard.press("s")  # the first nugget: supported
    page.wait_for_function("() => document.getElementById('work-done').textContent === '1'")
    page.wait_for_selector("#savestate[data-state=saved]")
    page.wait_for_function("() => document.getElementById('status-badge').textContent === 'In progress'")
    stored = Judgement.objects.get(layer=Layer.NUGGET_SUPPORT, assessor=judge)
    assert stored.value == "support" and stored.item.endswith(":n1")
    assert page.locator(".nugget.is-current").get_attribute("data-n") == "1"  # a label keeps the page on its nugget
    assert "j moves on" in page.locator("#label-stays").inner_text()
    page.keyboard.press("j")
    page.wait_for_selector(".nugget.is-current[data-n='2']")
    page.keyboard.press("s")  # the second: the unit is complete, hence done
    page.wait_for_function("() => document.getElementById('status-badge').textContent === 'Done'")
    page.wait_for_selector("#savestate[data-state=saved]")
    assert Assignment.objects.get(pk=unit.pk).status == Assignment.Status.DONE

    # The writer reopens the bank: the unit waits again, and the queue says so as its page does (it said Done).
    changes.reopen(Assignment.objects.get(pk=creation.pk))
    page.goto("/?queue")
    page.wait_for_selector("body[data-ready=home]")
    row = page.locator(f"tr:has(a[href='/a/{unit.token}/'])")
    assert row.locator(".status").inner_text() == "Waiting" and "is-waiting" in row.get_attribute("class")
    assert "is-done" not in row.get_attribute("class") and row.locator(".status-done").count() == 0
    assert "0 done" in page.locator(".queue-head p.muted").first.inner_text()
    page.goto(f"/a/{unit.token}/")
    page.wait_for_selector("body[data-ready=nuggets]")
    assert page.locator("#waiting-badge").inner_text() == "Waiting" and page.locator("#done-banner").is_hidden()
