"""No input gives a 500, anywhere: every URL pattern of the site (pages, the organiser's console, downloads, progress
JSON, the REST API) for every role (anonymous, assessor, reviewer, organiser; a participant's token, an organiser's
token limited to one campaign), with its path parameters filled with real ids of a small world (an outline, an ad
hoc, a nuggets and a plot campaign, with units, runs, pools, answers, a bank, labels, an import, a machine job) and
with junk (huge, negative, non-numeric, unicode, NUL, very long). Queries carry junk and plausible values (choices,
bounds and just past them, the world's names and ids) of every query parameter the view reads (names gathered from
its module, its query serializers and the browser's filters); bodies are POST / PUT / PATCH / DELETE of junk (not
JSON, JSON of the wrong shape, deep nesting, null, numbers as text, huge numbers) and the view's own form or
serializer fields, all plausible and then one junk, for each action its page dispatches on. Also: the admin's
lists with junk lookups, and junk files to every upload (the queued import run as a worker would). Every answer is
below 500, and a GET writes nothing (no INSERT, UPDATE or DELETE but the session's and a token's last use).

Deterministic: fixed junk, given out to routes and fields in a fixed rotation; a route's cases are spread over its
real ids rather than multiplied by them. About 19,000 requests, 105 s on SQLite (-n 0, a busy 2-core machine). A
failure lists every 500 with its method, URL, body and the exception's last frames.
"""

import itertools
import json
import re
import sys
import traceback
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest
from django import forms
from django.core.signals import got_request_exception
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework import serializers

from annotation.models import Assignment, DataImport
from annotation.services.assignment import assign_campaign
from annotation.services.tokens import issue_token
from assessments.models import Judgement
from retrieval.models import Passage
from tests import factories
from tests.annotation import nuggets_setup
from tests.annotation import plot_setup as ps

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]

# Who asks: a browser session per signed-in role (an organiser's session reaches the API as a token does), or an API
# token: a participant's, an organiser's limited to one campaign.
ROLES = ("anonymous", "assessor", "reviewer", "organiser", "participant-token", "scoped-token")

HUGE = "99999999999999999999"
LONG = "x" * 10_000
# Junk for path segments (quoted into the URL: NUL travels as %00).
PATH_JUNK = [HUGE, "-1", "0", "abc", "NaN", "1e309", "é💧", "\x00", "a" * 3000, "١٢", "%", "..", "null"]
# Junk for query parameters and form fields.
TEXT_JUNK = ["abc", "-1", "1e309", "NaN", "", "[]", "\x00", LONG, HUGE, "é💧\u202e", "0", "null", "1.5", "-0", "²"]
# Junk JSON values of a field.
JSON_JUNK = [None, "abc", -1, 10**20, -(10**20), [], {}, "\x00", "1", True, 1.5, [None], {"a": None}, LONG,
             [[[[[[[[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]]]]]]]], "1e309", 0]
# Bodies that are no change of anything.
RAW_BODIES = [b"", b"{", b"not json", b"[]", b"null", b'"x"', b"1e309", b"NaN", b"[" * 5000 + b"]" * 5000,
              b'{"a": ' * 3000 + b"1" + b"}" * 3000, b"\xff\xfe\x00", b'{"a": 1,}', b"[1, 2, 3]", b"{}"]


# --- what the site reads --------------------------------------------------------------------------------------

def routes(patterns=None, prefix="", callback=None):
    """(route, view callback) of every URL pattern of config.urls but the admin's."""
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            if str(pattern.pattern) != "admin/":
                yield from routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), pattern.callback


def reads(where):
    return re.compile(rf"""(?:{where})\s*(?:\.get(?:list)?\(|\[)\s*f?["']([\w-]+)["']"""
                      rf"""|["']([\w-]+)["']\s+(?:not\s+)?in\s+request\.(?:{where})""")


QUERY_READS, BODY_READS = reads("GET|query_params|params"), reads("GET|POST|query_params|params|data")


def names_read(paths, pattern) -> list[str]:
    found = set()
    for path in paths:
        for match in pattern.finditer(path.read_text(encoding="utf-8")):
            found.add(match.group(1) or match.group(2))
    return sorted(found)


def source_files():
    return sorted(p for folder in ("annotation/views", "annotation/api", "annotation/services", "annotation/reports",
                                   "config") for p in (ROOT / folder).rglob("*.py"))


def subclasses(base):
    found, todo = [], [base]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith("annotation."):
            found.append(cls)
    return found


