"""The LLM's nugget suggestions on the creation page, in Chromium (issue 29, item 3): made by `llm_nuggets suggest`
against the loopback OpenAI-compatible server, they are absent from the page (and its data) while the campaign's
setting nugget_suggestions is off, and shown once it is on; the assessor takes one from the keyboard (t), edits
it, and the saved bank keeps it as origin machine with the suggestion as it came beside the edited text."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Assignment, Campaign
from annotation.services.assignment import assign_campaign
from annotation.services.campaign_settings import change_settings
from assessments.services import nuggets
from tests import factories
from tests.annotation.nuggets_setup import BANK, nuggets_world
from tests.assessments.test_llm_judge import judge_settings, server  # noqa: F401 — the loopback LLM and its settings
from tests.browser.console_steps import sign_in, whole_page_shot

pytestmark = pytest.mark.django_db(transaction=True)

SUGGESTED = [{"text": "Vicarious trauma is secondhand trauma", "importance": "vital"},
             {"text": "Peer support helps helpers", "importance": "okay"}]


@pytest.fixture
def suggested(server):  # noqa: F811
    factories.user("writer")
    world = nuggets_world()
    assign_campaign(world["campaign"], ["writer"], stage="create")
    server.answer = lambda prompt: json.dumps(SUGGESTED)
    call_command("llm_nuggets", "suggest", "--campaign", world["campaign"].name, "--endpoint", server.url,
                 "--model", "nugget-7b", "--no-progress", stdout=StringIO())
    return world


def open_bank(new_page):
    page = new_page()
    sign_in(page, "writer", "pw-writer")
    page.wait_for_selector("body[data-ready=home]")
    page.keyboard.press("N")
    page.wait_for_selector("body[data-ready=nugget_bank]")
    return page


def test_suggestions_are_absent_while_the_campaign_has_them_off(new_page, suggested):
    page = open_bank(new_page)

    assert page.locator("#suggestions").count() == 0
    html = page.content()
    assert SUGGESTED[0]["text"] not in html and SUGGESTED[1]["text"] not in html
    assert "suggestions" not in json.loads(page.locator("#nugget-bank-data").text_content())
    page.keyboard.press("t")  # no suggestion to take: the bank is unchanged
    assert page.locator("#bank-list .nugget-text").all_inner_texts() == [t for t, _ in BANK]


def test_the_assessor_takes_a_suggestion_edits_it_and_the_bank_keeps_what_was_suggested(new_page, shot, suggested):
    campaign = suggested["campaign"]
    preview = change_settings(campaign, nugget_suggestions=True)
    assert change_settings(Campaign.objects.get(pk=campaign.pk), nugget_suggestions=True,
                           confirm=preview.digest).applied
    page = open_bank(new_page)

    assert page.locator("#suggestion-list .nugget-text").all_inner_texts() == [s["text"] for s in SUGGESTED]
    kb = page.keyboard
    kb.press("t")  # the first suggestion into the bank, as the current nugget
    page.wait_for_selector("#suggestion-1.is-taken")
    kb.press("e")
    page.fill("#nugget-text", "Vicarious trauma is secondhand exposure to trauma")
    kb.press("Enter")
    page.wait_for_selector("#savestate[data-state=saved]")
    assert page.locator("#bank-list .origin-machine").all_inner_texts() == ["suggested, edited"]
    assert not page.locator("#suggestion-2").get_attribute("class").endswith("is-taken")
    whole_page_shot(page, shot, "nugget-creation-suggestions")
    page.reload()
    page.wait_for_selector("body[data-ready=nugget_bank]")
    assert page.locator("#suggestion-1.is-taken").count() == 1

    unit = Assignment.objects.get(assessor__username="writer")
    bank = nuggets.topic_banks(campaign.pk)[unit.topic_id].value
    assert [n["origin"] for n in bank] == ["imported"] * len(BANK) + ["machine"]
    assert bank[-1]["text"] == "Vicarious trauma is secondhand exposure to trauma"
    assert bank[-1]["suggested"] == SUGGESTED[0] and bank[-1]["importance"] == "vital"
