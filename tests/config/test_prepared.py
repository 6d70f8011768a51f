"""config.prepared: a queryset compiled once gives what the ORM gives, in one statement, with any values."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Assignment
from annotation.services import changes, qualification
from annotation.views.assessor import OWN_ASSIGNMENT
from assessments.models import Judgement
from assessments.services.judging import record_judgement
from config.prepared import Prepared
from tests import factories

pytestmark = pytest.mark.django_db


def _orm(token, user):
    return Assignment.objects.select_related("topic", "run", "campaign").annotate(
        open_siblings=changes.open_sibling_articles(), qualification_locked=qualification.locked_annotation(),
    ).get(token=token, assessor_id=user)


def _fields(obj):
    return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields}


@pytest.fixture
def assignments():
    coll = factories.collection("car")
    topics = [factories.topic(coll, f"t{i}") for i in range(2)]
    passages = [factories.passage(coll) for _ in range(3)]
    run = factories.run(coll, "guir", {t: passages for t in topics})
    campaign = factories.campaign("c1")
    judge, other = factories.user("judge"), factories.user("other")
    return [
        factories.assignment(judge, topics[0], run=run, campaign=campaign),
        factories.assignment(judge, topics[1], run=run),  # outside any campaign
        factories.assignment(other, topics[0], run=run, campaign=campaign),
    ]


def test_the_assignment_read_is_the_orms_with_its_related_rows_and_annotations(assignments):
    for a in assignments:
        expected = _orm(a.token, a.assessor_id)
        with CaptureQueriesContext(connection) as queries:
            got = OWN_ASSIGNMENT.first(token=a.token, user=a.assessor_id)
            assert _fields(got) == _fields(expected)
            for related in ("topic", "run", "campaign"):
                assert (getattr(got, related) and _fields(getattr(got, related))) == (
                    getattr(expected, related) and _fields(getattr(expected, related)))
            assert (got.open_siblings, got.qualification_locked) == (expected.open_siblings, expected.qualification_locked)
        assert len(queries) == 1  # related rows and annotations came with the row: nothing read lazily
        assert got._state.adding is False and got._state.db == "default"


def test_another_users_token_finds_nothing_and_values_do_not_leak_between_calls(assignments):
    mine, _, theirs = assignments
    assert OWN_ASSIGNMENT.first(token=theirs.token, user=mine.assessor_id) is None
    assert OWN_ASSIGNMENT.first(token="no-such-token", user=mine.assessor_id) is None
    assert OWN_ASSIGNMENT.first(token=mine.token, user=mine.assessor_id).pk == mine.pk


def test_values_list_rows_are_converted_as_the_orm_converts_them(assignments):
    a = assignments[0]
    record_judgement(assessor=a.assessor, layer="notes", value="a note", topic=a.topic,
                     passage=a.run.entries.first().passage, campaign_id=a.campaign_id, run_ids=[a.run_id])
    build = lambda user: Judgement.objects.filter(assessor_id=user).values_list("value", "run_ids", "updated_at")  # noqa: E731
    prepared = Prepared(build, user=2_147_000_123)
    assert prepared.rows(user=a.assessor_id) == list(build(a.assessor_id))
    assert prepared.rows(user=assignments[2].assessor_id) == []


def test_a_sentinel_the_query_does_not_use_once_is_refused(assignments):
    twice = Prepared(lambda user: Assignment.objects.filter(assessor_id=user, topic_id=user), user=2_147_000_124)
    with pytest.raises(ValueError, match="'user' is in the parameters 2 times"):
        twice.rows(user=1)
    out_of_range = Prepared(lambda user: Judgement.objects.filter(campaign_id=user), user=-5)
    with pytest.raises(Exception):  # a negative value for a positive field: Django drops the lookup
        out_of_range.rows(user=1)
