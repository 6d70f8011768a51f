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


@pytest.mark.parametrize("value", ["0", "-1", "two", "2.5"])
def test_a_bad_number_stops_with_the_variable_named(conf, value):
    with pytest.raises(SystemExit) as stopped:
        conf(WEB_THREADS=value)
    assert "WEB_THREADS must be a whole number, 1 or more" in str(stopped.value) and repr(value) in str(stopped.value)
