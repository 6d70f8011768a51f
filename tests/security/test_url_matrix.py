"""Every URL pattern of the site, for every role, against a table: who gets a page, who is sent to sign in, who gets 404.

The walk covers config.urls recursively (pages, sign-in, the REST API through a browser session, the admin).
A pattern without an entry in TABLE fails test_every_url_pattern_has_an_entry, which names the pattern: a new
URL has to say who may use it. The admin's URLs follow one rule (staff only), checked on every registered
model's list and add pages and on a change page (test_the_admin_is_for_staff_only).

Object ids in URLs are the objects of `world` (tests/security/conftest.py): {token} is the assignment of
`assessor`; `other_assessor` has an assignment of their own, so their column is "someone else's token", which
must be 404 (never 403 with data, never a page).
"""

import json
import re
import uuid

import pytest
from django.contrib import admin
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.conftest import part_of_module_rows, rows_made_once_per_module
from tests.security.conftest import ROLES, make_people, make_world

# Columns: anonymous, assessor, other_assessor, reviewer, organiser, participant, superuser.
# route (as the resolver spells it) → {method: (url with {placeholders} from `world`, statuses by role)}.
TABLE = {
    # Assessor pages.
    # An organiser with nothing to judge lands on the campaigns (their home); "/?queue" shows their own queue.
    "": {"GET": ("/", (302, 200, 200, 200, 302, 200, 302))},
    "next/": {"GET": ("/next/", (302, 302, 302, 302, 302, 302, 302))},
    "a/<str:token>/": {"GET": ("/a/{token}/", (302, 200, 404, 404, 200, 404, 200))},
    "a/<str:token>/save": {"POST": ("/a/{token}/save", (403, 200, 404, 404, 404, 404, 404))},
    "a/<str:token>/mark": {"POST": ("/a/{token}/mark", (403, 200, 404, 404, 404, 404, 404))},
    "a/<str:token>/reopen": {"POST": ("/a/{token}/reopen", (403, 200, 404, 404, 404, 404, 404))},
    # The organiser's study results (forced-choice accuracy, pair ratings): organisers only, 404 for the rest.
    "studies/": {"GET": ("/studies/", (302, 404, 404, 404, 200, 404, 200))},
    "studies/<slug:name>/": {"GET": ("/studies/{pool}/", (302, 404, 404, 404, 200, 404, 200))},
    # Campaign pages: reviewers see the reviews given to them (organisers all); adjudication and dashboard are
    # for organisers; everyone else signed in gets 404. An empty POST is a form missing its fields (400).
    "review/": {"GET": ("/review/", (302, 404, 404, 200, 200, 404, 200))},
    "review/<int:pk>/": {
        "GET": ("/review/{review}/", (302, 404, 404, 200, 200, 404, 200)),
        "POST": ("/review/{review}/", (302, 404, 404, 400, 400, 404, 400)),
    },
    "campaigns/<slug:name>/adjudication/": {
        "GET": ("/campaigns/{outline}/adjudication/", (302, 404, 404, 404, 200, 404, 200)),
        "POST": ("/campaigns/{outline}/adjudication/", (302, 404, 404, 404, 400, 404, 400)),
    },
    "campaigns/": {
        "GET": ("/campaigns/", (302, 404, 404, 404, 200, 404, 200)),
        "POST": ("/campaigns/", (302, 404, 404, 404, 400, 404, 400)),  # dismisses a failure of background work
    },
    "campaigns/<slug:name>/dashboard/": {"GET": ("/campaigns/{outline}/dashboard/", (302, 404, 404, 404, 200, 404, 200))},
    # The organiser's console: organisers only, 404 for everyone else signed in. An empty POST is a form
    # missing its fields (400). The one-time sign-in link is for anyone holding it; a wrong one is 404.
    "campaigns/new/": {
        "GET": ("/campaigns/new/", (302, 404, 404, 404, 200, 404, 200)),
        "POST": ("/campaigns/new/", (302, 404, 404, 404, 400, 404, 400)),
    },
    "campaigns/<slug:name>/": {"GET": ("/campaigns/{campaign}/", (302, 404, 404, 404, 200, 404, 200))},
    "campaigns/<slug:name>/judging-order/": {
        "POST": ("/campaigns/{campaign}/judging-order/", (302, 404, 404, 404, 400, 404, 400)),
    },
    "qualification/<slug:name>/examples/": {
        "GET": ("/qualification/{campaign}/examples/", (302, 404, 404, 404, 200, 404, 200)),
    },
    "campaigns/<slug:name>/settings/": {
        "POST": ("/campaigns/{campaign}/settings/", (302, 404, 404, 404, 400, 404, 400)),
        "GET": ("/campaigns/{campaign}/settings/", (405, 405, 405, 405, 405, 405, 405)),
    },
    "campaigns/<slug:name>/topic-stop/": {
        "POST": ("/campaigns/{campaign}/topic-stop/", (302, 404, 404, 404, 400, 404, 400)),
    },
    "campaigns/<slug:name>/data/": {
        "GET": ("/campaigns/{campaign}/data/", (302, 404, 404, 404, 200, 404, 200)),
        "POST": ("/campaigns/{campaign}/data/", (302, 404, 404, 404, 400, 404, 400)),
    },
    "campaigns/<slug:name>/pools/": {
        "GET": ("/campaigns/{campaign}/pools/", (302, 404, 404, 404, 200, 404, 200)),
        "POST": ("/campaigns/{campaign}/pools/", (302, 404, 404, 404, 400, 404, 400)),
    },
    "campaigns/<slug:name>/pools/<slug:pool>/": {
        "GET": ("/campaigns/{campaign}/pools/{pool}/", (302, 404, 404, 404, 200, 404, 200)),
    },
    "campaigns/<slug:name>/browse/": {"GET": ("/campaigns/{campaign}/browse/", (302, 404, 404, 404, 200, 404, 200))},
    # No label 999999 in the campaign: 404 for organisers too (tests/annotation/test_data_browser.py opens real ones).
    "campaigns/<slug:name>/browse/<str:pk>/": {
        "GET": ("/campaigns/{campaign}/browse/999999/", (302, 404, 404, 404, 404, 404, 404)),
    },
    "campaigns/<slug:name>/pools/<slug:pool>/status/": {
        "GET": ("/campaigns/{campaign}/pools/{pool}/status/", (302, 404, 404, 404, 200, 404, 200)),
    },
    "campaigns/<slug:name>/work/": {
        "GET": ("/campaigns/{campaign}/work/", (302, 404, 404, 404, 200, 404, 200)),
        "POST": ("/campaigns/{campaign}/work/", (302, 404, 404, 404, 400, 404, 400)),
    },
    "campaigns/<slug:name>/machine/": {
        "GET": ("/campaigns/{campaign}/machine/", (302, 404, 404, 404, 200, 404, 200)),
        "POST": ("/campaigns/{campaign}/machine/", (302, 404, 404, 404, 400, 404, 400)),
    },
    "campaigns/<slug:name>/results/": {"GET": ("/campaigns/{campaign}/results/", (302, 404, 404, 404, 200, 404, 200))},
    "campaigns/<slug:name>/results/<slug:what>/": {
        "GET": ("/campaigns/{campaign}/results/qrels/", (302, 404, 404, 404, 200, 404, 200)),
    },
    "data/": {
        "GET": ("/data/", (302, 404, 404, 404, 200, 404, 200)),
        "POST": ("/data/", (302, 404, 404, 404, 400, 404, 400)),
    },
    "data/imports/<int:pk>/": {"GET": ("/data/imports/{data_import}/", (302, 404, 404, 404, 200, 404, 200))},
    # THE progress endpoint of background work (any kind: import, machine, retrieval).
    "jobs/<slug:kind>/<int:pk>/": {"GET": ("/jobs/import/{data_import}/", (302, 404, 404, 404, 200, 404, 200))},
    "data/documents/": {"GET": ("/data/documents/?collection=web&id=d1", (302, 404, 404, 404, 200, 404, 200))},
    "people/": {
        "GET": ("/people/", (302, 404, 404, 404, 200, 404, 200)),
        "POST": ("/people/", (302, 404, 404, 404, 400, 404, 400)),
    },
    "welcome/<str:uidb64>/<str:token>/": {
        "GET": ("/welcome/MQ/not-a-token/", (404, 404, 404, 404, 404, 404, 404)),
        "POST": ("/welcome/MQ/not-a-token/", (404, 404, 404, 404, 404, 404, 404)),
    },
    # Signing in and out.
    "accounts/login/": {
        "GET": ("/accounts/login/", (200, 302, 302, 302, 302, 302, 302)),
        "POST": ("/accounts/login/", (200, 302, 302, 302, 302, 302, 302)),
    },
    "accounts/logout/": {"POST": ("/accounts/logout/", (302, 302, 302, 302, 302, 302, 302))},
    # REST API in a browser session (tests/api/test_permissions.py checks the same endpoints with tokens).
    "api/": {"GET": ("/api/", (200, 200, 200, 200, 200, 200, 200))},
    "api/schema/": {"GET": ("/api/schema/", (200, 200, 200, 200, 200, 200, 200))},
    "api/docs/": {"GET": ("/api/docs/", (200, 200, 200, 200, 200, 200, 200))},
    "api/me/": {"GET": ("/api/me/", (401, 200, 200, 200, 200, 200, 200))},
    "api/campaigns/": {"GET": ("/api/campaigns/", (401, 403, 403, 403, 200, 200, 200))},
    "api/campaigns/<str:name>/": {"GET": ("/api/campaigns/{campaign}/", (401, 403, 403, 403, 200, 200, 200))},
    "api/campaigns/<str:name>/settings/": {
        "POST": ("/api/campaigns/{campaign}/settings/", (401, 403, 403, 403, 400, 403, 400)),
    },
    "api/campaigns/<str:name>/topics/": {
        "GET": ("/api/campaigns/{campaign}/topics/", (401, 403, 403, 403, 200, 200, 200)),
    },
    "api/campaigns/<str:name>/topics/trec/": {
        "GET": ("/api/campaigns/{campaign}/topics/trec/", (401, 403, 403, 403, 200, 200, 200)),
    },
    "api/campaigns/<str:name>/answers/": {  # the world's campaign takes no answers: 400 for who may upload
        "POST": ("/api/campaigns/{campaign}/answers/", (401, 403, 403, 403, 400, 400, 400)),
    },
    "api/campaigns/<str:name>/nugget-scores/": {  # the world's campaign is no nuggets campaign: 400 for organisers
        "GET": ("/api/campaigns/{campaign}/nugget-scores/", (401, 403, 403, 403, 400, 403, 400)),
    },
    "api/campaigns/<str:name>/agreement/": {
        "GET": ("/api/campaigns/{campaign}/agreement/", (401, 403, 403, 403, 200, 403, 200)),
    },
    "api/campaigns/<str:name>/machine/": {
        "GET": ("/api/campaigns/{campaign}/machine/", (401, 403, 403, 403, 200, 403, 200)),
    },
    "api/campaigns/<str:name>/machine/jobs/<str:id>/": {
        "GET": ("/api/campaigns/{campaign}/machine/jobs/{machine_job}/", (401, 403, 403, 403, 200, 403, 200)),
    },
    # Starting machine work: an empty body names nothing to train on (the campaign has no labels), no annotator,
    # no pool: 400 for organisers.
    "api/campaigns/<str:name>/machine/train/": {
        "POST": ("/api/campaigns/{campaign}/machine/train/", (401, 403, 403, 403, 400, 403, 400)),
    },
    "api/campaigns/<str:name>/machine/label/": {
        "POST": ("/api/campaigns/{campaign}/machine/label/", (401, 403, 403, 403, 400, 403, 400)),
    },
    "api/campaigns/<str:name>/machine/judge/": {
        "POST": ("/api/campaigns/{campaign}/machine/judge/", (401, 403, 403, 403, 400, 403, 400)),
    },
    "api/campaigns/<str:name>/machine/zero-shot/": {
        "POST": ("/api/campaigns/{campaign}/machine/zero-shot/", (401, 403, 403, 403, 400, 403, 400)),
    },
    "api/campaigns/<str:name>/machine/nuggets/": {  # the world's campaign is no nuggets campaign: 400 for organisers
        "POST": ("/api/campaigns/{campaign}/machine/nuggets/", (401, 403, 403, 403, 400, 403, 400)),
    },
    "api/campaigns/<str:name>/machine/import/": {  # an empty body gives no file: 400 for organisers
        "POST": ("/api/campaigns/{campaign}/machine/import/", (401, 403, 403, 403, 400, 403, 400)),
    },
    "api/runs/": {"GET": ("/api/runs/", (401, 403, 403, 403, 200, 200, 200))},
    "api/runs/<str:pk>/": {
        "GET": ("/api/runs/{run}/", (401, 403, 403, 403, 200, 200, 200)),
        "DELETE": ("/api/runs/{run}/", (401, 403, 403, 403, 204, 204, 204)),
    },
    "api/runs/<str:pk>/evaluation/": {
        # A participant evaluates its own runs only once the campaign opens evaluation (closed in `world`).
        "GET": ("/api/runs/{run}/evaluation/", (401, 403, 403, 403, 200, 403, 200)),
    },
    "api/pools/": {"GET": ("/api/pools/", (401, 403, 403, 403, 200, 403, 200))},
    "api/pools/<str:name>/": {"GET": ("/api/pools/{pool}/", (401, 403, 403, 403, 200, 403, 200))},
    "api/pools/<str:name>/candidates/": {
        "GET": ("/api/pools/{pool}/candidates/", (401, 403, 403, 403, 200, 403, 200)),
    },
    "api/qrels/": {"GET": ("/api/qrels/?pool={pool}", (401, 403, 403, 403, 200, 403, 200))},
    "api/assessments/car-y3/": {
        "GET": ("/api/assessments/car-y3/?collection=car", (401, 403, 403, 403, 200, 403, 200)),
    },
}

