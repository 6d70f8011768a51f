"""Queries per save and per page load of a 20-passage article are bounded (the load benchmark's hot paths).

A save reads the assignment with its assessor, who stands for the signed-in user (config.auth.resolve_user: no
read of the user of its own), its qualification lock and open sibling articles; the session,
the article's passage ids and the topic's facets come from the cache. It stores the change and brings the judgement
up to date (assessments.services.judging._store: on PostgreSQL one statement, its own transaction; on SQLite the
judgement's upsert and the change's insert between BEGIN and COMMIT, which SQLite's backend logs), and reads the
progress back: 3 statements on PostgreSQL, 6 on SQLite (the demo's and the tests' database, not production's; with
sessions in the database, no shared cache, one more: the session's read). The save that completes the article also moves the status (one UPDATE) and reads it back. Counts do not
grow with the article's length or the number of judgements.

The saves' tests run outside a test transaction (transaction=True), as a server's request does: inside one, the
PostgreSQL statement takes a savepoint."""

import json
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Assignment
from assessments.models import Judgement, JudgementChange
from tests import factories

# the assignment and its assessor; the judgement and the change (PostgreSQL: one statement; SQLite: INSERT judgement
# ON CONFLICT DO UPDATE, INSERT change, between BEGIN and COMMIT); the progress.
SAVE_QUERIES = 3 if connection.vendor == "postgresql" else 6
# … and the status: one UPDATE, and the assignment read back after review / qualification had their say.
COMPLETING_SAVE_QUERIES = SAVE_QUERIES + 2
PAGE_QUERIES = 4


@pytest.fixture
def long_article(db):
    coll = factories.collection("car")
    topic = factories.topic(coll, "tqa2:L_0001", facets=[(f"tqa2:L_0001/T_{i}", f"Heading {i}") for i in range(6)])
    passages = [factories.passage(coll, f"{i:040x}", text="words " * 150) for i in range(1, 21)]
    run = factories.run(coll, "guir", {topic: passages})
    user = factories.user("judge")
    return factories.assignment(user, topic, run=run), passages


def save(client, assignment, passage, seq, *, passage2=None):
    body = {
        "change_id": str(uuid.uuid4()), "layer": "facet", "passage": passage.pk,
        "value": [{"facet": "tqa2:L_0001/T_1", "relevance": "must"}],
        "client_time": "2024-05-01T12:00:00.000Z", "client_seq": seq, "session_id": "page-1",
    }
    if passage2 is not None:
        body.update(layer="transition", passage2=passage2.pk, value="same")
    return client.post(reverse("annotation:save", args=[assignment.token]), json.dumps(body),
                       content_type="application/json")


@pytest.mark.django_db(transaction=True)
def test_a_save_takes_a_bounded_number_of_queries(client, long_article):
    assignment, passages = long_article
    client.force_login(assignment.assessor)
    for seq, passage in enumerate(passages[:5]):
        assert save(client, assignment, passage, seq).status_code == 200  # statuses settle on the first saves
    counts = []
    for seq, passage in enumerate(passages[5:], start=5):
        with CaptureQueriesContext(connection) as queries:
            assert save(client, assignment, passage, seq).status_code == 200
        counts.append(len(queries))
    assert max(counts) <= SAVE_QUERIES, "\n".join(q["sql"][:120] for q in queries.captured_queries)


@pytest.mark.django_db
def test_the_page_of_a_20_passage_article_takes_a_bounded_number_of_queries(client, long_article):
    assignment, passages = long_article
    client.force_login(assignment.assessor)
    url = reverse("annotation:unit", args=[assignment.token])
    client.get(url)
    for seq, passage in enumerate(passages):
        save(client, assignment, passage, seq)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    assert len(queries) <= PAGE_QUERIES, "\n".join(q["sql"][:120] for q in queries.captured_queries)


def _complete_in_queries(client, assignment, passages):
    """Judge the whole article; the number of statements of the save that completes it."""
    client.force_login(assignment.assessor)
    seq = 0
    for passage in passages:
        assert save(client, assignment, passage, seq).status_code == 200
        seq += 1
    for a, b in zip(passages[:-2], passages[1:-1]):
        assert save(client, assignment, a, seq, passage2=b).status_code == 200
        seq += 1
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.IN_PROGRESS
    with CaptureQueriesContext(connection) as queries:
        answer = save(client, assignment, passages[-2], seq, passage2=passages[-1])
    assert answer.status_code == 200 and answer.json()["status"] == Assignment.Status.DONE
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.DONE and assignment.finished_at and assignment.started_at
    return queries


@pytest.mark.django_db(transaction=True)
def test_the_save_that_completes_an_article_takes_a_bounded_number_of_queries(client, long_article):
    assignment, passages = long_article
    queries = _complete_in_queries(client, assignment, passages)
    assert len(queries) <= COMPLETING_SAVE_QUERIES, "\n".join(q["sql"][:120] for q in queries.captured_queries)


@pytest.mark.django_db(transaction=True)
def test_a_campaign_save_takes_the_same_number_of_queries(client, long_article):
    """In a campaign the save also asks whether qualification locks the unit: in the assignment's own query."""
    assignment, passages = long_article
    campaign = factories.campaign("bounded", review_sample_size=0)
    Assignment.objects.filter(pk=assignment.pk).update(campaign=campaign)
    assignment.refresh_from_db()
    client.force_login(assignment.assessor)
    counts = []
    for seq, passage in enumerate(passages[:8]):
        with CaptureQueriesContext(connection) as queries:
            assert save(client, assignment, passage, seq).status_code == 200
        counts.append(len(queries))
    assert max(counts[1:]) <= SAVE_QUERIES, "\n".join(q["sql"][:120] for q in queries.captured_queries)
    assert Judgement.objects.filter(campaign_id=campaign.pk).count() == 8
    assert JudgementChange.objects.filter(judgement__campaign_id=campaign.pk).count() == 8
    queries = _complete_in_queries(client, assignment, passages)
    assert len(queries) <= COMPLETING_SAVE_QUERIES, "\n".join(q["sql"][:120] for q in queries.captured_queries)
