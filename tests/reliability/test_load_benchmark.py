"""benchmarks/bench_load.py still runs end to end (a smoke run: SQLite, one gunicorn worker, 2 assessors, 2 s).

It starts gunicorn in production mode, signs the assessors in through the real sign-in page, and saves
through the outline page's endpoint; its figures are not asserted here (the machine is shared).
"""

import re

import pytest

from tests.reliability.benchmark_runs import run_benchmark

pytestmark = pytest.mark.benchmark  # out of `make test`: `pytest -m benchmark` runs it


def test_the_load_benchmark_runs_a_smoke_level():
    result = run_benchmark("bench_load.py", "--smoke", "--levels", 2, "--seconds", 2, timeout=240)
    assert "signed in 2 assessors" in result.stdout
    assert "   2 assessors:" in result.stdout and "saves/s" in result.stdout and "errors 0" in result.stdout
    assert "of server time" not in result.stdout  # no Server-Timing header unless asked: production runs without


def test_the_open_loop_sends_the_rate_asked_for_whatever_the_servers_pace():
    """--rate: the assessors together send about that many saves a second (Poisson), not as many as the server
    answers (the closed loop's smoke level answers some 50 a second), and say so."""
    result = run_benchmark("bench_load.py", "--smoke", "--levels", 2, "--seconds", 4, "--rate", 10, "--server-timing",
                           timeout=240)
    assert "open loop at 10 saves/s offered (latency from when each was due)" in result.stdout
    assert "of server time" in result.stdout and "a save inside the server" in result.stdout  # --server-timing
    summary = re.search(r"2 \(open loop, 10/s offered\):\s+(\d+) saves in ([\d.]+) s", result.stdout)
    assert summary, result.stdout[-2000:]
    saves, seconds = int(summary[1]), float(summary[2])
    assert 15 <= saves <= 70 and 3.5 <= seconds <= 6, (saves, seconds)  # 40 expected; Poisson spread
