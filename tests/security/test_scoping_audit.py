"""The scoping audit: every URL pattern of the site and every API endpoint, filled with the ids and names of two
campaigns (tests/security/scoping_world.py: ad hoc `alpha-adhoc`, nuggets `rag-judging`), for each role.

- An assessor judges blind: no run name and no team name reaches their browser (pages, the page's JSON state, the
  answers to saves and marks, the API in their session, error messages).
- A token scoped to one campaign neither reads nor writes anything of the other: its answers hold none of the
  other campaign's distinctive strings, and a write naming the other campaign (in the URL or the body) is refused
  with nothing written.
- A participant team sees its own runs only, never another team's run names.

tests/security/test_url_matrix.py and tests/api/test_permissions.py check the statuses per role; this file checks
what the bodies hold when the ids come from the other campaign.
"""

import json
import re
import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from config import api_urls
from tests import factories
from tests.security import scoping_world as sw
from tests.security.test_url_matrix import routes

PARAM = re.compile(r"<(?:\w+:)?(\w+)>")
API_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def world(db):
    return sw.build()


def api_routes():
    return ["api/" + str(p.pattern) for p in api_urls.endpoints]


def read(response):
    if response.streaming:
        body = b"".join(response.streaming_content)
        response.close()
    else:
        body = response.content
    headers = "\n".join(f"{k}: {v}" for k, v in response.items())  # Location, Content-Disposition say names too
    return headers + "\n\n" + body.decode("utf-8", "replace")


def leaked(text, secrets):
    return sorted({s for s in secrets if s.lower() in text.lower()})


def values_of(world, campaign):
    """What each URL parameter may be, taken from `campaign` (both campaigns' values for the assessor's walk)."""
    runs = [r.pk for r in world["runs"].values()] if campaign == sw.A else [world["b_run"].pk]
    return {
        "name": [campaign], "pool": [sw.A_POOL] if campaign == sw.A else [campaign],
        "pk": [str(pk) for pk in runs], "id": [str(world["jobs"][campaign].pk)],
        "what": ["qrels", "runs", "evaluation", "nugget-scores", "answers", "assessments"],
        "kind": ["machine", "import", "retrieval"], "token": [u.token for key, units in world["units"].items()
                                                             if key[0] == campaign for u in units],
        "uidb64": ["MQ"],
    }


def fill(route, values):
    """Every URL of `route` with its parameters taken from `values` (the product, kept small: the first of each
    list beside every one of the first parameter)."""
    names = PARAM.findall(route)
    if not names:
        return ["/" + route]
    urls = []
    first = names[0]
    for choice in values.get(first, ["1"]):
        url = "/" + route
        for name in names:
            options = values.get(name, ["1"])
            value = choice if name == first else options[0]
            if name == "name" and route.startswith("api/pools/"):
                value = values["pool"][0]
            url = PARAM.sub(str(value), url, count=1)
        urls.append(url)
    return urls


# --- Assessors judge blind --------------------------------------------------------------------------------------


def assessor_client(world, who="judge-one"):
    client = Client()
    client.force_login(world["people"][who])
    return client


def label_something(world, client, who="judge-one"):
    """A real label on each of `who`'s units of both campaigns through the pages' save path; the answers."""
    answers = []
    rag = world["rag"]
    nugget = rag["bank"][0]["id"]
    for (campaign, assessor), units in world["units"].items():
        if assessor != who:
            continue
        for unit in units:
            if campaign == sw.A:
                passage = unit.pool.candidates.filter(topic=unit.topic).order_by("rank").first().passage_id
                change = {"layer": "grade", "passage": passage, "value": 1}
            elif unit.kind == "citation_support":
                from annotation.services.citation_support import answer_of, pairs

                answer = answer_of(unit)
                sentence, passage = pairs(answer)[0]["id"].split(":")
                change = {"layer": "citation_support", "item": f"{answer.pk}:{sentence}", "passage": int(passage),
                          "value": "full"}
            else:
                change = {"layer": "nugget_support", "nugget": nugget, "value": "support"}
            change.update(change_id=str(uuid.uuid4()), client_time="2026-01-01T12:00:00.000Z", client_seq=1,
                          session_id="audit")
            response = client.post(f"/a/{unit.token}/save", json.dumps(change), content_type="application/json")
            answers.append((f"/a/{unit.token}/save", response.status_code, read(response)))
            response = client.post(f"/a/{unit.token}/mark", json.dumps({"done": True, "reason": "audit"}),
                                   content_type="application/json")
            answers.append((f"/a/{unit.token}/mark", response.status_code, read(response)))
    return answers


