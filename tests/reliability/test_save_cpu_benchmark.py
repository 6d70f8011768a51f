"""benchmarks/bench_save_cpu.py --server still runs end to end: two trees' gunicorn at once, blocks alternating,
and prints the CPU a save and a page load cost each and the ratio (needs PostgreSQL and Redis, as it does)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not os.environ.get("DATABASE_URL", "").startswith("postgres"),
                                reason="the benchmark makes PostgreSQL databases of its own")


def test_the_save_cpu_benchmark_compares_two_trees_through_gunicorn():
    server = os.environ["DATABASE_URL"].rsplit("/", 1)[0]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "CELERY_", "DJANGO_", "CACHE_"))}
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_save_cpu.py"), "--server", "--baseline", "HEAD",
         "--saves", "5", "--pages", "2", "--rounds", "2", "--pg", server, "--redis", "redis://127.0.0.1:6379/11"],
        capture_output=True, text=True, timeout=600, env=env, cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert "2 rounds of 5 saves and 2 page loads per tree" in result.stdout
    for kind in ("save", "page"):
        ratio = re.search(rf"this tree / baseline, CPU of a {kind} in all: ([\d.]+)", result.stdout)
        assert ratio and float(ratio[1]) > 0, result.stdout
    rows = re.findall(r"^  (baseline HEAD|this tree)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", result.stdout, re.M)
    assert len(rows) == 4 and all(float(web) > 0 for _, web, *_ in rows), result.stdout  # the worker's CPU counted
