"""The data browser in real Chromium on a campaign of many labels: filter by assessor and disagreement, page on,
open an item and read its history.

The campaign has POOLJUDGE_BROWSE_LABELS labels (default 20,000; the issue's 100,000 runs by hand with
POOLJUDGE_BROWSE_LABELS=100000), made in bulk as benchmarks/scale.py makes them: four assessors label every passage
of ten topics; amy disagrees with the others on every tenth passage, where she first agreed (two changes).
"""

import os
import time
from datetime import UTC, datetime, timedelta

import pytest

from annotation.models import Assignment, Campaign, CampaignTopic
from annotation.roles import Role, ensure_groups
from assessments.models import Facet, Judgement, JudgementChange, Layer, Run, Topic
from retrieval.models import Collection, Passage
from tests import factories
from tests.browser.test_dashboard import sign_in

pytestmark = pytest.mark.django_db(transaction=True)
LABELS = int(os.environ.get("POOLJUDGE_BROWSE_LABELS", "20000"))
TOPICS, ASSESSORS = 10, ("amy", "ben", "cy", "dee")


def big_campaign(total):
    """A campaign of `total` facet labels (ten topics, four assessors) with their changes, written in bulk."""
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(ensure_groups()[Role.ORGANISER])
    people = [factories.user(name) for name in ASSESSORS]
    collection = Collection.objects.create(name="big", kind=Collection.Kind.PASSAGES)
    campaign = Campaign.objects.create(name="big", task=Campaign.Task.OUTLINE)
    topics = Topic.objects.bulk_create(Topic(collection=collection, external_id=f"tqa2:L_{t:04d}", title=f"Topic {t}",
                                             kind=Topic.Kind.OUTLINE) for t in range(TOPICS))
    CampaignTopic.objects.bulk_create(CampaignTopic(campaign=campaign, topic=t) for t in topics)
    Facet.objects.bulk_create(Facet(topic=t, heading_id=f"{t.external_id}/H1", heading="History", position=1)
                              for t in topics)
    run = Run.objects.create(collection=collection, name="guir")
    Assignment.objects.bulk_create(
        Assignment(campaign=campaign, assessor=p, topic=t, run=run, kind=Assignment.Kind.OUTLINE, token=f"{p.pk}-{t.pk}",
                   status=Assignment.Status.DONE, seed=1) for p in people for t in topics)
    per_topic = total // (TOPICS * len(people))
    passages = Passage.objects.bulk_create(
        (Passage(collection=collection, external_id=f"{t:02d}{i:06d}", text=f"Passage {i} of topic {t}: " + "words " * 20)
         for t in range(TOPICS) for i in range(per_topic)), batch_size=5000)
    start = datetime(2024, 5, 1, tzinfo=UTC)
    judgements, values = [], []
    for t, topic in enumerate(topics):
        facet = f"{topic.external_id}/H1"
        for i in range(per_topic):
            passage = passages[t * per_topic + i]
            for person in people:
                grade = "can" if person.username == "amy" and i % 10 == 0 else "must"
                value = [{"facet": facet, "relevance": grade}]
                moment = start + timedelta(seconds=len(judgements))
                judgements.append(Judgement(
                    assessor=person, layer=Layer.FACET, topic=topic, passage=passage, campaign_id=campaign.pk,
                    key=Judgement.make_key(Layer.FACET, topic.pk, passage.pk, campaign_id=campaign.pk), value=value,
                    grade=1 if grade == "can" else 3, run_ids=[run.name], client_time=moment, client_seq=1))
                values.append(value)
    Judgement.objects.bulk_create(judgements, batch_size=5000)
    changes = []
    for judgement, value in zip(judgements, values):
        if value[0]["relevance"] == "can":  # amy agreed first, then changed her mind
            changes.append(JudgementChange(
                judgement=judgement, assessor_id=judgement.assessor_id, layer=Layer.FACET, session_id="tab-1",
                value=[{"facet": value[0]["facet"], "relevance": "must"}], run_ids=[run.name], client_seq=0,
                client_time=judgement.client_time - timedelta(seconds=30), active_ms=4000))
        changes.append(JudgementChange(
            judgement=judgement, assessor_id=judgement.assessor_id, layer=Layer.FACET, value=value, session_id="tab-1",
            run_ids=[run.name], client_time=judgement.client_time, client_seq=1, active_ms=2500))
    JudgementChange.objects.bulk_create(changes, batch_size=5000)
    return campaign


def test_the_browser_filters_by_assessor_and_disagreement_and_opens_an_items_history(new_page, shot):
    started = time.perf_counter()
    campaign = big_campaign(LABELS)
    print(f"\n{Judgement.objects.in_campaign(campaign).count():,} labels made in {time.perf_counter() - started:.1f} s")
    page = new_page(width=1400, height=900)
    sign_in(page, "org", "pw-org")
    page.goto(f"/campaigns/{campaign.name}/")
    with page.expect_navigation():  # to the page's load: a table seen half parsed has fewer rows
        page.click("text=Browse labels")
    assert page.locator("#browse-table tbody tr").count() == 50

    page.select_option("#f-assessor", "amy")
    page.check("#f-disagreement")
    started = time.perf_counter()
    with page.expect_navigation():  # the page before had a #browse-table too: wait for the new one's load
        page.click("#browse-apply")
    print(f"assessor + disagreement: {time.perf_counter() - started:.2f} s in the browser")
    assessors = page.locator("#browse-table tbody tr td:nth-child(3)").all_inner_texts()
    assert assessors == ["amy"] * 50
    assert all("CAN" in label for label in page.locator("#browse-table tbody tr td:nth-child(5)").all_inner_texts())
    assert "assessor=amy" in page.url and "disagreement=1" in page.url
    shot(page, "console-data-browser")

    with page.expect_navigation():
        page.click("#browse-next")
    page.wait_for_selector("#browse-previous")
    second = page.locator("#browse-table tbody tr").first.get_attribute("data-id")
    assert page.locator("#browse-table tbody tr td:nth-child(3)").all_inner_texts() == ["amy"] * 50

    with page.expect_navigation():
        page.locator("#browse-table tbody tr").first.locator("a.open-item").click()
    page.wait_for_selector("#item-history")
    labels = page.locator("#item-labels tbody tr")
    assert labels.count() == 4  # every assessor's label of the item
    history = page.locator("#item-history tbody tr").all_inner_texts()
    amy = [row for row in history if row.startswith("amy")]
    assert len(amy) == 2 and "H1 MUST → H1 CAN" in amy[1] and "(none) → H1 MUST" in amy[0]
    assert "Assessor page" in amy[1] and "tab-1" in amy[1] and "guir" in amy[1]
    shot(page, "console-data-browser-item", full_page=True)
    assert Judgement.objects.filter(pk=second).exists()

    with page.expect_navigation():
        page.click("text=← Data of big")
    assert page.locator("#f-assessor").input_value() == "amy" and page.is_checked("#f-disagreement")
