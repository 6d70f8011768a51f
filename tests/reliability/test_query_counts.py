"""Queries per save and per page load of a 20-passage article are bounded (the load benchmark's hot paths).

A save reads the session, the user, the assignment, the article's passage ids, the topic's facets, whether
the change is stored already, then writes the change and the judgement (one transaction) and reads the
progress back. Counts do not grow with the article's length or the number of judgements.
"""

import json
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Assignment
from tests import factories

# 7 reads; SELECT … FOR UPDATE, (a new key: SAVEPOINT, INSERT judgement, RELEASE), INSERT change, UPDATE judgement
# inside the transaction (its BEGIN/COMMIT are savepoints in a test); then the progress.
SAVE_QUERIES = 15
PAGE_QUERIES = 8


@pytest.fixture
def long_article(db):
    coll = factories.collection("car")
    topic = factories.topic(coll, "tqa2:L_0001", facets=[(f"tqa2:L_0001/T_{i}", f"Heading {i}") for i in range(6)])
    passages = [factories.passage(coll, f"{i:040x}", text="words " * 150) for i in range(1, 21)]
    run = factories.run(coll, "guir", {topic: passages})
    user = factories.user("judge")
    return Assignment.objects.create(assessor=user, topic=topic, run=run), passages


def save(client, assignment, passage, seq):
    body = {
        "change_id": str(uuid.uuid4()), "layer": "facet", "passage": passage.pk,
        "value": [{"facet": "tqa2:L_0001/T_1", "relevance": "must"}],
        "client_time": "2024-05-01T12:00:00.000Z", "client_seq": seq, "session_id": "page-1",
    }
    return client.post(reverse("annotation:save", args=[assignment.token]), json.dumps(body),
                       content_type="application/json")


@pytest.mark.django_db
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
    url = reverse("annotation:outline", args=[assignment.token])
    client.get(url)
    for seq, passage in enumerate(passages):
        save(client, assignment, passage, seq)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    assert len(queries) <= PAGE_QUERIES, "\n".join(q["sql"][:120] for q in queries.captured_queries)
