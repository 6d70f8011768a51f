"""benchmarks/bench_record.py still runs end to end: two trees, each its own PostgreSQL database, rounds
alternating, and prints the time a change takes in each mode and the ratio (needs PostgreSQL, as it does)."""

import re

import pytest

from tests.reliability.benchmark_runs import needs_postgresql, postgres_server, run_benchmark

pytestmark = [needs_postgresql, pytest.mark.benchmark]  # out of `make test`: `pytest -m benchmark`


def test_the_record_benchmark_compares_two_trees():
    result = run_benchmark("bench_record.py", "--baseline", "HEAD", "--changes", 5, "--rounds", 2,
                           "--pg", postgres_server())
    assert "5 changes a round and mode, 2 rounds" in result.stdout
    for mode in ("in the caller's transaction", "each its own transaction"):
        row = re.search(rf"{mode}\s+([\d.]+) ms\s+([\d.]+) ms\s+([\d.]+) \(", result.stdout)
        assert row and all(float(x) > 0 for x in row.groups()), result.stdout
