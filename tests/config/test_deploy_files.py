"""The documented production set-up is one set of processes: compose.yaml runs deploy/run-production.sh's
roles, the README's production section starts that script, and the script refuses what it cannot run."""

import os
import re
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "run-production.sh"


def run_script(*roles, **env):
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_"))}
    environment.update(env)
    return subprocess.run([str(SCRIPT), *roles], cwd=ROOT, env=environment, capture_output=True, text=True,
                          timeout=60)


def test_compose_runs_each_role_of_the_script_with_postgresql_and_redis():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    commands = {name: s.get("command") for name, s in services.items()}
    assert commands["web"] == ["deploy/run-production.sh", "web"]
    assert commands["worker"] == ["deploy/run-production.sh", "worker"]
    assert commands["gpu-worker"] == ["deploy/run-production.sh", "gpu"]
    # node names (role@host name) stay the same when a container is re-created, so a restart recovers its work
    assert services["worker"]["hostname"] == "worker" and services["gpu-worker"]["hostname"] == "gpu-worker"
    assert services["db"]["image"].startswith("postgres:") and services["redis"]["image"].startswith("redis:")
    env = services["web"]["environment"]
    assert env["DATABASE_URL"].startswith("postgres://") and env["CELERY_BROKER_URL"].startswith("redis://")
    assert env["CACHE_URL"].startswith("redis://")
    roles = set(re.search(r"\n    (\w+)\|(\w+)\|(\w+)\) ;;", SCRIPT.read_text()).groups())
    assert {c[1] for c in commands.values() if c and c[0] == "deploy/run-production.sh"} == roles


def test_the_readme_production_section_starts_the_script_and_compose():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Production and security", 1)[1].split("\n## ", 1)[0]
    assert "deploy/run-production.sh" in section and "docker compose up" in section
    assert "tests/browser/test_production.py" in section  # what CI runs against it


def test_the_script_names_what_is_missing():
    result = run_script("web")
    assert result.returncode == 2 and "DATABASE_URL must be set" in result.stderr
    result = run_script("worker", DATABASE_URL="sqlite:///x", DJANGO_SECRET_KEY="k" * 50, DJANGO_ALLOWED_HOSTS="h")
    assert result.returncode == 2 and "CELERY_BROKER_URL must be set for the worker role" in result.stderr
    result = run_script("cook", DATABASE_URL="sqlite:///x", DJANGO_SECRET_KEY="k" * 50, DJANGO_ALLOWED_HOSTS="h")
    assert result.returncode == 2 and "unknown role 'cook'" in result.stderr