@pytest.mark.long
@pytest.mark.django_db
def test_no_run_or_team_name_reaches_an_assessors_browser(world):
    client = assessor_client(world)
    secrets = sw.RUN_NAMES + sw.TEAM_NAMES
    answers = label_something(world, client)
    assert all(status == 200 for _, status, _ in answers), answers  # the labels were stored
    label_something(world, assessor_client(world, "judge-two"), who="judge-two")
    values = {}
    for campaign in (sw.A, sw.B):
        for key, options in values_of(world, campaign).items():
            values.setdefault(key, []).extend(o for o in options if o not in values.get(key, []))
    seen = 0
    for route in routes():
        if route.startswith("admin/"):
            continue
        for url in fill(route, values):
            for query in ("", "?queue", "?examples", "?after=" + values["token"][0]):
                for accept in ("*/*", "text/html"):  # the API in a browser draws forms
                    response = client.get(url + query, HTTP_ACCEPT=accept)
                    seen += 1
                    found = leaked(read(response), secrets)
                    assert not found, f"GET {url}{query} ({response.status_code}) shows {found} to an assessor"
    for url, status, body in answers:
        found = leaked(body, secrets)
        assert not found, f"POST {url} ({status}) answers {found} to an assessor"
    assert seen > 100


@pytest.mark.django_db
def test_an_assessor_never_sees_another_assessors_units(world):
    client = assessor_client(world)
    for campaign in (sw.A, sw.B):
        for unit in world["units"][(campaign, "judge-two")]:
            for path in ("", "save", "mark", "reopen"):
                method = client.get if path == "" else client.post
                response = method(f"/a/{unit.token}/{path}", *(() if path == "" else ("{}",)),
                                  **({} if path == "" else {"content_type": "application/json"}))
                assert response.status_code == 404, (campaign, path, response.status_code)


# --- Tokens scoped to a campaign --------------------------------------------------------------------------------


def api_client(world, token):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {world['tokens'][token]}")
    return client


def naming(world, other):
    """A request body naming everything of campaign `other` it could name."""
    runs = [world["b_run"].pk] if other == sw.B else [r.pk for r in world["runs"].values()]
    return {
        "name": "audit-new", "campaign": other, "runs": runs, "run": runs[0], "pools": [sw.A_POOL],
        "pool": sw.A_POOL, "annotator": world["sources"][other].pk, "source": world["sources"][other].pk,
        "machine_source": world["sources"][other].pk, "qrels": sw.A_QRELS, "qrel_set": sw.A_QRELS,
        "learn_from": "qrels", "settings": {"overlap": 1}, "assessors": ["judge-one"],
    } if other == sw.A else {
        "name": "audit-new", "campaign": other, "runs": runs, "run": runs[0],
        "annotator": world["sources"][other].pk, "source": world["sources"][other].pk,
        "machine_source": world["sources"][other].pk, "settings": {"overlap": 1}, "assessors": ["judge-one"],
    }


def send(client, method, url, body, upload=None):
    if method == "GET":
        return client.get(url, {k: v for k, v in body.items() if isinstance(v, (str, int))})
    if upload is not None:
        return getattr(client, method.lower())(url, upload, format="multipart")
    return getattr(client, method.lower())(url, body, format="json")


def uploads(other):
    if other == sw.A:
        run = "401 Q0 ALPHADOC-1 1 1 audit-run\n"
    else:
        run = f"{sw.nuggets_setup.TOPIC} Q0 msmarco_v2.1_doc_00_100#0_200 1 1 audit-run\n"
    return {"file": SimpleUploadedFile("f.txt", run.encode()), "campaign": other}