def serializer_fields(cls):
    """The fields a serializer takes (declared ones and a model serializer's, read-only ones left out)."""
    names = {name for name, field in getattr(cls, "_declared_fields", {}).items() if not field.read_only}
    meta = getattr(cls, "Meta", None)
    if meta is not None and isinstance(getattr(meta, "fields", None), (list, tuple)):
        names.update(set(meta.fields) - set(getattr(meta, "read_only_fields", ())))
    return names


def input_classes():
    """The API's serializers and the console's forms."""
    import annotation.api.agreement, annotation.api.evaluation, annotation.api.results  # noqa: F401, E401
    import annotation.api.serializers, annotation.api.machine, annotation.api.campaign_settings  # noqa: F401, E401
    import annotation.views.console.forms  # noqa: F401

    return ({cls: serializer_fields(cls) for cls in subclasses(serializers.Serializer)}
            | {cls: set(cls.base_fields) for cls in subclasses(forms.Form)})


INPUTS = input_classes()


def static_values() -> dict[str, list]:
    """Values each field of the inputs takes: its choices, its initial value, its bounds (and just past them)."""
    values = {}
    for cls in INPUTS:
        declared = getattr(cls, "base_fields", None) or getattr(cls, "_declared_fields", {})
        for name, field in declared.items():
            found = values.setdefault(name, [])
            choices = getattr(field, "choices", None)
            if isinstance(choices, dict):
                found.extend(choices)
            elif isinstance(choices, (list, tuple)):
                found.extend(c[0] for c in choices if not isinstance(c[1], (list, tuple)))
            initial = getattr(field, "initial", None)
            if isinstance(initial, (str, int, float)) and not isinstance(initial, bool):
                found.append(initial)
            for bound, step in (("min_value", -1), ("max_value", 1)):
                limit = getattr(field, bound, None)
                if isinstance(limit, int):
                    found.extend([limit, limit + step])
            if isinstance(field, (forms.BooleanField, serializers.BooleanField)):
                found.extend([True, False])
    return {name: list(dict.fromkeys(v for v in found if v not in ("", None))) for name, found in values.items()}


STATIC_VALUES = static_values()


def fields_of(callback) -> list[str]:
    """The body fields a view takes: those its module reads from the request, and those of the forms and
    serializers its module names."""
    module = sys.modules[callback.__module__]
    text = Path(module.__file__).read_text(encoding="utf-8")
    names = set(names_read([Path(module.__file__)], BODY_READS))
    for cls, fields in INPUTS.items():
        if re.search(rf"\b{cls.__name__}\b", text):
            names |= fields
    return sorted(names)


