"""Every page sends a Content-Security-Policy without inline script, and the admin's sign-in without `next`
lands on a page that exists."""

import pytest
from django.test import Client

from tests import factories


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/accounts/login/", "/admin/login/", "/api/", "/api/docs/"])
def test_pages_send_a_content_security_policy_without_inline_script(url):
    response = Client().get(url)
    policy = dict(
        (part.split()[0], part.split()[1:]) for part in response["Content-Security-Policy"].split(";") if part.strip()
    )
    assert policy["script-src"] == ["'self'"] and policy["default-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"]
    assert "'unsafe-inline'" not in policy["style-src"]


@pytest.mark.django_db
@pytest.mark.parametrize("staff", [True, False])
def test_signing_in_at_the_admin_without_next_lands_on_a_page_that_exists(staff):
    """A POST to /admin/login/ without `next` (a script, an old bookmark's form) went to /accounts/profile/, a 404."""
    factories.user("boss", is_staff=staff, is_superuser=staff)
    client = Client()
    response = client.post("/admin/login/", {"username": "boss", "password": "pw-boss"})
    if staff:
        assert response.status_code == 302 and response["Location"] == "/"
        assert client.get("/", follow=True).status_code == 200
    else:  # the admin refuses non-staff; the site's own sign-in takes them to the same page
        assert response.status_code == 200
        response = client.post("/accounts/login/", {"username": "boss", "password": "pw-boss"})
        assert response.status_code == 302 and client.get(response["Location"], follow=True).status_code == 200
