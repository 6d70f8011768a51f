"""The documented production set-up works: deploy/run-production.sh starts gunicorn in production mode
(DJANGO_DEBUG=0, static files from WhiteNoise, the Content-Security-Policy) and, with a broker, a Celery worker;
an assessor signs in in Chromium, judges with the keyboard, and the change is in the database.

The server gets a database of its own: a SQLite file, or a new PostgreSQL database beside DATABASE_URL's
(dropped afterwards). The browser talks plain HTTP to 127.0.0.1 as an HTTPS proxy would forward it (it sends
X-Forwarded-Proto: https). This is the step CI runs against PostgreSQL and Redis (.ci/run).
"""

import contextlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.factories import DATA

ROOT = Path(__file__).resolve().parents[2]
ARTICLE = DATA / "car-y3" / "runs" / "uog-heading-rh-sdm-tqa-effects-of-water-pollution.json"

SETUP = f"""
from django.contrib.auth import get_user_model
from django.core.management import call_command
from annotation.models import Assignment
from assessments.models import Run
call_command("import_car_run", {str(ARTICLE)!r}, "--create-topics", "--no-progress")
run = Run.objects.get(name="uog-heading-rh-sdm")
judge = get_user_model().objects.create_user("judge", password="pw-judge-production")
Assignment.objects.create(assessor=judge, topic=run.entries.first().topic, run=run)
"""
SAVED = """
import json
from assessments.models import Judgement
rows = Judgement.objects.filter(assessor__username="judge").order_by("pk").values_list("layer", "value")
print("SAVED " + json.dumps([[layer, value] for layer, value in rows]))
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def production_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("production")


@pytest.fixture(scope="module")
def server_database(production_folder):
    """A DATABASE_URL of a fresh database for the server: PostgreSQL beside DATABASE_URL's, else SQLite."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        yield f"sqlite:///{production_folder / 'production.sqlite3'}"
        return
    import psycopg
    from psycopg import sql

    base, _, _ = url.rpartition("/")
    name = f"pj_production_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(scope="module")
def production(server_database, production_folder):
    """(base URL, environment) of deploy/run-production.sh serving on a free port, with a worker when a broker is set.
    Started once for the module's tests (each of them reads what the others do not write): starting it (migrate,
    collectstatic, gunicorn and the worker) took 20 s of a test's setup."""
    tmp_path = production_folder
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "CACHE_"))}
    env.update(
        DATABASE_URL=server_database, DJANGO_SECRET_KEY=secrets.token_urlsafe(50), DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DJANGO_CSRF_TRUSTED_ORIGINS=f"http://127.0.0.1:{port}", DJANGO_STATIC_ROOT=str(tmp_path / "static"),
        BIND=f"127.0.0.1:{port}", WEB_WORKERS="2", WEB_THREADS="4", VENV=str(Path(sys.executable).parent.parent),
        WORKER_NAME=f"production-test-{port}",
    )
    if env.get("CELERY_BROKER_URL", "").startswith("redis"):
        env["CACHE_URL"] = env["CELERY_BROKER_URL"].rsplit("/", 1)[0] + "/14"
    roles = ["web", "worker"] if env.get("CELERY_BROKER_URL") else ["web"]
    log = (tmp_path / "production.log").open("w")
    process = subprocess.Popen(
        [str(ROOT / "deploy" / "run-production.sh"), *roles], cwd=ROOT, env=env, stdout=log,
        stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                pytest.fail(f"run-production.sh stopped:\n{(tmp_path / 'production.log').read_text()[-4000:]}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"gunicorn did not listen:\n{(tmp_path / 'production.log').read_text()[-4000:]}")
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}", env, roles, tmp_path / "production.log"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        log.close()


def manage(env, code):
    result = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    return result.stdout


def test_an_assessor_judges_on_the_production_server_and_the_change_is_stored(production, browser):
    url, env, roles, log = production
    manage(env, SETUP)
    context = browser.new_context(base_url=url, extra_http_headers={"X-Forwarded-Proto": "https"})
    try:
        context.set_default_timeout(60_000)
        page = context.new_page()
        errors, violations, statics = [], [], []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
        page.on("response", lambda r: statics.append((r.url, r.status)) if "/static/" in r.url else None)

        response = page.goto("/")
        assert response.status == 200
        assert "script-src 'self'" in response.headers["content-security-policy"]
        assert "max-age=" in response.headers["strict-transport-security"]
        page.fill("input[name=username]", "judge")
        page.fill("input[name=password]", "pw-judge-production")
        page.press("input[name=password]", "Enter")
        page.wait_for_selector("body[data-ready=home]")
        page.keyboard.press("N")
        page.wait_for_selector("body[data-ready=outline]")
        page.keyboard.press("1")  # the first passage: the first facet, graded MUST
        page.keyboard.press("m")
        page.wait_for_selector('#savestate[data-state="saved"]')
    finally:
        context.close()

    assert errors == [] and violations == []
    assert any(re.search(r"/static/annotation/autosave\.[0-9a-f]{12}\.js$", u) for u, _ in statics), statics
    assert all(status == 200 for _, status in statics), statics
    saved = json.loads(manage(env, SAVED).split("SAVED ", 1)[1])
    assert any(layer == "facet" and value[0]["relevance"] == "must" for layer, value in saved), saved
    if "worker" in roles:  # the Celery worker came up on the broker (it starts after the web role's migrate, and
        # may still be meeting its neighbours when the judging is done on a busy machine)
        deadline = time.monotonic() + 60
        while "ready." not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert "ready." in log.read_text(), log.read_text()[-2000:]


def listening_sockets(port):
    """{socket inode: [pids holding it]} of the TCP sockets listening on 127.0.0.1:`port` (from /proc)."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == f"0100007F:{port:04X}" and fields[3] == "0A":  # 127.0.0.1:port, LISTEN
            inodes.add(fields[9])
    holders = {inode: [] for inode in inodes}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (proc / "fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target.startswith("socket:[") and target[8:-1] in holders:
                        holders[target[8:-1]].append(int(proc.name))
    return holders


def test_each_web_worker_listens_on_its_own_socket(production):
    """deploy/gunicorn.conf.py's reuse_port: each worker has a socket of its own and the kernel spreads connections
    over them. With one shared socket (the master's, inherited), kept-alive connections piled onto one worker:
    under the load benchmark one worker used 33.6 s of CPU and the other 3.8 s."""
    url, env, roles, log = production
    port = int(url.rsplit(":", 1)[1])
    deadline = time.monotonic() + 60
    while len(holders := listening_sockets(port)) < int(env["WEB_WORKERS"]) and time.monotonic() < deadline:
        time.sleep(0.3)  # the second worker may start a moment after the first
    assert len(holders) == int(env["WEB_WORKERS"]), holders
    assert all(len(pids) == 1 for pids in holders.values()), holders  # not shared with the master or each other
    pids = [pids[0] for pids in holders.values()]
    assert len(set(pids)) == len(pids)
    for pid in pids:
        assert b"gunicorn" in Path(f"/proc/{pid}/cmdline").read_bytes()
