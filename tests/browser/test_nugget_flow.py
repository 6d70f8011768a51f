"""Issue 29's done-when flow in Chromium: a participant uploads two runs' answers through the API with their token;
one assessor writes the topic's nuggets from the keyboard and marks the bank done; a second assessor, whose units
were assigned before the bank existed, first finds them waiting for the topic's nuggets (listed, not next, their page
taking no label), then labels both answers against those nuggets from the keyboard; the organiser's results page shows each run's five nugget scores
equal to a hand computation written here. No run name reaches either assessor's pages."""

import pytest

from annotation.models import Assignment
from annotation.services.assignment import assign_campaign
from annotation.services.campaigns import create_campaign
from annotation.services.tokens import issue_token
from assessments.models import Answer, Judgement, Layer, Topic
from retrieval.models import Collection
from tests import factories
from tests.annotation.nuggets_setup import DOCS, QUERY, REFERENCES, RUNS, SENTENCES, TOPIC
from tests.assessments.test_nuggets import answer
from tests.browser.console_steps import organiser_account, sign_in, sign_out, whole_page_shot

pytestmark = pytest.mark.django_db(transaction=True)

BANK = [("Vicarious trauma is indirect exposure to trauma", "vital"), ("Self-care helps people cope", "vital"),
        ("Therapists are most at risk", "okay")]
KEYS = {RUNS[0]: "spn", RUNS[1]: "nns"}  # the second assessor's keys for the three nuggets, in bank order
# By hand over the bank (vital, vital, okay): support 1, partial 0.5 (0 when strict); weighted: vital 1, okay 0.5.
EXPECTED = {  # all, vital, strict_all, strict_vital, weighted
    RUNS[0]: [(1 + 0.5 + 0) / 3, (1 + 0.5) / 2, (1 + 0 + 0) / 3, (1 + 0) / 2, (1 + 0.5 + 0) / 2.5],
    RUNS[1]: [(0 + 0 + 1) / 3, 0.0, (0 + 0 + 1) / 3, 0.0, (0 + 0 + 0.5) / 2.5],
}


def upload(page, key, run):
    """POST one run's answers file to the campaign's answers endpoint, as a participant's script would."""
    body = (answer(run, TOPIC, REFERENCES[run], *SENTENCES[run], topic=QUERY) + "\n").encode()
    return page.request.post("/api/campaigns/rag-flow/answers/", headers={"Authorization": f"Token {key}"},
                             multipart={"file": {"name": f"{run}.jsonl", "mimeType": "application/jsonl",
                                                 "buffer": body}})


def test_answers_in_by_the_api_nuggets_written_and_assigned_by_keyboard_scores_out(new_page, shot):
    coll = factories.collection("msmarco-flow", kind=Collection.Kind.DOCUMENTS)
    factories.topic(coll, TOPIC, kind=Topic.Kind.ADHOC, title=QUERY)
    for docid, title, text in DOCS:
        factories.passage(coll, docid, text=text, title=title)
    campaign = create_campaign(name="rag-flow", task="nuggets", topics=[TOPIC])
    key = issue_token(username="team-rag", role="participant", campaign="rag-flow")[1]
    factories.user("writer")
    factories.user("judge")
    page = new_page()

    for run in RUNS:  # the participant's two runs
        response = upload(page, key, run)
        assert response.status == 201, response.text()
        assert response.json()["runs"] == [run]
    assert Answer.objects.filter(campaign_id=campaign.pk).count() == 2

    assign_campaign(campaign, ["writer"], stage="create")  # the organiser: the topic's bank to write
    assign_campaign(campaign, ["judge"], stage="support")  # and the answers to label, before the bank exists
    assert set(Assignment.objects.filter(kind=Assignment.Kind.NUGGET_SUPPORT)
               .values_list("assessor__username", flat=True)) == {"judge"}
    sign_in(page, "judge", "pw-judge")  # nothing to do yet: both units wait for the topic's nuggets
    page.wait_for_selector("body[data-ready=home]")
    assert page.locator(".queue-table .status-waiting").count() == 2 and page.locator("#next-link").count() == 0
    waiting = Assignment.objects.filter(kind=Assignment.Kind.NUGGET_SUPPORT).first()
    page.goto(f"/a/{waiting.token}/")
    page.wait_for_selector("body[data-ready=nuggets]")
    assert page.locator("#waiting-note").is_visible() and page.locator(".nugget").count() == 0
    page.keyboard.press("s")
    assert page.locator("#mark-done").count() == 0
    sign_out(page)
    assert not Judgement.objects.filter(layer=Layer.NUGGET_SUPPORT).exists()  # the key stored nothing

    sign_in(page, "writer", "pw-writer")
    page.wait_for_selector("body[data-ready=home]")
    kb = page.keyboard
    kb.press("N")
    page.wait_for_selector("body[data-ready=nugget_bank]")
    assert "secretrun" not in page.content()
    for text, importance in BANK:
        kb.press("a")
        kb.type(text)
        kb.press("Enter")
        if importance == "vital":
            kb.press("v")  # the new nugget is the current one
    page.wait_for_selector("#savestate[data-state=saved]")
    assert page.locator("#bank-list .nugget-text").all_inner_texts() == [t for t, _ in BANK]
    kb.press("Shift+D")
    page.wait_for_selector("#status-badge.status-done")
    sign_out(page)

    sign_in(page, "judge", "pw-judge")  # the bank is done: the units are served
    page.wait_for_selector("body[data-ready=home]")
    kb.press("N")
    for _ in RUNS:
        page.wait_for_selector("body[data-ready=nuggets]")
        assert "secretrun" not in page.content()
        assert page.locator(".nugget .nugget-text").all_inner_texts() == [t for t, _ in BANK]
        token = page.url.rstrip("/").split("/")[-1]
        run = Assignment.objects.get(token=token).run.name
        for k in KEYS[run]:
            kb.press(k)
            kb.press("j")  # a label keeps the page on its nugget: j moves on
        page.wait_for_selector("#savestate[data-state=saved]")
        page.wait_for_function("() => document.getElementById('status-badge').textContent.toLowerCase().includes('done')")
        kb.press("N")
        page.wait_for_url(lambda url, token=token: token not in url)
    page.wait_for_selector("body[data-ready=home]")
    sign_out(page)

    organiser_account()
    sign_in(page, "boss", "pw-boss")
    page.goto(f"/campaigns/{campaign.name}/results/")
    rows = page.locator("#nugget-scores-table tbody tr")
    shown = {rows.nth(i).locator("td").first.inner_text(): rows.nth(i).locator("td.num").all_inner_texts()
             for i in range(rows.count())}
    assert shown == {run: [f"{v:.4f}" for v in EXPECTED[run]] for run in RUNS}
    whole_page_shot(page, shot, "nugget-flow-results")
