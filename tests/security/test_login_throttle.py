"""Login throttling: a user name that fails too often from one address is refused with 429 for a while."""

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from tests import factories


@pytest.fixture(autouse=True)
def small_limits(settings):
    settings.LOGIN_THROTTLE_FAILURES = 3
    settings.LOGIN_THROTTLE_WINDOW = 600
    cache.clear()
    yield
    cache.clear()


def sign_in(client, username, password, url="login", address="10.0.0.1"):
    return client.post(reverse(url), {"username": username, "password": password}, REMOTE_ADDR=address)


@pytest.mark.django_db
def test_it_refuses_a_user_name_after_too_many_failures_with_a_clear_message():
    factories.user("judge")  # password "pw-judge"
    client = Client()
    for _ in range(3):
        assert sign_in(client, "judge", "wrong").status_code == 200  # the form again, with its error
    response = sign_in(client, "judge", "pw-judge")  # even the right password now waits
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 500
    assert "Too many failed sign-ins for this user name from your address. Try again in 10 minutes." in (
        response.content.decode()
    )
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_other_addresses_and_other_user_names_are_not_held_up():
    factories.user("judge")
    factories.user("other")
    client = Client()
    for _ in range(3):
        sign_in(client, "judge", "wrong")
    assert sign_in(Client(), "other", "pw-other").status_code == 302
    assert sign_in(Client(), "judge", "pw-judge", address="10.0.0.2").status_code == 302


@pytest.mark.django_db
def test_a_successful_sign_in_clears_the_count():
    factories.user("judge")
    client = Client()
    for _ in range(2):
        sign_in(client, "judge", "wrong")
    assert sign_in(client, "judge", "pw-judge").status_code == 302
    client.logout()
    for _ in range(2):
        assert sign_in(client, "judge", "wrong").status_code == 200
    assert sign_in(client, "judge", "pw-judge").status_code == 302


@pytest.mark.django_db
def test_the_admin_sign_in_shares_the_count():
    factories.user("boss", is_staff=True)
    client = Client()
    for _ in range(2):
        sign_in(client, "BOSS", "wrong")  # user names are counted case-blind
    sign_in(client, "boss", "wrong", url="admin:login")
    response = sign_in(client, "boss", "pw-boss", url="admin:login")
    assert response.status_code == 429


@pytest.mark.django_db
def test_the_window_passes(settings):
    settings.LOGIN_THROTTLE_WINDOW = 1
    factories.user("judge")
    client = Client()
    for _ in range(3):
        sign_in(client, "judge", "wrong")
    assert sign_in(client, "judge", "pw-judge").status_code == 429
    import time

    time.sleep(2.1)
    assert sign_in(client, "judge", "pw-judge").status_code == 302


@pytest.mark.django_db
def test_behind_a_trusted_proxy_the_address_the_proxy_appended_counts(settings):
    settings.LOGIN_THROTTLE_TRUST_FORWARDED_FOR = True
    factories.user("judge")
    client = Client()
    for _ in range(3):  # a client that forges the start of the header is still counted by what the proxy added
        client.post(reverse("login"), {"username": "judge", "password": "wrong"}, REMOTE_ADDR="10.9.9.9",
                    HTTP_X_FORWARDED_FOR=f"1.2.3.{_}, 203.0.113.7")
    blocked = client.post(reverse("login"), {"username": "judge", "password": "pw-judge"}, REMOTE_ADDR="10.9.9.9",
                          HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert blocked.status_code == 429
    other = Client().post(reverse("login"), {"username": "judge", "password": "pw-judge"}, REMOTE_ADDR="10.9.9.9",
                          HTTP_X_FORWARDED_FOR="198.51.100.2")
    assert other.status_code == 302
