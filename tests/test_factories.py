"""The factories of tests/factories.py: a judgement goes through record_judgement's rules, a unit's kind is its
campaign's."""

import pytest

from annotation.models import Assignment, Campaign
from assessments.models import JudgementChange, Layer, Topic
from assessments.services.judging import JudgementInvalid
from tests import factories

pytestmark = pytest.mark.django_db


def test_a_judgement_is_checked_against_its_layer_and_keeps_its_change():
    coll = factories.collection()
    topic = factories.topic(coll, facets=[("H1", "One"), ("H2", "Two")])
    passage, other = factories.passage(coll), factories.passage(coll)
    judge = factories.user()
    made = factories.judgement(judge, topic, passage, relevance="should", campaign=factories.campaign())
    assert made.value == [{"facet": "H1", "relevance": "should"}] and made.grade == 2
    assert JudgementChange.objects.get(judgement_id=made.pk).value == made.value
    with pytest.raises(JudgementInvalid, match="not a facet of topic"):
        factories.judgement(judge, topic, passage, relevance="must", facet="H9")
    with pytest.raises(JudgementInvalid, match="legacy label"):
        factories.judgement(judge, topic, passage, layer=Layer.TRANSITION, value="offtopic", passage2=other)


def test_a_units_kind_comes_from_its_campaign():
    coll = factories.collection()
    topic = factories.topic(coll, kind=Topic.Kind.ADHOC)
    pool = factories.pool(coll, [topic], [])
    campaign, units = factories.assigned_campaign(topic, [factories.user(), factories.user()], pool=pool,
                                                  task=Campaign.Task.ADHOC)
    assert [u.kind for u in units] == [Assignment.Kind.ADHOC] * 2 and list(campaign.pools.all()) == [pool]
    article = factories.assignment(topic=topic, run=factories.run(coll), campaign=factories.campaign())
    assert article.kind == Assignment.Kind.OUTLINE
