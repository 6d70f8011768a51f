"""Pair items from two pools (the console's form) take pools the campaign may use: its own, or an organiser's pool of
no campaign; never another campaign's pool, whose order comes from the runs submitted to that campaign (as a pool
never takes another campaign's runs, annotation.services.pool_setup.poolable_runs)."""

import pytest
from django.urls import reverse

from annotation.roles import Role, ensure_groups
from annotation.services.pool_setup import PoolInvalid, pair_items
from assessments.models import StudyItem
from tests import factories
from tests.annotation import plot_setup as ps
from tests.assessments.test_ranked_pair_items import pair_campaign, world  # noqa: F401 (the fixture)

pytestmark = pytest.mark.django_db


def test_another_campaigns_pool_is_refused_and_not_offered(client, world):  # noqa: F811
    campaign = pair_campaign(world)
    campaign.pools.remove(world["other"])
    ps.campaign(name="theirs", mode="pair").pools.add(world["other"])  # reverse-pool is another campaign's now
    with pytest.raises(PoolInvalid) as caught:
        pair_items(campaign=campaign, pool="plot-pool", sources="pools", first="plot-pool", second="reverse-pool",
                   depth=2)
    assert caught.value.field == "pools"
    boss = factories.user("boss")
    boss.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(boss)
    url = reverse("annotation:console_pools", args=[campaign.name])
    assert 'value="reverse-pool"' not in client.get(url).content.decode()
    response = client.post(url, {"action": "pair_items", "pool": "plot-pool", "sources": "pools",
                                 "first": "plot-pool", "second": "reverse-pool", "depth": 2})
    assert response.status_code == 400
    assert not StudyItem.objects.exists()


def test_a_pool_of_no_campaign_is_taken(world):  # noqa: F811
    campaign = pair_campaign(world)
    campaign.pools.remove(world["other"])  # an organiser's pool of no campaign
    items = pair_items(campaign=campaign, pool="plot-pool", sources="pools", first="plot-pool", second="reverse-pool",
                       depth=2)
    assert len(items) == 2
