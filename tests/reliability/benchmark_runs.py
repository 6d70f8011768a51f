"""Running a benchmark of benchmarks/ from a test, as its README says to: its own process, from the repository's
root, without the test run's database, broker, cache and Django settings (a benchmark makes its own)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def postgres_server():
    """The PostgreSQL server of the test run's DATABASE_URL, without the database; None when the run is on SQLite."""
    url = os.environ.get("DATABASE_URL", "")
    return url.rsplit("/", 1)[0] if url.startswith("postgres") else None


needs_postgresql = pytest.mark.skipif(postgres_server() is None,
                                      reason="the benchmark makes PostgreSQL databases of its own")


def run_benchmark(script, *args, timeout=600):
    """Run benchmarks/`script` with `args`; assert it exits 0 (its output's tails in the message) and return it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "CELERY_", "DJANGO_", "CACHE_"))}
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *map(str, args)],
                            capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result
