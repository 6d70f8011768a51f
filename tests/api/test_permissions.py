"""Every API endpoint for anonymous, participant A, participant B, an assessor and an organiser, against a table.

An endpoint missing from the table fails test_every_endpoint_is_in_the_table: a new endpoint has to say
who may call it.
"""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import URLPattern
from drf_spectacular.generators import SchemaGenerator

from annotation.services.campaigns import create_pool
from annotation.services.submissions import upload_run
from assessments.models import Qrel, QrelSet, Topic
from config import api_urls
from retrieval.models import Passage
from tests.api.conftest import make_adhoc, make_assessor_user, make_keys, make_web
from tests.api.helpers import ACTORS
from tests.conftest import part_of_module_rows, rows_made_once_per_module

# (method, path): statuses for anonymous, participant A, participant B, assessor (session), organiser.
# {id} is a run of participant A that no pool uses; {name} is campaign 'adhoc' or pool 'p1'.
TABLE = {
    ("GET", "/api/"): (200, 200, 200, 200, 200),
    ("GET", "/api/schema/"): (200, 200, 200, 200, 200),
    ("GET", "/api/docs/"): (200, 200, 200, 200, 200),
    ("GET", "/api/me/"): (401, 200, 200, 200, 200),
    ("GET", "/api/campaigns/"): (401, 200, 200, 403, 200),
    ("GET", "/api/campaigns/{name}/"): (401, 200, 200, 403, 200),
    ("GET", "/api/campaigns/{name}/topics/"): (401, 200, 200, 403, 200),
    ("GET", "/api/campaigns/{name}/topics/trec/"): (401, 200, 200, 403, 200),
    ("POST", "/api/campaigns/{name}/topics/"): (401, 403, 403, 403, 201),  # organisers upload an ad hoc campaign's
    # Answers (nuggets campaigns): 'adhoc' takes none, so a participant's or organiser's upload is refused (400).
    ("POST", "/api/campaigns/{name}/answers/"): (401, 400, 400, 403, 400),
    ("GET", "/api/campaigns/{name}/agreement/"): (401, 403, 403, 403, 200),
    # Settings: organisers; an empty POST names no settings (400).
    ("POST", "/api/campaigns/{name}/settings/"): (401, 403, 403, 403, 400),
    # Nugget scores: organisers; 'adhoc' is no nuggets campaign (400).
    ("GET", "/api/campaigns/{name}/nugget-scores/"): (401, 403, 403, 403, 400),
    # Machine assistance: organisers; an empty POST names nothing to learn from, no annotator, no pool (400);
    # {id} is no job of the campaign (404).
    ("GET", "/api/campaigns/{name}/machine/"): (401, 403, 403, 403, 200),
    ("GET", "/api/campaigns/{name}/machine/jobs/{id}/"): (401, 403, 403, 403, 404),
    ("POST", "/api/campaigns/{name}/machine/train/"): (401, 403, 403, 403, 400),
    ("POST", "/api/campaigns/{name}/machine/label/"): (401, 403, 403, 403, 400),
    ("POST", "/api/campaigns/{name}/machine/judge/"): (401, 403, 403, 403, 400),
    ("POST", "/api/campaigns/{name}/machine/zero-shot/"): (401, 403, 403, 403, 400),
    ("POST", "/api/campaigns/{name}/machine/nuggets/"): (401, 403, 403, 403, 400),
    ("POST", "/api/campaigns/{name}/machine/import/"): (401, 403, 403, 403, 400),
    ("GET", "/api/runs/"): (401, 200, 200, 403, 200),
    ("POST", "/api/runs/"): (401, 201, 201, 403, 201),
    ("GET", "/api/runs/{id}/"): (401, 200, 404, 403, 200),
    ("DELETE", "/api/runs/{id}/"): (401, 204, 404, 403, 204),
    ("GET", "/api/runs/{id}/evaluation/"): (401, 403, 404, 403, 200),  # participants: once evaluation is open
    ("GET", "/api/pools/"): (401, 403, 403, 403, 200),
    ("POST", "/api/pools/"): (401, 403, 403, 403, 201),
    ("GET", "/api/pools/{name}/"): (401, 403, 403, 403, 200),
    ("GET", "/api/pools/{name}/candidates/"): (401, 403, 403, 403, 200),
    ("GET", "/api/qrels/"): (401, 403, 403, 403, 200),
    ("GET", "/api/assessments/car-y3/"): (401, 403, 403, 403, 200),
}
QUERY = {"/api/qrels/": {"qrel_set": "official"}, "/api/assessments/car-y3/": {"collection": "web"}}
PLACEHOLDER = re.compile(r"\{[^}]*\}|<[^>]*>")


