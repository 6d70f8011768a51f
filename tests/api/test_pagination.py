"""Keyset pagination of the API lists (runs, pools, campaigns, a pool's candidates): walked to the end with `next`
and back with `previous`, every item once and in order; a page's statements do not grow with the rows; a cursor or
page size that is not one of ours is a 400 naming it."""

import json
from base64 import urlsafe_b64encode

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from assessments.models import CandidateSource, PoolCandidate, Run
from tests import factories

pytestmark = pytest.mark.django_db


def walk(client, url, link="next"):
    """Every page from `url` on, following `link`: [(status, body), ...]."""
    pages = []
    while url:
        response = client.get(url)
        assert response.status_code == 200, response.content
        pages.append(response.json())
        url = pages[-1][link]
    return pages


def items(pages, key="id"):
    return [row[key] for page in pages for row in page["results"]]


def cursor(value):
    """A cursor made by hand: base64 (URL alphabet, unpadded) of the JSON we would have put there."""
    return urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


@pytest.fixture
def runs(adhoc, keys):
    """Seven runs of campaign 'adhoc' by team A, and one of another campaign; newest first by id."""
    owner = factories.user("someone")
    made = [factories.run(adhoc.track.collection, name=f"r{n}", track="adhoc", owner=owner) for n in range(7)]
    factories.run(adhoc.track.collection, name="elsewhere", track="other", owner=owner)
    return made


def test_the_runs_are_walked_with_next_to_the_end_each_once_newest_first(runs, organiser):
    pages = walk(organiser, "/api/runs/?campaign=adhoc&page_size=3")
    assert [len(page["results"]) for page in pages] == [3, 3, 1]
    assert items(pages) == [run.pk for run in reversed(runs)]
    assert pages[0]["previous"] is None and pages[-1]["next"] is None
    assert all("campaign=adhoc" in page["next"] and "page_size=3" in page["next"] for page in pages[:-1])


def test_previous_walks_back_to_the_first_page(runs, organiser):
    last = walk(organiser, "/api/runs/?campaign=adhoc&page_size=3")[-1]
    back = walk(organiser, last["previous"], link="previous")
    assert [[row["id"] for row in page["results"]] for page in back] == [
        [runs[3].pk, runs[2].pk, runs[1].pk], [runs[6].pk, runs[5].pk, runs[4].pk]
    ]
    assert back[-1]["previous"] is None and back[-1]["next"]


def test_a_run_uploaded_while_a_client_walks_neither_repeats_nor_shifts_a_row(runs, organiser):
    first = organiser.get("/api/runs/?campaign=adhoc&page_size=3").json()
    factories.run(runs[0].collection, name="late", track="adhoc", owner=runs[0].owner)  # newest: before the cursor
    rest = walk(organiser, first["next"])
    assert items([first, *rest]) == [run.pk for run in reversed(runs)]


def test_a_pools_candidates_are_walked_by_topic_and_rank_across_topics(adhoc, organiser):
    coll = adhoc.track.collection
    topics = list(coll.topics.order_by("pk"))
    passages = [factories.passage(coll, f"x{n}") for n in range(5)]
    run = factories.run(coll, name="r")
    pool = factories.pool(coll, topics, [run], name="deep")
    for topic in reversed(topics):  # stored topic by topic, last topic first: rows' ids are not the order
        made = PoolCandidate.objects.bulk_create(
            PoolCandidate(pool=pool, topic=topic, passage=p, rank=rank) for rank, p in enumerate(passages, start=1)
        )
        CandidateSource.objects.bulk_create(CandidateSource(candidate=c, run=run, rank=c.rank) for c in made)
    pages = walk(organiser, "/api/pools/deep/candidates/?page_size=4")
    assert len(pages) == 4  # 15 candidates, 4 a page
    order = [(row["topic"], row["rank"]) for page in pages for row in page["results"]]
    assert order == [(t.external_id, rank) for t in topics for rank in range(1, 6)]
    assert all(row["sources"] == [{"run": run.pk, "run_name": "r", "rank": row["rank"], "score": None}]
               for page in pages for row in page["results"])
    one_topic = walk(organiser, f"/api/pools/deep/candidates/?topic={topics[1].external_id}&page_size=2")
    assert [(row["topic"], row["rank"]) for page in one_topic for row in page["results"]] == [
        (topics[1].external_id, rank) for rank in range(1, 6)
    ]


