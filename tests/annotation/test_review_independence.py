"""A batch's review never goes to a reviewer who judges the same topic in the campaign (an assessor in the reviewer
group too): the review shows the batch's labels, and an assessor never sees another assessor's labels of a topic
they judge (agreement between them measures independent judgements). Another reviewer takes it, else, with none
left, any organiser (as when the only reviewer is the batch's own assessor)."""

import pytest

from annotation.models import Assignment, Review
from annotation.roles import Role, ensure_groups
from annotation.services.assignment import assign_campaign
from annotation.services.changes import mark
from tests import factories
from tests.annotation.test_assignment import make_campaign

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("outside_reviewer", [True, False])
def test_a_co_assessor_of_the_topic_is_never_its_reviewer(outside_reviewer):
    groups = ensure_groups()
    campaign, made, runs = make_campaign("rv-ind", topics=1, runs=1, passages=3)
    judge, peer = factories.user("judge"), factories.user("aaa-peer")  # the peer sorts first: the least busy pick
    judge.groups.add(groups[Role.ASSESSOR])
    peer.groups.add(groups[Role.ASSESSOR], groups[Role.REVIEWER])
    if outside_reviewer:
        factories.user("zed-reviewer").groups.add(groups[Role.REVIEWER])
    assign_campaign(campaign, ["judge", "aaa-peer"], overlap=2)
    unit = Assignment.objects.get(campaign=campaign, assessor=judge)
    mark(unit, True, reason="test: marked done")
    review = Review.objects.get(assignment=unit)
    assert review.reviewer_id != peer.pk
    assert (review.reviewer.username if review.reviewer else None) == ("zed-reviewer" if outside_reviewer else None)