def actions(paths=None):
    """The values of `action` (and `which`) the console's POSTs dispatch on."""
    found = set()
    for path in paths or (ROOT / "annotation/views").rglob("*.py"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if re.search(r"\b(action|which)\b", line):
                found.update(re.findall(r"""(?:==|in \(|, )\s*["'](\w+)["']""", line))
    return sorted(found)


# The data browser's filters are read through a local get() (annotation.services.browser.read_filters).
BROWSER_FILTERS = {"topic", "assessor", "status", "label", "disagreement", "sort", "cursor"}
QUERY_NAMES = sorted(set(names_read(source_files(), QUERY_READS)) | BROWSER_FILTERS | {"page_size"}.union(
    *(fields for cls, fields in INPUTS.items() if cls.__name__.endswith("QuerySerializer"))))
FIELD_NAMES = sorted(set(names_read(source_files(), BODY_READS)).union(*INPUTS.values()))
ACTIONS = actions()


# --- the world ------------------------------------------------------------------------------------------------

@pytest.fixture
def site(world, people, tmp_path, settings):
    """The URL matrix's world (outline and ad hoc campaigns, runs, a pool, a review, an import, a machine job) with
    an ad hoc unit and labels, a nuggets campaign (answers, a bank, support units) and a plot campaign; tokens."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    assessor = people["assessor"]
    outline_unit = world["assignment"]
    p1, p2, *_ = world["passages"]
    factories.judgement(assessor, outline_unit.topic, p1, relevance="must", facet="general",
                        campaign=outline_unit.campaign)
    from annotation.models import Campaign
    from assessments.models import Pool, PoolCandidate

    adhoc = Campaign.objects.get(name=world["campaign"])
    pool = Pool.objects.get(name=world["pool"])
    topic_301 = pool.topics.get(external_id="301")  # the pool's build waits for a commit: its candidates made here
    PoolCandidate.objects.bulk_create(
        PoolCandidate(pool=pool, topic=topic_301, passage=passage, rank=rank)
        for rank, passage in enumerate(Passage.objects.filter(collection=pool.collection), start=1))
    Pool.objects.filter(pk=pool.pk).update(status=Pool.Status.READY)
    adhoc_unit = factories.assignment(assessor, topic_301, campaign=adhoc, pool=pool)
    rag = nuggets_setup.nuggets_world(assessor)
    topic = ps.load_query(tmp_path, lines=ps.EXCERPT)
    plot_pool, _ = ps.plot_pool(topic, size=3)
    plot = ps.campaign()
    plot_unit = ps.assign(assessor, topic, plot_pool, plot)
    organiser = people["organiser"].username
    keys = {
        "participant-token": issue_token(username=people["participant"].username, role="participant")[1],
        "scoped-token": issue_token(username=organiser, role="organiser", campaign=rag["campaign"].name)[1],
    }
    real = {
        "token": [outline_unit.token, adhoc_unit.token, plot_unit.token, world["other_token"],
                  *[u.token for u in rag["units"].values()]],
        "name": [world["outline"], adhoc.name, rag["campaign"].name, plot.name],
        "pool": [world["pool"], plot_pool.name],
        "pk": sorted({world["review"], world["data_import"], world["run"], world["machine_job"],
                      *Judgement.objects.values_list("pk", flat=True)[:3]}),
        "id": [world["machine_job"]],
        "kind": ["import", "machine", "retrieval"],
        "what": ["qrels", "y3", "plot-labels", "choices", "adhoc", "nugget-scores", "agreement", "audit"],
        "uidb64": ["MQ"],
    }
    from django.contrib.auth import get_user_model

    from assessments.models import Run, Topic
    from retrieval.models import Collection

    names = list(real["name"])
    usernames = list(get_user_model().objects.values_list("username", flat=True)[:4])
    topics = list(Topic.objects.values_list("external_id", flat=True)[:4])
    runs = list(Run.objects.values_list("pk", flat=True)[:3])
    pools = list(real["pool"])
    world_values = {
        "name": names, "campaign": names, "pool": pools, "pools": pools, "run": runs, "runs": runs, "first": runs,
        "second": runs[::-1], "topic": topics, "topics": topics, "topic_ids": topics, "assessor": usernames,
        "assessors": usernames, "user": list(get_user_model().objects.values_list("pk", flat=True)[:2]),
        "username": usernames, "to": usernames, "collection": list(Collection.objects.values_list("name", flat=True)),
        "id": ["d1", "LA010189-0001"], "passage": list(Passage.objects.values_list("pk", flat=True)[:2]),
        "token": [1], "after": real["token"][:2], "qrel_set": ["none"], "dismiss": [world["data_import"]],
        "source": ["human", "machine", "filled", "annotator-1"],
        "machine_source": [world["machine_job"], "annotator-1"],
        "measure": ["AP", "nDCG@10", "P@5", "nDCG@99999999999999999999", "RBP(p=2)@10"],
        "label": ["facet:3", "facet", "notes", "plot_grade:2", "transition:same", "nuggets"],
        "sort": ["layer", "topic", "assessor", "changed"], "disagreement": ["1"], "status": ["done", "todo"],
        "work": [f"{names[1]}|{topics[0]}"], "stop": ["stop", "go", "auto"], "layer": ["facet", "grade", "nuggets"],
        "cursor": ["eyJyIjowLCJwIjpbOF19"], "page_size": [1, 1000, 1001, 0],
    }
    plausible = {name: list(dict.fromkeys([*world_values.get(name, []), *STATIC_VALUES.get(name, [])]))
                 for name in set(world_values) | set(STATIC_VALUES)}
    return {"keys": keys, "real": real, "plausible": plausible}


def client_of(role, people, keys):
    client = Client(raise_request_exception=False)
    if role in keys:
        client.defaults["HTTP_AUTHORIZATION"] = f"Token {keys[role]}"
    elif role != "anonymous":
        client.force_login(people[role])
    return client


PARAM = re.compile(r"<(?:(\w+):)?(\w+)>")


def fills(route, real, junk=True):
    """URLs of a route: its parameters all real (each combination), then each one junk with the others real."""
    names = PARAM.findall(route)
    if not names:
        return ["/" + route]
    choices = [real.get(name, ["1"]) for _, name in names]

    def url(values):
        parts = iter(quote(str(v), safe="") for v in values)
        return "/" + PARAM.sub(lambda m: next(parts), route)

    urls = [url(values) for values in itertools.product(*choices)]
    for position in range(len(names) if junk else 0):
        for junk in PATH_JUNK:
            values = [c[0] for c in choices]
            values[position] = junk
            urls.append(url(values))
    return urls


# --- the requests ---------------------------------------------------------------------------------------------

class Failures:
    """Every 5xx (and every GET that wrote) with what was sent and the exception's last frames."""

    def __init__(self):
        self.found, self.last_exception, self.sent = [], None, 0

    def exception(self, sender, request=None, **kwargs):
        self.last_exception = "".join(traceback.format_exc().splitlines(keepends=True)[-6:])

    def check(self, response, method, url, body=None):
        self.sent += 1
        if response.streaming:
            try:
                b"".join(response.streaming_content)
            except Exception:  # a streamed download that fails midway is a 500 the client sees as a cut body
                cause = traceback.format_exc()[-800:]
                self.found.append(f"{method} {url} body={body!r:.200}: the stream failed\n{cause}")
        if response.status_code >= 500:
            self.found.append(f"{method} {url[:300]} body={body!r:.200}: {response.status_code}\n{self.last_exception}")
        self.last_exception = None


WRITES = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.I)
# Who is asking, not what: the session, and a token's last use (annotation.services.tokens, once a minute).
BOOKKEEPING = re.compile(r'"django_session"|^UPDATE "annotation_apitoken" SET "last_used_at" = [^;]+ '
                         r'WHERE "annotation_apitoken"\."id" = \d+$')


