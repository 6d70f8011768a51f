"""Pair-rating items from two rankings, two runs or two pools (issue 30, item 3): per plot topic the chunks each
ranks at 1, 2, ... paired rank by rank; blind (no run or pool name in a key or on the page); the same inputs give
the same items; the command, the console's form and the service agree."""

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.roles import Role, ensure_groups
from annotation.services.pool_setup import PoolInvalid, pair_items
from annotation.services.campaigns import add_topics
from assessments import studies
from assessments.models import Pool, PoolCandidate, StudyItem
from tests import factories
from tests.annotation import plot_setup as ps

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(tmp_path):
    """A plot query, a pool of its 6 chunks (the study pool), two runs ranking them differently, and a second pool
    ranking them in reverse."""
    topic = ps.load_query(tmp_path, lines=ps.EXCERPT)
    pool, picked = ps.plot_pool(topic, size=6)
    alpha = factories.run(topic.collection, "secret-alpha", {topic: picked[:4]})
    beta = factories.run(topic.collection, "secret-beta", {topic: [picked[0], picked[5], picked[4], picked[3]]})
    other = Pool.objects.create(name="reverse-pool", collection=topic.collection, status=Pool.Status.READY)
    other.topics.set([topic])
    PoolCandidate.objects.bulk_create(PoolCandidate(pool=other, topic=topic, passage=c, rank=len(picked) - i)
                                      for i, c in enumerate(picked))
    return {"topic": topic, "pool": pool, "picked": picked, "alpha": alpha, "beta": beta, "other": other}


def pairs_of(items):
    return sorted(frozenset((i.passage_id, i.passage2_id)) for i in items)


def test_two_runs_are_paired_rank_by_rank_and_a_shared_chunk_is_no_pair(world):
    p = world["picked"]
    items = studies.make_ranked_pair_items(world["pool"], world["alpha"], world["beta"], depth=4)
    # rank 1: both p0 (no pair); 2: p1/p5; 3: p2/p4; 4: p3/p3 (no pair)
    assert pairs_of(items) == sorted([frozenset((p[1].pk, p[5].pk)), frozenset((p[2].pk, p[4].pk))])
    assert sorted(i.metadata["rank"] for i in items) == [2, 3]
    assert all(i.kind == StudyItem.Kind.PAIR and i.topic == world["topic"] for i in items)
    assert not any("secret" in i.key for i in items)  # the key reaches the page: no run name in it
    again = studies.make_ranked_pair_items(world["pool"], world["alpha"], world["beta"], depth=4)
    assert [i.pk for i in again] == [i.pk for i in items] and StudyItem.objects.count() == 2


def test_two_pools_are_paired_rank_by_rank(world):
    p = world["picked"]
    items = studies.make_ranked_pair_items(world["pool"], world["pool"], world["other"], depth=2)
    assert pairs_of(items) == sorted([frozenset((p[0].pk, p[5].pk)), frozenset((p[1].pk, p[4].pk))])
    assert {i.metadata["sources"] for i in items} == {"pools"}


@pytest.mark.parametrize("case, message", [
    ("same", "sources: choose two different runs"),
    ("mixed", "sources: two runs, or two pools"),
    ("depth", "depth: from 1 to 100 ranks"),
    ("elsewhere", "sources: run 'elsewhere' is not in pool"),
])
def test_what_cannot_be_paired_is_refused_saying_why(world, case, message):
    a, b = world["alpha"], world["beta"]
    depth = 5
    if case == "same":
        b = a
    elif case == "mixed":
        b = world["other"]
    elif case == "depth":
        depth = 0
    else:
        b = factories.run(factories.collection("other-books"), "elsewhere")
    with pytest.raises(studies.StudyError) as caught:
        studies.make_ranked_pair_items(world["pool"], a, b, depth=depth)
    assert str(caught.value).startswith(message)
    assert not StudyItem.objects.exists()


def test_the_command_makes_the_same_items(world, capsys):
    call_command("make_study_items", "--pool", world["pool"].name, "--kind", "pair", "--runs", "secret-alpha",
                 "secret-beta", "--depth", "4")
    assert "2 pairs in pool plot-pool from runs secret-alpha and secret-beta, ranks 1-4." in capsys.readouterr().out
    made = list(StudyItem.objects.all())
    assert pairs_of(made) == pairs_of(studies.make_ranked_pair_items(world["pool"], world["alpha"], world["beta"], depth=4))


def pair_campaign(world):
    campaign = ps.campaign(name="pairs", mode="pair")
    campaign.pools.add(world["pool"], world["other"])
    add_topics(campaign, {world["topic"].pk: []})
    return campaign


def test_the_service_behind_the_console_form_names_the_input_at_fault(world):
    campaign = pair_campaign(world)
    items = pair_items(campaign=campaign, pool="plot-pool", sources="pools", first="plot-pool",
                       second="reverse-pool", depth=2)
    assert len(items) == 2
    with pytest.raises(PoolInvalid) as caught:
        pair_items(campaign=campaign, pool="plot-pool", sources="runs", first=world["alpha"].pk, second=None, depth=2)
    assert caught.value.field == "runs"
    with pytest.raises(PoolInvalid) as caught:
        pair_items(campaign=campaign, pool="nope", sources="runs", first=1, second=2, depth=2)
    assert caught.value.field == "pool"


def test_the_pools_page_makes_pairs_from_two_runs_and_a_bad_pick_is_a_400(client, world):
    campaign = pair_campaign(world)
    boss = factories.user("boss")
    boss.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(boss)
    url = reverse("annotation:console_pools", args=[campaign.name])
    page = client.get(url).content.decode()
    assert "Make pairs from two runs" in page and "Make pairs from two pools" in page
    form = {"action": "pair_items", "pool": "plot-pool", "sources": "runs", "first": world["alpha"].pk,
            "second": world["beta"].pk, "depth": 4}
    assert client.post(url, form).status_code == 302
    assert StudyItem.objects.filter(pool=world["pool"]).count() == 2
    response = client.post(url, {**form, "second": world["alpha"].pk})
    assert response.status_code == 400 and "choose two different runs" in response.content.decode()
    assert client.post(url, {**form, "depth": "x"}).status_code == 400
