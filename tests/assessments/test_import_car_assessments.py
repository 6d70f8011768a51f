"""import_car_assessments: Y3 assessment files (ours and the original tool's) become judgements, checked whole."""

import copy
import itertools
import json
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from assessments.exporters.car_y3 import file_name
from assessments.models import Judgement, JudgementChange, Layer
from assessments.services.judging import JudgementInvalid, record_judgement
from tests import factories
from tests.factories import db_snapshot

pytestmark = pytest.mark.django_db
_numbers = itertools.count(1)


def new_user(name=None):
    """A user without a password (factories.user hashes one, which costs a quarter of a second)."""
    return get_user_model().objects.create(username=name or f"assessor{next(_numbers)}")

TOPIC = "tqa2:L_0257"
P9, P10, P11 = ("2a967f3f17c026dedb2733adf90ffca35c124384", "f1dec26869a4c7d00c9acee595d1dfa8afa69ffe",
                "9f2f8743e626136344df4dce07e5c4166ab3e113")
P12 = "0b0c0d0e0f101112131415161718191a1b1c1d1e"
STAMP = "2019-10-11T21:02:58.354696907Z"
T0 = datetime(2019, 10, 11, 21, 2, 58, 354696, tzinfo=UTC)


def wrapped(value, annotator="NIST", stamp=STAMP, session="CAR-Y3", runs=()):
    return {"annotator_id": annotator, "time_stamp": stamp, "session_id": session, "run_ids": list(runs),
            "value": value}


def key(pid):
    return {"query_id": TOPIC, "paragraph_id": pid}


def appendix_example():
    """Seed 004 Appendix A's four examples as one file."""
    return {
        "notes_state": [[key(P9), [wrapped("examples of toxic chemicals and their sources...")]]],
        "facet_state": [[key(P9), [wrapped({
            "facet": {"heading": "toxic chemicals", "heading_id": "tqa2:L_0257/T_1512"}, "relevance": "MustLabel",
        })]]],
        "nonrelevant_state": [],
        "nonrelevant_state2": [[key(P10), wrapped(True)]],
        "transition_label_state": [
            [{"query_id": TOPIC, "paragraph_id1": P9, "paragraph_id2": P11}, wrapped("SameTransition")],
        ],
    }


def original_tool_file():
    """A file as the original tool wrote it, with its legacy labels, nanoseconds and its own facet id."""
    def facet(heading_id, heading, relevance, stamp=STAMP):
        return wrapped({"facet": {"heading": heading, "heading_id": heading_id}, "relevance": relevance},
                       annotator="laura", stamp=stamp, session="s-7", runs=["guir"])

    def tool(value, stamp=STAMP, runs=("guir",)):
        return wrapped(value, annotator="laura", stamp=stamp, session="s-7", runs=runs)

    return {
        "notes_state": [[key(P9), [tool("first thought", "2019-08-01T10:00:00.1Z"),
                                   tool("second thought", "2019-08-01T10:05:00.123456789Z", ["UNH-p-l2r"])]]],
        "facet_state": [
            [key(P9), [facet("tqa2:L_0257/T_1512", "toxic chemicals", "TrashLabel"),
                       facet("INTRODUCTION", "GENERAL/INTRODUCTION", "TopicLabel")]],
            [key(P10), [facet("NONE_OF_THESE", "OTHER RELEVANT FACET", "DuplicateLabel", "2019-08-01T11:00:00Z"),
                        facet("tqa2:L_0257/T_1512", "toxic chemicals", "UnsetLabel")]],
            [key(P11), [facet("tqa2:L_0257/T_1512", "toxic chemicals", "NonRelLabel")]],
            [key(P12), []],
        ],
        "nonrelevant_state": [[key(P12), tool([])]],
        "nonrelevant_state2": None,
        "transition_label_state": [
            [{"query_id": TOPIC, "paragraph_id1": P9, "paragraph_id2": P10}, tool("OfftopicTransition")],
            [{"query_id": TOPIC, "paragraph_id1": P10, "paragraph_id2": P11}, tool("ToNonRelTransition")],
            [{"query_id": TOPIC, "paragraph_id1": P11, "paragraph_id2": P12}, tool("RedundantTransition")],
            [{"query_id": TOPIC, "paragraph_id1": P9, "paragraph_id2": P11}, tool("CoherentTransition")],
            [{"query_id": TOPIC, "paragraph_id1": P9, "paragraph_id2": P12}, tool("UnsetTransition")],
            [{"query_id": TOPIC, "paragraph_id1": P10, "paragraph_id2": P12}, tool("AppropriateTransition")],
        ],
        "assessor_data": [],
    }


