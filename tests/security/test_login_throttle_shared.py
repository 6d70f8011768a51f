"""Login throttling across processes: with the shared cache (CACHE_URL, Redis) every server process sees one
count, raised atomically, so N workers do not allow N times the tries. Needs the Redis on 127.0.0.1:6379."""

import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REDIS = "redis://127.0.0.1:6379/12"

# A server process of its own: counts `n` failed sign-ins of one user name from one address, or (n=0) prints
# how many seconds that pair must still wait.
WORKER = """
import sys, django
django.setup()
from django.test import RequestFactory
from config import throttle
n, request = int(sys.argv[1]), RequestFactory().post("/accounts/login/", REMOTE_ADDR="10.1.2.3")
for _ in range(n):
    throttle.record_failure(request, "judge")
print(throttle.failures(request, "judge"), throttle.seconds_blocked(request, "judge"))
"""


def redis_up():
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
        return True
    except OSError:
        return False


pytestmark = pytest.mark.skipif(not redis_up(), reason="needs Redis on 127.0.0.1:6379")


@pytest.fixture
def processes():
    """start(n) → a separate Python process counting n failures in the shared cache (a fresh key prefix)."""
    prefix = f"throttle-test-{uuid.uuid4().hex}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "CACHE_"))}
    env.update(DJANGO_SETTINGS_MODULE="config.settings", CACHE_URL=REDIS, CACHE_KEY_PREFIX=prefix,
               LOGIN_THROTTLE_FAILURES="5", LOGIN_THROTTLE_WINDOW="600")

    def start(n):
        return subprocess.Popen([sys.executable, "-c", WORKER, str(n)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    yield start
    import redis

    client = redis.Redis.from_url(REDIS)
    for key in client.scan_iter(f"{prefix}:*"):
        client.delete(key)


def finish(process):
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    count, wait = out.split()
    return int(count), int(wait)


def test_failures_in_two_processes_at_once_are_all_counted(processes):
    """Two processes count 400 failures each at the same time: the count is 800 (a read-then-write count loses
    some of them whenever the two interleave)."""
    first, second = processes(400), processes(400)
    finish(first), finish(second)
    count, wait = finish(processes(0))
    assert count == 800
    assert 590 <= wait <= 600


def test_the_limit_holds_across_processes(processes):
    """Four failures in one process, one in another: a third process already refuses the pair."""
    assert finish(processes(4)) == (4, 0)
    count, wait = finish(processes(1))
    assert count == 5 and wait > 0
    assert finish(processes(0))[1] > 0
