"""export_car_assessments: one TREC CAR Y3 JSON file per topic and assessor, in seed 004 Appendix A's structure."""

import itertools
import json
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from assessments.exporters import car_y3
from assessments.exporters.car_y3 import file_name, format_time, parse_time
from assessments.models import JudgementChange, Layer
from tests import factories

pytestmark = pytest.mark.django_db
_numbers = itertools.count(1)


def new_user(name=None):
    """A user without a password (factories.user hashes one, which costs a quarter of a second)."""
    return get_user_model().objects.create(username=name or f"assessor{next(_numbers)}")

TOPIC = "tqa2:L_0257"
T0 = datetime(2019, 10, 11, 21, 2, 58, 354696, tzinfo=UTC)
P = ["2a967f3f17c026dedb2733adf90ffca35c124384", "f1dec26869a4c7d00c9acee595d1dfa8afa69ffe",
     "9f2f8743e626136344df4dce07e5c4166ab3e113", "0b0c0d0e0f101112131415161718191a1b1c1d1e"]


@pytest.fixture
def car():
    """The paper's example topic with two facets and four real-looking paragraphs; judge(...) records a label."""
    coll = factories.collection("car-y3")
    topic = factories.topic(coll, TOPIC, title="Marine pollution", facets=[
        (f"{TOPIC}/T_1512", "toxic chemicals"), (f"{TOPIC}/T_1513", "sources of marine trash"),
    ])
    passages = {pid: factories.passage(coll, pid) for pid in P}

    def judge(assessor, layer, value, p, p2=None, at=T0, session="CAR-Y3", runs=("guir",), source="web", seq=0):
        return factories.judgement(
            assessor, topic, passages[p], layer=layer, value=value, passage2=passages[p2] if p2 else None,
            client_time=at, client_seq=seq, session_id=session, run_ids=runs, source=source,
        )

    return coll, topic, passages, judge


def export(out, *args):
    stdout = StringIO()
    call_command("export_car_assessments", "--out", str(out), *args, stdout=stdout)
    return stdout.getvalue()


def load(directory, assessor="NIST", topic=TOPIC):
    return json.loads((directory / file_name(topic, assessor)).read_text(encoding="utf-8"))


def wrapped(value, annotator="NIST", at=T0, session="CAR-Y3", runs=("guir",)):
    return {"annotator_id": annotator, "time_stamp": format_time(at), "session_id": session,
            "run_ids": list(runs), "value": value}


def test_it_writes_the_appendix_structure_field_by_field(car, tmp_path):
    _, _, _, judge = car
    nist = new_user("NIST")
    judge(nist, Layer.NOTES, "examples of toxic chemicals and their sources...", P[0])
    judge(nist, Layer.FACET, [{"facet": f"{TOPIC}/T_1512", "relevance": "must"}], P[0])
    judge(nist, Layer.REMOVAL, True, P[1])
    judge(nist, Layer.TRANSITION, "same", P[0], P[2])

    message = export(tmp_path)

    assert message == f"4 labels written to 1 CAR Y3 assessment files in {tmp_path}.\n"
    assert [p.name for p in tmp_path.iterdir()] == ["tqa2%3AL_0257__NIST.json"]
    doc = load(tmp_path)
    assert list(doc) == ["notes_state", "facet_state", "nonrelevant_state", "nonrelevant_state2",
                         "transition_label_state"]
    key0 = {"query_id": TOPIC, "paragraph_id": P[0]}
    assert doc["notes_state"] == [[key0, [wrapped("examples of toxic chemicals and their sources...")]]]
    assert doc["facet_state"] == [[key0, [wrapped({
        "facet": {"heading": "toxic chemicals", "heading_id": "tqa2:L_0257/T_1512"}, "relevance": "MustLabel",
    })]]]
    assert doc["nonrelevant_state"] == []
    assert doc["nonrelevant_state2"] == [[{"query_id": TOPIC, "paragraph_id": P[1]}, wrapped(True)]]
    assert doc["transition_label_state"] == [
        [{"query_id": TOPIC, "paragraph_id1": P[0], "paragraph_id2": P[2]}, wrapped("SameTransition")]
    ]
    assert doc["notes_state"][0][1][0]["time_stamp"] == "2019-10-11T21:02:58.354696Z"