@pytest.fixture
def car():
    coll = factories.collection("car-y3")
    topic = factories.topic(coll, TOPIC, facets=[(f"{TOPIC}/T_1512", "toxic chemicals")])
    passages = {pid: factories.passage(coll, pid) for pid in (P9, P10, P11, P12)}
    return coll, topic, passages


def write(tmp_path, doc, name="assessments.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def run_import(*args):
    out = StringIO()
    call_command("import_car_assessments", *[str(a) for a in args], "--no-progress", stdout=out)
    return out.getvalue()


def export(out):
    call_command("export_car_assessments", "--out", str(out), stdout=StringIO())
    return out


def judgements(queryset=None):
    """Every judgement (of `queryset`) as comparable plain data."""
    return sorted(
        (Judgement.objects.all() if queryset is None else queryset).order_by().values_list(
            "assessor__username", "layer", "topic__external_id", "passage__external_id", "passage2__external_id",
            "value", "grade", "client_time", "latest_change__session_id", "run_ids",
        ),
        key=repr,
    )


def rejected(*args):
    """Call the command expecting a rejection that writes nothing; returns the error message."""
    before = db_snapshot()
    users = get_user_model().objects.count()
    with pytest.raises(CommandError) as excinfo:
        run_import(*args)
    assert db_snapshot() == before
    assert get_user_model().objects.count() == users
    message = str(excinfo.value)
    assert message.startswith("nothing was imported")
    return message


def test_it_imports_the_appendix_example(car, tmp_path):
    path = write(tmp_path, appendix_example())

    message = run_import(path)

    assert message == (
        "4 changes read from 1 CAR Y3 assessment files into collection 'car-y3': 4 recorded, 0 already there; "
        "new users: NIST.\n"
    )
    assert judgements() == sorted([
        ("NIST", "facet", TOPIC, P9, None, [{"facet": f"{TOPIC}/T_1512", "relevance": "must"}], 3, T0, "CAR-Y3", []),
        ("NIST", "notes", TOPIC, P9, None, "examples of toxic chemicals and their sources...", None, T0, "CAR-Y3", []),
        ("NIST", "removal", TOPIC, P10, None, True, 0, T0, "CAR-Y3", []),
        ("NIST", "transition", TOPIC, P9, P11, "same", None, T0, "CAR-Y3", []),
    ], key=repr)
    assert set(JudgementChange.objects.values_list("source", flat=True)) == {"import"}
    assert not get_user_model().objects.get(username="NIST").has_usable_password()


def test_importing_the_same_file_again_stores_nothing_new(car, tmp_path):
    path = write(tmp_path, original_tool_file())
    run_import(path)
    before = db_snapshot()

    message = run_import(path)

    assert "0 recorded, 12 already there" in message
    assert db_snapshot() == before


def test_the_original_tools_labels_import_and_export_unchanged(car, tmp_path):
    run_import(write(tmp_path, original_tool_file()))

    doc = json.loads((export(tmp_path / "out") / file_name(TOPIC, "laura")).read_text())

    facets = {pair[0]["paragraph_id"]: [(w["value"]["facet"]["heading_id"], w["value"]["relevance"]) for w in pair[1]]
              for pair in doc["facet_state"]}
    assert facets == {
        P9: [(f"{TOPIC}/T_1512", "TrashLabel"), ("GENERAL/INTRODUCTION", "TopicLabel")],
        P10: [("NONE_OF_THESE", "DuplicateLabel"), (f"{TOPIC}/T_1512", "UnsetLabel")],
        P11: [(f"{TOPIC}/T_1512", "NonRelLabel")],
    }
    # P12 is removed (nonrelevant_state): the transitions into it are kept in the history, not exported (issue 32).
    assert {(k["paragraph_id1"], k["paragraph_id2"]): w["value"] for k, w in doc["transition_label_state"]} == {
        (P9, P10): "OfftopicTransition", (P10, P11): "ToNonRelTransition", (P9, P11): "CoherentTransition",
    }
    assert Judgement.objects.filter(layer=Layer.TRANSITION).count() == 6
    assert doc["nonrelevant_state2"] == [[key(P12), wrapped(True, "laura", "2019-10-11T21:02:58.354696Z", "s-7",
                                                            ["guir"])]]
    # Two notes for one key: the later one is current, the run ids of both are the key's.
    assert doc["notes_state"] == [[key(P9), [wrapped("second thought", "laura", "2019-08-01T10:05:00.123456Z", "s-7",
                                                     ["UNH-p-l2r", "guir"])]]]
    # A facet list takes the latest time stamp of its entries.
    assert doc["facet_state"][1][1][0]["time_stamp"] == "2019-10-11T21:02:58.354696Z"
    assert Judgement.objects.get(layer=Layer.FACET, passage__external_id=P9).grade == 0  # max(trash -2, topic 0)
    assert Judgement.objects.get(layer=Layer.FACET, passage__external_id=P10).grade is None


@pytest.mark.parametrize("make", [appendix_example, original_tool_file], ids=["appendix", "original-tool"])
def test_import_export_import_gives_the_same_judgements(car, tmp_path, make):
    run_import(write(tmp_path, make()))
    first = judgements(Judgement.objects.without_stale_transitions())  # what the export carries
    export(tmp_path / "first")

    Judgement.objects.update(latest_change=None)
    Judgement.objects.all().delete()  # and their changes
    run_import(tmp_path / "first")

    assert judgements() == first
    export(tmp_path / "second")
    names = sorted(p.name for p in (tmp_path / "first").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "second").iterdir())
    for name in names:
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "second" / name).read_bytes()


