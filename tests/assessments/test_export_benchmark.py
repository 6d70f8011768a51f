"""benchmarks/bench_export.py still runs end to end (tiny: 1,000 judgements); its speed is not asserted here."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.benchmark  # out of `make test`: `pytest -m benchmark` runs it

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_export_benchmark_runs_on_a_throwaway_database():
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}  # its own SQLite file, whatever CI uses
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_export.py"), "--judgements", "1000", "--repeat", "1"],
        capture_output=True, text=True, timeout=120, env=env, cwd=ROOT,
    )

    assert result.returncode == 0, result.stderr
    assert "wrote 1,000 judgements" in result.stdout
    assert result.stdout.count("ratio to floor") == 3
    assert "Y3 files" in result.stdout
