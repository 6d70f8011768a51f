"""Property tests (Hypothesis) over the page endpoints that take what a browser sends (issue 16): the save of every
kind of page (outline, plot labels, forced choice, pair), the mark (done, or incomplete with a reason), a review's
verdicts and remarks, and an adjudication.

Payloads are well-formed changes, the same with one field replaced by anything JSON can hold (odd types, huge
numbers, NaN, deep or wide values, text with NUL, lone surrogates, control and bidirectional characters), arbitrary
JSON, and bodies that are not JSON at all. Whatever comes: never a 5xx; a 4xx says which field is wrong (a JSON
`field` for the JSON endpoints, the form's `data-field` for the form pages) and changes nothing; a 2xx leaves the
database consistent: each judgement's value is that of its latest stored change by the assessor's clock.

Deterministic in CI: derandomized (the examples follow from the test alone), no example database, a modest
number of examples. PJ_FUZZ_EXAMPLES=500 searches that many random examples a test instead.
"""

import json
import os
import re
from datetime import datetime, timedelta, timezone

import pytest
from django.urls import reverse
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from annotation.models import Assignment, Review
from assessments.models import Judgement, JudgementChange, Topic
from tests import factories
from tests.annotation import plot_setup as ps

pytestmark = pytest.mark.django_db

EXPLORING = bool(os.environ.get("PJ_FUZZ_EXAMPLES"))  # PJ_FUZZ_EXAMPLES=500: that many random examples a test
EXAMPLES = settings(
    max_examples=int(os.environ.get("PJ_FUZZ_EXAMPLES") or 60), derandomize=not EXPLORING, database=None, deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)

NASTY = ["", " ", "\x00", "a\x00b", "\ud800", "x\udfffy", "\u202eevil", "\u200b", "\ufeff", "💧", "é" * 300,
         "a" * 20_001, "<script>alert(1)</script>", "null", "NaN", "1e309", "-0", "../../etc/passwd"]
# Generated surrogates mostly come in valid pairs (JSON joins them into one character): lone ones are put in.
BAD_CHARACTERS = ["\x00", "\ud800", "\udfff", "\udc00", "\x1b", "\u202e", "\u200b"]
TEXT = st.one_of(
    st.sampled_from(NASTY),
    st.text(max_size=30),
    st.builds(lambda a, bad, b: a + bad + b, st.text(max_size=5), st.sampled_from(BAD_CHARACTERS), st.text(max_size=5)),
    st.text(st.characters(categories=["Cs", "Cc", "Cf", "Zs", "So"]), max_size=10),
)
NUMBERS = st.one_of(
    st.integers(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 1, 2**31, 2**63, -(2**63) - 1, 10**30, 1e308, True, False]),
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, TEXT)
ANY_JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                        max_leaves=12)
ENVELOPE_FIELDS = ["change_id", "client_time", "client_seq", "session_id", "active_ms"]
NOT_JSON = st.one_of(
    st.binary(max_size=40),
    st.sampled_from([b"", b"{", b"[]", b"null", b"\xff\xfe", b'{"a": 1,}', b"NaN"]),
    st.integers(65, 100_000).map(lambda n: ("[" * n + "]" * n).encode()),
    st.integers(65, 20_000).map(lambda n: ('{"a":' * n + "1" + "}" * n).encode()),
)


ZONES = st.one_of(st.just(timezone.utc), st.integers(-14 * 60, 14 * 60).map(
    lambda minutes: timezone(timedelta(minutes=minutes))))


def clock():
    """Well-formed client times from the whole datetime range (year 1 to 9999, zones from -14:00 to +14:00), mostly
    inside the window the server keeps (2000 to its clock plus a day; outside it a save is a 400 naming client_time)."""
    anywhere = st.datetimes(timezones=ZONES)
    recent = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2026, 1, 1), timezones=ZONES)
    edges = st.sampled_from([datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14))), datetime.min, datetime.max,
                             datetime(9999, 12, 31, 23, 59, tzinfo=timezone(timedelta(hours=-14))),
                             datetime(1999, 12, 31, 23, 59, 59, tzinfo=timezone.utc)])
    return st.one_of(recent, recent, anywhere, edges).map(lambda t: t.isoformat().replace("+00:00", "Z"))