def get(client, failures, url, query=None):
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, query or {})
        failures.check(response, "GET", url + ("?" + str(query)[:200] if query else ""))
    sqls = [q["sql"] or "" for q in queries.captured_queries]  # None: a statement the database refused
    writes = [sql[:200] for sql in sqls if WRITES.match(sql) and not BOOKKEEPING.search(sql)]
    if writes:
        failures.found.append(f"GET {url} {str(query)[:200]} wrote: {writes}")
    return response


def query_names_of(route, callback) -> list[str]:
    """The query parameters a view reads: its module's reads, its query serializers', the browser's filters where
    it reads them, the API's paging."""
    text = Path(sys.modules[callback.__module__].__file__).read_text(encoding="utf-8")
    names = set(names_read([Path(sys.modules[callback.__module__].__file__)], QUERY_READS))
    for cls, fields in INPUTS.items():
        if cls.__name__.endswith("QuerySerializer") and re.search(rf"\b{cls.__name__}\b", text):
            names |= fields
    if "read_filters" in text or "pool_candidates" in text:
        names |= BROWSER_FILTERS
    if route.startswith("api/"):
        names |= {"cursor", "page_size"}
    return sorted(names)


def query_cases(index, names, plausible):
    """Query strings for a route: junk values (some()) for every name the site reads at once; each name the view reads
    alone with a junk value in rotation and with each of its plausible values (choices, bounds, the world's names
    and ids); all of them plausible, and all plausible but one junk; repeated names."""
    cases = [{name: value for name in QUERY_NAMES} for value in some(TEXT_JUNK, index)]
    fine = {name: plausible[name][0] for name in names if name in plausible}
    cases.append(fine)
    for n, name in enumerate(names):
        junk = TEXT_JUNK[(index + n) % len(TEXT_JUNK)]
        cases.append({name: junk})
        cases.append({**fine, name: junk})
        cases.extend({name: value} for value in plausible.get(name, [])[:6])
    cases.append({name: ["1", "abc", ""] for name in QUERY_NAMES})
    return cases


def some(values, index, count=6):
    """`count` of the values, from the index-th on (in a circle): each route its own few, every value some routes'."""
    return [values[(index + k) % len(values)] for k in range(min(count, len(values)))]


def shorter(value):
    """A long text in every field at once passes DATA_UPLOAD_MAX_MEMORY_SIZE (a 400 before any view): 2,000
    characters there, the whole 10,000 in one field alone."""
    return value[:2000] if value == LONG else value


def bodies(index, fields, plausible, junk, actions=()):
    """Every field of any input at once with junk values (some()); then the view's own fields all plausible (its first
    plausible value, or "x") and each one alone replaced by its other plausible values and by two junk values in
    rotation; the same for each action of the view's module, with one junk field each (a third of them)."""
    found = [{name: value for name in FIELD_NAMES} for value in map(shorter, some(junk, index))]
    fine = {name: (plausible.get(name) or ["x"])[0] for name in fields}
    found.append(fine)
    for n, name in enumerate(fields):
        found.extend({**fine, name: value} for value in plausible.get(name, [])[1:5])
        found.extend({**fine, name: junk[(index + 2 * n + k) % len(junk)]} for k in range(2))
    for n, action in enumerate(actions):  # one field in three junk for each action, a different third each
        found.append({**fine, "action": action, "which": action})
        found.extend({**fine, "action": action, "which": action, name: junk[(index + n + m) % len(junk)]}
                     for m, name in enumerate(fields) if (n + m) % 3 == 0)
    return found


