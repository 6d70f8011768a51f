"""Pools made from the console: only the campaign's topics and runs, and a preview that counts what the pool holds."""

import pytest

from annotation.services.campaigns import create_campaign
from annotation.services.pool_setup import PoolInvalid, new_pool, preview, retriever_list
from assessments.importers.trec import import_run
from assessments.models import Pool, Run, Topic
from retrieval.models import Collection
from tests import factories
from tests.factories import DATA

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def campaign():
    """trectools' tiny runs r1 (topics 1, 2) and r2 (topics 1, 3) over collection `tiny`, topics 1–3 in a campaign."""
    factories.collection("tiny", kind=Collection.Kind.DOCUMENTS)
    for name in ("r1", "r2"):
        import_run(DATA / "pooling" / f"{name}.run", "tiny", name=name, create_missing=True)
    return create_campaign(name="tiny", task="adhoc")


def runs(*names):
    return [Run.objects.get(name=n).pk for n in names]


def test_the_preview_counts_candidates_per_topic_and_the_runs_overlap(campaign):
    shown = preview(campaign=campaign, runs=runs("r1", "r2"), depth=2)
    assert shown.topics == [("1", "", 2, 2), ("2", "", 2, 2), ("3", "", 2, 2)]
    assert shown.runs == [("r1", 4, 2), ("r2", 4, 2)]  # r1's and r2's top 2 of topic 1 are the same documents
    assert shown.overlap == [("r1", "r2", 1.0, 1)]
    cut = preview(campaign=campaign, runs=runs("r1"), depth=3, per_topic=2)
    assert [t[0] for t in cut.topics] == ["1", "2"]  # only the topics r1 ranks
    assert cut.candidates == 4 and cut.largest == 2


def test_a_pool_is_built_over_the_campaigns_topics_its_runs_rank(campaign):
    pool = new_pool(campaign=campaign, name="tiny-pool", runs=runs("r1"), depth=2)
    pool.refresh_from_db()
    assert pool.status == Pool.Status.READY
    assert sorted(pool.topics.values_list("external_id", flat=True)) == ["1", "2"]
    assert pool.candidates.count() == 4 and campaign.pools.get() == pool


def test_topics_outside_the_campaign_and_runs_of_another_campaign_are_refused(campaign):
    other = factories.topic(Collection.objects.get(name="tiny"), "99", kind=Topic.Kind.ADHOC)
    with pytest.raises(PoolInvalid) as caught:
        new_pool(campaign=campaign, name="p", runs=runs("r1"), topics=[other.external_id])
    assert caught.value.field == "topics"
    Run.objects.filter(name="r2").update(track="someone-else")
    with pytest.raises(PoolInvalid) as caught:
        new_pool(campaign=campaign, name="p", runs=runs("r2"))
    assert caught.value.field == "runs"
    with pytest.raises(PoolInvalid) as caught:
        new_pool(campaign=campaign, name="p")
    assert caught.value.field == "runs"
    assert not Pool.objects.exists()


def test_retrievers_are_named_as_build_pool_names_them(settings):
    settings.MODEL_ALLOW_LIST = ["intfloat/e5-small-v2"]
    assert retriever_list(bm25=True, dense=True) == ["bm25", "dense"]
    assert retriever_list(dense=True, encoder="intfloat/e5-small-v2", rerankers=["/m/ce"]) == [
        "dense:intfloat/e5-small-v2", "rerank:/m/ce"]
    with pytest.raises(PoolInvalid):
        retriever_list(dense=True, encoder="a,b=c,d")


def test_a_hub_model_not_on_the_allow_list_is_refused_naming_its_field(settings):
    """A form field must not make a worker download a model from the hub (issue 38 item 8)."""
    settings.MODEL_ALLOW_LIST = ["intfloat/e5-small-v2"]
    for kwargs, field in (({"dense": True, "encoder": "someone/huge-model"}, "encoder"),
                          ({"bm25": True, "rerankers": ["cross-encoder/ms-marco-MiniLM-L-6-v2"]}, "rerankers")):
        with pytest.raises(PoolInvalid, match="not on this site's MODEL_ALLOW_LIST") as caught:
            retriever_list(**kwargs)
        assert caught.value.field == field


