"""benchmarks/bench_save_cpu.py --server still runs end to end: two trees' gunicorn at once, blocks alternating,
and prints the CPU a save and a page load cost each and the ratio (needs PostgreSQL and Redis, as it does)."""

import re

import pytest

from tests.reliability.benchmark_runs import needs_postgresql, postgres_server, run_benchmark

pytestmark = [needs_postgresql, pytest.mark.benchmark]  # out of `make test`: `pytest -m benchmark`


def test_the_save_cpu_benchmark_compares_two_trees_through_gunicorn():
    result = run_benchmark("bench_save_cpu.py", "--server", "--baseline", "HEAD", "--saves", 5, "--pages", 2,
                           "--rounds", 2, "--pg", postgres_server(), "--redis", "redis://127.0.0.1:6379/11")
    assert "2 rounds of 5 saves and 2 page loads per tree" in result.stdout
    for kind in ("save", "page"):
        ratio = re.search(rf"this tree / baseline, CPU of a {kind} in all: ([\d.]+)", result.stdout)
        assert ratio and float(ratio[1]) > 0, result.stdout
    rows = re.findall(r"^  (baseline HEAD|this tree)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", result.stdout, re.M)
    assert len(rows) == 4 and all(float(web) > 0 for _, web, *_ in rows), result.stdout  # the worker's CPU counted