def test_every_label_has_its_wire_name_and_special_facets_the_papers_ids(car, tmp_path):
    _, _, _, judge = car
    nist = new_user("NIST")
    judge(nist, Layer.FACET, [
        {"facet": f"{TOPIC}/T_1513", "relevance": "should"}, {"facet": "other", "relevance": "can"},
        {"facet": "general", "relevance": "must"},
    ], P[0])
    judge(nist, Layer.TRANSITION, "coherent", P[0], P[1])
    judge(nist, Layer.TRANSITION, "switch", P[1], P[2])

    doc = load(tmp_path) if export(tmp_path) else None

    facets = [w["value"] for w in doc["facet_state"][0][1]]
    assert facets == [
        {"facet": {"heading": "sources of marine trash", "heading_id": f"{TOPIC}/T_1513"}, "relevance": "ShouldLabel"},
        {"facet": {"heading": "OTHER RELEVANT FACET", "heading_id": "NONE_OF_THESE"}, "relevance": "CanLabel"},
        {"facet": {"heading": "GENERAL/INTRODUCTION", "heading_id": "GENERAL/INTRODUCTION"}, "relevance": "MustLabel"},
    ]
    assert [pair[1]["value"] for pair in doc["transition_label_state"]] == ["AppropriateTransition", "SwitchTransition"]


def test_it_exports_the_current_value_with_the_metadata_of_its_latest_change(car, tmp_path):
    _, _, _, judge = car
    nist = new_user("NIST")
    judge(nist, Layer.NOTES, "later", P[0], at=T0 + timedelta(minutes=5), session="s2", runs=["UNH-p-l2r"])
    judge(nist, Layer.NOTES, "earlier, arrived late", P[0], at=T0, session="s1", runs=["guir"])

    doc = load(tmp_path) if export(tmp_path) else None

    assert doc["notes_state"] == [[{"query_id": TOPIC, "paragraph_id": P[0]}, [
        wrapped("later", at=T0 + timedelta(minutes=5), session="s2", runs=["UNH-p-l2r", "guir"]),
    ]]]


def test_entries_are_sorted_by_paragraph_and_restorations_are_kept(car, tmp_path):
    _, _, _, judge = car
    nist = new_user("NIST")
    for pid in reversed(P):
        judge(nist, Layer.REMOVAL, pid != P[2], pid)

    doc = load(tmp_path) if export(tmp_path) else None

    assert [(pair[0]["paragraph_id"], pair[1]["value"]) for pair in doc["nonrelevant_state2"]] == [
        (pid, pid != P[2]) for pid in sorted(P)
    ]


def test_cleared_labels_are_not_written(car, tmp_path):
    _, _, _, judge = car
    nist = new_user("NIST")
    judge(nist, Layer.FACET, [], P[0])
    judge(nist, Layer.NOTES, None, P[1])
    judge(nist, Layer.NOTES, "kept", P[2])

    doc = load(tmp_path) if export(tmp_path) else None

    assert doc["facet_state"] == []
    assert [pair[0]["paragraph_id"] for pair in doc["notes_state"]] == [P[2]]


def test_each_assessor_and_topic_gets_a_file_and_the_filters_choose_them(car, tmp_path):
    coll, _, passages, judge = car
    other_topic = factories.topic(coll, "tqa2:L_0002", facets=[("tqa2:L_0002/T_0016", "Geology")])
    nist, alice = new_user("NIST"), new_user("alice")
    judge(nist, Layer.REMOVAL, True, P[0])
    judge(alice, Layer.REMOVAL, True, P[0])
    factories.judgement(alice, other_topic, passages[P[1]], layer=Layer.NOTES, value="x")

    export(tmp_path / "all")
    export(tmp_path / "alice", "--assessor", "alice")
    export(tmp_path / "one-topic", "--topic", TOPIC)

    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == [
        "tqa2%3AL_0002__alice.json", "tqa2%3AL_0257__NIST.json", "tqa2%3AL_0257__alice.json",
    ]
    assert sorted(p.name for p in (tmp_path / "alice").iterdir()) == [
        "tqa2%3AL_0002__alice.json", "tqa2%3AL_0257__alice.json",
    ]
    assert sorted(p.name for p in (tmp_path / "one-topic").iterdir()) == [
        "tqa2%3AL_0257__NIST.json", "tqa2%3AL_0257__alice.json",
    ]
    assert load(tmp_path / "all", "alice")["nonrelevant_state2"][0][1]["annotator_id"] == "alice"


def test_plot_judgements_are_not_part_of_the_car_export(car, tmp_path):
    coll, _, passages, judge = car
    plot = factories.topic(coll, "plot-1", kind="plot", text="a dog in the snow")
    nist = new_user("NIST")
    factories.judgement(nist, plot, passages[P[0]], layer=Layer.PLOT_GRADE, value=2)
    judge(nist, Layer.REMOVAL, True, P[0])

    export(tmp_path)

    assert [p.name for p in tmp_path.iterdir()] == ["tqa2%3AL_0257__NIST.json"]


def test_an_unwritable_out_directory_is_a_clear_error_and_nothing_is_written(car, tmp_path):
    _, _, _, judge = car
    judge(new_user("NIST"), Layer.REMOVAL, True, P[0])
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")

    with pytest.raises(CommandError, match=r"export failed: cannot write to directory '.*a-file/out'"):
        export(blocker / "out")

    assert [p.name for p in tmp_path.iterdir()] == ["a-file"]