def as_form(body):
    """A JSON body as form fields: true is a ticked box, false and null are left out, a list is repeated."""
    form = {}
    for name, value in body.items():
        if value is True:
            form[name] = "on"
        elif value is not False and value is not None:
            form[name] = [str(v) for v in value] if isinstance(value, list) else str(value)
    return form


def reaches_the_view(response):
    """Whether the role got past the sign-in and role checks (a page, JSON, or a 400 of the view)."""
    return response.status_code not in (301, 302, 401, 403, 404, 405)


@pytest.fixture
def failures(pages_rendered_as_in_production):
    import logging

    quiet = logging.getLogger("django.request"), logging.getLogger("django.server")
    levels = [logger.level for logger in quiet]
    for logger in quiet:  # thousands of 4xx lines (and the 5xx, which the failure lists)
        logger.setLevel(logging.CRITICAL)
    found = Failures()
    got_request_exception.connect(found.exception)
    yield found
    got_request_exception.disconnect(found.exception)
    for logger, level in zip(quiet, levels):
        logger.setLevel(level)


@pytest.fixture
def pages_rendered_as_in_production(monkeypatch):
    """Templates render without Django's test instrumentation: it sends a signal with a copy of the context for
    every template rendered (for a test's response.context), and a form field is six templates. The walks read
    statuses and bodies only; the organiser's bodies walk rendered 250,000 templates, and the instrumentation was
    about a tenth of its time."""
    from django.template.base import Template
    from django.test.utils import _TestState

    monkeypatch.setattr(Template, "_render", _TestState.saved_data.template_render)  # as setup_test_environment kept it


def spread(urls, cases):
    """Each case sent once, to the URLs in turn (every URL gets at least one): the cases of a route are shared
    among its real ids (four campaigns of four tasks, eight downloads...) rather than multiplied by them."""
    if not urls or not cases:
        return []
    return [(urls[i % len(urls)], case) for i in range(max(len(cases), len(urls))) for case in [cases[i % len(cases)]]]


def walk_gets(client, failures, site):
    for route, view in routes():
        real = [url for url in fills(route, site["real"], junk=False)
                if reaches_the_view(get(client, failures, url)) and route != "accounts/logout/"]
        reached = list(real)
        if real:  # ids that are no ids, where the role gets past the door (elsewhere the door answers alike)
            junk = [url for url in fills(route, site["real"]) if url not in real]
            reached += [url for url in junk if reaches_the_view(get(client, failures, url))]
        for url, query in spread(reached, query_cases(len(route), query_names_of(route, view), site["plausible"])):
            get(client, failures, url, query)
        for url in reached:
            get(client, failures, url + "?cursor=%ff%fe&page_size=%00&topic=%ed%a0%80&aggregate=%c0")


def walk_bodies(client, failures, site):
    for route, view in routes():
        if route in ("accounts/logout/", "accounts/login/"):
            continue  # signing out ends the session the rest of the walk uses; sign-in: tests/security/test_login*
        json_route = route.startswith("api/") or route.startswith("a/")
        fields, module = fields_of(view), Path(sys.modules[view.__module__].__file__)
        reached, real = [], fills(route, site["real"], junk=False)
        for url in real:
            for method in ("put", "patch", "delete"):
                response = getattr(client, method)(url, b'{"a": [null]}', content_type="application/json")
                failures.check(response, method.upper(), url)
            response = client.post(url, b"{}", content_type="application/json")
            failures.check(response, "POST", url, b"{}")
            if reaches_the_view(response):
                reached.append(url)
        if not reached:
            continue
        for url in fills(route, site["real"]):
            if url not in real:
                for method in ("delete", "post"):
                    failures.check(getattr(client, method)(url, b"{}", content_type="application/json"),
                                   method.upper(), url)
        for url, body in spread(reached, RAW_BODIES):
            failures.check(client.post(url, body, content_type="application/json"), "POST", url, body)
        plausible = site["plausible"]
        for url, body in spread(reached, bodies(len(route), fields, plausible, JSON_JUNK) if json_route else []):
            failures.check(client.post(url, json.dumps(body), content_type="application/json"), "POST", url, body)
        forms_sent = bodies(len(route), fields, plausible, TEXT_JUNK, actions([module])) if not json_route else []
        for url, body in spread(reached, [as_form(body) for body in forms_sent]):
            failures.check(client.post(url, body), "POST", url, body)


