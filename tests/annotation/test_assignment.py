"""Assignment with overlap: k assessors per unit, a topic's units to the same assessors, balanced, idempotent."""

from collections import Counter, defaultdict
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.services.assignment import AssignmentError, assign_campaign, campaign_units, parse_topic_overlap
from annotation.models import Assignment, Campaign, CampaignTopic
from assessments.models import Layer, Qrel, QrelSet
from assessments.services.judging import record_judgement
from tests import factories

pytestmark = pytest.mark.django_db


def make_campaign(name="camp", topics=4, runs=3, passages=3, task=Campaign.Task.OUTLINE):
    """A campaign whose pool has `topics` outline topics, each judged in `runs` articles of the same passages."""
    coll = factories.collection(f"{name}-coll")
    run_objs = [factories.run(coll, f"{name}-run{r}") for r in range(runs)]
    made = []
    for t in range(topics):
        topic = factories.topic(coll, f"{name}-T{t}", title=f"Topic {t}",
                                facets=[(f"{name}-T{t}/H1", "First heading"), (f"{name}-T{t}/H2", "Second heading")])
        ps = [factories.passage(coll, f"{name}-T{t}-p{i}", text=f"Passage {i} of topic {t}.") for i in range(passages)]
        for r, run in enumerate(run_objs):
            order = ps[r % passages:] + ps[: r % passages]  # every run's article: the same passages, another order
            from assessments.models import RunEntry

            RunEntry.objects.bulk_create(
                RunEntry(run=run, topic=topic, passage=p, rank=i, score=1.0 / i) for i, p in enumerate(order, start=1)
            )
        made.append((topic, ps))
    pool = factories.pool(coll, [t for t, _ in made], run_objs, name=f"{name}-pool")
    campaign = factories.campaign(name, task, pools=[pool])
    return campaign, made, run_objs


def people(*names):
    return [factories.user(n) for n in names]


def topic_sets(campaign):
    """{topic id: {assessor ids}} and {(topic, run): {assessor ids}} of the campaign's formal assignments."""
    by_topic, by_unit = defaultdict(set), defaultdict(set)
    for a in Assignment.objects.filter(campaign=campaign, qualification=False):
        by_topic[a.topic_id].add(a.assessor_id)
        by_unit[a.topic_id, a.run_id].add(a.assessor_id)
    return by_topic, by_unit


def test_every_unit_gets_k_assessors_and_a_topics_units_go_to_the_same_assessors():
    campaign, made, runs = make_campaign(topics=6, runs=3)
    people("a1", "a2", "a3")

    result = assign_campaign(campaign, ["a1", "a2", "a3"], overlap=2, seed=7)

    by_topic, by_unit = topic_sets(campaign)
    assert len(by_unit) == 18 and all(len(s) == 2 for s in by_unit.values())
    for (topic_id, _), assessors in by_unit.items():
        assert assessors == by_topic[topic_id]
    assert result.created == 36
    assert sorted(result.load.values()) == [12, 12, 12]  # 6 topics × 2 / 3 assessors, 3 articles each
    campaign.refresh_from_db()
    assert campaign.overlap == 2


def test_it_is_deterministic_given_the_seed_and_idempotent():
    campaign, _, _ = make_campaign(topics=5)
    people("a1", "a2", "a3")
    assign_campaign(campaign, ["a1", "a2", "a3"], overlap=2, seed=3)
    first = sorted(Assignment.objects.values_list("assessor__username", "topic__external_id", "run__name", "position"))

    again = assign_campaign(campaign, ["a1", "a2", "a3"], seed=3)

    assert again.created == 0
    assert sorted(Assignment.objects.values_list("assessor__username", "topic__external_id", "run__name", "position")) == first
    other, _, _ = make_campaign("other", topics=5)
    assign_campaign(other, ["a1", "a2", "a3"], overlap=2, seed=3)
    same_seed = sorted(Assignment.objects.filter(campaign=other).values_list("assessor__username", "topic__external_id"))
    assert [(u, t.replace("other", "camp")) for u, t in same_seed] == sorted(
        Assignment.objects.filter(campaign=campaign).values_list("assessor__username", "topic__external_id"))