@st.composite
def change_bodies(draw, layers, keys, values):
    """A change as a page sends it, often with one field (or a key field) replaced by anything at all."""
    layer = draw(st.sampled_from(layers[:1] * 3 + layers))  # mostly the page's own layer
    body = {"change_id": str(draw(st.uuids())), "client_time": draw(clock()), "client_seq": draw(st.integers(0, 10)),
            "session_id": "tab-1", "active_ms": draw(st.integers(0, 60_000)), "layer": layer,
            **{name: draw(choice) for name, choice in keys(layer).items()}, "value": draw(values(layer))}
    shape = draw(st.sampled_from(["well-formed", "well-formed", "one field", "one field", "missing", "extra"]))
    if shape == "one field":
        body[draw(st.sampled_from(sorted(body)))] = draw(ANY_JSON)
    elif shape == "missing":
        del body[draw(st.sampled_from(sorted(body)))]
    elif shape == "extra":
        body[draw(TEXT)] = draw(ANY_JSON)
    return body


def payloads(layers, keys, values):
    """Bodies to send: mostly changes (encoded as a browser would), sometimes any JSON or no JSON at all."""
    return st.one_of(
        change_bodies(layers, keys, values).map(encode),
        change_bodies(layers, keys, values).map(encode),
        ANY_JSON.map(encode),
        NOT_JSON,
    )


def encode(value) -> bytes:
    return json.dumps(value).encode()  # lone surrogates travel as \\ud800 escapes, as JSON allows


def snapshot():
    return (JudgementChange.objects.count(), sorted(Judgement.objects.values_list("pk", "latest_change_id", "value")),
            sorted(Assignment.objects.values_list("pk", "status", "incomplete_reason")))


def consistent():
    """Each judgement holds the value of its latest change by the assessor's clock (ties: the later stored)."""
    for judgement in Judgement.objects.prefetch_related("changes"):
        changes = list(judgement.changes.all())
        if not changes:
            continue
        latest = max(changes, key=lambda c: (c.client_time, c.client_seq, c.pk))
        assert judgement.latest_change_id == latest.pk, judgement.key
        assert judgement.value == latest.value and judgement.client_time == latest.client_time, judgement.key


def check_json_answer(response, before):
    """The properties every answer of a JSON page endpoint has."""
    assert response.status_code < 500, response.content[:500]
    body = response.json()
    if response.status_code >= 400:
        assert isinstance(body.get("field"), str) and body["field"], body
        assert isinstance(body.get("message"), str) and body["message"], body
        assert snapshot() == before, body
    else:
        assert body["ok"] is True
        consistent()
    return body


def post_json(client, url, body: bytes):
    return client.post(url, body, content_type="application/json")


# --- the save of each kind of page ------------------------------------------------------------------------------


@pytest.fixture
def outline_unit():
    unit = ps.outline_assignment("outliner")
    facet = unit.topic.facets.first().heading_id
    return unit, list(unit.run.entries.order_by("rank").values_list("passage_id", flat=True)), facet


def test_outline_saves(client, outline_unit):
    unit, passages, facet = outline_unit
    client.force_login(unit.assessor)
    url = reverse("annotation:save", args=[unit.token])
    passage = st.one_of(st.sampled_from(passages), NUMBERS)
    relevance = st.sampled_from(["must", "should", "can", "topic", "nonrel", "unset", "MUST", ""])
    facet_value = st.lists(st.fixed_dictionaries({"facet": st.sampled_from([facet, "general", "other", "nope"]),
                                                  "relevance": relevance}), max_size=3)
    values = {"facet": facet_value, "notes": TEXT, "removal": st.booleans(),
              "transition": st.sampled_from(["same", "coherent", "switch", "offtopic", "x"])}

    def keys(layer):
        return {"passage": passage, **({"passage2": passage} if layer == "transition" else {})}

    @EXAMPLES
    @given(payloads(["facet", "notes", "removal", "transition", "plot_grade"], keys,
                    lambda layer: st.one_of(values.get(layer, ANY_JSON), st.none())))
    def save(body):
        check_json_answer(post_json(client, url, body), snapshot())

    save()
    assert JudgementChange.objects.exists()  # some well-formed changes were stored: the 2xx branch ran