# Bodies of the POSTs above (JSON unless a dict of form fields); everything else is sent empty.
BODIES = {
    "a/<str:token>/save": lambda world: json.dumps({
        "change_id": str(uuid.uuid4()), "layer": "notes", "passage": world["passages"][0].pk, "value": "a note",
        "client_time": "2024-05-01T12:00:00.000Z", "client_seq": 1, "session_id": "matrix",
    }),
    "a/<str:token>/mark": lambda world: json.dumps({"done": True, "reason": "checked elsewhere"}),
    "accounts/login/": lambda world: {"username": "assessor", "password": "not the password"},
}



def people_and_world():
    people = make_people()
    return {"people": people, "world": make_world(people)}


# One world for the module's few hundred tests (each request's writes are rolled back after its test).
shared = rows_made_once_per_module("shared", people_and_world)
people = part_of_module_rows("people")
world = part_of_module_rows("world")


ADMIN_PREFIX = "admin/"
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def routes(patterns=None, prefix=""):
    """Every URL pattern reachable from config.urls, as its full route string."""
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            yield from routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern)


def entry_template(route):
    return f'    "{route}": {{"GET": ("/{route}", ({", ".join(["???"] * len(ROLES))}))}},'


def test_every_url_pattern_has_an_entry():
    site = {route for route in routes() if not route.startswith(ADMIN_PREFIX)}
    missing = sorted(site - set(TABLE))
    assert not missing, (
        "URL patterns without an entry in TABLE of tests/security/test_url_matrix.py; add who may use them "
        f"(columns {', '.join(ROLES)}):\n" + "\n".join(entry_template(route) for route in missing)
    )
    stale = sorted(set(TABLE) - site)
    assert not stale, f"TABLE has entries for routes that no longer exist: {stale}"