SCOPED = [("org-A", sw.B), ("org-B", sw.A), ("part-A", sw.B)]


@pytest.mark.django_db
@pytest.mark.parametrize("token, other", SCOPED)
def test_a_scoped_token_reaches_nothing_of_the_other_campaign(world, token, other):
    client = api_client(world, token)
    values = values_of(world, other)
    body = naming(world, other)
    before = sw.snapshot()
    problems = []
    for route in api_routes():
        for url in fill(route, values):
            for method in API_METHODS:
                upload = uploads(other) if method == "POST" and route in ("api/runs/",) or (
                    method == "POST" and route.endswith(("/topics/", "/answers/"))) else None
                response = send(client, method, url, body, upload)
                text = read(response)
                found = leaked(text, sw.SECRETS[other])
                if found:
                    problems.append(f"{method} {url} ({response.status_code}) shows {found}: {text[:200]}")
                if method != "GET" and response.status_code < 300:
                    problems.append(f"{method} {url} naming {other} was accepted ({response.status_code})")
    assert not problems, "\n".join(problems)
    assert sw.snapshot() == before


@pytest.mark.django_db
@pytest.mark.parametrize("token, other", SCOPED)
def test_a_scoped_token_lists_nothing_of_the_other_campaign(world, token, other):
    """Lists and downloads of the token's own campaign, with query parameters naming the other's."""
    client = api_client(world, token)
    own = sw.A if other == sw.B else sw.B
    params = {"campaign": other, "collection": "msmarco-v21-nuggets" if other == sw.B else "alpha-web",
              "pool": sw.A_POOL, "qrel_set": sw.A_QRELS, "source": world["sources"][other].pk,
              "machine_source": world["sources"][other].pk}
    urls = ["/api/me/", "/api/campaigns/", f"/api/campaigns/{own}/", f"/api/campaigns/{own}/topics/",
            f"/api/campaigns/{own}/topics/trec/", f"/api/campaigns/{own}/machine/", f"/api/campaigns/{own}/agreement/",
            f"/api/campaigns/{own}/nugget-scores/", "/api/runs/", "/api/pools/", "/api/qrels/",
            "/api/assessments/car-y3/"]
    urls += [f"/api/runs/{r.pk}/evaluation/" for r in world["runs"].values()] + [
        f"/api/runs/{world['b_run'].pk}/evaluation/"]
    problems = []
    for url in urls:
        for query in ({}, params):
            response = client.get(url, query)
            text = read(response)
            found = leaked(text, sw.SECRETS[other])
            if found:
                problems.append(f"GET {url} {query} ({response.status_code}) shows {found}: {text[:300]}")
    assert not problems, "\n".join(problems)


# --- Participants see their own runs ----------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_participant_sees_its_own_runs_only(world):
    client = api_client(world, sw.A_TEAMS[0])
    mine, theirs = world["runs"][sw.A_RUNS[0]], world["runs"][sw.A_RUNS[1]]
    secrets = (sw.A_RUNS[1], sw.A_TEAMS[1], *sw.nuggets_setup.RUNS)
    values = {"name": [sw.A, sw.B], "pool": [sw.A_POOL], "pk": [str(mine.pk), str(theirs.pk), str(world["b_run"].pk)],
              "id": [str(world["jobs"][sw.A].pk)]}
    before = sw.snapshot()
    problems = []
    for route in api_routes():
        for url in fill(route, values):
            for method in ("GET", "POST", "DELETE"):
                if method == "DELETE" and str(mine.pk) in url:
                    continue
                upload = uploads(sw.A) if method == "POST" and route.endswith(("/topics/", "/answers/")) else None
                if method == "POST" and route == "api/runs/":
                    continue  # its own upload is allowed
                response = send(client, method, url, {"campaign": sw.A, "runs": [theirs.pk]}, upload)
                text = read(response)
                found = leaked(text, secrets)
                if found:
                    problems.append(f"{method} {url} ({response.status_code}) shows {found}: {text[:200]}")
    assert not problems, "\n".join(problems)
    assert sw.snapshot() == before


