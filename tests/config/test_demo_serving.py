"""`make demo` serves with DEBUG off (issue 32, item 19): collected static files, the site's own 404 and 500 pages,
a throwaway secret key; and those pages are the product's, never Django's technical ones."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import RequestFactory, override_settings
from django.views.defaults import server_error

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1:8765"


def demo_lines():
    """The demo target's commands as make would run them (make -n), with this test's Python."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    # Under `make test` the environment carries the outer make's MAKEFLAGS and MAKELEVEL: this make would then print
    # "Entering/Leaving directory" lines around the commands.
    environment = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    result = subprocess.run(
        ["make", "--no-print-directory", "-n", "demo", f"HOST={HOST}", f"BIN={Path(sys.executable).parent}"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, env=environment,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_the_demo_collects_static_files_and_serves_with_debug_off():
    lines = demo_lines()
    collect = next(i for i, line in enumerate(lines) if "manage.py collectstatic --noinput" in line)
    serve = next(i for i, line in enumerate(lines) if f"manage.py runserver {HOST}" in line)
    assert collect < serve
    for line in (lines[collect], lines[serve]):
        assert line.startswith("DJANGO_DEBUG=0 ") and "DJANGO_SECRET_KEY=" in line
        assert '"127.0.0.1,localhost,[::1],127.0.0.1"' in line and "--insecure" not in line


def test_the_demo_loads_last_so_its_accounts_and_address_end_the_output():
    lines = demo_lines()
    load = next(i for i, line in enumerate(lines) if "manage.py load_demo" in line)
    assert lines[load].endswith(f"manage.py load_demo --url http://{HOST}/")
    assert all("manage.py" not in line for line in lines[load + 1:-1]) and "runserver" in lines[-1]


def test_production_mode_starts_with_the_demo_environment_alone():
    serve = next(line for line in demo_lines() if f"manage.py runserver {HOST}" in line)
    check = serve.replace(f"runserver {HOST}", "shell -c 'from django.conf import settings as s; "
                          "print(s.DEBUG, s.SESSION_COOKIE_SECURE, s.SECURE_SSL_REDIRECT, len(s.SECRET_KEY) >= 50)'")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    result = subprocess.run(["bash", "-c", check], cwd=ROOT, env=environment, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "False False False True"


@pytest.mark.django_db
@override_settings(DEBUG=False)
@pytest.mark.parametrize("path, says", [
    ("/welcome/xyz/", None),  # not even the shape of a sign-in link
    ("/welcome/MQ/used-or-made-up-token/", "This sign-in link is wrong, used or too old"),
    ("/no/such/page/", None),
])
def test_a_missing_page_is_the_products_own_404(client, path, says):
    response = client.get(path)
    assert response.status_code == 404
    html = response.content.decode()
    assert "<h1>Page not found</h1>" in html and 'class="brand"' in html
    assert "A sign-in link works once" in html
    assert "URLconf" not in html and "Resolver404" not in html and "technical" not in html.lower()
    if says:
        assert says in html


def test_the_500_page_is_the_products_own_and_needs_no_database_or_request():
    with override_settings(DEBUG=False):
        response = server_error(RequestFactory().get("/"))  # no database: a query here would fail the test
    assert response.status_code == 500
    html = response.content.decode()
    assert "<h1>Something went wrong</h1>" in html and 'class="brand"' in html