def test_our_export_imported_back_into_the_same_database_is_a_no_op(car, tmp_path):
    _, topic, passages = car
    judge = new_user("judge")
    for run in ("guir", "UNH-p-l2r"):  # judged under two runs: the export carries both
        factories.judgement(judge, topic, passages[P9], relevance="should", facet="other", run_ids=[run],
                            session_id="web-1")
    factories.judgement(judge, topic, passages[P9], passage2=passages[P10], layer=Layer.TRANSITION, value="switch")
    before, rows = db_snapshot(), judgements()

    message = run_import(export(tmp_path / "out"))

    assert "0 recorded, 2 already there" in message
    assert db_snapshot() == before and judgements() == rows


def test_the_original_tools_save_files_are_read_too(car, tmp_path):
    saved = {"saved_data": appendix_example(), "meta_data": {"run_ids": [], "annotator_ids": ["NIST"]}}

    run_import(write(tmp_path, saved))

    assert Judgement.objects.count() == 4


def test_a_newer_value_in_a_file_replaces_the_current_one_and_an_older_one_does_not(car, tmp_path):
    _, topic, passages = car
    nist = new_user("NIST")
    factories.judgement(nist, topic, passages[P10], layer=Layer.REMOVAL, value=False,
                        client_time=datetime(2020, 1, 1, tzinfo=UTC))

    run_import(write(tmp_path, appendix_example()))

    removal = Judgement.objects.get(layer=Layer.REMOVAL)
    assert removal.value is False and removal.changes.count() == 2


def test_legacy_labels_are_accepted_only_from_imports(car):
    _, topic, passages = car
    with pytest.raises(JudgementInvalid, match="legacy label of the original CAR tool"):
        record_judgement(assessor=new_user(), layer=Layer.FACET, topic=topic, passage=passages[P9],
                         value=[{"facet": "other", "relevance": "trash"}])
    with pytest.raises(JudgementInvalid, match="'offtopic' is a legacy label"):
        record_judgement(assessor=new_user(), layer=Layer.TRANSITION, topic=topic, passage=passages[P9],
                         passage2=passages[P10], value="offtopic")


def broken(path, value):
    """appendix_example() with the value at `path` (keys and indexes) replaced, or removed if value is ...."""
    doc = appendix_example()
    *parents, last = path
    target = doc
    for step in parents:
        target = target[step]
    if value is ...:
        del target[last]
    else:
        target[last] = value
    return doc