# --- Writes inside the token's own campaign that name the other campaign's objects ------------------------------


def settings_change(client, campaign, settings):
    """Propose a settings change and, if it is answered with a confirmation, apply it; the last answer."""
    url = f"/api/campaigns/{campaign}/settings/"
    response = client.post(url, {"settings": settings}, format="json")
    if response.status_code == 200 and "confirm" in response.json():
        response = client.post(url, {"settings": settings, "confirm": response.json()["confirm"]}, format="json")
    return response


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["other", "missing", "text"])
def test_a_campaign_token_cannot_store_another_campaigns_source_while_pre_labels_are_off(world, value):
    """machine_source is also the source whose scores order the judging queue, so it is checked whenever it is set,
    not only when pre-labels are turned on: with them off the token stored the other campaign's source."""
    from annotation.models import Campaign

    source = {"other": world["sources"][sw.B].pk, "missing": 999999, "text": "BETASOURCE-annotator"}[value]
    before = sw.snapshot()
    response = settings_change(api_client(world, "org-A"), sw.A, {"machine_source": source})
    assert response.status_code == 400, response.content
    assert response.json()["field"] == "machine_source"
    assert not leaked(read(response), sw.SECRETS[sw.B])
    assert "machine_source" not in Campaign.objects.get(name=sw.A).settings
    assert sw.snapshot() == before


@pytest.mark.django_db
def test_a_campaign_token_sets_its_own_source_with_pre_labels_off(world):
    from annotation.models import Campaign

    response = settings_change(api_client(world, "org-A"), sw.A, {"machine_source": world["sources"][sw.A].pk})
    assert response.status_code == 200 and response.json()["applied"], response.content
    assert Campaign.objects.get(name=sw.A).settings["machine_source"] == world["sources"][sw.A].pk


@pytest.mark.django_db
def test_writes_in_the_tokens_campaign_naming_the_other_campaigns_objects_are_refused(world):
    from assessments.models import QrelSet
    from retrieval.models import Collection

    QrelSet.objects.create(name="BETA-QRELS", collection=Collection.objects.get(name="msmarco-v21-nuggets"))
    a, b = api_client(world, "org-A"), api_client(world, "org-B")
    b_source, a_source = world["sources"][sw.B].pk, world["sources"][sw.A].pk
    cases = [
        (a, "/api/pools/", {"name": "audit-pool", "campaign": sw.A, "runs": [world["b_run"].pk]}),
        (a, f"/api/campaigns/{sw.A}/machine/label/", {"annotator": b_source, "pools": [sw.A_POOL]}),
        (a, f"/api/campaigns/{sw.A}/machine/train/", {"learn_from": "qrels", "qrels": "BETA-QRELS", "pool": sw.A_POOL}),
        (b, f"/api/campaigns/{sw.B}/machine/label/", {"annotator": a_source, "pools": [sw.A_POOL]}),
        (b, f"/api/campaigns/{sw.B}/machine/zero-shot/", {"pools": [sw.A_POOL]}),
        (b, f"/api/campaigns/{sw.B}/machine/train/", {"learn_from": "qrels", "qrels": sw.A_QRELS, "pool": sw.A_POOL}),
        (a, f"/api/campaigns/{sw.A}/settings/", {"settings": {"worked_examples": [
            {"topic": sw.nuggets_setup.TOPIC, "passage": "msmarco_v2.1_doc_00_100#0_200", "grade": 1,
             "explanation": "x"}]}}),
    ]
    before = sw.snapshot()
    for client, url, body in cases:
        response = client.post(url, body, format="json")
        other = sw.B if client is a else sw.A
        assert response.status_code in (400, 403, 404), (url, body, response.status_code, response.content)
        echoed = json.dumps(body)  # the caller's own words said back are no leak
        found = [s for s in leaked(read(response), sw.SECRETS[other]) if s not in echoed]
        assert not found, (url, read(response))
    for url, query in ((f"/api/runs/{world['runs'][sw.A_RUNS[0]].pk}/evaluation/", {"qrel_set": "BETA-QRELS"}),):
        response = a.get(url, query)
        assert response.status_code == 400, response.content
    for query in ({"source": a_source}, {"source": sw.A_SOURCE}):
        response = b.get(f"/api/campaigns/{sw.B}/nugget-scores/", query)
        found = [s for s in leaked(read(response), sw.SECRETS[sw.A]) if s != query["source"]]
        assert response.status_code == 400 and not found, response.content
    assert sw.snapshot() == before