def shape(path):
    return PLACEHOLDER.sub("{}", path)


def schema_operations():
    schema = SchemaGenerator(patterns=api_urls.schema_patterns).get_schema(request=None, public=True)
    return {(method.upper(), path) for path, methods in schema["paths"].items() for method in methods}


def test_every_endpoint_is_in_the_table():
    routed = {shape("/api/" + str(p.pattern)) for p in api_urls.urlpatterns if isinstance(p, URLPattern)}
    assert routed == {shape(path) for _, path in TABLE}
    documented = {(method, shape(path)) for method, path in schema_operations()}
    assert documented <= {(method, shape(path)) for method, path in TABLE}
    undocumented = {key for key in TABLE if (key[0], shape(key[1])) not in documented}
    assert undocumented == {("GET", "/api/"), ("GET", "/api/schema/"), ("GET", "/api/docs/")}


def made_once():
    """Runs a1 (participant A, pooled in p1), a2 (participant A, in no pool), b1 (participant B); a qrel set."""
    from django.contrib.auth import get_user_model

    make_web()
    adhoc = make_adhoc()
    keys = make_keys()
    assessor_user = make_assessor_user()
    users = {u.username: u for u in get_user_model().objects.all()}
    runs = {}
    for tag, owner in (("a1", "team-a"), ("a2", "team-a"), ("b1", "team-b")):
        runs[tag] = upload_run(campaign=adhoc, owner=users[owner], data=f"301 Q0 d1 1 1 {tag}\n".encode())
    create_pool(campaign=adhoc, name="p1", runs=[runs["a1"].pk, runs["b1"].pk])
    qrel_set = QrelSet.objects.create(name="official", collection=adhoc.track.collection)
    Qrel.objects.create(qrel_set=qrel_set, topic=Topic.objects.get(external_id="301"),
                        passage=Passage.objects.get(external_id="d1"), grade=1)
    return {"world": runs, "keys": keys, "assessor_user": assessor_user}


# Made once for the module's few hundred calls (each call's writes are rolled back after its test).
shared = rows_made_once_per_module("shared", made_once)
world = part_of_module_rows("world")
keys = part_of_module_rows("keys")
assessor_user = part_of_module_rows("assessor_user")


def call(client, method, path, world, actor):
    url = path.replace("{id}", str(world["a2"].pk))
    url = url.replace("{name}", "p1" if url.startswith("/api/pools/") else "adhoc")
    if (method, path) == ("POST", "/api/runs/"):
        file = SimpleUploadedFile("run.txt", f"302 Q0 d2 1 1 new-{actor}\n".encode())
        return client.post(url, {"campaign": "adhoc", "file": file}, format="multipart")
    if (method, path) == ("POST", "/api/campaigns/{name}/topics/"):
        file = SimpleUploadedFile("topics.tsv", f"9{ACTORS.index(actor)}\tnew topic of {actor}\n".encode())
        return client.post(url, {"file": file}, format="multipart")
    if (method, path) == ("POST", "/api/campaigns/{name}/answers/"):
        return client.post(url, {"file": SimpleUploadedFile("answers.jsonl", b"")}, format="multipart")
    if (method, path) == ("POST", "/api/pools/"):
        return client.post(url, {"name": "new-pool", "campaign": "adhoc", "runs": [world["a2"].pk]}, format="json")
    if method == "POST" and ("/machine/" in path or path.endswith("/settings/")):
        return client.post(url, {}, format="json")
    if method == "DELETE":
        return client.delete(url)
    return client.get(url, QUERY.get(path, {}))


@pytest.mark.django_db
@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize("method, path", list(TABLE), ids=[f"{m} {p}" for m, p in TABLE])
def test_who_may_call_what(world, client_as, method, path, actor):
    expected = TABLE[(method, path)][ACTORS.index(actor)]
    response = call(client_as(actor), method, path, world, actor)
    if response.streaming:
        # Read a streamed body to its end here: an unread one keeps a server-side cursor open on PostgreSQL, and
        # closing it later (garbage collection) breaks the next test's transaction. The test client closes it at
        # its end without closing the database connection, which holds the module's transaction (closing it again
        # here fired request_finished, and that closed the connection).
        body = b"".join(response.streaming_content)
    else:
        body = response.content
    assert response.status_code == expected, body[:300]
