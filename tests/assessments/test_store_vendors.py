"""The storing rule has two writings (assessments.services.judging._store): one PostgreSQL statement, and SQLite's
two. Each is held here to the rule written plainly in Python (_by_the_rule), on seeded sequences of changes (out of
order, resent, ties of clock and counter, runs differing in case and script): every answer and the final state must
agree. The suite runs on both databases, so both writings are checked; the one statement also to exactly-once when
the same change arrives twice at once (PostgreSQL's concurrency: SQLite has one writer).
"""

import random
import threading
import uuid
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from assessments.models import Judgement, JudgementChange, Layer
from assessments.services import judging
from assessments.services.judging import JudgementInvalid, record_judgement
from tests import factories

postgresql_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="the one statement is PostgreSQL's")

RUNS = ["guir", "Guir", "UNH-p-l2r", "bm25", "Ünh", "ünh", "z", "_a", "運行"]


@pytest.fixture
def outline(db):
    coll = factories.collection("car")
    topic = factories.topic(coll, "tqa2:L_0257", facets=[("tqa2:L_0257/T_1512", "toxic chemicals")])
    passages = [factories.passage(coll, f"{i:040x}") for i in range(1, 4)]
    return topic, passages


def _changes(seed, tag, topic, passages, count=120):
    """A seeded sequence of record_judgement arguments (without the assessor): a few keys, clocks that tie,
    counters that tie, resends of earlier changes (same change_id and content), runs in any case and script.
    A change's id is its number in the sequence under `tag` (change ids are unique across assessors)."""
    rng = random.Random(seed)
    t0 = datetime(2024, 5, 1, 12, tzinfo=dt_timezone.utc)
    sent = []
    for _ in range(count):
        if sent and rng.random() < 0.2:
            sent.append(dict(rng.choice(sent)))  # resent
            continue
        layer, passage = rng.choice([(Layer.NOTES, p) for p in passages] + [(Layer.REMOVAL, passages[0])])
        value = rng.choice(["a", "b", "", None]) if layer == Layer.NOTES else rng.choice([True, False, None])
        sent.append(dict(
            layer=layer, topic=topic, passage=passage, value=value, change_id=uuid.UUID(int=tag << 64 | len(sent)),
            client_time=t0 + timedelta(seconds=rng.randrange(5)), client_seq=rng.randrange(3),
            run_ids=rng.sample(RUNS, rng.randrange(3)), session_id=f"tab-{rng.randrange(2)}",
        ))
    return sent


def _by_the_rule(sent):
    """The answers and the final state the storing rule gives for `sent`, in plain Python: a change is stored
    once; the judgement takes the value and clock of the assessor's latest change by (client_time, client_seq),
    ties to the later arrival; its runs are the sorted union of every change's runs."""
    stored, judgements, history, answers = {}, {}, [], []
    for change in sent:
        tag = change["change_id"].int & (1 << 64) - 1
        key = (change["layer"], change["passage"].pk)
        if tag not in stored:
            stored[tag] = key
            runs = sorted({str(r) for r in change["run_ids"]})
            history.append((tag, key, change["value"], runs, change["client_seq"]))
            j = judgements.get(key)
            if j is None:
                j = judgements[key] = dict(run_ids=[], client_time=None)
            j["run_ids"] = sorted(set(j["run_ids"]) | set(runs))
            clock = (change["client_time"], change["client_seq"])
            if j["client_time"] is None or clock >= (j["client_time"], j["client_seq"]):
                j.update(value=change["value"], client_time=clock[0], client_seq=clock[1], latest=tag)
            answers.append((False, j["latest"] == tag, j["value"], j["run_ids"], j["client_seq"], tag))
        else:
            j = judgements[stored[tag]]
            answers.append((True, j["latest"] == tag, j["value"], j["run_ids"], j["client_seq"], tag))
    state = {key: (j["value"], j["client_time"], j["client_seq"], j["run_ids"], j["latest"])
             for key, j in judgements.items()}
    return answers, state, sorted(history)


@pytest.mark.parametrize("seed", range(6))
def test_the_database_stores_as_the_rule_says(outline, seed):
    topic, passages = outline
    judge = factories.user()
    sent = _changes(seed, 1, topic, passages)
    answers = [
        (r.duplicate, r.current, r.judgement.value, r.judgement.run_ids, r.judgement.client_seq,
         r.change.change_id.int & (1 << 64) - 1)
        for r in (record_judgement(assessor=judge, **change) for change in sent)
    ]
    expected_answers, expected_state, expected_history = _by_the_rule(sent)
    assert answers == expected_answers
    state = {
        (j.layer, j.passage_id): (j.value, j.client_time, j.client_seq, j.run_ids,
                                  j.latest_change.change_id.int & (1 << 64) - 1)
        for j in Judgement.objects.filter(assessor=judge).select_related("latest_change")
    }
    assert state == expected_state
    history = sorted(
        (c.change_id.int & (1 << 64) - 1, (c.judgement.layer, c.judgement.passage_id), c.value, c.run_ids, c.client_seq)
        for c in JudgementChange.objects.filter(assessor=judge).select_related("judgement")
    )
    assert history == expected_history
    assert any(dup for dup, *_ in answers) and any(not current for _, current, *_ in answers)


