"""The data browser: a campaign's labels filtered (topic, assessor, unit status, label, disagreement), sorted and
keyset-paged; an item with every label and its history; a pool's candidates with the runs behind them. Organisers
only (404 for the rest), 400 naming a bad filter, GETs write nothing, and the statements a page sends do not grow
with the labels."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Assignment
from annotation.roles import Role, ensure_groups
from annotation.services import browser
from annotation.services.assignment import assign_campaign
from assessments.models import CandidateSource, Judgement, Layer, PoolCandidate
from tests import factories
from tests.annotation.test_assignment import make_campaign

pytestmark = pytest.mark.django_db

# the user, the campaign, the page of labels, its units' statuses, the topics and assessors of the filters' lists
BROWSE_QUERIES = 6
# … and the assessor named, and what the disagreement rule reads besides the page (the practice labels, the banks, the
# topics' current banks and their practice labels); on PostgreSQL its SET LOCAL jit = off (adjudication.without_jit)
FILTERED_QUERIES = BROWSE_QUERIES + 5


@pytest.fixture
def setup():
    """Two assessors on two topics of three passages: on the first topic they disagree on p1 (MUST vs CAN) and on
    the transition p1 → p2, and agree on p2."""
    groups = ensure_groups()
    campaign, made, runs = make_campaign("brw", topics=2, runs=1, passages=3)
    amy, ben = factories.user("amy"), factories.user("ben")
    assign_campaign(campaign, ["amy", "ben"], overlap=2)
    topic, (p1, p2, p3) = made[0]
    facet = f"{topic.external_id}/H1"
    for who, grade, transition in ((amy, "must", "same"), (ben, "can", "switch")):
        judge(campaign, who, topic, p1, grade, facet)
        judge(campaign, who, topic, p2, "should", facet)
        factories.judgement(who, topic, p1, passage2=p2, layer=Layer.TRANSITION, value=transition, campaign=campaign,
                            session_id="tab-1", run_ids=[runs[0].name])
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(groups[Role.ORGANISER])
    return campaign, made, runs, amy, ben, organiser


def judge(campaign, who, topic, passage, grade, facet, **more):
    return factories.judgement(who, topic, passage, relevance=grade, facet=facet, campaign=campaign, session_id="tab-1",
                               **more)


def disagreement_keys(campaign) -> list[str]:
    """The keys of the labels the browser's "disagreement" filter lists (every page)."""
    return sorted({j.key for j in browser.labels(campaign, browser.Filters(disagreement=True), size=10_000).rows})


def rows(campaign, **filters):
    return [(j.assessor.username, j.layer, j.passage.external_id.rsplit("-", 1)[-1])
            for j in browser.labels(campaign, browser.Filters(**filters), size=1000).rows]


def test_the_filters(setup):
    campaign, made, _, amy, ben, _ = setup
    assert len(rows(campaign)) == 6
    assert {r[0] for r in rows(campaign, assessor="amy")} == {"amy"} and len(rows(campaign, assessor="amy")) == 3
    assert sorted(rows(campaign, disagreement=True)) == [
        ("amy", "facet", "p0"), ("amy", "transition", "p0"), ("ben", "facet", "p0"), ("ben", "transition", "p0")]
    assert rows(campaign, assessor="ben", disagreement=True, label="transition") == [("ben", "transition", "p0")]
    assert rows(campaign, label="facet:3") == [("amy", "facet", "p0")]
    assert len(rows(campaign, label="transition:switch")) == 1
    assert rows(campaign, topic=made[1][0].external_id) == []
    assert len(rows(campaign, topic=made[0][0].external_id)) == 6
    Assignment.objects.filter(assessor=amy).update(status=Assignment.Status.DONE)
    assert {r[0] for r in rows(campaign, status="done")} == {"amy"}
    assert rows(campaign, status="revise") == []


def test_every_sort_pages_through_every_label_once_by_cursor(setup):
    campaign = setup[0]
    for sort in browser.SORTS:
        seen, cursor, pages = [], "", 0
        while True:
            page = browser.labels(campaign, browser.Filters(sort=sort, cursor=cursor), size=4)
            seen += [j.pk for j in page.rows]
            pages += 1
            if not page.next_cursor:
                break
            cursor = page.next_cursor
        assert len(seen) == len(set(seen)) == 6 and pages == 2, sort
        back = browser.labels(campaign, browser.Filters(sort=sort, cursor=page.previous_cursor), size=4)
        assert [j.pk for j in back.rows] == seen[:4], sort