@pytest.fixture
def plot_world(tmp_path):
    topic = ps.load_query(tmp_path, lines=ps.EXCERPT)
    pool, picked = ps.plot_pool(topic, size=4)
    return topic, pool, picked


def test_plot_label_saves(client, plot_world):
    topic, pool, picked = plot_world
    unit = ps.assign(factories.user("grader"), topic, pool, ps.campaign())
    client.force_login(unit.assessor)
    url = reverse("annotation:save", args=[unit.token])
    length = len(Topic.objects.get(pk=topic.pk).text)
    span = st.lists(st.integers(-2, length + 2), min_size=2, max_size=2).map(sorted)
    values = {"plot_grade": st.integers(-1, 4), "plot_spans": st.lists(span, max_size=4)}

    @EXAMPLES
    @given(payloads(["plot_grade", "plot_spans", "choice"],
                    lambda layer: {"passage": st.one_of(st.sampled_from([p.pk for p in picked]), NUMBERS)},
                    lambda layer: st.one_of(values.get(layer, ANY_JSON), st.none())))
    def save(body):
        check_json_answer(post_json(client, url, body), snapshot())

    save()
    assert JudgementChange.objects.exists()


def test_forced_choice_saves(client, plot_world):
    topic, pool, picked = plot_world
    ps.choice_item(pool, topic, picked[:3], answer=picked[1])
    unit = ps.assign(factories.user("chooser"), topic, pool, ps.campaign(name="choosing", mode="choice"))
    client.force_login(unit.assessor)
    url = reverse("annotation:save", args=[unit.token])
    chosen = st.sampled_from([p.external_id for p in picked] + ["", "nope"])

    items = st.sampled_from([ps.handle(unit, "choice-1"), "choice-1", "nope", ""])  # the page's handle, the stored key

    @EXAMPLES
    @given(payloads(["choice", "rating"], lambda layer: {"item": items},
                    lambda layer: st.one_of(chosen, st.none())))
    def save(body):
        check_json_answer(post_json(client, url, body), snapshot())

    save()
    assert JudgementChange.objects.exists()


def test_pair_rating_saves(client, plot_world):
    topic, pool, picked = plot_world
    ps.pair_item(pool, topic, picked[0], picked[2])
    unit = ps.assign(factories.user("rater"), topic, pool, ps.campaign(name="pairs", mode="pair"))
    client.force_login(unit.assessor)
    url = reverse("annotation:save", args=[unit.token])

    items = st.sampled_from([ps.handle(unit, "pair-1"), "pair-1", "nope"])

    @EXAMPLES
    @given(payloads(["rating", "choice"], lambda layer: {"item": items},
                    lambda layer: st.one_of(st.integers(-2, 12), st.none())))
    @example(encode({"change_id": "6f1c1e7e-8a43-4c39-9a55-0b5b3f8c1a01", "client_time": "2025-03-01T10:00:00Z",
                     "client_seq": 1, "session_id": "tab-1", "layer": "rating", "item": ps.handle(unit, "pair-1"),
                     "value": 7}))
    def save(body):  # the example: one well-formed rating, whatever the draws (a whole run once drew none stored)
        check_json_answer(post_json(client, url, body), snapshot())

    save()
    assert JudgementChange.objects.exists()


# --- the mark -----------------------------------------------------------------------------------------------------


def test_marks(client, outline_unit):
    unit, _, _ = outline_unit
    client.force_login(unit.assessor)
    url = reverse("annotation:mark", args=[unit.token])
    marks = st.fixed_dictionaries({"done": st.one_of(st.booleans(), ANY_JSON)},
                                  optional={"reason": st.one_of(TEXT, ANY_JSON)})
    seen = set()

    @EXAMPLES
    @given(st.one_of(marks.map(encode), marks.map(encode), ANY_JSON.map(encode), NOT_JSON))
    @example(encode({"done": True, "reason": "submitted incomplete: the rest is unreadable"}))  # a 200 (a mark
    def mark(body):  # never reopens since bc97fd8, so `done: false` is a 400 and 200s are rarer)
        response = post_json(client, url, body)
        answer = check_json_answer(response, snapshot())
        seen.add(response.status_code)
        if response.status_code == 200:
            unit.refresh_from_db()
            assert answer["status"] == unit.status

    mark()
    assert 200 in seen and 400 in seen


