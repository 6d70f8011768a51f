"""benchmarks/bench_load.py still runs end to end (a smoke run: SQLite, one gunicorn worker, 2 assessors, 2 s).

It starts gunicorn in production mode, signs the assessors in through the real sign-in page, and saves
through the outline page's endpoint; its figures are not asserted here (the machine is shared).
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_load_benchmark_runs_a_smoke_level():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "CELERY_", "DJANGO_"))}
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_load.py"), "--smoke", "--levels", "2", "--seconds", "2"],
        capture_output=True, text=True, timeout=240, env=env, cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert "signed in 2 assessors" in result.stdout
    assert "   2 assessors:" in result.stdout and "saves/s" in result.stdout and "errors 0" in result.stdout
