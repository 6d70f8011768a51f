"""Site-wide middleware: a database outage answered with 503 (the page keeps its changes and retries), login
throttling, and optional per-request database timing for the load benchmark."""

import logging
import time

from django.conf import settings
from django.db import InterfaceError, OperationalError, connections
from django.http import HttpResponse, JsonResponse

from config import throttle
from config.ids import past_any_id

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 2
ADMIN_PATH = "/admin/"  # config/urls.py
ADMIN_SEARCH = "q"  # the admin's search box: text, searched as text


def _wants_json(request) -> bool:
    return (
        request.content_type == "application/json"
        or "application/json" in request.headers.get("Accept", "")
        or request.path.startswith("/api/")
    )


class DatabaseUnavailableMiddleware:
    """A view that cannot reach the database answers 503 with Retry-After, not a 500 page.

    Scripts (the outline page's outbox, API clients) get JSON `{"retry": true, "message": ...}` and try again;
    nothing was stored, since the failed request's transaction never committed.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, (OperationalError, InterfaceError)) or _permanent(exception):
            return None
        # Logged with its traceback: on SQLite a bug (a missing column) is an OperationalError too.
        log.error("database unavailable for %s %s: %s", request.method, request.path, exception, exc_info=exception)
        message = "The database is unreachable for a moment; nothing was stored. Try again."
        headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
        if _wants_json(request):
            return JsonResponse({"retry": True, "message": message}, status=503, headers=headers)
        return HttpResponse(message, status=503, content_type="text/plain; charset=utf-8", headers=headers)


# OperationalErrors that no retry mends: psycopg refuses a query of too many parameters before sending it (a bug
# of ours: the site batches its lookups), and it was answered as an outage ("unreachable for a moment… try again").
PERMANENT_ERRORS = ("number of parameters must be between",)


def _permanent(exception) -> bool:
    return any(words in str(exception) for words in PERMANENT_ERRORS)


class LoginThrottleMiddleware:
    """Too many sign-in attempts for one user name from one address: that pair is refused (429) for a while.

    Each attempt on the site's or the admin's sign-in page is counted and checked here in one step
    (config.throttle.attempt), before the password is even looked at; the two pages share the count.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method == "POST" and throttle.is_login_path(request.path):
            wait = throttle.attempt(request, request.POST.get("username", ""))
            if wait:
                return throttle.refused(request, wait)
        return self.get_response(request)


class ServerTimingMiddleware:
    """With SERVER_TIMING on, every response says how long its database queries took: `Server-Timing: db;dur=…`.

    The load benchmark reads it to give the database's share of the time. Off by default (it wraps every query).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not settings.SERVER_TIMING:
            return self.get_response(request)
        spent = [0.0, 0]

        def timed(execute, sql, params, many, context):
            start = time.perf_counter()
            try:
                return execute(sql, params, many, context)
            finally:
                spent[0] += time.perf_counter() - start
                spent[1] += 1

        start = time.perf_counter()
        with connections["default"].execute_wrapper(timed):
            response = self.get_response(request)
        total = time.perf_counter() - start
        response["Server-Timing"] = (
            f"db;dur={spent[0] * 1000:.2f};desc=\"{spent[1]} queries\", app;dur={total * 1000:.2f}"
        )
        return response


class UnstorableTextMiddleware:
    """A query parameter or form field with a NUL character or a lone surrogate is answered 400 naming the field,
    before any view passes it to the database (PostgreSQL refuses NUL in text; a lone surrogate cannot be encoded).
    The API's bodies are left to its serializers (DRF refuses NUL in every text field). In the admin, whose lists
    take any lookup from the query string (`?pk__in=`, `?campaign__exact=`), a number past any id is one too (the
    site's own views read ids with config.ids.parse_id). A path with a NUL (%00) is 404: the views look names in
    it up in the database, and PostgreSQL refuses the comparison (DataError, a 500)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path:  # %00 in a path segment: a name or id with it names nothing stored
            if _wants_json(request):
                return JsonResponse({"detail": "Not found."}, status=404)
            return HttpResponse("Not found.", status=404, content_type="text/plain; charset=utf-8")
        bad = _unstorable_field(request.GET)
        if bad is None and request.method == "POST" and not request.path.startswith("/api/") and request.content_type in (
            "application/x-www-form-urlencoded", "multipart/form-data",
        ):
            bad = _unstorable_field(request.POST)
        message = f"{bad}: text with a NUL character or a lone surrogate is not accepted"
        if bad is None and request.path.startswith(ADMIN_PATH):
            # The admin's lists filter by any lookup in the query string, passed to the database as they come.
            bad = next((key for key, values in request.GET.lists()
                        if key != ADMIN_SEARCH and any(map(past_any_id, values))), None)
            message = f"{bad}: a number past any id (a 64-bit integer) is not accepted"
        if bad is not None:
            if _wants_json(request):
                return JsonResponse({"field": bad, "message": message, "detail": message}, status=400)
            return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


def _unstorable_field(data):
    for key, values in data.lists():
        for text in (key, *values):
            if not isinstance(text, str):
                continue
            if "\x00" in text:
                return key.replace("\x00", "") or "(name)"
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                return key.encode("utf-8", "replace").decode("utf-8")
    return None
