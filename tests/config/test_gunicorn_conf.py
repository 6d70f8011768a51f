"""deploy/gunicorn.conf.py, the web role's settings (run-production.sh and the load benchmark start gunicorn with it):
many workers of few threads by default, each on its own socket, and the environment's numbers checked."""

import os
import runpy
from pathlib import Path

import pytest

CONF = str(Path(__file__).resolve().parents[2] / "deploy" / "gunicorn.conf.py")


@pytest.fixture
def conf(monkeypatch):
    for name in ("BIND", "WEB_WORKERS", "WEB_THREADS", "WEB_ACCESS_LOG"):
        monkeypatch.delenv(name, raising=False)

    def load(**env):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        return runpy.run_path(CONF)

    return load


def test_two_workers_per_cpu_of_two_threads_each_by_default(conf):
    settings = conf()
    assert settings["workers"] == 2 * len(os.sched_getaffinity(0))
    assert settings["threads"] == 2
    assert settings["bind"] == "0.0.0.0:8000" and settings["accesslog"] is None
    assert settings["reuse_port"] is True and settings["keepalive"] == 30


def test_the_environment_sets_them(conf):
    settings = conf(WEB_WORKERS="3", WEB_THREADS="8", BIND="127.0.0.1:9000", WEB_ACCESS_LOG="-")
    assert (settings["workers"], settings["threads"], settings["bind"], settings["accesslog"]) == (
        3, 8, "127.0.0.1:9000", "-")


@pytest.mark.parametrize(("value", "why"), [("0", "is below 1"), ("-1", "is below 1"), ("two", "is not a whole number"),
                                          ("2.5", "is not a whole number")])
def test_a_bad_number_stops_with_the_variable_named(conf, value, why):
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured) as stopped:
        conf(WEB_THREADS=value)
    assert str(stopped.value) == f"WEB_THREADS={value!r} {why}"


def test_gunicorn_itself_refuses_a_bad_number_and_names_it(tmp_path):
    """Read the way production reads it: gunicorn's own config check, outside the test's import path."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "WEB_THREADS")}
    result = subprocess.run(
        [str(Path(sys.executable).parent / "gunicorn"), "--check-config", "-c", CONF, "config.wsgi"],
        env={**env, "WEB_WORKERS": "0"}, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode != 0
    assert "WEB_WORKERS='0' is below 1" in result.stdout + result.stderr


def test_a_worker_freezes_what_it_loaded_and_collects_young_objects_seldom(conf):
    import gc

    before = gc.get_threshold()
    gc.unfreeze()  # nothing frozen before the worker's hook runs
    assert gc.get_freeze_count() == 0
    try:
        conf()["post_worker_init"](None)
        assert gc.get_threshold() == (50_000, 20, 100)
        assert gc.get_freeze_count() > 0  # what the worker had loaded is frozen
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_gunicorn_parses_http_in_c(conf):
    """gunicorn_h1c is installed with the project, and gunicorn's default parser ("auto") takes it with these
    settings (it falls back to Python silently when the package is missing or a setting rules it out)."""
    from gunicorn.config import Config
    from gunicorn.http import message

    cfg = Config()
    for name, value in conf().items():
        if name in cfg.settings:
            cfg.set(name, value)
    assert cfg.http_parser == "auto"
    assert message._check_fast_parser(cfg) is True