def test_queue_positions_follow_on_and_rerunning_adds_only_what_is_missing():
    campaign, made, runs = make_campaign(topics=2, runs=2)
    people("a1", "a2")
    assign_campaign(campaign, ["a1", "a2"], overlap=1)
    new_topic = factories.topic(runs[0].collection, "camp-T9", facets=[("camp-T9/H1", "H")])
    p = factories.passage(runs[0].collection, "camp-T9-p0")
    from assessments.models import RunEntry

    RunEntry.objects.create(run=runs[0], topic=new_topic, passage=p, rank=1, score=1)
    campaign.pools.get().topics.add(new_topic)

    result = assign_campaign(campaign, ["a1", "a2"])

    assert result.created == 1
    for name in ("a1", "a2"):
        positions = list(Assignment.objects.filter(assessor__username=name).values_list("position", flat=True))
        assert positions == list(range(len(positions)))


def test_a_topic_overlap_gives_one_topic_to_everyone():
    campaign, made, _ = make_campaign(topics=4, runs=2)
    people("a1", "a2", "a3", "a4")

    assign_campaign(campaign, ["a1", "a2", "a3", "a4"], overlap=1, topic_overlap={"camp-T2": 0})

    by_topic, _ = topic_sets(campaign)
    everyone_topic = made[2][0]
    assert len(by_topic[everyone_topic.pk]) == 4
    assert all(len(s) == 1 for tid, s in by_topic.items() if tid != everyone_topic.pk)
    assert CampaignTopic.objects.get(campaign=campaign, topic=everyone_topic).overlap == 0


def test_an_assessor_who_judged_a_topic_keeps_it():
    campaign, made, runs = make_campaign(topics=3, runs=2)
    a1, a2, a3 = people("a1", "a2", "a3")
    topic, passages = made[0]
    record_judgement(assessor=a3, layer=Layer.REMOVAL, value=True, topic=topic, passage=passages[0])

    assign_campaign(campaign, ["a1", "a2", "a3"], overlap=1, seed=1)

    by_topic, _ = topic_sets(campaign)
    assert by_topic[topic.pk] == {a3.pk}


def test_labels_of_another_campaign_do_not_keep_a_topic():
    """Judgements are keyed per campaign: what an assessor judged in another campaign on the same topics is no
    reason to give them the topic here (the overlap counts this campaign's voices)."""
    campaign, made, runs = make_campaign(topics=3, runs=2)
    other = factories.campaign("elsewhere")
    a1, a2, a3 = people("a1", "a2", "a3")
    topic, passages = made[0]
    record_judgement(assessor=a3, layer=Layer.REMOVAL, value=True, topic=topic, passage=passages[0],
                     campaign_id=other.pk)

    for seed in range(1, 6):  # whichever seed: a3 is not forced on the topic by the other campaign's label
        assign_campaign(campaign, ["a1", "a2", "a3"], overlap=1, seed=seed)
        if topic_sets(campaign)[0][topic.pk] != {a3.pk}:
            return
        Assignment.objects.filter(campaign=campaign).delete()
    raise AssertionError("a3 got the topic under every seed: the other campaign's label kept it")


def test_plot_units_are_a_query_and_a_pool():
    coll = factories.collection("book")
    topics = [factories.topic(coll, f"q{i}", kind="plot", text="a query") for i in range(3)]
    pool = factories.pool(coll, topics, [], name="plot-pool")
    from assessments.models import PoolCandidate

    for t in topics:
        for rank in (1, 2):
            PoolCandidate.objects.create(pool=pool, topic=t, passage=factories.passage(coll), rank=rank)
    campaign = factories.campaign("plots", Campaign.Task.PLOT, pools=[pool])
    people("a1", "a2")

    assign_campaign(campaign, ["a1", "a2"], overlap=2)

    assert len(campaign_units(campaign)) == 3
    rows = Assignment.objects.filter(campaign=campaign)
    assert rows.count() == 6 and not rows.filter(run__isnull=False).exists()
    assert Counter(rows.values_list("pool_id", flat=True)) == {pool.pk: 6}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(assessors=["a1", "zed"]), "assessors: no users named 'zed'"),
        (dict(assessors=["a1"], overlap=2), "overlap: 2 assessors per unit, but only 1 assessors are named"),
        (dict(assessors=["a1"], overlap=0), "overlap: 0 must be 1 or more"),
        (dict(assessors=["a1"], topic_overlap={"nope": 1}), "'nope' not topics of the campaign's pools"),
        (dict(assessors=["a1"], topic_overlap={"camp-T0": 3}), "topic_overlap: camp-T0=3: expected 0"),
        (dict(assessors=["a1"], qualification_topics=["camp-T0"]), "qualification_gold: qualification topics need"),
        (dict(assessors=["a1"], qualification_gold="nope"), "qualification_gold: no qrel set named 'nope'"),
    ],
)
def test_bad_input_is_refused_naming_the_option_and_nothing_is_written(kwargs, message):
    campaign, _, _ = make_campaign(topics=2)
    people("a1")
    assessors = kwargs.pop("assessors")
    with pytest.raises(AssignmentError, match=message.replace("(", r"\(")):
        assign_campaign(campaign, assessors, **kwargs)
    assert not Assignment.objects.exists() and not CampaignTopic.objects.exists()
    campaign.refresh_from_db()
    assert campaign.overlap == 1


