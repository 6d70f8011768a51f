"""People made in the console: a password shown once, a one-time sign-in link, roles, participant teams' tokens."""

import re

import pytest
from django.contrib.auth import authenticate, get_user_model

from annotation.models import ApiToken
from annotation.roles import is_organiser
from annotation.services import people
from annotation.services.campaigns import create_campaign
from annotation.services.tokens import token_for_key
from tests import factories

pytestmark = pytest.mark.django_db


def test_a_person_made_with_a_password_can_sign_in_with_it_and_has_the_roles():
    made = people.create_person(username="ann", roles=["assessor", "reviewer"])
    assert authenticate(username="ann", password=made.password) is not None
    assert set(made.user.groups.values_list("name", flat=True)) == {"assessor", "reviewer"}
    assert not made.user.is_staff and made.link is None


def test_names_are_unique_whatever_the_case_and_roles_must_be_known():
    people.create_person(username="ann", roles=["assessor"])
    with pytest.raises(people.PersonInvalid) as caught:
        people.create_person(username="Ann", roles=["assessor"])
    assert caught.value.field == "username"
    with pytest.raises(people.PersonInvalid) as caught:
        people.create_person(username="bob", roles=["wizard"])
    assert caught.value.field == "roles"
    with pytest.raises(people.PersonInvalid) as caught:
        people.create_person(username="bad name!", roles=["assessor"])
    assert caught.value.field == "username"


def test_organisers_get_the_staff_flag_and_lose_it_with_the_role():
    user = people.create_person(username="org", roles=["organiser"]).user
    assert user.is_staff and is_organiser(user)
    people.set_roles(user, ["assessor"])
    user = get_user_model().objects.get(pk=user.pk)
    assert not user.is_staff and not is_organiser(user)


def test_the_sign_in_link_sets_a_password_signs_in_and_then_stops_working(client, organiser):
    response = client.post("/people/", {"action": "create", "username": "cat", "roles": ["assessor"], "sign_in": "link"})
    link = re.search(r'id="new-link">([^<]+)<', response.content.decode()).group(1)
    assert "/welcome/" in link
    client.logout()
    path = link.split("testserver", 1)[1]
    assert client.get(path).status_code == 200
    response = client.post(path, {"new_password1": "a long new password 42", "new_password2": "a long new password 42"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200  # signed in as cat, on their queue
    assert authenticate(username="cat", password="a long new password 42") is not None
    client.logout()
    assert client.get(path).status_code == 404  # used: the password and the last sign-in changed


def test_a_password_is_shown_once_and_never_in_a_message_that_outlives_the_page(client, organiser):
    response = client.post("/people/", {"action": "create", "username": "dan", "roles": ["assessor"],
                                        "sign_in": "password"})
    password = re.search(r'id="new-password">([^<]+)<', response.content.decode()).group(1)
    assert authenticate(username="dan", password=password) is not None
    assert response["Cache-Control"].startswith("max-age=0")
    assert password not in client.get("/people/").content.decode()


def test_a_team_token_is_scoped_to_its_campaign_shown_once_and_revoked_from_the_page(client, organiser):
    web = factories.collection("web")
    factories.topic(web, "301", kind="adhoc")
    create_campaign(name="adhoc", task="adhoc")
    response = client.post("/people/", {"action": "token", "name": "team-a", "role": "participant", "campaign": "adhoc"})
    key = re.search(r'id="new-key">([^<]+)<', response.content.decode()).group(1)
    token = token_for_key(key)
    assert token.campaign.name == "adhoc" and token.user.groups.filter(name="participant").exists()
    assert key not in client.get("/people/").content.decode()
    response = client.post("/people/", {"action": "revoke", "token": token.pk})
    assert response.status_code == 302
    assert token_for_key(key) is None and ApiToken.objects.get().revoked_at is not None


def test_a_team_token_needs_a_campaign_and_an_organiser_token_an_organiser(client, organiser):
    response = client.post("/people/", {"action": "token", "name": "team-b", "role": "participant"})
    assert response.status_code == 400 and not ApiToken.objects.exists()
    response = client.post("/people/", {"action": "token", "name": "nobody", "role": "organiser"})
    assert response.status_code == 400 and not ApiToken.objects.exists()
    response = client.post("/people/", {"action": "token", "name": "boss", "role": "organiser"})
    assert response.status_code == 200 and ApiToken.objects.get().user == organiser