def test_the_table_names_a_status_for_every_role():
    for route, methods in TABLE.items():
        for method, (url, statuses) in methods.items():
            assert len(statuses) == len(ROLES), f"{method} {route}: {len(statuses)} statuses for {len(ROLES)} roles"


def fill(url, world):
    return PLACEHOLDER.sub(lambda m: str(world[m.group(1)]), url)


def request(client, method, route, url, world):
    body = BODIES.get(route, lambda world: "")(world)
    kwargs = {"data": body}
    if isinstance(body, str):
        kwargs["content_type"] = "application/json"
    return getattr(client, method.lower())(url, **kwargs)


def read(response):
    """The whole body. A streamed one is read to its end: an unread one keeps a server-side cursor open. The test
    client closes it at its end without closing the database connection (closing it again here fired
    request_finished, which on PostgreSQL closed the connection and the module's transaction with it)."""
    if response.streaming:
        return b"".join(response.streaming_content)
    return response.content


CASES = [(route, method, role) for route, methods in TABLE.items() for method in methods for role in ROLES]


@pytest.mark.django_db
@pytest.mark.parametrize("route, method, role", CASES, ids=[f"{m} /{r} {who}" for r, m, who in CASES])
def test_who_may_use_what(world, client_for, route, method, role):
    url, statuses = TABLE[route][method]
    expected = statuses[ROLES.index(role)]
    response = request(client_for(role), method, route, fill(url, world), world)
    body = read(response)
    assert response.status_code == expected, f"{method} {url} as {role}: {response.status_code} {body[:300]!r}"
    if expected == 302 and route != "accounts/login/" and role == "anonymous":
        assert response["Location"].startswith(reverse("login")), response["Location"]