PAGE_DATA = re.compile(r'<script id="[\w-]+-data" type="application/json">(.*?)</script>', re.S)


@pytest.mark.django_db
def test_an_assessors_page_holds_their_own_labels_only(world):
    """judge-two labels every unit of both campaigns; judge-one's pages of the same items still hold no label."""
    label_something(world, assessor_client(world, "judge-two"), who="judge-two")
    client = assessor_client(world)
    for campaign in (sw.A, sw.B):
        for unit in world["units"][(campaign, "judge-one")]:
            response = client.get(f"/a/{unit.token}/")
            assert response.status_code == 200
            found = PAGE_DATA.findall(response.content.decode())
            assert found, f"no page data on {campaign}'s page"
            labels = json.loads(found[0])["labels"]
            assert not any(labels.values()) if isinstance(labels, dict) and "grades" in labels else not labels, (
                campaign, labels)


@pytest.mark.django_db
def test_an_assessors_save_cannot_label_the_other_campaigns_items(world):
    from retrieval.models import Passage

    client = assessor_client(world)
    a_unit, b_unit = world["units"][(sw.A, "judge-one")][0], world["units"][(sw.B, "judge-one")][0]
    b_passage = Passage.objects.get(external_id=sw.nuggets_setup.DOCS[0][0]).pk
    a_passage = Passage.objects.get(external_id="ALPHADOC-1").pk
    other_answer = next(a for a in world["rag"]["answers"].values() if a.pk != b_unit.run.answers.first().pk)
    cases = [
        (a_unit, {"layer": "grade", "passage": b_passage, "value": 1}),
        (a_unit, {"layer": "evidence", "passage": b_passage, "value": [[0, 3]]}),
        (a_unit, {"layer": "nugget_support", "nugget": "n1", "value": "support"}),
        (b_unit, {"layer": "grade", "passage": a_passage, "value": 1}),
        (b_unit, {"layer": "nugget_support", "nugget": "n1", "value": "support", "answer": other_answer.pk}),
    ]
    before = sw.snapshot()
    for unit, change in cases:
        change = {**change, "change_id": str(uuid.uuid4()), "client_time": "2026-01-01T12:00:00.000Z",
                  "client_seq": 1, "session_id": "audit"}
        response = client.post(f"/a/{unit.token}/save", json.dumps(change), content_type="application/json")
        other = sw.B if unit.campaign.name == sw.A else sw.A
        if "answer" in change:  # an answer named in the body is ignored: the unit's own answer is labelled
            assert response.status_code == 200, response.content
            continue
        assert response.status_code == 400, (change, response.status_code, response.content)
        assert not leaked(read(response), sw.SECRETS[other] + sw.RUN_NAMES)
    from assessments.models import Judgement

    labelled = Judgement.objects.filter(layer="nugget_support", assessor=world["people"]["judge-one"])
    assert {j.item.split(":")[0] for j in labelled} == {str(b_unit.run.answers.first().pk)}
    assert sw.snapshot().keys() == before.keys()


