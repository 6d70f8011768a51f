"""A plot campaign over several books: its home names every book and counts every topic its units are about."""

import pytest

from annotation.services.assignment import assign_campaign
from annotation.services.campaigns import campaign_collections, campaign_topics
from tests import factories
from tests.annotation import plot_setup as ps

pytestmark = pytest.mark.django_db


def test_a_plot_campaign_spanning_two_books_lists_both_on_its_home(tmp_path, client, organiser):
    """Its track holds one book (a track is of one collection), so the home said one book and its topics alone
    (issue 39 item 12)."""
    wild = ps.load_query(tmp_path, lines=ps.EXCERPT)
    sawyer = ps.load_query(tmp_path, slug="tom-sawyer", query_id="demo-3", lines=1100)
    pools = [ps.plot_pool(wild, name="wild-pool")[0], ps.plot_pool(sawyer, name="sawyer-pool")[0]]
    camp = ps.campaign(name="two-books")
    factories.user("ann")
    assign_campaign(camp, ["ann"], pools=pools, overlap=1)
    assert camp.track.topics.count() == 1  # the track: one book
    assert set(campaign_topics(camp)) == {wild, sawyer}
    assert [c.name for c in campaign_collections(camp)] == sorted([wild.collection.name, sawyer.collection.name])
    page = client.get(f"/campaigns/{camp.name}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert f'id="campaign-collections">{", ".join(sorted([wild.collection.name, sawyer.collection.name]))}</dd>' in html
    assert 'id="campaign-topic-count">2</dd>' in html and "2 topics" in html
