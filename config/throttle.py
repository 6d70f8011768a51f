"""Login throttling: sign-in attempts counted per (user name, client address) in the cache, in a fixed window.

The user name is the one the sign-in form authenticates (`login_name`: stripped and normalised to NFKC, as
Django's UsernameField does; then case-folded), so a look-alike spelling (full-width or mathematical letters) that
signs in as the same user is counted as that user. Each POST to a sign-in page is counted before its password is
checked, and refused with 429 (and a message saying how long to wait) once the count passes
LOGIN_THROTTLE_FAILURES within LOGIN_THROTTLE_WINDOW seconds: counting and checking are one atomic step
(`attempt`), so parallel sign-ins get no more password checks than the limit. A successful sign-in clears the count.

The count lives in the default cache and is raised atomically (cache.add starts it, cache.incr raises it: one
Redis INCR), so concurrent attempts in several processes are all counted. Several server processes must share
the cache (CACHE_URL, e.g. Redis): without it each process counts on its own and N workers would allow N times
the tries, which `manage.py check --deploy` reports (config.checks).
"""

import functools
import hashlib
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UsernameField
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import cache
from django.dispatch import receiver
from django.shortcuts import render
from django.urls import get_script_prefix, get_urlconf, reverse


def is_login_path(path: str) -> bool:
    """Whether `path` is a sign-in page (asked on every POST: the two paths are reversed once per URL set)."""
    return path in _login_paths(get_script_prefix(), get_urlconf())


@functools.lru_cache(maxsize=16)
def _login_paths(prefix, urlconf):
    return reverse("login", urlconf=urlconf), reverse("admin:login", urlconf=urlconf)


def client_address(request) -> str:
    """The client's address: REMOTE_ADDR, or behind a proxy that appends the client to X-Forwarded-For
    (LOGIN_THROTTLE_TRUST_FORWARDED_FOR), that header's last address, which the proxy itself wrote.

    Without the setting, behind a proxy every client has the proxy's address and the count is per user name.
    """
    if settings.LOGIN_THROTTLE_TRUST_FORWARDED_FOR:
        forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if a.strip()]
        if forwarded:
            return forwarded[-1]
    return request.META.get("REMOTE_ADDR", "")


def login_name(username: str) -> str:
    """The name counted for what was typed: the name the sign-in form authenticates (Django's UsernameField:
    stripped, NFKC unless longer than the user name's column), case-folded."""
    user_model = get_user_model()
    column = user_model._meta.get_field(user_model.USERNAME_FIELD)
    return UsernameField(max_length=column.max_length or 254).to_python(username).casefold()


def _key(request, username: str) -> str:
    who = f"{login_name(username)}|{client_address(request)}"
    return "login-failures:" + hashlib.sha256(who.encode("utf-8")).hexdigest()


def attempt(request, username: str) -> int:
    """Count this sign-in attempt, before its password is checked; seconds it must wait when the count is now over
    the limit (refuse it), else 0. One atomic step, so that parallel attempts cannot all pass a check made before
    any of them was counted. The failure signal then leaves this request uncounted."""
    count, wait = hit(_key(request, username), settings.LOGIN_THROTTLE_WINDOW)
    request._login_attempt_counted = True
    return wait if count > settings.LOGIN_THROTTLE_FAILURES else 0


def seconds_blocked(request, username: str) -> int:
    """Seconds until this user name may try again from this address; 0 when it may now."""
    key = _key(request, username)
    found = cache.get_many([key, key + ":until"])
    if found.get(key, 0) < settings.LOGIN_THROTTLE_FAILURES:
        return 0
    until = found.get(key + ":until") or time.time() + settings.LOGIN_THROTTLE_WINDOW
    return max(1, int(until - time.time()))


def failures(request, username: str) -> int:
    """Failed sign-ins counted for this user name from this address in the current window."""
    return cache.get(_key(request, username), 0)


def record_failure(request, username: str) -> int:
    """Count one failed sign-in; returns the count in the window so far."""
    return hit(_key(request, username), settings.LOGIN_THROTTLE_WINDOW)[0]


def hit(key: str, window: int) -> tuple[int, int]:
    """Count one event under `key` in a fixed window of `window` seconds; (count in the window so far, seconds
    until the window ends). Atomic in a shared cache, whatever other processes count meanwhile.

    The first event starts the window: cache.add (set if absent, atomic) writes 0 and the window's end, each
    expiring with the window; cache.incr then adds one atomically (Redis: INCR).
    """
    while True:
        if cache.add(key, 0, timeout=window):
            cache.add(key + ":until", time.time() + window, timeout=window)
        try:
            count = cache.incr(key)
        except ValueError:  # the window ended between add and incr: start a new one
            continue
        if count == 1:  # Redis's INCR of a key that expired just before it makes one without expiry: give it one
            cache.touch(key, timeout=window)
        until = cache.get(key + ":until") or time.time() + window
        return count, max(1, int(until - time.time()))


def clear(request, username: str) -> None:
    key = _key(request, username)
    cache.delete_many([key, key + ":until"])


def refused(request, wait: int):
    minutes = max(1, round(wait / 60))
    message = (
        f"Too many failed sign-ins for this user name from your address. "
        f"Try again in {minutes} minute{'s' if minutes != 1 else ''}."
    )
    response = render(request, "registration/throttled.html", {"message": message}, status=429)
    response["Retry-After"] = str(wait)
    return response


@receiver(user_login_failed)
def _count_failure(sender, credentials, request=None, **kwargs):
    # A sign-in page's attempt was counted before the password was checked (attempt); count other callers' failures.
    if request is not None and not getattr(request, "_login_attempt_counted", False):
        record_failure(request, credentials.get("username") or "")


@receiver(user_logged_in)
def _clear_failures(sender, request, user, **kwargs):
    if request is not None:
        clear(request, user.get_username())