def test_a_failure_while_writing_leaves_only_complete_files(car, tmp_path, monkeypatch):
    _, _, _, judge = car
    for name in ("alice", "bob", "carol"):
        judge(new_user(name), Layer.REMOVAL, True, P[0])
    real_atomic_file, calls = car_y3.atomic_file, []

    @contextmanager
    def disk_full_on_the_second_file(path, **kwargs):
        with real_atomic_file(path, **kwargs) as handle:
            calls.append(path)
            if len(calls) == 2:
                handle.write('{"notes_state": [')  # half a file, then the disk is full
                raise OSError(28, "No space left on device")
            yield handle

    monkeypatch.setattr(car_y3, "atomic_file", disk_full_on_the_second_file)
    with pytest.raises(CommandError, match="No space left on device"):
        export(tmp_path)
    monkeypatch.undo()

    files = list(tmp_path.iterdir())
    assert [p.name for p in files] == ["tqa2%3AL_0257__alice.json"]  # no temporary or half-written file
    assert json.loads(files[0].read_text())["nonrelevant_state2"][0][1]["value"] is True


def test_an_unknown_assessor_or_topic_is_a_clear_error(car, tmp_path):
    with pytest.raises(CommandError, match="--assessor: no user named 'nobody'"):
        export(tmp_path, "--assessor", "nobody")
    with pytest.raises(CommandError, match="--topic: no topic 'tqa2:L_9999'"):
        export(tmp_path, "--topic", "tqa2:L_9999")


def test_file_names_are_safe_readable_and_distinct_for_distinct_pairs():
    assert file_name("tqa2:L_0257", "NIST") == "tqa2%3AL_0257__NIST.json"
    assert file_name("tqa:effects%20of/water", "jo doe") == "tqa%3Aeffects%20of%2Fwater__jo%20doe.json"  # once
    assert file_name("enwiki:Salmon%20run", "bob") == "enwiki%3ASalmon%20run__bob.json"
    assert file_name("100%", "a%2") == "100%25__a%252.json"  # a % that is no escape is encoded
    assert file_name(".hidden", "Zoë") == "%2Ehidden__Zo%C3%AB.json"
    pairs = [("a__b", "c"), ("a", "b__c"), ("a_", "_b"), ("a", "b"), ("a_", "b"), ("a", "_b")]
    names = [file_name(t, a) for t, a in pairs]
    assert len(set(names)) == len(pairs)
    assert all(name.count("__") == 1 for name in names)
    long_name = file_name("t" * 200, "u" * 150)
    assert len(long_name.encode()) <= 255 and long_name.endswith(".json")
    assert long_name != file_name("t" * 200, "u" * 149 + "v")


def test_time_stamps_keep_microseconds_and_read_the_original_tools_nanoseconds():
    assert format_time(T0) == "2019-10-11T21:02:58.354696Z"
    assert parse_time("2019-10-11T21:02:58.354696907Z") == T0
    assert parse_time("2019-10-11T23:02:58.354696+02:00") == T0
    assert parse_time("2019-10-11T21:02:58Z") == T0.replace(microsecond=0)
    with pytest.raises(ValueError):
        parse_time("2019-10-11T21:02:58")  # no zone: which clock?


def test_the_export_reads_a_constant_number_of_queries(car, tmp_path, django_assert_max_num_queries):
    _, _, _, judge = car
    for i in range(6):
        judge(new_user(f"judge{i}"), Layer.FACET, [{"facet": f"{TOPIC}/T_1512", "relevance": "can"}], P[i % 4])
        judge(new_user(f"other{i}"), Layer.NOTES, "n", P[i % 4])
    assert JudgementChange.objects.count() == 12

    with django_assert_max_num_queries(8):
        export(tmp_path)

    assert len(list(tmp_path.iterdir())) == 12


def test_indent_pretty_prints_the_same_document(car, tmp_path):
    _, _, _, judge = car
    nist = new_user("NIST")
    judge(nist, Layer.NOTES, "Zoë's \"quoted\" note\nwith a line break", P[0])
    judge(nist, Layer.FACET, [{"facet": "general", "relevance": "can"}], P[0])
    judge(nist, Layer.TRANSITION, "switch", P[0], P[1])

    export(tmp_path / "compact")
    export(tmp_path / "pretty", "--indent", "2")

    compact = (tmp_path / "compact" / file_name(TOPIC, "NIST")).read_text(encoding="utf-8")
    pretty = (tmp_path / "pretty" / file_name(TOPIC, "NIST")).read_text(encoding="utf-8")
    assert compact.count("\n") == 1 and pretty.count("\n") > 20
    assert json.loads(compact) == json.loads(pretty)
    assert json.loads(compact)["notes_state"][0][1][0]["value"] == "Zoë's \"quoted\" note\nwith a line break"