@pytest.mark.long
@pytest.mark.parametrize("walk", ["gets", "bodies"])
@pytest.mark.parametrize("role", ROLES)
def test_no_request_gives_a_500_and_no_get_writes(site, people, failures, role, walk):
    """Two tests a role, the GETs and the bodies, each on its own world (a GET writes nothing, so the bodies' walk
    finds the same site): the organiser's walk was the suite's longest test, and halves spread over the processes."""
    client = client_of(role, people, site["keys"])
    (walk_gets if walk == "gets" else walk_bodies)(client, failures, site)
    print(f"{role}: {failures.sent} {'GETs' if walk == 'gets' else 'other requests'}")
    assert not failures.found, f"{len(failures.found)} failures:\n" + "\n".join(failures.found[:40])


def test_the_walk_reads_the_sites_parameters():
    """The names gathered from the code include those every page and endpoint is known to read."""
    for name in ("topic", "cursor", "page_size", "aggregate", "level", "ties", "source", "collection", "after",
                 "measure", "per_topic", "passage", "sort", "disagreement", "layer"):
        assert name in QUERY_NAMES, name
    for name in ("action", "overlap", "runs", "depth", "username", "kind", "confirm", "stop", "work"):
        assert name in FIELD_NAMES, name
    for action in ("assign", "take_back", "reassign", "train", "label", "study_items", "pair_items", "rename",
                   "delete", "token", "revoke", "roles", "password", "create"):
        assert action in ACTIONS, action


# --- the 500s this walk found, each kept by its own test ---------------------------------------------------------

@pytest.mark.parametrize("path", ["save", "mark"])
def test_a_multipart_form_sent_to_a_json_endpoint_is_a_400_naming_the_body(world, client_for, path):
    """The middleware that refuses NUL in form fields read the multipart stream as form fields, after which the
    view's read of the body raised RawPostDataException: a 500."""
    client = client_for("assessor", raise_request_exception=False)
    response = client.post(f"/a/{world['token']}/{path}", {"layer": "notes", "value": "x"})  # multipart
    assert response.status_code == 400, response.content[:300]
    if path == "save":
        assert response.json()["field"] == "body"


ADMIN_JUNK = [HUGE, "-1", "abc", "\x00", "é💧", "a" * 3000]


@pytest.mark.long
def test_no_admin_page_gives_a_500(site, people, failures):
    """The admin (staff): every model's list with junk search, ordering, page, filters and lookups; its change,
    history and delete pages with junk ids; a POST of junk to its add page and its actions."""
    from django.contrib import admin

    client = client_of("superuser", people, {})
    for model, model_admin in admin.site._registry.items():
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        filters = [f if isinstance(f, str) else getattr(f, "parameter_name", "") for f in model_admin.list_filter]
        for n, junk in enumerate(ADMIN_JUNK):
            query = {"q": junk, "o": junk, "p": junk, "e": junk, "_to_field": junk, "_popup": junk,
                     "pk__in": junk, "id__gt": junk, **{f"{name}__exact": junk for name in filters if name},
                     **{name: junk for name in filters if name}}
            get(client, failures, base, query)
            for name in query:  # each alone: the first refused parameter hides the others
                if (len(name) + n) % 3 == 0:
                    get(client, failures, base, {name: junk})
            for page in ("change/", "history/", "delete/"):
                get(client, failures, f"{base}{quote(junk, safe='')}/{page}")
            failures.check(client.post(base, {"action": junk, "_selected_action": [junk, "1"], "index": junk}),
                           "POST", base, junk)
        failures.check(client.post(f"{base}add/", {name: "\x00" if n % 2 else HUGE for n, name in enumerate(
            f.name for f in model._meta.concrete_fields)}), "POST", f"{base}add/")
    print(f"admin: {failures.sent} requests")
    assert not failures.found, f"{len(failures.found)} failures:\n" + "\n".join(failures.found[:40])


