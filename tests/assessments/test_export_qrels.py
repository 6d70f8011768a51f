"""export_qrels: TREC qrels on the CAR scale from judgements (computed here independently from the labels)."""

import functools
import math
import os
import stat
from collections import Counter
from fractions import Fraction
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from assessments.exporters.qrels import aggregate_grades
from assessments.models import Layer, Qrel, QrelSet
from tests import factories

pytestmark = pytest.mark.django_db

TOPIC = "tqa2:L_0257"
H1, H2 = f"{TOPIC}/T_1512", f"{TOPIC}/T_1513"
# The CAR scale as the issue states it, written out again here rather than imported.
SCALE = {"must": 3, "should": 2, "can": 1, "topic": 0, "nonrel": 0, "trash": -2}  # duplicate, unset: no line

# What each assessor said about each passage: facets [(facet, relevance)], removed, notes.
LABELS = {
    ("alice", "p-e"): {"facets": [(H1, "must"), (H2, "can")]},
    ("bob", "p-e"): {"facets": [(H1, "should")]},
    ("carol", "p-e"): {"facets": [("other", "must")]},
    ("alice", "p-d"): {"facets": [(H1, "must")], "removed": True},  # removed after choosing a facet
    ("bob", "p-d"): {"facets": [(H2, "can")]},
    ("carol", "p-d"): {"notes": "not sure yet"},
    ("alice", "p-c"): {"facets": [(H1, "trash")]},
    ("bob", "p-c"): {"facets": [(H1, "duplicate")]},
    ("carol", "p-c"): {"facets": [(H2, "should")], "removed": False},  # removed, then restored
    ("alice", "p-b"): {"notes": "only notes"},
    ("alice", "p-a"): {"facets": [(H1, "can")]},
    ("bob", "p-a"): {"facets": [(H1, "must")]},
    ("carol", "p-a"): {"facets": [(H2, "should"), ("general", "topic")]},
    ("alice", "p-f"): {"facets": [("general", "must")]},
    ("bob", "p-f"): {"facets": [(H2, "unset")]},
    ("carol", "p-f"): {"removed": True},
}


def page_grade(labels):
    if labels.get("removed"):
        return 0
    grades = [SCALE[r] for _, r in labels.get("facets", []) if r in SCALE]
    return max(grades) if grades else None


def section_grades(labels, headings):
    if labels.get("removed"):
        return {h: 0 for h in headings}
    return {f: SCALE[r] for f, r in labels.get("facets", []) if r in SCALE and f not in ("other", "general")}


def combine(grades, how):
    if how == "max" or how == "one":
        return max(grades)
    if how == "mean":
        return math.floor(Fraction(sum(grades), len(grades)) + Fraction(1, 2))
    counts = Counter(grades)
    return max(g for g in counts if counts[g] == max(counts.values()))


def expected_lines(level, how, assessors=("alice", "bob", "carol")):
    per_line = {}
    for (assessor, pid), labels in LABELS.items():
        if assessor not in assessors:
            continue
        if level == "page":
            grade = page_grade(labels)
            if grade is not None:
                per_line.setdefault((TOPIC, pid), []).append(grade)
        else:
            for heading, grade in section_grades(labels, [H1, H2]).items():
                per_line.setdefault((heading, pid), []).append(grade)
    return [f"{qid} 0 {pid} {combine(grades, how)}" for (qid, pid), grades in sorted(per_line.items())]


def new_user(name):
    """A user without a password (factories.user hashes one, which costs a quarter of a second)."""
    return get_user_model().objects.create(username=name)


@pytest.fixture
def judged():
    coll = factories.collection("car-y3")
    topic = factories.topic(coll, TOPIC, facets=[(H1, "toxic chemicals"), (H2, "sources of marine trash")])
    passages = {pid: factories.passage(coll, pid) for pid in sorted({pid for _, pid in LABELS}, reverse=True)}
    users = {name: new_user(name) for name in ("alice", "bob", "carol")}
    for (assessor, pid), labels in LABELS.items():
        label = functools.partial(factories.judgement, users[assessor], topic, passages[pid])
        if "facets" in labels:
            label(value=[{"facet": f, "relevance": r} for f, r in labels["facets"]], source="import")
        if "removed" in labels:
            label(layer=Layer.REMOVAL, value=labels["removed"])
        if "notes" in labels:
            label(layer=Layer.NOTES, value=labels["notes"])
    return coll, topic, passages, users


def qrels(*args):
    out = StringIO()
    call_command("export_qrels", *args, stdout=out)
    return out.getvalue().splitlines()


