"""The assessor's home: their own queue with progress, and the next open assignment one key away."""

import pytest
from django.urls import reverse

from annotation.models import Assignment
from annotation.services.outline import progress_of
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_articles(article, assignment):
    topic, run, passages = article
    other_run = factories.run(topic.collection, "UNH-p-l2r", {topic: passages[:2]})
    second = factories.assignment(assignment.assessor, topic, run=other_run, position=1)
    return assignment, second


def test_anonymous_visitors_are_sent_to_the_login_page(client):
    response = client.get(reverse("annotation:home"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_the_login_page_signs_in_and_leads_to_the_queue(client, assessor):
    response = client.post(reverse("login"), {"username": "judge", "password": "pw-judge"})
    assert response.status_code == 302 and response["Location"] == reverse("annotation:home")


def test_the_queue_lists_only_the_assessors_own_assignments(client, two_articles, article):
    topic, run, _ = article
    rival = factories.user("rival")
    theirs = factories.assignment(rival, topic, run=run)
    client.force_login(two_articles[0].assessor)
    html = client.get(reverse("annotation:home")).content.decode()
    assert two_articles[0].token in html and two_articles[1].token in html
    assert theirs.token not in html
    assert "UNH-p-l2r" not in html and "4 passages, 3 transitions left" in html  # blind: no run names


def test_progress_follows_removals():
    labels = {"removed": {2: True}, "facets": {1: [{"facet": "other", "relevance": "can"}]},
              "transitions": {"1-3": "same"}}
    progress = progress_of([1, 2, 3, 4], labels)
    assert progress.parts == {"passages": 2, "transitions": 1}
    assert (progress.size, progress.total, progress.left) == (4, 4 + 2, 3)  # 4 passages and 2 transitions asked
    assert not progress.complete


def test_next_goes_to_the_first_open_assignment_and_skips_the_current_one(client, two_articles):
    first, second = two_articles
    client.force_login(first.assessor)
    assert client.get(reverse("annotation:next"))["Location"] == reverse("annotation:unit", args=[first.token])
    response = client.get(reverse("annotation:next"), {"after": first.token})
    assert response["Location"] == reverse("annotation:unit", args=[second.token])
    second.status = Assignment.Status.DONE
    second.save()
    response = client.get(reverse("annotation:next"), {"after": first.token})
    assert response["Location"] == reverse("annotation:home") + "?queue"


def test_next_skips_an_article_already_complete_through_another_article(client, two_articles, save):
    first, second = two_articles
    p1, p2 = first.run.entries.order_by("rank")[0].passage, first.run.entries.order_by("rank")[1].passage
    client.force_login(first.assessor)
    for p in (p1, p2):
        save(first, "facet", p, [{"facet": "general", "relevance": "must"}])
    save(first, "transition", p1, "same", pair=p2)  # the second article is exactly p1, p2: the save finished it
    second.refresh_from_db()
    assert second.status == Assignment.Status.DONE
    response = client.get(reverse("annotation:next"), {"after": first.token})
    assert response["Location"] == reverse("annotation:home") + "?queue"
