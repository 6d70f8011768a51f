"""In Chromium the organiser settles a citation two assessors disagree on (issue 29, items 5 and 8): the adjudication
page shows the sentence and the cited passage (its script shown as text, never run), not the run; the organiser
picks partial support, and that adjudicated label is the one the run's citation precision uses."""

import pytest

from assessments.evaluation.nuggets import nugget_scores
from assessments.models import Judgement, Layer
from tests.annotation.nuggets_setup import RUNS, SENTENCES
from tests.annotation.test_citation_adjudication import SCRIPT, citation_world
from tests.browser.console_steps import organiser_account, sign_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_organiser_sets_a_citations_final_label(new_page, shot):
    world = citation_world()
    campaign = world["campaign"]
    organiser_account()
    page = new_page()
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    sign_in(page, "boss", "pw-boss")
    page.goto(f"/campaigns/{campaign.name}/adjudication/?layer=citation_support")
    row = page.locator("tr.disagreement[data-layer=citation_support]")
    assert row.locator(".cited-sentence").inner_text() == SENTENCES[RUNS[0]][1][0]
    assert SCRIPT in row.locator(".cited-passage").inner_text()
    assert RUNS[0] not in page.content() and RUNS[1] not in page.content()
    row.locator("select[aria-label='final citation support']").select_option("partial")
    shot(page, "citation-adjudication", full_page=True)
    row.locator("button:has-text('Set final')").click()
    page.wait_for_selector(".messages")
    assert page.locator("tr.disagreement[data-layer=citation_support] .final").inner_text() == "partial support"
    final = Judgement.objects.get(layer=Layer.CITATION_SUPPORT, adjudicated=True)
    assert final.value == "partial" and final.passage == world["passage"] and final.item == world["item"]
    # sentence 0 full; sentence 1: the adjudicated pair partial, the other pair partial
    assert nugget_scores(campaign.pk)["runs"][RUNS[0]]["citation_precision"] == pytest.approx((1 + 0.5 + 0.5) / 3)
    assert dialogs == []
