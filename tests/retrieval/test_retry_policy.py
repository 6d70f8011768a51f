"""THE retry policy of background work (retrieval.services.background.retrying): retrieval shards and jobs, pool
builds and data imports each wrote their own (issue 40 item 4); now they all call this one."""

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.db import OperationalError

from retrieval.services.background import MAX_RETRIES, backoff, retrying

ROOT = Path(__file__).resolve().parents[2]


class Retry(Exception):
    pass


def task(retries=0, eager=True):
    """A bound task's face as retrying() sees it: its request, and retry() returning the exception to raise."""
    sent = []

    def retry(exc, countdown, max_retries):
        sent.append((countdown, max_retries))
        return Retry(str(exc))

    return SimpleNamespace(request=SimpleNamespace(retries=retries, is_eager=eager), retry=retry, sent=sent)


def failing(times, error=OperationalError):
    calls = []

    def work():
        calls.append(1)
        if len(calls) <= times:
            raise error("database is locked")
        return "done"

    return work, calls


def test_eagerly_a_transient_error_is_retried_here_until_the_work_succeeds():
    work, calls = failing(2)
    assert retrying(task(), work, give_up=lambda exc: "gave up") == "done" and len(calls) == 3


def test_eagerly_it_gives_up_after_the_last_retry_and_says_why():
    work, calls = failing(100)
    reasons = []
    assert retrying(task(), work, give_up=lambda exc: reasons.append(str(exc)) or "failed") == "failed"
    assert len(calls) == MAX_RETRIES + 1 and reasons == ["database is locked"]


def test_with_a_broker_it_retries_through_the_broker_with_backoff_then_gives_up():
    work, _ = failing(100)
    queued = task(retries=2, eager=False)
    with pytest.raises(Retry):
        retrying(queued, work, give_up=lambda exc: "failed")
    assert queued.sent == [(backoff(2), MAX_RETRIES)] and backoff(2) == 4 and backoff(10) == 60
    assert retrying(task(retries=MAX_RETRIES, eager=False), failing(100)[0], give_up=lambda exc: "failed") == "failed"


def test_an_error_that_is_not_transient_is_never_retried():
    work, calls = failing(1, error=KeyError)
    with pytest.raises(KeyError):
        retrying(task(), work, give_up=lambda exc: "gave up")
    assert len(calls) == 1


def test_no_task_writes_its_own_retry_policy():
    own = [str(path.relative_to(ROOT)) for app in ("annotation", "assessments", "retrieval")
           for path in (ROOT / app).rglob("*.py")
           if re.search(r"\.retry\(exc=", path.read_text()) and path.name != "background.py"]
    assert own == []
