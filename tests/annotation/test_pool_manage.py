"""Pools renamed and deleted from the console: what goes with a pool is counted first; a pool whose candidates or
study items judgements are about is kept, and the page says why."""

import pytest
from django.urls import reverse

from annotation.models import Assignment
from annotation.roles import Role, ensure_groups
from annotation.services.pool_setup import PoolInvalid, delete_pool, pool_deletion, rename_pool
from assessments.models import CandidateSource, Layer, Pool, PoolCandidate, StudyItem
from tests import factories
from tests.annotation.test_assignment import make_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup():
    campaign, made, runs = make_campaign("pm", topics=1, runs=1, passages=2)
    pool = campaign.pools.get()
    topic, (p1, p2) = made[0]
    for rank, p in enumerate((p1, p2), start=1):
        candidate = PoolCandidate.objects.create(pool=pool, topic=topic, passage=p, rank=rank)
        CandidateSource.objects.create(candidate=candidate, run=runs[0], rank=rank)
    StudyItem.objects.create(pool=pool, kind=StudyItem.Kind.CHOICE, key="item-1", topic=topic)
    assessor = factories.user("amy")
    factories.assignment(assessor, topic, campaign=campaign, pool=pool, kind="plot_labels")
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(ensure_groups()[Role.ORGANISER])
    return campaign, pool, topic, p1, assessor, organiser


def test_rename(setup):
    campaign, pool, *_ = setup
    assert rename_pool(campaign=campaign, pool="pm-pool", name="pm-pool-2").name == "pm-pool-2"
    assert Pool.objects.get(pk=pool.pk).name == "pm-pool-2" and pool.candidates.count() == 2
    factories.pool(pool.collection, [], [], name="taken")
    for name, field in (("taken", "name"), ("not a slug", "name"), ("x" * 101, "name"), ("", "name")):
        with pytest.raises(PoolInvalid) as caught:
            rename_pool(campaign=campaign, pool="pm-pool-2", name=name)
        assert caught.value.field == field
    with pytest.raises(PoolInvalid) as caught:
        rename_pool(campaign=campaign, pool="taken", name="mine")  # not a pool of this campaign
    assert caught.value.field == "pool"


def test_delete_counts_what_goes_with_it(setup):
    campaign, pool, *_ = setup
    counted = pool_deletion(campaign=campaign, pool="pm-pool")
    assert (counted.candidates, counted.sources, counted.study_items, counted.units, counted.judgements) == (2, 2, 1, 1, 0)
    assert counted.allowed
    gone = delete_pool(campaign=campaign, pool="pm-pool")
    assert gone.goes_with_it == "2 candidates, 2 run ranks behind them, 1 study items, 1 units of work"
    assert not Pool.objects.filter(pk=pool.pk).exists()
    assert not PoolCandidate.objects.exists() and not CandidateSource.objects.exists()
    assert not StudyItem.objects.exists() and not Assignment.objects.exists()


@pytest.mark.parametrize("on", ["candidate", "study item"])
def test_a_pool_judgements_use_is_kept(setup, on):
    campaign, pool, topic, p1, assessor, _ = setup
    if on == "candidate":
        factories.judgement(assessor, topic, p1, relevance="must", facet=f"{topic.external_id}/H1", campaign=campaign)
    else:
        factories.judgement(assessor, topic, layer=Layer.CHOICE, item="item-1", value=p1.external_id, campaign=campaign)
    assert pool_deletion(campaign=campaign, pool="pm-pool").judgements == 1
    with pytest.raises(PoolInvalid, match="cannot be deleted: 1 judgement of its campaigns are about its"):
        delete_pool(campaign=campaign, pool="pm-pool")
    assert Pool.objects.filter(pk=pool.pk).exists() and pool.candidates.count() == 2


def test_a_label_outside_the_pools_campaigns_does_not_hold_it(setup):
    campaign, pool, topic, p1, assessor, _ = setup
    factories.judgement(assessor, topic, p1, relevance="must", facet=f"{topic.external_id}/H1")  # an import: no campaign
    assert pool_deletion(campaign=campaign, pool="pm-pool").allowed


def test_the_pools_page_renames_and_deletes_after_saying_what_goes(client, setup):
    campaign, pool, topic, p1, assessor, organiser = setup
    url = reverse("annotation:console_pools", args=[campaign.name])
    client.force_login(assessor)
    assert client.post(url, {"action": "delete", "pool": "pm-pool", "confirm": "1"}).status_code == 404
    client.force_login(organiser)
    response = client.post(url, {"action": "rename", "pool": "pm-pool", "name": "pm-final"})
    assert response.status_code == 302 and Pool.objects.get(pk=pool.pk).name == "pm-final"
    assert client.post(url, {"action": "rename", "pool": "pm-final", "name": "no spaces"}).status_code == 400
    asked = client.post(url, {"action": "delete", "pool": "pm-final"})
    assert asked.status_code == 200 and Pool.objects.filter(pk=pool.pk).exists()
    assert "also deletes 2 candidates, 2 run ranks behind them, 1 study items, 1 units of work" in asked.content.decode()
    factories.judgement(assessor, topic, p1, relevance="must", facet=f"{topic.external_id}/H1", campaign=campaign)
    for confirm in ("", "1"):
        refused = client.post(url, {"action": "delete", "pool": "pm-final", "confirm": confirm})
        assert refused.status_code == 400 and "cannot be deleted: 1 judgement" in refused.content.decode()
    Pool.objects.get(pk=pool.pk)
