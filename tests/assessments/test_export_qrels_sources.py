"""export_qrels --source human|machine|filled: machine labels only when asked for, each line's source in a side file,
and the human qrels byte for byte what they were before any machine label existed."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from assessments.exporters.machine import filled
from assessments.models import Layer, MachineLabel, MachineLabelSource, Topic
from assessments.services.qrels import QrelsRequest, qrels_sourced
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged():
    """Two ad hoc topics, five documents; alice and bob grade some of them (plot-grade layer, as ad hoc topics are)."""
    coll = factories.collection("adhoc")
    topics = [factories.topic(coll, t, kind=Topic.Kind.ADHOC, text=f"query {t}") for t in ("1", "2")]
    docs = {d: factories.passage(coll, d, text=f"document {d}") for d in ("d1", "d2", "d3", "d4", "d5")}
    alice, bob = factories.user("alice"), factories.user("bob")
    for who, topic, doc, grade in [(alice, "1", "d1", 2), (bob, "1", "d1", 2), (alice, "1", "d3", 0),
                                   (alice, "2", "d2", 1), (bob, "2", "d2", 3)]:
        factories.judgement(who, topics[int(topic) - 1], docs[doc], layer=Layer.PLOT_GRADE, value=grade)
    return coll, topics, docs


def machine_source(coll, topics, docs, grades, name="annotator"):
    """A machine source with labels {(topic external id, doc): grade or None (an unreadable answer)}."""
    source = MachineLabelSource.objects.create(name=name, kind=MachineLabelSource.Kind.CLASSIFIER, collection=coll,
                                               model="minilm", status=MachineLabelSource.Status.READY)
    by_id = {t.external_id: t for t in topics}
    MachineLabel.objects.bulk_create(
        MachineLabel(source=source, topic=by_id[t], passage=docs[d], grade=g, score=None if g is None else g / 3,
                     error="" if g is not None else "unparseable")
        for (t, d), g in grades.items()
    )
    return source


def export(*args):
    out = StringIO()
    call_command("export_qrels", *args, stdout=out)
    return out.getvalue()


MACHINE = {("1", "d1"): 0, ("1", "d2"): 1, ("1", "d4"): None, ("2", "d2"): 0, ("2", "d5"): 1}


def test_human_qrels_are_byte_identical_before_and_after_machine_labels(judged):
    before = export("--collection", "adhoc")
    assert before == "1 0 d1 2\n1 0 d3 0\n2 0 d2 3\n"  # majority: a tie goes to the higher grade
    machine_source(*judged, MACHINE)

    assert export("--collection", "adhoc") == before
    assert export("--collection", "adhoc", "--source", "human") == before
    assert export("--collection", "adhoc", "--source", "human", "--aggregate", "mean") == \
        "1 0 d1 2\n1 0 d3 0\n2 0 d2 2\n"


def test_machine_qrels_are_the_sources_graded_labels_and_an_unreadable_answer_has_no_line(judged):
    source = machine_source(*judged, MACHINE)

    text = export("--collection", "adhoc", "--source", "machine")

    assert text == "1 0 d1 0\n1 0 d2 1\n2 0 d2 0\n2 0 d5 1\n"  # 1/d4 was unreadable: no line, never a 0
    assert export("--source", "machine", "--machine-source", str(source.pk)) == text  # the collection from the source


def test_filled_qrels_keep_every_human_line_and_take_the_machine_only_where_no_human_judged(judged, tmp_path):
    machine_source(*judged, MACHINE)
    out, sides = tmp_path / "filled.qrels", tmp_path / "filled.sources"

    call_command("export_qrels", "--collection", "adhoc", "--source", "filled", "--out", str(out),
                 "--sources-out", str(sides), stdout=StringIO())

    assert out.read_text() == "1 0 d1 2\n1 0 d2 1\n1 0 d3 0\n2 0 d2 3\n2 0 d5 1\n"
    assert sides.read_text() == "1 d1 human\n1 d2 machine\n1 d3 human\n2 d2 human\n2 d5 machine\n"


def test_a_sources_file_of_human_qrels_says_human_on_every_line(judged, tmp_path):
    sides = tmp_path / "human.sources"
    text = export("--collection", "adhoc", "--sources-out", str(sides))
    assert text == export("--collection", "adhoc")
    assert sides.read_text() == "1 d1 human\n1 d3 human\n2 d2 human\n"


def test_machine_labels_must_be_named_when_several_sources_label_the_topics(judged):
    first = machine_source(*judged, MACHINE, name="first")
    machine_source(*judged, {("1", "d5"): 1}, name="second")

    with pytest.raises(CommandError, match=r"--machine-source: several sources have labels here \(#\d+ first, #\d+ second\)"):
        export("--collection", "adhoc", "--source", "machine")
    assert export("--collection", "adhoc", "--source", "machine", "--machine-source", "first") == \
        export("--collection", "adhoc", "--source", "machine", "--machine-source", str(first.pk))


@pytest.mark.parametrize("args, message", [
    (["--level", "section"], "--level: machine labels are page level"),
    (["--qrel-set", "x"], "--source: a stored qrel set is exported as it is: no machine labels"),
    (["--assessor", "alice"], "--source: machine qrels have no assessors to choose or aggregate"),
    (["--machine-source", "99999"], "--machine-source: no machine label source '99999'"),
])
def test_machine_qrels_refuse_what_they_cannot_do(judged, args, message):
    machine_source(*judged, MACHINE)
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        export("--collection", "adhoc", "--source", "machine", *args)


def test_no_machine_labels_is_an_error_not_empty_qrels(judged):
    with pytest.raises(CommandError, match="--machine-source: there are no machine labels for these topics"):
        export("--collection", "adhoc", "--source", "filled")


def test_the_merge_keeps_code_point_order_across_both_streams():
    human = [("1", "b", 1), ("10", "a", 2)]
    machine = [("1", "a", 0), ("1", "b", 3), ("2", "z", 1)]
    assert list(filled(human, machine)) == [
        ("1", "a", 0, "machine"), ("1", "b", 1, "human"), ("10", "a", 2, "human"), ("2", "z", 1, "machine"),
    ]


def test_the_service_gives_each_line_its_source(judged):
    machine_source(*judged, MACHINE)
    rows = list(qrels_sourced(QrelsRequest(collection="adhoc", source="filled")))
    assert [r[3] for r in rows] == ["human", "machine", "human", "human", "machine"]
