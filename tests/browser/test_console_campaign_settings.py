"""In Chromium an organiser changes a running campaign's overlap and grade scale on its home: the page first says
what the change does ("overlap 1 → 2 adds 2 units for 2 assessors (…)", "grade 2 … added"), nothing changes until
it is applied, and then the assignments and an assessor's judging page are as it said (issue 30, item 3)."""

import re

import pytest

from annotation.models import Assignment
from assessments.models import Judgement, Layer
from tests.annotation.test_campaign_settings import adhoc_campaign, grade, holders
from tests.browser.console_steps import organiser_account, sign_in, sign_out

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_organiser_raises_the_overlap_and_adds_a_grade_and_finds_both_as_the_form_said(new_page, shot):
    campaign, topics = adhoc_campaign()
    first = holders(campaign)
    grade(campaign, first["401"][0], topics[0], 1)  # work already done: it keeps its grade
    organiser_account()

    page = new_page()
    sign_in(page, "boss", "pw-boss")
    page.goto(f"/campaigns/{campaign.name}/")
    page.fill("#id_overlap", "2")
    page.fill("#id_grade_scale", "2 Highly relevant | Says it outright.\n1 Relevant\n0 Not relevant")
    page.click("#check-settings")
    # the preview is a new page (a form post): wait for its last line, never read the page the click left
    page.locator("#settings-effects li", has_text="overlap 1 → 2").wait_for()
    effects = page.locator("#settings-effects li").all_inner_texts()
    said = re.fullmatch(r"overlap 1 → 2 adds 2 units for 2 assessors \((\w+) 1, (\w+) 1\)", effects[-1])
    assert said, effects
    assert effects[0] == "grade 2 ('Highly relevant') added: assessors can give it from their next page"
    assert "1 label already given keeps its grade" in effects
    assert Assignment.objects.filter(campaign=campaign).count() == 2  # nothing changed yet
    shot(page, "campaign-settings-preview")
    page.click("#apply-settings")
    # the preview's own #settings-effects is a role=status too, so wait for the message the apply page shows
    page.get_by_text("Settings changed").first.wait_for()

    # the assignments are as the form said: each topic has two assessors, the new units went to those it named
    now = holders(campaign)
    assert all(len(users) == 2 for users in now.values())
    added = sorted(u for t in now for u in set(now[t]) - set(first[t]))
    assert added == sorted(said.groups())
    sign_out(page)

    # the judging page of a new unit offers the added grade, and a grade 2 is stored
    newcomer = said.group(1)
    unit = Assignment.objects.filter(campaign=campaign, assessor__username=newcomer).order_by("-id").first()
    judge = new_page()
    sign_in(judge, newcomer, f"pw-{newcomer}")
    judge.goto(f"/a/{unit.token}/")
    judge.wait_for_selector("body[data-ready=adhoc]")
    buttons = judge.locator(".adhoc-grades .grade.answer:visible")
    assert buttons.evaluate_all("bs => bs.map(b => b.dataset.value)") == ["2", "1", "0"]
    assert "Highly relevant" in buttons.first.inner_text()
    judge.keyboard.press("2")
    judge.wait_for_selector("#savestate[data-state=saved]")
    shot(judge, "campaign-settings-new-grade")
    stored = Judgement.objects.get(layer=Layer.GRADE, assessor__username=newcomer, topic=unit.topic)
    assert stored.value == 2 and stored.campaign_id == campaign.pk