@pytest.mark.parametrize("how", ["majority", "mean", "max"])
@pytest.mark.parametrize("level", ["page", "section"])
def test_qrels_are_exactly_what_the_labels_imply(judged, level, how):
    assert qrels("--level", level, "--aggregate", how) == expected_lines(level, how)


@pytest.mark.parametrize("level", ["page", "section"])
def test_one_assessors_qrels(judged, level):
    assert qrels("--level", level, "--assessor", "alice") == expected_lines(level, "one", ["alice"])
    assert qrels("--level", level, "--aggregate", "assessor:bob") == expected_lines(level, "one", ["bob"])


def test_a_spot_check_of_the_rules(judged):
    page = dict(line.rsplit(" ", 1) for line in qrels("--aggregate", "max"))
    assert page[f"{TOPIC} 0 p-d"] == "1"  # alice removed it (0), bob CAN (1)
    assert page[f"{TOPIC} 0 p-c"] == "2"  # trash -2, duplicate dropped, carol SHOULD after restoring
    assert f"{TOPIC} 0 p-b" not in page  # notes only: no grade
    alice = qrels("--assessor", "alice")
    assert f"{TOPIC} 0 p-c -2" in alice and f"{TOPIC} 0 p-d 0" in alice and f"{TOPIC} 0 p-f 3" in alice
    sections = qrels("--level", "section", "--assessor", "carol")
    assert sections == [f"{H1} 0 p-f 0", f"{H2} 0 p-a 2", f"{H2} 0 p-c 2", f"{H2} 0 p-f 0"]


def test_the_aggregation_rules():
    assert aggregate_grades([3, 0], "majority") == 3  # a tie goes to the higher grade
    assert aggregate_grades([0, 0, 3], "majority") == 0
    assert aggregate_grades([1, 3, 2], "majority") == 3
    assert aggregate_grades([2, 3, 3, 2, 0], "majority") == 3
    assert aggregate_grades([1, 1, 1, 3, 3], "majority") == 1
    assert aggregate_grades([3, 2], "mean") == 3  # 2.5 rounds half up
    assert aggregate_grades([1, 1, 2], "mean") == 1
    assert aggregate_grades([-2, 1], "mean") == 0  # -0.5 rounds half up
    assert aggregate_grades([-2, 0], "max") == 0


def test_plot_topics_give_their_plot_grade(judged):
    coll, _, passages, users = judged
    plot = factories.topic(coll, "plot-7", kind="plot", text="a sled dog learns to survive")
    chunk_b, chunk_a = factories.passage(coll, "call-wild#0012"), factories.passage(coll, "call-wild#0003")
    for who, chunk, grade in (("alice", chunk_b, 2), ("bob", chunk_b, 0), ("alice", chunk_a, 1)):
        factories.judgement(users[who], plot, chunk, layer=Layer.PLOT_GRADE, value=grade)

    assert qrels("--topic", "plot-7", "--aggregate", "max") == [
        "plot-7 0 call-wild#0003 1", "plot-7 0 call-wild#0012 2",
    ]
    assert qrels("--topic", "plot-7", "--level", "section", "--aggregate", "mean") == [
        "plot-7 0 call-wild#0003 1", "plot-7 0 call-wild#0012 1",
    ]


def test_output_is_sorted_by_topic_then_docid_whatever_the_insertion_order(judged):
    coll, _, passages, users = judged
    early = factories.topic(coll, "tqa2:L_0001", facets=[("tqa2:L_0001/T_0001", "x")])
    factories.judgement(users["bob"], early, passages["p-f"], layer=Layer.REMOVAL, value=True)

    lines = qrels("--aggregate", "max")

    assert lines[0] == "tqa2:L_0001 0 p-f 0"
    assert lines == sorted(lines)
    assert qrels("--aggregate", "max", "--topic", TOPIC) == lines[1:]


def test_it_writes_a_file_atomically_and_says_how_many_lines(judged, tmp_path):
    out = tmp_path / "car.qrels"
    out.write_text("old content\n")

    message = qrels("--out", str(out), "--aggregate", "max")

    assert message == [f"5 qrels lines written to {out}."]
    assert out.read_text().splitlines() == expected_lines("page", "max")
    assert [p.name for p in tmp_path.iterdir()] == ["car.qrels"]