@pytest.mark.parametrize("field,value", [
    ("topic", "nope"), ("assessor", "nobody"), ("status", "finished"), ("label", "colour"), ("label", "facet:must"),
    ("label", "transition:sideways"), ("sort", "random"), ("cursor", "not-a-cursor"), ("disagreement", "yes"),
    ("cursor", "eyJyIjowLCJwIjpbImZhY2V0IiwxLCJ4Il19"),  # {"r":0,"p":["facet",1,"x"]}: an id that is no number
])
def test_a_bad_filter_is_a_400_naming_it(client, setup, field, value):
    campaign, *_, organiser = setup
    client.force_login(organiser)
    response = client.get(reverse("annotation:console_browse", args=[campaign.name]), {field: value})
    assert response.status_code == 400
    assert f"{field}: " in response.content.decode()


def test_a_bad_cursor_beside_the_disagreement_filter_is_a_400_and_the_next_page_reads(client, setup):
    """The filter's statement runs in its own transaction setting on PostgreSQL (adjudication.without_jit): a
    refused cursor leaves the request's transaction usable."""
    campaign, *_, organiser = setup
    client.force_login(organiser)
    url = reverse("annotation:console_browse", args=[campaign.name])
    response = client.get(url, {"disagreement": "1", "cursor": "not-a-cursor"})
    assert response.status_code == 400 and "cursor: " in response.content.decode()
    assert client.get(url, {"disagreement": "1"}).status_code == 200


def test_non_organisers_get_404(client, setup):
    campaign, made, _, amy, _, _ = setup
    judgement = browser.labels(campaign, browser.Filters()).rows[0]
    client.force_login(amy)
    for url in (reverse("annotation:console_browse", args=[campaign.name]),
                reverse("annotation:console_browse_item", args=[campaign.name, judgement.pk]),
                reverse("annotation:console_pool_candidates", args=[campaign.name, "brw-pool"])):
        assert client.get(url).status_code == 404


def test_the_page_lists_and_opens_an_item_with_its_history_and_writes_nothing(client, setup):
    campaign, made, runs, amy, ben, organiser = setup
    topic, (p1, *_) = made[0]
    judge(campaign, amy, topic, p1, "should", f"{topic.external_id}/H2", run_ids=[runs[0].name])  # MUST → SHOULD
    client.force_login(organiser)
    before = factories.db_snapshot()
    url = reverse("annotation:console_browse", args=[campaign.name])
    page = client.get(url, {"assessor": "amy", "disagreement": "1"})
    assert page.status_code == 200
    html = page.content.decode()
    assert "<br>H2 SHOULD<" in html and "<br>Same topic<" in html and "<td class=\"small\">To do</td>" in html
    amy_p1 = next(j for j in browser.labels(campaign, browser.Filters(assessor="amy", label="facet")).rows
                  if j.passage_id == p1.pk)
    item = client.get(reverse("annotation:console_browse_item", args=[campaign.name, amy_p1.pk]))
    assert item.status_code == 200
    html = item.content.decode()
    history = browser.item(campaign, amy_p1.pk).history
    amy_changes = [(c.old_shown, c.new_shown, c.session_id, c.run_ids) for c in history if c.assessor == amy]
    assert amy_changes == [("", "H1 MUST", "tab-1", []), ("H1 MUST", "H2 SHOULD", "tab-1", [runs[0].name])]
    assert {c.assessor.username for c in history} == {"amy", "ben"}
    assert "H1 MUST → H2 SHOULD" in html.replace("\n", " ")
    assert client.get(reverse("annotation:console_browse_item", args=[campaign.name, "99999999"])).status_code == 404
    assert client.get(reverse("annotation:console_browse_item", args=[campaign.name, "²"])).status_code == 404
    assert factories.db_snapshot() == before


