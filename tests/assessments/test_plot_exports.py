"""Plot labels out of the system: qrels of plot topics (export_qrels), JSON lines of every label, forced-choice results."""

import csv
import io
import json
from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command

from assessments.models import Layer, StudyItem
from assessments.services.judging import record_judgement
from assessments.studies import make_forced_choice_items
from tests import factories
from tests.assessments.plot_data import bm25_pool, load_book
from tests.retrieval.fixtures import index_dir  # noqa: F401

pytestmark = pytest.mark.django_db
T0 = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)


def at(seconds):
    return T0.replace(second=seconds)


@pytest.fixture
def labelled(tmp_path, index_dir):  # noqa: F811
    """Two assessors' grades, spans, choices and a rating on The Call of the Wild's sample queries."""
    book, topics = load_book(tmp_path)
    pool, run = bm25_pool(book, topics, name="plot-out")
    one, two = make_forced_choice_items(pool, run, n=3)
    demo1 = topics[0]
    a, b = one.answer, next(c for c in one.candidates.all() if c != one.answer)
    ann, bob = factories.user("ann"), factories.user("bob")
    label = dict(session_id="s-1", run_ids=[run.name])
    record_judgement(assessor=ann, layer=Layer.PLOT_GRADE, topic=demo1, passage=a, value=1, client_time=at(1), **label)
    record_judgement(assessor=ann, layer=Layer.PLOT_GRADE, topic=demo1, passage=a, value=2, client_time=at(2), **label)
    record_judgement(assessor=bob, layer=Layer.PLOT_GRADE, topic=demo1, passage=a, value=2, client_time=at(3),
                     session_id="s-9", run_ids=["other"])
    record_judgement(assessor=bob, layer=Layer.PLOT_GRADE, topic=demo1, passage=b, value=0, client_time=at(4), **label)
    # offsets into the query "After the beating the dog understands…": "After the beating" and "dog"
    record_judgement(assessor=ann, layer=Layer.PLOT_SPANS, topic=demo1, passage=a, value=[[0, 17], [22, 25]],
                     client_time=at(5), **label)
    record_judgement(assessor=ann, layer=Layer.CHOICE, topic=one.topic, item=one.key, value=one.answer.external_id,
                     client_time=at(6), session_id="s-2")
    record_judgement(assessor=bob, layer=Layer.CHOICE, topic=one.topic, item=one.key, value=b.external_id,
                     client_time=at(7), session_id="s-3")
    pair = StudyItem.objects.create(pool=pool, kind=StudyItem.Kind.PAIR, key="pair:test", topic=demo1, passage=a,
                                    passage2=b, similarity=0.5, metadata={"group": "least"})
    record_judgement(assessor=ann, layer=Layer.RATING, topic=demo1, passage=a, passage2=b, item=pair.key, value=4,
                     client_time=at(8), session_id="s-4")
    return pool, run, topics, one, a, b