def test_a_choice_campaign_makes_its_forced_choice_items_from_a_pool_run(tmp_path, client):
    from annotation.models import Campaign
    from assessments.models import RunEntry, StudyItem
    from retrieval.models import Passage
    from tests.annotation import plot_setup

    topic = plot_setup.load_query(tmp_path, lines=400)
    pool, _ = plot_setup.plot_pool(topic, size=6)
    chunks = list(Passage.objects.filter(book=topic.book).order_by("first_sentence")[:30])
    run = Run.objects.create(collection=topic.collection, name="bm25", source=Run.Source.RETRIEVER)
    RunEntry.objects.bulk_create(RunEntry(run=run, topic=topic, passage=p, rank=i) for i, p in enumerate(chunks, 1))
    pool.params = {"built": {"runs": [run.pk]}}
    pool.save()
    factories.campaign("choice", Campaign.Task.PLOT, settings={"mode": "choice"}, pools=[pool])
    client.force_login(factories.user("boss", is_staff=True))
    page = client.get("/campaigns/choice/pools/").content.decode()
    assert "Make forced-choice items" in page and 'value="20"' in page
    response = client.post("/campaigns/choice/pools/", {"action": "study_items", "pool": pool.name, "run": run.pk,
                                                         "n": 3})
    assert response.status_code == 302
    item = StudyItem.objects.get(pool=pool)
    assert item.kind == StudyItem.Kind.CHOICE and item.candidates.count() == 3
    response = client.post("/campaigns/choice/pools/", {"action": "study_items", "pool": pool.name, "run": 0, "n": 3})
    assert response.status_code == 400 and "one of the pool&#x27;s runs" in response.content.decode()


def test_the_console_previews_a_pool_by_post_so_no_csrf_token_reaches_the_address_bar(campaign, client):
    from django.contrib.auth.models import Group

    from annotation.roles import Role, ensure_groups

    ensure_groups()
    boss = factories.user("boss", is_staff=True)
    boss.groups.add(Group.objects.get(name=Role.ORGANISER))
    client.force_login(boss)
    page = client.get("/campaigns/tiny/pools/").content.decode()
    assert 'id="preview-pool"' in page and 'formmethod="get"' not in page  # Preview sends the form as it is: POST
    form = {"name": "p", "runs": runs("r1", "r2"), "strategy": "union", "fusion": "rrf", "depth": 2, "preview": "1"}
    shown = client.post("/campaigns/tiny/pools/", form)
    assert shown.status_code == 200 and b"Candidates per topic" in shown.content
    assert not Pool.objects.filter(name="p").exists()  # a preview builds nothing
    # A GET never previews (an old bookmarked preview address shows the empty form).
    old = client.get("/campaigns/tiny/pools/", {**form, "csrfmiddlewaretoken": "x"})
    assert old.status_code == 200 and b"Candidates per topic" not in old.content


def test_a_preview_of_retrievers_alone_lists_the_topics_and_what_they_can_bring(campaign, client):
    """With BM25 alone the preview said "0 topics, 0 candidates" (issue 39 item 12): it lists the campaign's topics,
    each with the most the retrievers can bring (depth each), as new_pool pools them."""
    shown = preview(campaign=campaign, retrievers=["bm25"], depth=5, per_topic=4)
    assert shown.topics == [("1", "", 0, 4), ("2", "", 0, 4), ("3", "", 0, 4)] and shown.retriever_depth == 5
    both = preview(campaign=campaign, runs=runs("r1"), retrievers=["bm25"], depth=2)
    assert [t[0] for t in both.topics] == ["1", "2", "3"]  # with a retriever, topics r1 does not rank are pooled too
    assert both.from_runs == 4 and both.candidates == 4 + 3 * 2

    from django.contrib.auth.models import Group

    from annotation.roles import Role, ensure_groups

    ensure_groups()
    boss = factories.user("boss", is_staff=True)
    boss.groups.add(Group.objects.get(name=Role.ORGANISER))
    client.force_login(boss)
    form = {"name": "p", "bm25": "on", "strategy": "union", "fusion": "rrf", "depth": 5, "preview": "1"}
    page = client.post("/campaigns/tiny/pools/", form)
    assert page.status_code == 200, page.content.decode()[:500]
    text = " ".join(page.content.decode().split())
    assert "3 topics, at most <b>15</b> candidates: what bm25 finds at most 5 a topic" in text