@pytest.mark.django_db
def test_no_run_name_reaches_a_reviewers_browser(world):
    """Reviewers judge the labels, as blind as the assessors were (a campaign that shows run names aside)."""
    from annotation.models import Review
    from annotation.roles import Role, ensure_groups
    from annotation.services.review import open_review
    from tests import factories

    label_something(world, assessor_client(world))
    reviewer = factories.user("reviewing")
    reviewer.groups.add(ensure_groups()[Role.REVIEWER])
    for campaign in (sw.A, sw.B):
        for unit in world["units"][(campaign, "judge-one")]:
            unit.refresh_from_db()
            if not Review.objects.filter(assignment=unit).exists():
                open_review(unit)
    reviews = list(Review.objects.all())
    assert len(reviews) >= 2 and all(r.items.exists() for r in reviews), reviews
    Review.objects.update(reviewer=reviewer)
    client = Client()
    client.force_login(reviewer)
    for url in ["/", "/review/"] + [f"/review/{r.pk}/" for r in reviews]:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        found = leaked(read(response), sw.RUN_NAMES + sw.TEAM_NAMES)
        assert not found, f"GET {url} shows {found} to a reviewer"
        # nor an answer's id (a support label's key "<answer id>:<nugget id>"), which groups one run's answers
        assert not re.search(r"\b\d+:n\d+\b", read(response)), f"GET {url} names an answer by its id"


@pytest.mark.django_db
def test_a_writers_nuggets_reach_no_other_assessors_browser_before_the_bank_is_settled(world):
    """Banks are written independently: while judge-one's creation unit is open, nothing judge-two wrote reaches
    any page of judge-one's (the creation page, the support pages, which wait, the queue)."""
    from annotation.models import Assignment

    campaign = world["campaigns"][sw.B]
    assign_campaign = __import__("annotation.services.assignment", fromlist=["assign_campaign"]).assign_campaign
    assign_campaign(campaign, ["judge-one", "judge-two"], overlap=2, stage="create")
    units = {who: Assignment.objects.get(campaign=campaign, assessor__username=who, kind="nugget_creation")
             for who in ("judge-one", "judge-two")}
    secret = "JUDGETWO-NUGGET about coping"
    two = assessor_client(world, "judge-two")
    page = two.get(f"/a/{units['judge-two'].token}/").content.decode()
    bank = json.loads(PAGE_DATA.findall(page)[0])["nuggets"]
    bank = bank + [{"id": "n99", "text": secret, "importance": "vital", "origin": "assessor"}]
    change = {"layer": "nuggets", "value": bank, "change_id": str(uuid.uuid4()),
              "client_time": "2026-01-01T12:00:00.000Z", "client_seq": 1, "session_id": "audit"}
    response = two.post(f"/a/{units['judge-two'].token}/save", json.dumps(change), content_type="application/json")
    assert response.status_code == 200, response.content
    response = two.post(f"/a/{units['judge-two'].token}/mark", json.dumps({"done": True}),
                        content_type="application/json")
    assert response.status_code == 200, response.content
    one = assessor_client(world)
    urls = ["/", "/?queue", "/next/"] + [f"/a/{u.token}/" for us in world["units"].values() for u in us
                                         if u.assessor.username == "judge-one"] + [f"/a/{units['judge-one'].token}/"]
    for url in urls:
        response = one.get(url)
        assert secret not in read(response), f"GET {url} ({response.status_code}) shows judge-two's nugget"


@pytest.mark.django_db
@pytest.mark.parametrize("token, other", SCOPED + [(sw.A_TEAMS[0], None)])
def test_the_browsable_api_shows_a_token_nothing_of_campaigns_it_cannot_reach(world, token, other):
    """The API in a browser (text/html) draws forms: the run upload's `campaign` choice listed every campaign's name
    to a token limited to one (and campaigns that take no runs to participants)."""
    factories.campaign("NORUNS-campaign")  # no track: takes no runs
    client = api_client(world, token)
    own = sw.A if other != sw.A else sw.B
    secrets = (other, "NORUNS-campaign") if other else ("NORUNS-campaign",)
    problems = []
    for route in api_routes():
        for url in fill(route, values_of(world, own)):
            for method in ("get", "options"):
                response = getattr(client, method)(url, HTTP_ACCEPT="text/html")
                found = leaked(read(response), secrets)
                if found:
                    problems.append(f"{method.upper()} {url} (text/html, {response.status_code}) shows {found}")
            response = client.options(url)
            found = leaked(read(response), secrets)
            if found:
                problems.append(f"OPTIONS {url} ({response.status_code}) shows {found}")
    assert not problems, "\n".join(problems)
    form = read(client.get("/api/runs/", HTTP_ACCEPT="text/html"))
    assert f'<option value="{own}"' in form  # the form still offers the campaign the caller may upload to