def test_topic_overlap_items_are_parsed():
    assert parse_topic_overlap(["T1=2", "x=y=all"]) == {"T1": 2, "x=y": 0}
    with pytest.raises(AssignmentError, match="topic_overlap: 'T1' is not TOPIC=K"):
        parse_topic_overlap(["T1"])
    with pytest.raises(AssignmentError, match="K must be a whole number"):
        parse_topic_overlap(["T1=two"])


def test_the_command_prints_progress_and_a_summary_and_stores_qualification_settings():
    campaign, made, _ = make_campaign(topics=3, runs=2)
    people("a1", "a2", "a3")
    gold = QrelSet.objects.create(name="gold", collection=made[0][0].collection)
    with pytest.raises(CommandError, match="qrel set 'gold' has no grades for qualification topics 'camp-T0'"):
        call_command("assign_campaign", "camp", "--assessors", "a1", "--qualification-topics", "camp-T0",
                     "--qualification-gold", "gold")
    Qrel.objects.create(qrel_set=gold, topic=made[0][0], passage=made[0][1][0], grade=1)
    out = StringIO()

    call_command("assign_campaign", "camp", "--assessors", "a1", "a2", "a3", "--overlap", "2",
                 "--qualification-topics", "camp-T0", "--qualification-gold", "gold", "--seed", "5", stdout=out)

    text = out.getvalue()
    assert "3/3 topics" in text
    assert "Campaign camp: 14 assignments new (6 of them qualification) over 3 topics and 6 units" in text
    assert Assignment.objects.filter(qualification=True).count() == 6  # 3 assessors × 2 articles of camp-T0
    campaign.refresh_from_db()
    assert campaign.qualification_gold.name == "gold"
    with pytest.raises(CommandError, match="campaign: no campaign named 'nope'"):
        call_command("assign_campaign", "nope", "--assessors", "a1")
    with pytest.raises(CommandError, match="--pool: no pool named 'x'"):
        call_command("assign_campaign", "camp", "--assessors", "a1", "--pool", "x")


def test_the_command_shows_a_service_error_as_its_flag():
    make_campaign(topics=1)
    people("a1")
    with pytest.raises(CommandError, match="nothing was assigned: --overlap: 0 must be 1 or more"):
        call_command("assign_campaign", "camp", "--assessors", "a1", "--overlap", "0")


def test_the_topics_of_its_units_join_the_campaign_and_its_home_lists_them(client):
    """Assigning over a pool records the pool's topics as the campaign's: its console home names their collection
    and counts them (it said "Collection —", "Topics 0", "no topics" while assessors had units over them)."""
    from django.contrib.auth.models import Group

    from annotation.roles import Role, ensure_groups

    campaign, made, _ = make_campaign(topics=4)
    people("a1", "a2", "a3")

    assign_campaign(campaign, ["a1", "a2", "a3"], overlap=1, seed=1)
    assign_campaign(campaign, ["a1", "a2", "a3"], overlap=1, seed=1)  # again: nothing new, nothing twice

    assert sorted(campaign.track.topics.values_list("pk", flat=True)) == sorted(t.pk for t, _ in made)
    assert campaign.track.collection.name == "camp-coll"
    ensure_groups()
    boss = factories.user("boss", is_staff=True)
    boss.groups.add(Group.objects.get(name=Role.ORGANISER))
    client.force_login(boss)
    page = client.get(f"/campaigns/{campaign.name}/").content.decode()
    assert '<dt>Collection</dt><dd id="campaign-collections">camp-coll</dd>' in page
    assert '<dt>Topics</dt><dd id="campaign-topic-count">4</dd>' in page
    assert "4 topics, 3 runs" in page and "no topics" not in page
