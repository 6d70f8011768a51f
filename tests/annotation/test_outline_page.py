"""The outline page: only its assessor (and organisers, read-only) see it; it shows the article and escapes all data."""

import pytest
from django.urls import reverse

from annotation.models import Assignment
from annotation.roles import Role, ensure_groups
from assessments.models import Layer
from assessments.services.judging import record_judgement
from tests import factories
from tests.annotation.conftest import EVIL, page_state

pytestmark = pytest.mark.django_db


def url(assignment):
    return reverse("annotation:unit", args=[assignment.token])


def test_anonymous_visitors_are_sent_to_the_login_page(client, assignment):
    response = client.get(url(assignment))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login") + "?next=")


def test_another_assessor_gets_404(client, assignment):
    client.force_login(factories.user("someone-else"))
    assert client.get(url(assignment)).status_code == 404


def test_an_unknown_token_is_404(client, assessor):
    client.force_login(assessor)
    assert client.get(reverse("annotation:unit", args=["0" * 32])).status_code == 404


def test_an_organiser_sees_the_page_read_only(client, assignment):
    organiser = factories.user("org")
    organiser.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(organiser)
    response = client.get(url(assignment))
    assert response.status_code == 200
    assert page_state(response)["readonly"] is True
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.TODO  # looking does not start someone else's work


def test_its_assessor_sees_the_topic_facets_and_passages_in_run_order(client, assignment, article):
    topic, run, passages = article
    client.force_login(assignment.assessor)
    response = client.get(url(assignment))
    assert response.status_code == 200
    html = response.content.decode()
    positions = [html.index(f"Passage {i} ") for i in range(1, 5)]
    assert positions == sorted(positions)
    assert "Water scarcity" in html and "OTHER RELEVANT FACET" in html and "GENERAL/INTRODUCTION" in html
    state = page_state(response)
    assert [p["id"] for p in state["passages"]] == [p.pk for p in passages]
    assert [p["n"] for p in state["passages"]] == [1, 2, 3, 4]
    assert [f["id"] for f in state["facets"]] == ["tqa2:L_0001/T_1", "tqa2:L_0001/T_2", "other", "general"]
    assert [f["key"] for f in state["facets"]] == ["1", "2", "o", "g"]
    assert "run" not in state and state["readonly"] is False  # judging is blind (test_blind_judging.py)


def test_opening_the_page_changes_nothing_and_the_first_change_starts_it(client, assignment, article, save):
    client.force_login(assignment.assessor)
    client.get(url(assignment))
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.TODO and assignment.started_at is None  # a GET never writes
    save(assignment, "notes", article[2][0], "a first note")
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.IN_PROGRESS and assignment.started_at is not None


def test_untrusted_text_is_escaped_everywhere(client, assignment, article):
    topic, run, passages = article
    topic.gold_text = f"Gold {EVIL}"
    topic.save()
    record_judgement(assessor=assignment.assessor, layer=Layer.NOTES, value=f"note {EVIL}</script>",
                     topic=topic, passage=passages[0], run_ids=["guir"])
    client.force_login(assignment.assessor)
    html = client.get(url(assignment)).content.decode()
    assert EVIL not in html
    assert html.count("<script") == 3 and html.count("</script>") == 3  # the page's data, autosave.js and outline.js only
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html  # titles, headings, passages, gold text
    assert "note \\u003Cscript\\u003E" in html  # the notes, inside the page's JSON


def test_the_gold_article_is_shown_when_there_is_one(client, assignment, article):
    topic = article[0]
    topic.gold_text = "A gold article about water."
    topic.save()
    client.force_login(assignment.assessor)
    assert "A gold article about water." in client.get(url(assignment)).content.decode()


def test_the_state_shows_the_assessors_current_labels(client, assignment, article, save):
    topic, run, passages = article
    client.force_login(assignment.assessor)
    save(assignment, "notes", passages[0], "first")
    save(assignment, "notes", passages[0], "second", client_time="2024-05-01T12:00:01Z")
    save(assignment, "facet", passages[0], [{"facet": "tqa2:L_0001/T_2", "relevance": "must"},
                                             {"facet": "general", "relevance": "can"}])
    save(assignment, "removal", passages[1], True)
    save(assignment, "transition", passages[0], "switch", pair=passages[2])
    save(assignment, "removal", passages[3], True)
    save(assignment, "removal", passages[3], False, client_time="2024-05-01T12:00:02Z")

    labels = page_state(client.get(url(assignment)))["labels"]
    p = [str(x.pk) for x in passages]
    assert labels["notes"] == {p[0]: "second"}
    assert labels["facets"] == {p[0]: [{"facet": "tqa2:L_0001/T_2", "relevance": "must"},
                                       {"facet": "general", "relevance": "can"}]}
    assert labels["removed"] == {p[1]: True, p[3]: False}
    assert labels["transitions"] == {f"{p[0]}-{p[2]}": "switch"}


def test_labels_made_in_another_runs_article_of_the_topic_show_up(client, assignment, article):
    topic, run, passages = article
    other_run = factories.run(topic.collection, "UNH-p-l2r", {topic: [passages[2], passages[0]]})
    other = factories.assignment(assignment.assessor, topic, run=other_run)
    record_judgement(assessor=assignment.assessor, layer=Layer.FACET, topic=topic, passage=passages[0],
                     value=[{"facet": "other", "relevance": "should"}], run_ids=["guir"])
    client.force_login(assignment.assessor)
    state = page_state(client.get(url(other)))
    assert state["labels"]["facets"] == {str(passages[0].pk): [{"facet": "other", "relevance": "should"}]}
    assert state["labels"]["runs"][str(passages[0].pk)] == 1  # one other article, its run not named (blind)


def test_other_assessors_labels_are_never_shown(client, assignment, article):
    topic, run, passages = article
    record_judgement(assessor=factories.user("rival"), layer=Layer.NOTES, topic=topic, passage=passages[0],
                     value="secret", run_ids=["guir"])
    client.force_login(assignment.assessor)
    response = client.get(url(assignment))
    assert "secret" not in response.content.decode()
    assert page_state(response)["labels"]["notes"] == {}