def test_a_pool_opens_to_its_candidates_with_the_runs_and_ranks_behind_them(client, setup):
    campaign, made, runs, *_, organiser = setup
    pool = campaign.pools.get()
    topic, (p1, p2, _) = made[0]
    other = factories.run(pool.collection, "other")
    first = PoolCandidate.objects.create(pool=pool, topic=topic, passage=p1, rank=1)
    PoolCandidate.objects.create(pool=pool, topic=topic, passage=p2, rank=2)
    CandidateSource.objects.bulk_create([CandidateSource(candidate=first, run=runs[0], rank=3, score=11.25),
                                         CandidateSource(candidate=first, run=other, rank=1)])
    client.force_login(organiser)
    url = reverse("annotation:console_pool_candidates", args=[campaign.name, pool.name])
    html = client.get(url).content.decode()
    assert "other @ 1, brw-run0 @ 3 (11.250)" in html  # each run's score, as BM25 gave it (it said "–", issue 39)
    assert client.get(url, {"topic": "nope"}).status_code == 400
    assert client.get(url, {"cursor": "%%%"}).status_code == 400
    page = browser.pool_candidates(pool, size=1)
    assert [c.passage_id for c in page.rows] == [p1.pk]
    assert [c.passage_id for c in browser.pool_candidates(pool, cursor=page.next_cursor, size=1).rows] == [p2.pk]


def rows_read(captured) -> list[int]:
    """How many rows each SELECT of `captured` returned (each sent again, its rows counted by the database)."""
    counts = []
    with connection.cursor() as cursor:
        for query in captured:
            if query["sql"].lstrip().upper().startswith("SELECT"):
                cursor.execute(f"SELECT COUNT(*) FROM ({query['sql']}) AS sent")
                counts.append(cursor.fetchone()[0])
    return counts


def test_the_page_takes_the_same_statements_with_ten_times_the_labels(client, setup):
    """… and none of them reads more than a page of rows: the disagreement filter read every label of the campaign
    into Python (6.7 s at 100,000 labels, issue 39 item 14); the database filters now."""
    campaign, made, runs, amy, ben, organiser = setup
    client.force_login(organiser)
    url = reverse("annotation:console_browse", args=[campaign.name])
    for filters, expected in (({}, BROWSE_QUERIES),
                              ({"assessor": "amy", "disagreement": "1", "status": "todo", "sort": "changed"},
                               FILTERED_QUERIES + (connection.vendor == "postgresql"))):
        client.get(url, filters)
        with CaptureQueriesContext(connection) as small:
            assert client.get(url, filters).status_code == 200
        assert len(small) == expected, "\n".join(q["sql"][:150] for q in small.captured_queries)
        topic, _ = made[1]
        for _ in range(30):
            passage = factories.passage(topic.collection)
            for who, grade in ((amy, "can"), (ben, "must")):
                judge(campaign, who, topic, passage, grade, f"{topic.external_id}/H1")
        with CaptureQueriesContext(connection) as large:
            assert client.get(url, filters).status_code == 200
        assert len(large) == len(small)
        assert Judgement.objects.in_campaign(campaign).count() > browser.PAGE_SIZE + 1
        assert max(rows_read(large.captured_queries)) <= browser.PAGE_SIZE + 1, filters


def test_a_nuggets_campaign_filters_by_its_own_layers_and_values_not_plot_labels():
    """The label filter offered plot grades and study labels in a nuggets campaign (issue 39 item 9)."""
    from assessments.services import nuggets
    from tests.annotation.nuggets_setup import RUNS, nuggets_world

    judge_user = factories.user("nugget-judge")
    world = nuggets_world(judge_user)
    campaign, answer = world["campaign"], world["answers"][RUNS[0]]
    choices = browser.label_choices(campaign)
    offered = [value for value, _ in choices]
    # What the filter's menu says of a citation: "citation: none support" read as nonsense.
    assert [name for _, name in choices][-3:] == ["citation: full support", "citation: partial support",
                                                   "citation: no support"]
    assert offered == ["nuggets", "nugget_support:support", "nugget_support:partial_support",
                       "nugget_support:not_support", "citation_support:full", "citation_support:partial",
                       "citation_support:none"]
    for nugget, value in zip(world["bank"], ["support", "not_support", "support"]):
        factories.judgement(judge_user, answer.topic, layer=Layer.NUGGET_SUPPORT, value=value, campaign=campaign,
                            item=nuggets.support_item(answer.pk, nugget["id"]))
    found = browser.labels(campaign, browser.Filters(label="nugget_support:support"), size=100).rows
    assert [j.value for j in found] == ["support", "support"]
    with pytest.raises(browser.BrowseInvalid, match="nugget_support label is one of support, partial_support"):
        browser.read_label("nugget_support:3")
