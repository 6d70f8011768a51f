"""Judging is blind (issue 32): nothing an assessor's browser receives names the run that wrote the article, unless
the campaign shows run names (Campaign.show_run_names)."""

import pytest
from django.urls import reverse

from annotation.models import Campaign
from tests import factories
from tests.annotation.conftest import page_state

pytestmark = pytest.mark.django_db

MUST = [{"facet": "general", "relevance": "must"}]


@pytest.fixture
def two_articles(article, assessor):
    """The assessor's two articles of one topic, by the runs sysalpha7 and sysbeta9, sharing the first passage."""
    topic, _, passages = article
    campaign = factories.campaign("y3")
    runs = [factories.run(topic.collection, "sysalpha7", {topic: passages}),
            factories.run(topic.collection, "sysbeta9", {topic: passages[:2]})]
    return [factories.assignment(assessor, topic, campaign=campaign, run=run) for run in runs]


def received(client, units, answer):
    """Everything the assessor's browser got: a save's answer, the queue, and both judging pages (with their data)."""
    pages = [client.get(reverse("annotation:unit", args=[u.token])) for u in units]
    return [answer.content.decode(), client.get(reverse("annotation:home")).content.decode()] + \
        [p.content.decode() for p in pages], page_state(pages[0])


def test_by_default_no_run_name_reaches_the_assessor(client, article, assessor, two_articles, save):
    client.force_login(assessor)
    answer = save(two_articles[1], "facet", article[2][0], MUST)  # labelled in sysbeta9's article
    texts, state = received(client, two_articles, answer)
    for text in texts:
        assert "sysalpha7" not in text and "sysbeta9" not in text
    assert "run" not in state
    assert state["labels"]["runs"] == {str(article[2][0].pk): 1}  # judged in one other article, not named


def test_a_campaign_that_shows_run_names_names_them(client, article, assessor, two_articles, save):
    Campaign.objects.filter(name="y3").update(show_run_names=True)
    client.force_login(assessor)
    answer = save(two_articles[1], "facet", article[2][0], MUST)
    texts, state = received(client, two_articles, answer)
    queue, page = texts[1], texts[2]
    assert "sysalpha7" in queue and "sysbeta9" in queue
    assert "Article by run" in page and "sysalpha7" in page
    assert state["run"] == "sysalpha7" and state["labels"]["runs"] == {str(article[2][0].pk): ["sysbeta9"]}


def test_the_console_new_campaign_form_sets_it_off_unless_ticked(client, article):
    from django.contrib.auth.models import Group

    from annotation.roles import Role, ensure_groups

    ensure_groups()
    boss = factories.user("boss", is_staff=True)
    boss.groups.add(Group.objects.get(name=Role.ORGANISER))
    client.force_login(boss)
    assert 'name="show_run_names"' in client.get("/campaigns/new/").content.decode()
    form = {"task": "outline", "collection": "car", "topics_from": "all", "overlap": 1, "qualification_threshold": 90,
            "qualification_attempts": 2, "review_sample_size": 0, "review_threshold": 95, "mode": "label",
            "plot_scale": "2 Yes\n0 No", "context_sentences": 5, "choice_candidates": 20}
    for name, extra in (("blind", {}), ("named", {"show_run_names": "on"})):
        response = client.post("/campaigns/new/", {"name": name, **form, **extra})
        assert response.status_code == 302, response.content.decode()[-3000:]
    assert dict(Campaign.objects.values_list("name", "show_run_names")) == {"blind": False, "named": True}