def test_an_unwritable_out_file_is_a_clear_error_and_leaves_nothing(judged, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")

    with pytest.raises(CommandError, match=r"nothing was exported: cannot write '.*a-file/car.qrels'"):
        qrels("--out", str(blocker / "car.qrels"))

    assert [p.name for p in tmp_path.iterdir()] == ["a-file"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--assessor", "alice", "--aggregate", "adjudicated"], "--assessor: qrels of one assessor are aggregate one"),
        (["--aggregate", "one"], "--aggregate: one: name the assessor"),
        (["--aggregate", "median"], "--aggregate: 'median' is not one of one, majority, mean, max, adjudicated"),
        (["--assessor", "alice", "--aggregate", "max"], "--assessor: qrels of one assessor are aggregate one"),
        (["--assessor", "zoe"], "--assessor: no user named 'zoe'"),
        (["--collection", "nope"], "--collection: no collection named 'nope'"),
        (["--topic", "tqa2:L_9999"], "--topic: no topic 'tqa2:L_9999'"),
        (["--pool", "nope"], "--pool: no pool named 'nope'"),
        (["--qrel-set", "nope"], "--qrel-set: no qrel set named 'nope'"),
        (["--qrel-set", "x", "--level", "section"], "--qrel-set: a stored qrel set is exported as it is"),
    ],
)
def test_impossible_requests_are_clear_errors(judged, tmp_path, args, message):
    out = tmp_path / "q"
    with pytest.raises(CommandError, match=message.replace("(", r"\(")):
        qrels(*args, "--out", str(out))
    assert not out.exists()


def test_several_collections_need_one_named(judged):
    other = factories.collection("other")
    topic = factories.topic(other, TOPIC, facets=[(H1, "toxic chemicals")])
    factories.judgement(new_user("dave"), topic, factories.passage(other, "zz"), layer=Layer.REMOVAL, value=True)

    with pytest.raises(CommandError, match="--collection: there are judgements of several collections .*name one"):
        qrels()
    with pytest.raises(CommandError, match="topics are in several collections"):
        qrels("--topic", TOPIC)
    assert qrels("--collection", "other") == [f"{TOPIC} 0 zz 0"]


def test_a_pool_chooses_its_topics(judged):
    coll, topic, _, _ = judged
    factories.pool(coll, [topic], [], name="pool-1")

    assert qrels("--pool", "pool-1", "--aggregate", "max") == expected_lines("page", "max")


def test_a_stored_qrel_set_exports_as_it_is_and_imports_back(judged, tmp_path):
    coll, topic, passages, _ = judged
    qrel_set = QrelSet.objects.create(name="official", collection=coll)
    Qrel.objects.create(qrel_set=qrel_set, topic=topic, passage=passages["p-b"], grade=2)
    Qrel.objects.create(qrel_set=qrel_set, topic=topic, passage=passages["p-a"], grade=-2, subtopic="T_1512")
    out = tmp_path / "official.qrels"

    qrels("--qrel-set", "official", "--out", str(out))
    call_command("import_qrels", str(out), "--collection", coll.name, "--name", "again", "--no-progress",
                 stdout=StringIO())

    assert out.read_text().splitlines() == [f"{TOPIC} 0 p-b 2", f"{TOPIC} T_1512 p-a -2"]
    again = Qrel.objects.filter(qrel_set__name="again")
    assert sorted(again.values_list("passage__external_id", "grade", "subtopic")) == [
        ("p-a", -2, "T_1512"), ("p-b", 2, ""),
    ]


def test_the_export_reads_a_constant_number_of_queries(judged, django_assert_max_num_queries):
    with django_assert_max_num_queries(6):
        qrels("--level", "section")


def test_bare_facet_ids_of_the_trial_pages_are_keyed_under_their_topic(judged):
    coll, _, passages, users = judged
    trial = factories.topic(coll, "tqa:water%20distribution", facets=[("H1", "Water on Earth")])
    factories.judgement(users["alice"], trial, passages["p-a"], relevance="should", facet="H1")

    assert qrels("--level", "section", "--topic", "tqa:water%20distribution", "--assessor", "alice") == [
        "tqa:water%20distribution/H1 0 p-a 2",
    ]


def test_the_written_file_has_the_usual_permissions(judged, tmp_path):
    old = os.umask(0o027)
    try:
        qrels("--out", str(tmp_path / "car.qrels"))
    finally:
        os.umask(old)

    assert stat.S_IMODE((tmp_path / "car.qrels").stat().st_mode) == 0o640


def test_the_command_line_export_does_not_load_the_pages_statistics_packages(tmp_path):
    """manage.py export_qrels runs no system checks (they import every URL and its packages: 120 MB, 3 s)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = ("import sys\nfrom django.core.management import execute_from_command_line\n"
              "try:\n    execute_from_command_line(['manage.py', 'export_qrels', '--collection', 'none'])\n"
              "except BaseException:\n    pass\n"
              "print('loaded:', sorted(m for m in ('statsmodels', 'pandas', 'scipy') if m in sys.modules))\n")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings",
           "DATABASE_URL": f"sqlite:///{tmp_path / 'empty.sqlite3'}"}
    out = subprocess.run([sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert "loaded: []" in out.stdout, out.stdout + out.stderr[-2000:]