@pytest.mark.django_db
def test_someone_elses_assignment_is_not_found_and_shows_nothing_of_it(world, client_for):
    client = client_for("assessor")
    for url in (f"/a/{world['other_token']}/", f"/next/?after={world['other_token']}"):
        response = client.get(url)
        assert world["other_token"] not in response.content.decode(), url
    for path in ("save", "mark"):
        response = client.post(f"/a/{world['other_token']}/{path}", "{}", content_type="application/json")
        assert response.status_code == 404
        assert world["other_token"] not in response.content.decode()


def admin_urls(world):
    """The admin's index, each app's index, every registered model's list and add pages, and a change page."""
    urls = [reverse("admin:index")]
    for model in admin.site._registry:
        meta = model._meta
        urls.append(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
        urls.append(reverse("admin:app_list", args=[meta.app_label]))
    urls.append(reverse("admin:annotation_campaign_change", args=[world["outline_campaign"].pk]))
    urls.append(reverse("admin:annotation_campaign_add"))
    return sorted(set(urls))


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
def test_the_admin_is_for_staff_only(world, client_for, role):
    client = client_for(role)
    for url in admin_urls(world):
        response = client.get(url)
        if role in ("organiser", "superuser"):
            # Organisers have every permission on the project's own apps, none on accounts (403, or 404 for the
            # app's index: Django does not say an app exists to someone with no permission on it).
            allowed = role == "superuser" or "/admin/auth/" not in url
            assert response.status_code in ({200} if allowed else {403, 404}), (url, response.status_code)
        else:
            assert response.status_code == 302, (url, role, response.status_code)
            assert response["Location"].startswith(reverse("admin:login")), (url, role, response["Location"])