def test_the_pools_and_campaigns_are_walked_to_the_end(adhoc, outline, organiser):
    for n in range(4):
        factories.pool(adhoc.track.collection, [], [], name=f"p{n}")
        factories.campaign(f"extra-{n}")
    assert items(walk(organiser, "/api/pools/?page_size=3"), "name") == ["p3", "p2", "p1", "p0"]
    assert items(walk(organiser, "/api/campaigns/?page_size=2"), "name") == [
        "adhoc", "car-y3", "extra-0", "extra-1", "extra-2", "extra-3"
    ]


def statements(client, url):
    """SQL statements of a GET of `url`, after one GET (a token notes its first use in a while)."""
    client.get(url)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, response.content
    return len(queries)


def test_a_page_of_runs_costs_the_same_statements_however_many_runs_there_are(runs, organiser):
    second = organiser.get("/api/runs/?page_size=2").json()["next"]
    few = statements(organiser, second), statements(organiser, "/api/runs/?page_size=5")
    for n in range(40):
        factories.run(runs[0].collection, name=f"more{n}", track="adhoc", owner=runs[0].owner)
    deep = walk(organiser, "/api/runs/?page_size=20")[-1]["previous"]
    assert (statements(organiser, second), statements(organiser, "/api/runs/?page_size=40")) == few
    assert statements(organiser, deep) == few[0]


def test_a_page_of_candidates_costs_the_same_statements_whatever_its_size(adhoc, organiser):
    coll = adhoc.track.collection
    topic = coll.topics.first()
    runs = [factories.run(coll, name=f"r{n}") for n in range(3)]
    pool = factories.pool(coll, [topic], runs, name="p")
    for rank in range(1, 31):
        candidate = PoolCandidate.objects.create(pool=pool, topic=topic, passage=factories.passage(coll), rank=rank)
        CandidateSource.objects.bulk_create(CandidateSource(candidate=candidate, run=r, rank=rank) for r in runs)
    small = statements(organiser, "/api/pools/p/candidates/?page_size=2")
    assert statements(organiser, "/api/pools/p/candidates/?page_size=30") == small


@pytest.mark.parametrize("value", [
    "not a cursor!", "é", "x" * 3000, cursor({}), cursor([1]), cursor({"r": 0}), cursor({"r": 2, "p": [1]}),
    cursor({"r": 0, "p": []}), cursor({"r": 0, "p": [1, 2]}), cursor({"r": 0, "p": ["abc"]}),
    cursor({"r": 0, "p": [True]}), cursor({"r": 0, "p": [1.5]}), cursor({"r": 0, "p": [None]}),
    cursor({"r": 0, "p": [2**70]}), cursor({"r": 0, "p": [-(2**70)]}), cursor({"r": 0, "p": [1], "o": 5}),
    urlsafe_b64encode(b"[" * 440).decode(), cursor({"r": 0, "p": ["x" * 500]}),
])
def test_a_cursor_that_is_not_ours_is_a_400_naming_it(runs, organiser, value):
    response = organiser.get("/api/runs/", {"cursor": value})
    assert response.status_code == 400
    assert list(response.json()) == ["cursor"]


@pytest.mark.parametrize("text", ["a\x00b", "\ud800", "a\udfffb", "\udc80\ud800"])
def test_a_campaign_cursor_with_a_nul_or_a_lone_surrogate_is_a_400(adhoc, organiser, text):
    """Text no database stores (NUL; a lone surrogate cannot even be encoded) is refused, not a 500."""
    response = organiser.get("/api/campaigns/", {"cursor": cursor({"r": 0, "p": [text]})})
    assert response.status_code == 400 and list(response.json()) == ["cursor"]


def test_a_cursor_past_the_last_row_is_an_empty_page_that_leads_back(runs, organiser):
    body = organiser.get("/api/runs/", {"campaign": "adhoc", "cursor": cursor({"r": 0, "p": [runs[0].pk]})}).json()
    assert body["results"] == [] and body["next"] is None
    back = walk(organiser, body["previous"], link="previous")
    assert [row["id"] for page in reversed(back) for row in page["results"]] == [run.pk for run in reversed(runs[1:])]


@pytest.mark.parametrize("value", ["0", "1001", "-1", "x", "1.5", "²", " 5"])
def test_a_page_size_out_of_1_to_1000_is_a_400_naming_it(runs, organiser, value):
    response = organiser.get("/api/runs/", {"page_size": value})
    assert response.status_code == 400
    assert list(response.json()) == ["page_size"]


def test_an_empty_page_size_is_the_default_and_1000_is_taken(runs, organiser):
    Run.objects.bulk_create(
        Run(collection=runs[0].collection, name=f"bulk{n}", track="adhoc", owner=runs[0].owner) for n in range(120)
    )
    assert len(organiser.get("/api/runs/?page_size=").json()["results"]) == 100
    assert len(organiser.get("/api/runs/?page_size=1000").json()["results"]) == 128