@pytest.mark.parametrize("query, field", [
    ({"pk__in": HUGE}, "pk__in"), ({"pk__in": f"1,{HUGE}"}, "pk__in"),
    ({"campaign__exact": "-" + HUGE}, "campaign__exact"),
    ({"assessor__exact": "0" * 30 + HUGE}, "assessor__exact"),
])
def test_a_number_past_any_id_in_an_admin_lookup_is_a_400_naming_it(world, client_for, query, field):
    """The admin's lists pass query lookups to the database as they come: SQLite's OverflowError was a 500."""
    response = client_for("superuser", raise_request_exception=False).get("/admin/annotation/assignment/", query)
    assert response.status_code == 400 and response.content.decode().startswith(f"{field}: a number past any id")


def test_the_admin_still_takes_ids_in_range_and_searches_long_numbers(world, client_for):
    client = client_for("superuser")
    assert client.get("/admin/annotation/assignment/", {"pk__in": f"1,{2**63 - 1}"}).status_code == 200
    assert client.get("/admin/annotation/assignment/", {"q": HUGE}).status_code == 200


FILE_JUNK = [
    b"", bytes(range(256)) * 4, b"\x1f\x8b\x08\x00" + b"junk" * 10, b"BZh91AY&SY" + b"junk", b"\xfd7zXZ\x00" + b"junk",
    b"PK\x03\x04" + b"junk", b"301 Q0 d1 1 1 r\x00un\n", "301 Q0 d1 1 1 caf\xe9\n".encode("latin-1"),
    b'{"a": [' * 2000, b"301 Q0 d1 99999999999999999999 1e309 run\n", b"x" * 200_000,
    b'{"query_id": null, "run_id": [], "answer": {}, "metadata": []}\n', b"[1, 2]\n\"x\"\nnull\n",
    b"<DOC><DOCNO>\x00</DOCNO><TEXT>" + b"<" * 1000 + b"</DOC>",
    b"<topics><topic number='99999999999999999999'><query>\xff</query></topic>",
    b"qid\tquery\n\x00\t\n-1\t" + b"a" * 5000 + b"\n", b"\xbf" * 100, b"\xef\xbb\xbf\r\n\r\n",
    b'{"qid": "301", "nuggets": [{"text": null, "importance": 99999999999999999999}]}\n',
    b"301 0 d1 99999999999999999999\n301 0 d1 -1\n301 0 d1 NaN\n",
]
FILE_NAMES = ["f.txt", "f.gz", "f.bz2", "f.xz", "f.jsonl", "f.cbor", "f.zip", "f.tsv", "f.xml", "f.json", "f"]


def upload(content, n):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(FILE_NAMES[n % len(FILE_NAMES)], content, content_type="application/octet-stream")


def post_and_run(client, failures, capture, url, body, shown):
    """POST, then run the work it queued (as a worker would after the commit): an import that breaks on the file
    (anything but its problems, file:line: field) fails the test as a 500 would."""
    try:
        with capture(execute=True):
            response = client.post(url, body)
    except Exception:  # noqa: BLE001 — whatever the queued work raised is a finding
        failures.found.append(f"POST {url} {shown!r:.200}: the queued work raised\n{traceback.format_exc()[-1500:]}")
        return
    failures.check(response, "POST", url, shown)


@pytest.mark.long
@pytest.mark.parametrize("role", ["organiser", "participant-token"])
def test_no_upload_gives_a_500(site, people, failures, role, settings, django_capture_on_commit_callbacks):
    """Files of junk (empty, binary, broken gzip / bzip2 / xz / zip, NUL, not UTF-8, deep JSON, huge numbers, a
    200 kB line, JSON of the wrong shapes, broken SGML / XML / TSV / CBOR) to every upload: the console's data
    pages for each kind they take, and the API's runs, topics and answers, for each campaign."""
    from annotation.models import Campaign
    from annotation.services import data_imports

    settings.API_MAX_UPLOADS_PER_HOUR = 10_000
    client = client_of(role, people, site["keys"])
    n = 0
    for name in [*site["real"]["name"], None]:
        campaign = Campaign.objects.filter(name=name).first()
        kinds = data_imports.kinds_for(campaign.task) if campaign else [k for k, _ in DataImport.Kind.choices]
        url = f"/campaigns/{name}/data/" if name else "/data/"
        for kind in kinds if role == "organiser" else []:
            for content in some(FILE_JUNK, n, count=7):
                n += 1
                body = {"kind": kind, "files": [upload(content, n)], "collection": "web", "name": "junk",
                        "title": "Junk", "slug": "junk", "create_missing": "on"}
                post_and_run(client, failures, django_capture_on_commit_callbacks, url, body, (kind, content[:60]))
        if name is None:
            continue
        for url, field in ((f"/api/campaigns/{name}/topics/", "file"), (f"/api/campaigns/{name}/answers/", "file"),
                           ("/api/runs/", "file")):
            for content in FILE_JUNK:
                n += 1
                body = {field: upload(content, n), "campaign": name, "format": FILE_NAMES[n % 4].split(".")[-1]}
                post_and_run(client, failures, django_capture_on_commit_callbacks, url, body, content[:60])
    print(f"{role}: {failures.sent} uploads")
    assert not failures.found, f"{len(failures.found)} failures:\n" + "\n".join(failures.found[:40])


