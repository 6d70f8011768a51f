"""Login throttling: failed sign-ins counted per (user name, client address) in the cache, in a fixed window.

After LOGIN_THROTTLE_FAILURES failures within LOGIN_THROTTLE_WINDOW seconds, that user name from that address
is refused with 429 and a message saying how long to wait; a successful sign-in clears the count. The count
lives in the default cache: with several server processes it must be a shared one (CACHE_URL, e.g. Redis).
"""

import hashlib
import time

from django.conf import settings
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import cache
from django.dispatch import receiver
from django.shortcuts import render
from django.urls import reverse


def is_login_path(path: str) -> bool:
    return path in (reverse("login"), reverse("admin:login"))


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


def _key(request, username: str) -> str:
    who = f"{username.strip().casefold()}|{client_address(request)}"
    return "login-failures:" + hashlib.sha256(who.encode("utf-8")).hexdigest()


def seconds_blocked(request, username: str) -> int:
    """Seconds until this user name may try again from this address; 0 when it may now."""
    entry = cache.get(_key(request, username))
    if not entry or entry["count"] < settings.LOGIN_THROTTLE_FAILURES:
        return 0
    return max(1, int(entry["until"] - time.time()))


def record_failure(request, username: str) -> None:
    key, window = _key(request, username), settings.LOGIN_THROTTLE_WINDOW
    entry = cache.get(key) or {"count": 0, "until": time.time() + window}
    entry["count"] += 1
    cache.set(key, entry, timeout=max(1, int(entry["until"] - time.time())))


def clear(request, username: str) -> None:
    cache.delete(_key(request, username))


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
    if request is not None:
        record_failure(request, credentials.get("username") or "")


@receiver(user_logged_in)
def _clear_failures(sender, request, user, **kwargs):
    if request is not None:
        clear(request, user.get_username())