# --- review and adjudication (forms) ------------------------------------------------------------------------------


def check_form_answer(response, before):
    assert response.status_code < 500, response.content[:500]
    if 400 <= response.status_code < 500:
        html = response.content.decode()
        named = re.search(r'data-field="([^"]+)"', html) or re.match(r"([\w-]+):", html)
        assert named, html[:500]
        assert snapshot() == before


def _encodable(text):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# A form cannot carry a lone surrogate (no UTF-8 for it); NUL, controls and the rest it can.
FORM_TEXT = st.one_of(TEXT.filter(_encodable), NUMBERS.map(str))


def test_review_verdicts_and_remarks(client_for, world):
    review = Review.objects.get(pk=world["review"])
    items = list(review.items.values_list("pk", flat=True))
    client = client_for("reviewer")
    url = f"/review/{review.pk}/"
    fields = {}
    for pk in items:
        fields[f"correct-{pk}"] = st.one_of(st.sampled_from(["right", "wrong", "", "RIGHT"]), FORM_TEXT)
        fields[f"remark-{pk}"] = FORM_TEXT
    complete = st.fixed_dictionaries(  # a verdict for every item, a remark for some: often accepted
        {f"correct-{pk}": st.sampled_from(["right", "wrong"]) for pk in items},
        optional={f"remark-{pk}": FORM_TEXT for pk in items},
    )
    forms = st.one_of(complete, complete, st.fixed_dictionaries({}, optional={**fields, "extra": FORM_TEXT}))
    seen = set()
    opened = Review.objects.filter(pk=review.pk).values("status", "reviewer", "finished_at", "pass_rate").get()
    unit = Assignment.objects.filter(pk=review.assignment_id)
    unit_state = unit.values("status").get()

    @EXAMPLES
    @given(forms)
    def submit(form):
        Review.objects.filter(pk=review.pk).update(**opened)  # each example reviews the same open batch
        unit.update(**unit_state)
        review.items.update(correct=None, remark="")
        before = snapshot()
        response = client.post(url, form)
        check_form_answer(response, before)
        seen.add(response.status_code)
        if response.status_code == 302:
            done = Review.objects.get(pk=review.pk)
            assert done.status in (Review.Status.PASSED, Review.Status.FAILED)
            for item in done.items.all():
                assert item.correct == (form[f"correct-{item.pk}"] == "right")
                assert item.remark == form.get(f"remark-{item.pk}", "").strip()

    submit()
    assert 302 in seen and 400 in seen


def test_adjudications(client_for, world):
    campaign = world["outline_campaign"]
    topic, passages = world["topic"], world["passages"]
    client = client_for("organiser")
    url = reverse("annotation:adjudication", args=[campaign.name])
    ids = st.one_of(st.sampled_from([str(p.pk) for p in passages] + [str(topic.pk)]), FORM_TEXT)
    forms = st.fixed_dictionaries(
        {"layer": st.one_of(st.sampled_from(["relevance", "facet", "transition", "plot_grade", "nuggets", "notes"]),
                            FORM_TEXT)},
        optional={
            "topic": st.one_of(st.just(str(topic.pk)), ids), "passage": ids, "passage2": ids,
            "label": st.one_of(st.sampled_from(["removed", "same", "switch", "2", "99999999999999999999"]), FORM_TEXT),
            "facet": st.one_of(st.just("tqa2:L_0001/T_0001"), FORM_TEXT),
            "relevance": st.one_of(st.sampled_from(["must", "should", "can"]), FORM_TEXT),
            "take": FORM_TEXT, "keep": FORM_TEXT,  # a bank's (layer nuggets)
        },
    )

    @EXAMPLES
    @given(forms)
    def adjudicate(form):
        before = snapshot()
        response = client.post(url, form)
        check_form_answer(response, before)
        if response.status_code == 302:
            consistent()

    adjudicate()