def command(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_export_qrels_gives_plot_topics_their_graded_chunks(labelled):
    pool, run, topics, one, a, b = labelled
    out, _ = command("export_qrels", "--pool", pool.name, "--aggregate", "majority")
    # demo-1: chunk a graded 2 by ann (her latest) and 2 by bob; chunk b 0 by bob
    assert out.splitlines() == sorted([f"demo-1 0 {a.external_id} 2", f"demo-1 0 {b.external_id} 0"])
    out, _ = command("export_qrels", "--pool", pool.name, "--aggregate", "one", "--assessor", "bob")
    assert f"demo-1 0 {b.external_id} 0" in out.splitlines()


def test_every_label_is_one_json_line_with_who_when_session_and_runs(labelled, tmp_path):
    pool, run, topics, one, a, b = labelled
    path = tmp_path / "labels.jsonl"
    _, err = command("export_plot_labels", "--out", str(path), "--pool", pool.name)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert err.strip() == f"Wrote {len(records)} labels to {path}." and len(records) == 7

    [grade] = [r for r in records if r["layer"] == "plot_grade" and r["assessor"] == "ann"]
    assert grade == {
        "layer": "plot_grade", "collection": "call-of-the-wild", "topic": "demo-1", "passage": a.external_id,
        "passage2": None, "item": None, "assessor": "ann", "adjudicated": False, "value": 2, "grade": 2,
        "client_time": "2024-05-01T12:00:02.123456Z", "client_seq": 0, "received_at": grade["received_at"],
        "session_id": "s-1", "run_ids": [run.name], "source": "web",
    }
    assert grade["received_at"].endswith("Z")
    [spans] = [r for r in records if r["layer"] == "plot_spans"]
    query = topics[0].text
    assert spans["spans"] == [{"start": 0, "end": 17, "text": query[0:17]}, {"start": 22, "end": 25, "text": query[22:25]}]
    assert [s["text"] for s in spans["spans"]] == ["After the beating", "dog"]
    choices = {r["assessor"]: r for r in records if r["layer"] == "choice"}
    assert choices["ann"]["choice"]["correct"] is True and choices["bob"]["choice"]["correct"] is False
    assert choices["ann"]["choice"]["answer"] == one.answer.external_id and choices["ann"]["pool"] == pool.name
    assert choices["bob"]["session_id"] == "s-3" and choices["ann"]["choice"]["run"] == run.name
    [rating] = [r for r in records if r["layer"] == "rating"]
    assert (rating["value"], rating["passage2"], rating["pair"]) == (4, b.external_id, {"similarity": 0.5, "group": "least"})


def test_history_has_every_change_oldest_first(labelled, tmp_path):
    pool, run, topics, one, a, b = labelled
    path = tmp_path / "history.jsonl"
    _, err = command("export_plot_labels", "--out", str(path), "--history")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == 8 and "label changes" in err  # the 7 labels, and ann changed her grade of chunk a once
    ann_a = [r for r in records if r["layer"] == "plot_grade" and r["assessor"] == "ann"]
    assert [(r["value"], r["client_time"]) for r in ann_a] == [
        (1, "2024-05-01T12:00:01.123456Z"), (2, "2024-05-01T12:00:02.123456Z"),
    ]
    assert len({r["change_id"] for r in records}) == 8 and all("active_ms" in r for r in records)


def test_forced_choice_results_as_csv_and_json(labelled, tmp_path):
    pool, run, topics, one, a, b = labelled
    path = tmp_path / "choices.csv"
    command("export_plot_labels", "--out", str(path), "--choices", "--pool", pool.name)
    rows = list(csv.DictReader(path.open()))
    assert [(r["assessor"], r["correct"]) for r in rows] == [("ann", "True"), ("bob", "False")]
    assert rows[0]["item"] == one.key and rows[0]["run"] == run.name and rows[0]["n"] == "3"
    assert rows[0]["retriever_correct"] == str(one.retriever_choice_id == one.answer_id)
    out, _ = command("export_plot_labels", "--out", "-", "--choices", "--format", "json")
    data = json.loads(out)
    assert [d["chosen"] for d in data] == [one.answer.external_id, b.external_id]
    assert data[1]["session_id"] == "s-3" and data[1]["client_time"] == "2024-05-01T12:00:07.123456Z"


def test_a_campaign_selects_its_pools_and_unknown_names_are_clear_errors(labelled, tmp_path):
    pool = labelled[0]
    campaign = factories.campaign("plots", "plot")
    out, _ = command("export_plot_labels", "--out", "-", "--campaign", "plots")
    assert out == ""  # the campaign has no pools yet
    campaign.pools.add(pool)
    out, _ = command("export_plot_labels", "--out", "-", "--campaign", "plots")
    assert len(out.splitlines()) == 7
    with pytest.raises(CommandError, match="--campaign: no campaign named 'nope'"):
        command("export_plot_labels", "--out", "-", "--campaign", "nope")
    with pytest.raises(CommandError, match="--pool: no pool named 'nope'"):
        command("export_plot_labels", "--out", "-", "--pool", "nope")
    with pytest.raises(CommandError, match="not both"):
        command("export_plot_labels", "--out", "-", "--pool", pool.name, "--campaign", "plots")
    with pytest.raises(CommandError, match="cannot write"):
        command("export_plot_labels", "--out", str(tmp_path / "no" / "such" / "dir.jsonl"))
    assert not list(tmp_path.glob("**/.*.tmp"))


def test_labels_of_another_pools_items_are_left_out(labelled):
    pool, run, topics, one, a, b = labelled
    other = factories.pool(pool.collection, topics, [], name="other-pool")
    out, _ = command("export_plot_labels", "--out", "-", "--pool", other.name)
    layers = sorted(json.loads(line)["layer"] for line in out.splitlines())
    assert layers == ["plot_grade", "plot_grade", "plot_grade", "plot_spans"]  # its own topics, none of the items