SAVE_JUNK = JSON_JUNK + [
    2**63, -(2**63) - 1, 10**30, "n" * 41, "٣", "1:99999999999999999999", "99999999999999999999:0", [{"id": None}],
    [{"id": "n1", "text": None, "importance": "vital"}], [{"id": "n1", "text": "x", "importance": 10**20}],
    [{"id": "x" * 100, "text": "x" * 100_000, "importance": "vital"}], [["a"]], [{}] * 2000, {"start": 10**20},
    [[10**20, -1]], [[1e308, 0]], [[0, 5, 7]], [["a", "b"]],
]


def test_no_save_of_the_newer_pages_gives_a_500(site, people, failures):
    """The saves and marks of the kinds of page the property tests (test_page_payload_properties.py) do not send:
    ad hoc grades and evidence, nugget support, nugget creation (a bank), citation support; each field of a
    well-formed change replaced by junk in turn."""
    from annotation.models import Campaign
    from annotation.services import plot

    rag = Campaign.objects.get(name="rag-judging")  # tests/annotation/nuggets_setup.py
    for stage in ("create", "citations"):
        assign_campaign(rag, [people["assessor"].username], stage=stage)
    client = client_of("assessor", people, site["keys"])
    bank = [{"id": "n1", "text": "A nugget", "importance": "vital", "origin": "assessor"}]
    shapes = {
        Assignment.Kind.ADHOC: [dict(layer="grade", value=1), dict(layer="evidence", value=[[0, 5]])],
        Assignment.Kind.NUGGET_SUPPORT: [dict(layer="nugget_support", nugget="n1", value="support")],
        Assignment.Kind.NUGGET_CREATION: [dict(layer="nuggets", value=bank)],
        Assignment.Kind.CITATION_SUPPORT: [dict(layer="citation_support", item="1:0", passage=1, value="f"),
                                           dict(layer="citation_support", sentence=0, passage=1, value="f")],
    }
    n, kinds = 0, set()
    for unit in Assignment.objects.filter(assessor=people["assessor"], kind__in=list(shapes)).order_by("pk"):
        kinds.add(unit.kind)
        url = f"/a/{unit.token}/save"
        for shape in shapes[unit.kind]:
            if unit.kind == Assignment.Kind.ADHOC:
                shape = {**shape, "passage": plot.candidates(unit)[0].passage_id}
            for field in [*shape, "client_time", "client_seq", "active_ms", "session_id", "change_id"]:
                for junk in some(SAVE_JUNK, n, count=12):
                    n += 1
                    body = {"change_id": str(uuid.uuid4()), "client_time": "2024-05-01T12:00:00Z", "session_id": "s",
                            "client_seq": n, **shape, field: junk}
                    failures.check(client.post(url, json.dumps(body), content_type="application/json"), "POST", url,
                                   body)
        for junk in some(SAVE_JUNK, n, count=12):
            url = f"/a/{unit.token}/mark"
            for body in ({"done": junk, "reason": junk}, {"done": False, "reason": junk}):
                failures.check(client.post(url, json.dumps(body), content_type="application/json"), "POST", url, body)
    assert kinds == set(shapes)
    print(f"saves: {failures.sent} requests")
    assert not failures.found, f"{len(failures.found)} failures:\n" + "\n".join(failures.found[:40])


@pytest.mark.parametrize("url", ["/api/campaigns/%00/", "/api/campaigns/a%00b/topics/", "/api/pools/%00/",
                                 "/api/runs/%00/", "/a/%00/", "/campaigns/adhoc/browse/%00/", "/welcome/%00/%00/"])
def test_a_nul_in_a_path_is_a_404(world, client_for, url):
    """A name in the path with NUL reached the database: PostgreSQL refuses NUL in text (DataError, a 500; the walk
    found it on PostgreSQL, where CI runs it; SQLite compares it)."""
    for role in ("organiser", "participant"):
        response = client_for(role, raise_request_exception=False).get(url)
        assert response.status_code == 404, (url, role, response.status_code)
