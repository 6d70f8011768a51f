"""System checks for production mode (`manage.py check --deploy`)."""

from django.conf import settings
from django.core.checks import Warning, register


@register(deploy=True)
def shared_cache(app_configs, **kwargs):
    """Login throttling counts in the default cache: a per-process cache gives every server process its own
    count, so N workers would allow N times the failed sign-ins."""
    backend = settings.CACHES["default"]["BACKEND"]
    if backend.endswith(("LocMemCache", "DummyCache")):
        return [
            Warning(
                "the cache is per process: each server process counts failed sign-ins on its own",
                hint="set CACHE_URL to a cache every process shares, e.g. redis://127.0.0.1:6379/1",
                id="pooljudge.W001",
            )
        ]
    return []