@pytest.mark.parametrize(
    "doc, expected",
    [
        (broken(["facet_state", 0, 1, 0, "value", "relevance"], "GreatLabel"),
         "facet_state[0][1][0].value.relevance: 'GreatLabel' is not one of MustLabel"),
        (broken(["notes_state", 0, 1, 0, "time_stamp"], ...), "notes_state[0][1][0]: missing time_stamp"),
        (broken(["notes_state", 0, 1, 0, "time_stamp"], "yesterday"),
         "notes_state[0][1][0].time_stamp: 'yesterday': expected an ISO 8601 time with a zone"),
        (broken(["nonrelevant_state2", 0, 1, "value"], "yes"),
         "nonrelevant_state2[0][1].value: expected true or false, got 'yes'"),
        (broken(["transition_label_state", 0, 1, "value"], "Same"),
         "transition_label_state[0][1].value: 'Same' is not one of SameTransition"),
        (broken(["transition_label_state", 0, 0, "paragraph_id2"], ...),
         "transition_label_state[0][0]: missing paragraph_id2"),
        (broken(["facet_state", 0, 1, 0, "value", "facet", "heading_id"], "tqa2:L_0257/T_9999"),
         "facet_state[0][1]: value[0].facet: 'tqa2:L_0257/T_9999' is not a facet of topic tqa2:L_0257"),
        (broken(["notes_state", 0, 0, "query_id"], "tqa2:L_9999"),
         "notes_state[0][0].query_id: unknown topic 'tqa2:L_9999' in collection 'car-y3'"),
        (broken(["nonrelevant_state2", 0, 0, "paragraph_id"], "f" * 40),
         f"nonrelevant_state2[0][0].paragraph_id: unknown paragraph '{'f' * 40}' in collection 'car-y3'"),
        (broken(["notes_state", 0, 1, 0, "annotator_id"], "no spaces please"),
         "notes_state[0][1][0].annotator_id: 'no spaces please' cannot be a user name"),
        (broken(["notes_state", 0, 1, 0, "run_ids"], "guir"),
         "notes_state[0][1][0].run_ids: expected a list of run ids (strings), got 'guir'"),
        (broken(["nonrelevant_state2", 0, 1, "colour"], "red"),
         "nonrelevant_state2[0][1]: unknown field 'colour'"),
        (broken(["transition_label_state", 0, 0, "paragraph_id2"], P9),
         "transition_label_state[0][1]: passage2: the two passages of a pair must differ"),
        (broken(["notes_state"], [[key(P9), []], [key(P9), []]]), "notes_state[1][0]: the key is also notes_state[0]"),
        (broken(["notes_state"], {"a": 1}), "notes_state: expected a list of [key, value] pairs, got an object"),
        (broken(["facet_stat"], []), "facet_stat: unknown entry 'facet_stat'"),
        ([1, 2], "expected a JSON object with notes_state"),
        ({"assessor_data": []}, "not a CAR Y3 assessment file"),
    ],
    ids=lambda value: value.split(":")[0] if isinstance(value, str) else "",
)
def test_a_broken_file_is_rejected_with_its_place_and_nothing_is_written(car, tmp_path, doc, expected):
    path = write(tmp_path, doc)

    message = rejected(path)

    assert f"{path}: {expected}" in message


def test_invalid_json_is_rejected_with_its_line(car, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{\n  "notes_state": [\n    [,]\n  ]\n}\n')

    assert f"{path}:3: invalid JSON" in rejected(path)


def test_one_bad_file_among_good_ones_writes_nothing(car, tmp_path):
    good = write(tmp_path, appendix_example(), "good.json")
    bad_doc = copy.deepcopy(original_tool_file())
    bad_doc["facet_state"][0][1][0]["value"]["relevance"] = "mustlabel"
    bad = write(tmp_path, bad_doc, "bad.json")

    message = rejected(good, bad)

    assert f"{bad}: facet_state[0][1][0].value.relevance: 'mustlabel' is not one of" in message
    assert str(good) not in message


def test_an_unknown_collection_or_missing_file_is_rejected(car, tmp_path):
    path = write(tmp_path, appendix_example())
    assert "no collection named 'nope'" in rejected(path, "--collection", "nope")
    assert f"{tmp_path / 'missing.json'}: cannot read" in rejected(tmp_path / "missing.json")
    (tmp_path / "empty").mkdir()
    assert "the directory holds no .json files" in rejected(tmp_path / "empty")


def test_a_number_of_more_digits_than_python_converts_is_rejected_with_its_place(car, tmp_path):
    path = tmp_path / "big.json"
    path.write_text('{\n  "notes_state": ' + "1" * 5000 + "\n}\n")

    assert f"{path}:2: invalid JSON: a number of 5,000 digits (at most 4,300 are taken) at column 18" in rejected(path)
