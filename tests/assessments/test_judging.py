"""Recording judgements: every change kept, each stored once, the latest by the assessor's clock is current."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from assessments.models import Judgement, JudgementChange, Layer, Topic
from assessments.services.judging import JudgementInvalid, record_judgement
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def outline():
    coll = factories.collection("car")
    topic = factories.topic(coll, "tqa2:L_0257", facets=[("tqa2:L_0257/T_1512", "toxic chemicals")])
    p1, p2 = factories.passage(coll, "a" * 40), factories.passage(coll, "b" * 40)
    return topic, p1, p2


def test_it_keeps_every_change_and_makes_the_latest_current(outline):
    topic, p1, _ = outline
    judge = factories.user("judge1")
    t0 = timezone.now()
    record_judgement(assessor=judge, layer=Layer.NOTES, topic=topic, passage=p1, value="first", client_time=t0,
                     session_id="s1", run_ids=["guir"])
    record_judgement(assessor=judge, layer=Layer.NOTES, topic=topic, passage=p1, value="second",
                     client_time=t0 + timedelta(seconds=5), session_id="s1", run_ids=["UNH-p-l2r"])

    judgement = Judgement.objects.get()
    assert judgement.value == "second"
    assert judgement.run_ids == ["UNH-p-l2r", "guir"]
    changes = list(judgement.changes.values_list("value", "session_id", "run_ids", "assessor__username"))
    assert changes == [("first", "s1", ["guir"], "judge1"), ("second", "s1", ["UNH-p-l2r"], "judge1")]


def test_a_change_sent_twice_is_stored_once(outline):
    topic, p1, _ = outline
    judge = factories.user()
    change_id = uuid.uuid4()
    first = record_judgement(assessor=judge, layer=Layer.REMOVAL, topic=topic, passage=p1, value=True, change_id=change_id)
    again = record_judgement(assessor=judge, layer=Layer.REMOVAL, topic=topic, passage=p1, value=True, change_id=change_id)

    assert not first.duplicate and again.duplicate
    assert again.change.pk == first.change.pk
    assert JudgementChange.objects.count() == 1


def test_a_change_arriving_late_does_not_overwrite_a_newer_one(outline):
    topic, p1, _ = outline
    judge = factories.user()
    t0 = timezone.now()
    newer = record_judgement(assessor=judge, layer=Layer.FACET, topic=topic, passage=p1,
                             value=[{"facet": "tqa2:L_0257/T_1512", "relevance": "must"}], client_time=t0)
    older = record_judgement(assessor=judge, layer=Layer.FACET, topic=topic, passage=p1,
                             value=[{"facet": "general", "relevance": "can"}], client_time=t0 - timedelta(seconds=3))

    judgement = Judgement.objects.get()
    assert newer.current and not older.current
    assert judgement.value == [{"facet": "tqa2:L_0257/T_1512", "relevance": "must"}]
    assert judgement.grade == 3
    assert judgement.changes.count() == 2


def test_equal_clock_times_are_ordered_by_the_assessors_counter(outline):
    topic, p1, _ = outline
    judge = factories.user()
    t0 = timezone.now()
    record_judgement(assessor=judge, layer=Layer.NOTES, topic=topic, passage=p1, value="b", client_time=t0, client_seq=2)
    record_judgement(assessor=judge, layer=Layer.NOTES, topic=topic, passage=p1, value="a", client_time=t0, client_seq=1)
    assert Judgement.objects.get().value == "b"


def test_assessors_have_separate_judgements_for_the_same_key(outline):
    topic, p1, _ = outline
    alice, bob = factories.user("alice"), factories.user("bob")
    record_judgement(assessor=alice, layer=Layer.REMOVAL, topic=topic, passage=p1, value=True)
    record_judgement(assessor=bob, layer=Layer.REMOVAL, topic=topic, passage=p1, value=False)
    assert Judgement.objects.by(alice).get().value is True
    assert Judgement.objects.by(bob).get().value is False


def test_a_transition_is_keyed_on_the_passage_pair_in_order(outline):
    topic, p1, p2 = outline
    judge = factories.user()
    record_judgement(assessor=judge, layer=Layer.TRANSITION, topic=topic, passage=p1, passage2=p2, value="same")
    record_judgement(assessor=judge, layer=Layer.TRANSITION, topic=topic, passage=p2, passage2=p1, value="switch")
    assert Judgement.objects.of_layer(Layer.TRANSITION).count() == 2


def test_it_rejects_a_facet_that_the_topic_does_not_have(outline):
    topic, p1, _ = outline
    with pytest.raises(JudgementInvalid, match=r"value\[0\]\.facet: 'T_9999' is not a facet of topic tqa2:L_0257"):
        record_judgement(assessor=factories.user(), layer=Layer.FACET, topic=topic, passage=p1,
                         value=[{"facet": "T_9999", "relevance": "must"}])
    assert not JudgementChange.objects.exists()


@pytest.mark.parametrize(
    "layer, value, message",
    [
        (Layer.TRANSITION, "maybe", "value: 'maybe' is not one of"),
        (Layer.REMOVAL, "yes", "removal is true or false"),
        (Layer.FACET, [{"facet": "general", "relevance": "great"}], "relevance: 'great' is not one of"),
        (Layer.NOTES, 3, "notes must be text"),
    ],
)
def test_it_rejects_values_that_do_not_fit_the_layer(outline, layer, value, message):
    topic, p1, p2 = outline
    passage2 = p2 if layer == Layer.TRANSITION else None
    with pytest.raises(JudgementInvalid, match=message):
        record_judgement(assessor=factories.user(), layer=layer, topic=topic, passage=p1, passage2=passage2, value=value)


def test_plot_spans_must_lie_inside_the_query():
    coll = factories.collection(kind="book")
    topic = factories.topic(coll, "q1", kind=Topic.Kind.PLOT, text="The captain buys the crew.")
    chunk = factories.passage(coll, "moby:1")
    judge = factories.user()
    record_judgement(assessor=judge, layer=Layer.PLOT_SPANS, topic=topic, passage=chunk, value=[[4, 11]])
    with pytest.raises(JudgementInvalid, match=r"value\[0\]: expected \[start, end\] with 0 <= start < end <= 26"):
        record_judgement(assessor=judge, layer=Layer.PLOT_SPANS, topic=topic, passage=chunk, value=[[20, 40]])


def test_a_rating_is_between_one_and_ten():
    coll = factories.collection()
    p1, p2 = factories.passage(coll), factories.passage(coll)
    judge = factories.user()
    record_judgement(assessor=judge, layer=Layer.RATING, passage=p1, passage2=p2, value=10)
    with pytest.raises(JudgementInvalid, match="from 1 to 10"):
        record_judgement(assessor=judge, layer=Layer.RATING, passage=p1, passage2=p2, value=11)


def test_an_ad_hoc_grade_has_the_scales_bounds_0_to_9():
    """An ad hoc scale's values are 0-9 (adhoc.check_scale), but the save path took grades up to 100: one bound,
    assessments.labels.ADHOC_GRADE_MAX, for both (issue 40 item 4)."""
    from annotation.services.adhoc import check_scale
    from annotation.services.plot import SettingsInvalid
    from assessments.labels import ADHOC_GRADE_MAX

    coll = factories.collection()
    topic, doc, judge = factories.topic(coll, "301"), factories.passage(coll), factories.user()
    record_judgement(assessor=judge, layer=Layer.GRADE, topic=topic, passage=doc, value=ADHOC_GRADE_MAX)
    with pytest.raises(JudgementInvalid, match="value: a grade is a whole number from 0 to 9"):
        record_judgement(assessor=judge, layer=Layer.GRADE, topic=topic, passage=doc, value=ADHOC_GRADE_MAX + 1)
    assert check_scale([[ADHOC_GRADE_MAX, "top"], [0, "none"]])[0][0] == ADHOC_GRADE_MAX
    with pytest.raises(SettingsInvalid, match=r"value 0-9"):
        check_scale([[ADHOC_GRADE_MAX + 1, "top"], [0, "none"]])


def test_a_change_id_of_another_assessor_is_refused(outline):
    topic, p1, _ = outline
    change_id = uuid.uuid4()
    record_judgement(assessor=factories.user(), layer=Layer.NOTES, topic=topic, passage=p1, value="x", change_id=change_id)
    with pytest.raises(JudgementInvalid, match="another assessor"):
        record_judgement(assessor=factories.user(), layer=Layer.NOTES, topic=topic, passage=p1, value="y",
                         change_id=change_id)


def facet_change(topic, passage, judge, facet):
    return record_judgement(assessor=judge, layer=Layer.FACET, topic=topic, passage=passage,
                            value=[{"facet": facet, "relevance": "must"}])


def test_the_topics_facets_are_read_once_per_process_and_again_after_any_facet_changes(outline, django_assert_num_queries):
    """Each process keeps a topic's facet ids under its facets_version; saving or deleting a facet raises it, so a
    process that has the old ids (here: this one, its entry left in place) reads them again."""
    from assessments.models import Facet

    topic, p1, p2 = outline
    judge = factories.user()
    facet_change(Topic.objects.get(pk=topic.pk), p1, judge, "tqa2:L_0257/T_1512")  # read and kept
    fresh = Topic.objects.get(pk=topic.pk)
    from django.db import connection

    with django_assert_num_queries(1 if connection.vendor == "postgresql" else 2):  # the writes; nothing for facets
        facet_change(fresh, p1, judge, "tqa2:L_0257/T_1512")
    Facet.objects.filter(topic=topic).delete()
    assert Topic.objects.get(pk=topic.pk).facets_version > topic.facets_version
    with pytest.raises(JudgementInvalid, match="is not a facet of topic"):
        facet_change(Topic.objects.get(pk=topic.pk), p2, judge, "tqa2:L_0257/T_1512")
    Facet.objects.create(topic=topic, heading_id="tqa2:L_0257/T_9", heading="new", position=1)
    facet_change(Topic.objects.get(pk=topic.pk), p2, judge, "tqa2:L_0257/T_9")
