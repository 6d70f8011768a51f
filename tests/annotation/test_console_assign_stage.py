"""The console's assign form (the work page) takes a nuggets campaign's stage as assign_campaign --stage does
(issue 30, item 3): create gives a unit per topic to write its bank, support a unit per answer; the stage is stored;
other campaigns' form has no stage; a stage that is neither is a 400 naming the field."""

import pytest
from django.urls import reverse

from annotation.models import Assignment
from annotation.roles import Role, ensure_groups
from tests import factories
from tests.annotation.nuggets_setup import nuggets_world
from tests.annotation.test_campaign_settings import adhoc_campaign

pytestmark = pytest.mark.django_db


def organiser(client):
    boss = factories.user("boss")
    boss.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(boss)


def assessor(name):
    user = factories.user(name)
    user.groups.add(ensure_groups()[Role.ASSESSOR])
    return user


def assign(client, campaign, **fields):
    data = {"action": "assign", "assessors": ["writer"], "overlap": 1, "seed": 0, **fields}
    return client.post(reverse("annotation:console_work", args=[campaign.name]), data)


def test_stage_create_on_the_work_page_makes_a_unit_per_topic_and_stores_the_stage(client):
    world = nuggets_world()
    assessor("writer")
    organiser(client)
    shown = client.get(reverse("annotation:console_work", args=[world["campaign"].name]))
    assert 'name="stage" value="create"' in shown.content.decode()
    assert shown.context["form"]["stage"].value() == "support"  # the stored stage, support by default
    response = assign(client, world["campaign"], stage="create")
    assert response.status_code == 302
    units = Assignment.objects.filter(campaign=world["campaign"])
    assert [u.kind for u in units] == [Assignment.Kind.NUGGET_CREATION]
    world["campaign"].refresh_from_db()
    assert world["campaign"].settings["nugget_stage"] == "create"


def test_stage_support_on_the_work_page_makes_a_unit_per_answer(client):
    world = nuggets_world()
    assessor("writer")
    organiser(client)
    assert assign(client, world["campaign"], stage="support").status_code == 302
    assert sorted(u.kind for u in Assignment.objects.filter(campaign=world["campaign"])) == [
        Assignment.Kind.NUGGET_SUPPORT] * 2


def test_stage_citations_on_the_work_page_makes_a_unit_per_answer_that_cites(client):
    world = nuggets_world()
    assessor("writer")
    organiser(client)
    assert 'name="stage" value="citations"' in client.get(
        reverse("annotation:console_work", args=[world["campaign"].name])).content.decode()
    assert assign(client, world["campaign"], stage="citations").status_code == 302
    assert sorted(u.kind for u in Assignment.objects.filter(campaign=world["campaign"])) == [
        Assignment.Kind.CITATION_SUPPORT] * 2


def test_a_stage_that_is_neither_is_a_400_naming_the_field_and_assigns_nothing(client):
    world = nuggets_world()
    assessor("writer")
    organiser(client)
    response = assign(client, world["campaign"], stage="write")
    assert response.status_code == 400 and "stage" in response.context["form"].errors
    assert not Assignment.objects.filter(campaign=world["campaign"]).exists()


def test_other_campaigns_assign_form_has_no_stage(client):
    campaign, _ = adhoc_campaign(assessors=("writer",))
    organiser(client)
    response = client.get(reverse("annotation:console_work", args=[campaign.name]))
    assert "stage" not in response.context["form"].fields
    assert 'name="stage"' not in response.content.decode()
