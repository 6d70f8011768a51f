"""Production mode: HTTPS-only cookies, HSTS, the proxy's scheme header, upload limits; check --deploy clean."""

import json

from tests.config.test_settings import GOOD_KEY, manage

PRODUCTION = dict(DJANGO_DEBUG="0", DJANGO_SECRET_KEY=GOOD_KEY, DJANGO_ALLOWED_HOSTS="judge.example.org")
NAMES = [
    "DEBUG", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SESSION_COOKIE_HTTPONLY", "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_SSL_REDIRECT", "SECURE_PROXY_SSL_HEADER", "SECURE_CONTENT_TYPE_NOSNIFF",
    "X_FRAME_OPTIONS", "DATA_UPLOAD_MAX_MEMORY_SIZE", "FILE_UPLOAD_MAX_MEMORY_SIZE", "MIDDLEWARE",
]


def production_settings(**env):
    code = f"from django.conf import settings; import json; print(json.dumps({{n: getattr(settings, n) for n in {NAMES!r}}}))"
    result = manage("shell", "-c", code, **{**PRODUCTION, **env})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])  # the shell may say what it imported first


def test_production_mode_sends_cookies_over_https_only_and_asks_for_hsts():
    s = production_settings()
    assert s["DEBUG"] is False
    assert s["SESSION_COOKIE_SECURE"] and s["CSRF_COOKIE_SECURE"] and s["SESSION_COOKIE_HTTPONLY"]
    assert s["SECURE_HSTS_SECONDS"] >= 31_536_000 and s["SECURE_HSTS_INCLUDE_SUBDOMAINS"]
    assert s["SECURE_SSL_REDIRECT"] is True
    assert s["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert s["SECURE_CONTENT_TYPE_NOSNIFF"] and s["X_FRAME_OPTIONS"] == "DENY"


def test_request_bodies_are_limited():
    s = production_settings()
    assert 0 < s["DATA_UPLOAD_MAX_MEMORY_SIZE"] <= 5 * 1024 * 1024
    assert 0 < s["FILE_UPLOAD_MAX_MEMORY_SIZE"] <= 5 * 1024 * 1024


def test_csrf_and_login_throttling_are_on():
    middleware = production_settings()["MIDDLEWARE"]
    assert "django.middleware.csrf.CsrfViewMiddleware" in middleware
    assert "config.middleware.LoginThrottleMiddleware" in middleware
    assert "config.middleware.DatabaseUnavailableMiddleware" in middleware


def test_check_deploy_is_clean_with_a_shared_cache():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION, CACHE_URL="redis://127.0.0.1:6379/9")
    assert result.returncode == 0, result.stderr
