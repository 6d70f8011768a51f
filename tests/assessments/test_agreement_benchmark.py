"""benchmarks/bench_agreement.py still runs end to end (tiny: 2,000 units); its speed is not asserted here."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.benchmark  # out of `make test`: `pytest -m benchmark` runs it

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_agreement_benchmark_runs_on_a_throwaway_database():
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}  # its own SQLite file, whatever CI uses
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_agreement.py"), "--units", "2000", "--repeat", "1",
         "--layer", "relevance"],
        capture_output=True, text=True, timeout=120, env=env, cwd=ROOT,
    )

    assert result.returncode == 0, result.stderr
    assert "wrote 2,000 units x 3 assessors of relevance" in result.stdout
    assert "relevance: 2,000 units, 3 assessors, 2 topics" in result.stdout
    assert "ratio report / alpha" in result.stdout
