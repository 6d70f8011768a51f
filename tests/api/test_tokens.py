"""Tokens: issue_token prints a key once and stores its hash; revoke_token ends it; `Authorization: Token <key>`."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotation.models import ApiToken
from annotation.roles import Role, ensure_groups
from annotation.services.tokens import hash_key, issue_token
from tests import factories

pytestmark = pytest.mark.django_db


def command(*args):
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def client_with(header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    return client


def test_issue_token_creates_the_user_in_the_role_group_and_prints_a_key_stored_only_as_a_hash():
    key = command("issue_token", "team-x", "--quiet").strip()
    user = get_user_model().objects.get(username="team-x")
    assert list(user.groups.values_list("name", flat=True)) == [Role.PARTICIPANT]
    assert not user.has_usable_password() and not user.is_staff
    token = ApiToken.objects.get(user=user)
    assert token.role == "participant" and token.campaign is None and token.revoked_at is None
    assert token.key_hash == hash_key(key) and token.prefix == key[:8]
    assert len(key) >= 40
    assert not ApiToken.objects.filter(key_hash__contains=key[8:20]).exists()


def test_an_organiser_token_needs_an_organiser_and_never_makes_one(adhoc):
    with pytest.raises(CommandError, match="no user named 'boss': make them an organiser first"):
        command("issue_token", "boss", "--role", "organiser", "--campaign", "adhoc")
    team = factories.user("team-z")
    team.groups.add(ensure_groups()[Role.PARTICIPANT])
    with pytest.raises(CommandError, match="user 'team-z' is not an organiser"):
        command("issue_token", "team-z", "--role", "organiser", "--campaign", "adhoc")
    team.refresh_from_db()
    assert not team.is_staff and not team.groups.filter(name=Role.ORGANISER).exists()  # nothing widened
    boss = factories.user("boss")
    boss.groups.add(ensure_groups()[Role.ORGANISER])
    out = command("issue_token", "boss", "--role", "organiser", "--campaign", "adhoc")
    assert "organiser token" in out and "for campaign 'adhoc'" in out and "not shown again" in out
    boss.refresh_from_db()
    assert not boss.is_staff and ApiToken.objects.get(user=boss).campaign == adhoc


def test_a_tokens_role_is_checked_at_every_use(adhoc):
    from rest_framework.test import APIClient

    boss = factories.user("boss")
    boss.groups.add(ensure_groups()[Role.ORGANISER])
    _, key = issue_token(username="boss", role="organiser")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/campaigns/").status_code == 200
    boss.groups.clear()  # demoted
    assert client.get("/api/campaigns/").status_code == 403


def test_issue_token_for_an_unknown_campaign_fails_and_makes_nothing():
    with pytest.raises(CommandError, match="no campaign named 'nope'"):
        command("issue_token", "team-x", "--campaign", "nope")
    assert not get_user_model().objects.filter(username="team-x").exists()


def test_a_token_authenticates_and_notes_when_it_was_used():
    token, key = issue_token(username="team-x", role="participant")
    response = client_with(f"Token {key}").get("/api/me/")
    assert response.status_code == 200
    assert response.json() == {"username": "team-x", "role": "participant", "campaign": None, "token": token.prefix}
    token.refresh_from_db()
    assert token.last_used_at is not None


@pytest.mark.parametrize("header", ["Token nope", "Token", "Token a b", "Token \u00e9t\u00e9"])
def test_a_wrong_or_malformed_token_is_401(header):
    issue_token(username="team-x", role="participant")
    response = client_with(header.encode("utf-8").decode("latin-1")).get("/api/me/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Token realm="api"'


def test_a_request_without_credentials_is_401():
    response = APIClient().get("/api/runs/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Token realm="api"'


def test_revoke_token_by_prefix_ends_the_token():
    token, key = issue_token(username="team-x", role="participant")
    assert f"revoked participant token {token.prefix}" in command("revoke_token", token.prefix)
    assert client_with(f"Token {key}").get("/api/me/").status_code == 401
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_revoke_token_by_key_or_by_user():
    _, first = issue_token(username="team-x", role="participant")
    _, second = issue_token(username="team-x", role="participant")
    _, other = issue_token(username="team-y", role="participant")
    command("revoke_token", first)
    assert client_with(f"Token {first}").get("/api/me/").status_code == 401
    assert client_with(f"Token {second}").get("/api/me/").status_code == 200
    command("revoke_token", "--user", "team-x")
    assert client_with(f"Token {second}").get("/api/me/").status_code == 401
    assert client_with(f"Token {other}").get("/api/me/").status_code == 200


def test_revoke_token_refuses_an_unknown_or_ambiguous_name():
    with pytest.raises(CommandError, match="no active token"):
        command("revoke_token", "abcdefgh")
    with pytest.raises(CommandError, match="at least 4 characters"):
        command("revoke_token", "ab")
    with pytest.raises(CommandError, match="either a token"):
        command("revoke_token")


def test_a_token_of_a_deactivated_user_is_401():
    token, key = issue_token(username="team-x", role="participant")
    token.user.is_active = False
    token.user.save()
    assert client_with(f"Token {key}").get("/api/me/").status_code == 401


def test_an_organiser_revokes_tokens_in_the_admin_but_cannot_make_one_there(client):
    from annotation.roles import ensure_groups
    from tests import factories

    token, key = issue_token(username="team-x", role="participant")
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(organiser)
    assert client.get("/admin/annotation/apitoken/add/").status_code == 403
    page = client.get("/admin/annotation/apitoken/").content.decode()
    assert token.prefix in page and key not in page
    client.post("/admin/annotation/apitoken/", {"action": "revoke", "_selected_action": [token.pk]})
    assert client_with(f"Token {key}").get("/api/me/").status_code == 401


def test_keys_never_look_like_a_command_line_option():
    keys = [issue_token(username=f"team-{i}", role="participant")[1] for i in range(64)]
    assert all(key[0].isalnum() and len(key) == 64 for key in keys)
