"""Moving a campaign's work: whole topics, only while nothing of them is started; each assessor's load and pace."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from annotation.models import Assignment
from annotation.roles import Role, ensure_groups
from annotation.services.assignment import assign_campaign
from annotation.services.errors import AssignmentError
from annotation.services.workload import WorkInvalid, held_topics, loads, reassign, take_back
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    """Two topics, each with two runs' articles, in one pool; ann and bob hold one topic each (overlap 1)."""
    coll = factories.collection("car")
    topics = [factories.topic(coll, f"t{i}") for i in (1, 2)]
    passages = [factories.passage(coll, f"p{i}") for i in range(4)]
    runs = [factories.run(coll, f"run{r}", {t: passages[r:r + 2] for t in topics}) for r in (0, 1)]
    pool = factories.pool(coll, topics, runs)
    campaign = factories.campaign("c")
    for name in ("ann", "bob", "cat"):
        factories.user(name)
    assign_campaign(campaign, ["ann", "bob"], pools=[pool], overlap=1, seed=0)
    return campaign


def topic_of(campaign, username):
    return Assignment.objects.filter(campaign=campaign, assessor__username=username).first().topic


def test_each_topic_is_listed_with_its_assessor_and_whether_it_can_move(campaign):
    held = held_topics(campaign)
    assert sorted((h["username"], h["units"], h["movable"]) for h in held) == [("ann", 2, True), ("bob", 2, True)]


def test_an_unstarted_topic_is_reassigned_whole_to_the_end_of_the_new_queue(campaign):
    topic = topic_of(campaign, "ann")
    ann = Assignment.objects.filter(campaign=campaign, assessor__username="ann").first().assessor
    moved = reassign(campaign, [(ann.pk, topic.pk)], "cat")
    assert moved == 2
    units = Assignment.objects.filter(campaign=campaign, topic=topic)
    assert set(units.values_list("assessor__username", flat=True)) == {"cat"}
    assert sorted(units.values_list("position", flat=True)) == [0, 1]


def test_started_work_is_neither_taken_back_nor_reassigned(campaign):
    unit = Assignment.objects.filter(campaign=campaign, assessor__username="ann").first()
    factories.judgement(unit.assessor, unit.topic, unit.run.entries.first().passage, layer="notes", value="hm",
                        campaign=campaign)
    with pytest.raises(WorkInvalid):
        take_back(campaign, [(unit.assessor_id, unit.topic_id)])
    Assignment.objects.filter(pk=unit.pk).update(status=Assignment.Status.IN_PROGRESS)
    with pytest.raises(WorkInvalid):
        reassign(campaign, [(unit.assessor_id, unit.topic_id)], "cat")
    assert Assignment.objects.filter(campaign=campaign).count() == 4


def test_a_topic_never_goes_to_someone_who_already_has_it(campaign):
    bob_topic = topic_of(campaign, "bob")
    bob = Assignment.objects.filter(campaign=campaign, assessor__username="bob").first().assessor
    assign_campaign(campaign, ["ann", "bob", "cat"], overlap=2, seed=0)  # now two assessors a topic
    other = Assignment.objects.filter(campaign=campaign, topic=bob_topic).exclude(assessor=bob).first().assessor
    with pytest.raises(WorkInvalid) as caught:
        reassign(campaign, [(bob.pk, bob_topic.pk)], other.username)
    assert "already judges" in caught.value.message


def test_taking_back_deletes_the_topics_units_and_loads_count_what_is_left(campaign):
    topic = topic_of(campaign, "bob")
    bob = Assignment.objects.filter(campaign=campaign, assessor__username="bob").first().assessor
    assert take_back(campaign, [(bob.pk, topic.pk)]) == 2
    by_name = {load.username: load for load in loads(campaign)}
    assert set(by_name) == {"ann"} and by_name["ann"].units == 2 and by_name["ann"].todo == 2
    assert by_name["ann"].pace is None  # no active time yet


def test_the_work_page_assigns_and_moves_work(client, campaign):
    client.force_login(factories.user("boss", is_staff=True))
    groups = ensure_groups()
    groups[Role.ASSESSOR].user_set.add(*get_user_model().objects.filter(username__in=["ann", "bob", "cat"]))
    response = client.post("/campaigns/c/work/", {"action": "assign", "assessors": ["ann", "bob", "cat"],
                                                  "overlap": 3, "seed": 1})
    assert response.status_code == 302
    assert Assignment.objects.filter(campaign=campaign).count() == 12
    response = client.post("/campaigns/c/work/", {"action": "assign", "assessors": ["ann"], "overlap": 2, "seed": 1})
    assert response.status_code == 400 and "only 1 assessors are named" in response.content.decode()
    page = client.get("/campaigns/c/work/").content.decode()
    assert 'id="load-table"' in page and 'name="work"' in page
    cat_topic = Assignment.objects.filter(campaign=campaign, assessor__username="cat").first().topic
    cat = Assignment.objects.filter(campaign=campaign, assessor__username="cat").first().assessor
    response = client.post("/campaigns/c/work/", {"action": "take_back", "work": [f"{cat.pk}:{cat_topic.pk}"]})
    assert response.status_code == 302
    assert not Assignment.objects.filter(campaign=campaign, assessor=cat, topic=cat_topic).exists()


def test_a_participant_team_is_given_no_work_and_an_inactive_account_none(campaign):
    """A participant team (the API account that submits runs) judging the pool its runs made would grade its own
    systems: assigning and reassigning refuse it, naming the field; one that is also an assessor may judge."""
    ensure_groups()
    team = factories.user("team")
    team.groups.add(*Group.objects.filter(name=Role.PARTICIPANT))
    topic = topic_of(campaign, "ann")
    ann = get_user_model().objects.get(username="ann")
    with pytest.raises(WorkInvalid) as refused:
        reassign(campaign, [(ann.pk, topic.pk)], "team")
    assert refused.value.field == "to" and "participant" in str(refused.value)
    with pytest.raises(AssignmentError) as refused:
        assign_campaign(campaign, ["ann", "bob", "team"], overlap=1, seed=0)
    assert refused.value.field == "assessors" and "'team'" in str(refused.value)
    get_user_model().objects.filter(username="cat").update(is_active=False)
    with pytest.raises(AssignmentError, match="'cat'"):
        assign_campaign(campaign, ["ann", "cat"], overlap=1, seed=0)
    assert not Assignment.objects.filter(campaign=campaign, assessor__username__in=["team", "cat"]).exists()

    team.groups.add(*Group.objects.filter(name=Role.ASSESSOR))
    team = get_user_model().objects.get(username="team")  # the roles are cached on the user object
    assert reassign(campaign, [(ann.pk, topic.pk)], "team") == 2