def test_a_new_judgements_latest_change_is_the_change_stored_with_it(outline):
    """SQLite names the change's id before inserting it (AUTOINCREMENT's next); after deletions it must still be
    the id the change takes."""
    topic, passages = outline
    judge = factories.user()
    for value in ("a", "b", "c"):
        record_judgement(assessor=judge, layer=Layer.NOTES, topic=topic, passage=passages[0], value=value)
    Judgement.objects.update(latest_change=None)
    Judgement.objects.all().delete()  # and every change with its judgement (the largest id included)
    recorded = record_judgement(assessor=judge, layer=Layer.NOTES, topic=topic, passage=passages[1], value="d")
    judgement = Judgement.objects.get()
    assert judgement.latest_change_id == recorded.change.pk == JudgementChange.objects.get().pk
    assert judgement.latest_change.value == "d" and recorded.current


def test_runs_are_sorted_by_code_point_as_python_sorts_them(outline):
    topic, passages = outline
    judge = factories.user()
    for runs in (["ünh", "Guir"], ["guir", "Ünh"], ["_a", "運行", "Z"]):
        record_judgement(assessor=judge, layer=Layer.NOTES, topic=topic, passage=passages[0], value="x", run_ids=runs)
    assert Judgement.objects.get().run_ids == sorted(["ünh", "Guir", "guir", "Ünh", "_a", "運行", "Z"])


def test_a_change_id_of_another_assessors_change_is_refused_and_nothing_is_written(outline):
    topic, passages = outline
    first, second = factories.user(), factories.user()
    change_id = uuid.uuid4()
    record_judgement(assessor=first, layer=Layer.NOTES, topic=topic, passage=passages[0], value="a", change_id=change_id)
    with pytest.raises(JudgementInvalid, match="change_id: this id belongs to another assessor's change"):
        record_judgement(assessor=second, layer=Layer.NOTES, topic=topic, passage=passages[0], value="b",
                         change_id=change_id)
    assert not Judgement.objects.filter(assessor=second).exists()
    assert JudgementChange.objects.count() == 1


def _same_change_at_once(topic, passage, judge, *, second_inside_a_transaction):
    """The first save holds its transaction open until the second has sent the same change and is waiting on it."""
    change = dict(assessor=judge, layer=Layer.NOTES, topic=topic, passage=passage, value="once",
                  change_id=uuid.uuid4(), client_time=timezone.now())
    started, results = threading.Event(), {}

    def first():
        try:
            with transaction.atomic():
                results["first"] = record_judgement(**change)
                started.set()
                waited = 0
                while waited < 50 and not _someone_waits_on_a_lock():  # the second is blocked on this transaction
                    threading.Event().wait(0.05)
                    waited += 1
                results["waited"] = waited < 50
        finally:
            started.set()
            connection.close()

    def second():
        started.wait(10)
        try:
            if second_inside_a_transaction:
                with transaction.atomic():
                    Judgement.objects.filter(assessor=judge).count()  # the caller's transaction has begun
                    results["second"] = record_judgement(**change)
            else:
                results["second"] = record_judgement(**change)
        except Exception as exc:  # noqa: BLE001  (reported by the test below)
            results["error"] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def _someone_waits_on_a_lock():
    with connection.cursor() as cursor:  # the first thread's own connection: inside its transaction, read-only
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # else the transaction sees its first look again
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")
        return cursor.fetchone()[0] > 0


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_the_same_change_sent_twice_at_once_is_stored_once():
    coll = factories.collection("car")
    topic = factories.topic(coll, "tqa2:L_0257", facets=[])
    passage = factories.passage(coll, "c" * 40)
    judge = factories.user()
    results = _same_change_at_once(topic, passage, judge, second_inside_a_transaction=False)
    assert "error" not in results, results.get("error")
    assert results["waited"], "the second save never waited on the first's transaction"
    assert results["first"].duplicate is False and results["second"].duplicate is True
    assert results["second"].change.pk == results["first"].change.pk
    assert JudgementChange.objects.count() == 1
    judgement = Judgement.objects.get()
    assert judgement.value == "once" and judgement.latest_change_id == results["first"].change.pk


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_inside_a_callers_transaction_the_same_change_at_once_fails_the_callers_transaction_whole():
    """An import is one transaction: the change it sends at the same time as another transaction is the import's
    IntegrityError (the importer refuses the file, nothing of it kept), never a change stored twice."""
    coll = factories.collection("car")
    topic = factories.topic(coll, "tqa2:L_0257", facets=[])
    passage = factories.passage(coll, "c" * 40)
    judge = factories.user()
    results = _same_change_at_once(topic, passage, judge, second_inside_a_transaction=True)
    assert results["waited"], "the second save never waited on the first's transaction"
    assert isinstance(results.get("error"), IntegrityError), results
    assert JudgementChange.objects.count() == 1 and Judgement.objects.count() == 1
    assert Judgement.objects.get().latest_change_id == results["first"].change.pk