@pytest.mark.django_db
def test_a_participant_team_signed_in_sees_no_other_teams_run_on_any_page(world):
    from django.contrib.auth import get_user_model

    client = Client()
    client.force_login(get_user_model().objects.get(username=sw.A_TEAMS[0]))
    secrets = (sw.A_RUNS[1], sw.A_TEAMS[1], *sw.nuggets_setup.RUNS)
    values = {}
    for campaign in (sw.A, sw.B):
        for key, options in values_of(world, campaign).items():
            values.setdefault(key, []).extend(o for o in options if o not in values.get(key, []))
    problems = []
    for route in routes():
        if route.startswith("admin/"):
            continue
        for url in fill(route, values):
            for accept in ("*/*", "text/html"):
                response = client.get(url, HTTP_ACCEPT=accept)
                found = leaked(read(response), secrets)
                if found:
                    problems.append(f"GET {url} ({accept}, {response.status_code}) shows {found}")
    assert not problems, "\n".join(problems)


@pytest.mark.django_db
def test_an_assessors_page_data_holds_no_answer_id(world):
    """Answer ids follow the runs' files (a run's answers are stored together), so an id on the page would tell an
    assessor which of their units are one run's: the nugget and citation support pages name no answer, and a cited
    pair is named by its sentence's position and passage."""
    client = assessor_client(world)
    answer_ids = {a.pk for a in world["rag"]["answers"].values()}
    for unit in world["units"][(sw.B, "judge-one")]:
        state = json.loads(PAGE_DATA.findall(client.get(f"/a/{unit.token}/").content.decode())[0])
        assert "answer" not in state, (unit.kind, state.get("answer"))
        for item in state["items"]:
            assert set(item["fields"]) <= {"nugget", "passage", "sentence"}, item
            assert not any(str(v).split(":")[0] in map(str, answer_ids) and ":" in str(v)
                           for v in item["fields"].values()), item


@pytest.mark.django_db
def test_a_queue_does_not_order_every_topics_answers_by_run():
    """A nuggets campaign's units were made, and queued, in run id order within each topic: the first answer of every
    topic in an assessor's queue was one run's, so the queue told which answers of different topics were one
    system's. Each topic now has an order of its own (stable)."""
    from annotation.models import Assignment
    from annotation.roles import Role, ensure_groups
    from annotation.services.assignment import assign_campaign
    from annotation.services.campaigns import create_campaign
    from assessments.models import Answer, Topic
    from retrieval.models import Collection
    from tests import factories

    judge = factories.user("queue-judge")
    judge.groups.add(ensure_groups()[Role.ASSESSOR])
    coll = factories.collection("order-rag", kind=Collection.Kind.DOCUMENTS)
    topics = [factories.topic(coll, f"q{n}", kind=Topic.Kind.ADHOC, title=f"question {n}") for n in range(12)]
    campaign = create_campaign(name="order-rag", task="nuggets", topics=[t.external_id for t in topics])
    runs = [factories.run(coll, f"SECRETRUN-{n}") for n in range(3)]
    for topic in topics:
        for run in runs:
            Answer.objects.create(run=run, topic=topic, campaign_id=campaign.pk)
    assign_campaign(campaign, [judge.username])
    queued = Assignment.objects.filter(campaign=campaign, assessor=judge).order_by("position")
    orders = {}
    for unit in queued:
        orders.setdefault(unit.topic_id, []).append(unit.run_id)
    assert len(orders) == 12 and all(sorted(o) == sorted(r.pk for r in runs) for o in orders.values())
    assert len({tuple(o) for o in orders.values()}) > 1, "every topic's answers are queued in the same run order"
    again = [(u.topic_id, u.run_id) for u in queued]
    Assignment.objects.filter(campaign=campaign).delete()
    assign_campaign(campaign, [judge.username])
    assert [(u.topic_id, u.run_id) for u in Assignment.objects.filter(campaign=campaign).order_by("position")] == again
