"""The new-campaign form in Chromium: the fields that apply are shown, and topics are picked from a searchable list."""

import pytest

from annotation.models import Campaign
from assessments.models import Topic
from retrieval.models import Collection
from tests import factories
from tests.browser.console_steps import organiser_account, sign_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_topics_are_searched_ticked_and_become_the_campaigns(new_page):
    organiser_account()
    web = factories.collection("web", kind=Collection.Kind.DOCUMENTS)
    for qid, title in (("301", "Dogs in winter"), ("302", "Sled dogs"), ("303", "Cats")):
        factories.topic(web, qid, kind=Topic.Kind.ADHOC, title=title)
    other = factories.collection("other", kind=Collection.Kind.DOCUMENTS)
    factories.topic(other, "9", kind=Topic.Kind.ADHOC, title="Dogs elsewhere")
    page = new_page()
    sign_in(page, "boss", "pw-boss")
    page.goto("/campaigns/new/")
    page.wait_for_selector("body[data-ready=console]")
    assert page.is_hidden("#plot-settings") and page.is_hidden("#field-topic_file")  # outline, every topic
    page.select_option("#id_task", "plot")
    assert page.is_visible("#plot-settings")
    page.select_option("#id_task", "adhoc")
    page.fill("#id_name", "dogs")
    page.click("button.pick-collection[data-name=web]")
    page.check("input[name=topics_from][value=pick]")
    assert page.is_visible("#topic-search") and page.is_hidden("#field-topic_file")
    page.fill("#topic-filter", "dogs")
    visible = page.eval_on_selector_all("#topic-options li:not([hidden]) input", "bs => bs.map(b => b.value)")
    assert visible == ["301", "302"]  # of the collection picked, matching the words
    assert page.text_content("#topic-count") == "2 matching topics."
    for value in visible:
        page.check(f"#topic-options input[value='{value}']")
    assert page.input_value("#id_topics").split() == ["301", "302"]
    page.uncheck("#topic-options input[value='301']")
    assert page.input_value("#id_topics").split() == ["302"]
    page.click("#create-campaign")
    page.wait_for_selector("text=Campaign dogs made with 1 topic of collection web")
    campaign = Campaign.objects.get(name="dogs")
    assert list(campaign.track.topics.values_list("external_id", flat=True)) == ["302"]


def test_a_long_topic_list_says_what_it_leaves_out_and_sorts_ids_by_number(new_page):
    """225 topics showed 200, sorted as text (1, 10, 100, …), and said nothing of the rest (issue 39, item 12)."""
    organiser_account()
    big = factories.collection("big", kind=Collection.Kind.DOCUMENTS)
    Topic.objects.bulk_create(Topic(collection=big, external_id=str(n), kind=Topic.Kind.ADHOC, title=f"topic {n}")
                              for n in range(1, 226))
    page = new_page()
    sign_in(page, "boss", "pw-boss")
    page.goto("/campaigns/new/")
    page.wait_for_selector("body[data-ready=console]")
    page.select_option("#id_task", "adhoc")
    page.check("input[name=topics_from][value=pick]")
    page.click("button.pick-collection[data-name=big]")
    visible = page.eval_on_selector_all("#topic-options li:not([hidden]) input", "bs => bs.map(b => b.value)")
    assert visible == [str(n) for n in range(1, 201)]
    assert page.text_content("#topic-count") == (
        "Showing the first 200 of 225 matching topics: type words of a title or an id to narrow.")
    page.fill("#topic-filter", "22")
    visible = page.eval_on_selector_all("#topic-options li:not([hidden]) input", "bs => bs.map(b => b.value)")
    assert visible == ["22", "122", "220", "221", "222", "223", "224", "225"]
    assert page.text_content("#topic-count") == "8 matching topics."
