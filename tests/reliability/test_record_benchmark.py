"""benchmarks/bench_record.py still runs end to end: two trees, each its own PostgreSQL database, rounds
alternating, and prints the time a change takes in each mode and the ratio (needs PostgreSQL, as it does)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not os.environ.get("DATABASE_URL", "").startswith("postgres"),
                                reason="the benchmark makes PostgreSQL databases of its own")


def test_the_record_benchmark_compares_two_trees():
    server = os.environ["DATABASE_URL"].rsplit("/", 1)[0]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "CELERY_", "DJANGO_", "CACHE_"))}
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_record.py"), "--baseline", "HEAD", "--changes", "5",
         "--rounds", "2", "--pg", server],
        capture_output=True, text=True, timeout=600, env=env, cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert "5 changes a round and mode, 2 rounds" in result.stdout
    for mode in ("in the caller's transaction", "each its own transaction"):
        row = re.search(rf"{mode}\s+([\d.]+) ms\s+([\d.]+) ms\s+([\d.]+) \(", result.stdout)
        assert row and all(float(x) > 0 for x in row.groups()), result.stdout
