"""Fixtures shared by all tests."""

import pytest

from tests.factories import DATA


@pytest.fixture
def data_dir():
    """The project's sample data folder (copied from shared/data)."""
    return DATA


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Tests create many users; a real password hash costs about 0.25 s each, MD5 nothing (tests only)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def empty_cache():
    """The cache holds login failure counts (config/throttle.py): each test starts without any. Nor does a test
    find another's topic pools of a judging order (kept per process by pool id, and a test database reuses ids)."""
    from django.core.cache import cache

    from annotation.services import judging_order

    cache.clear()
    judging_order._pools.clear()


@pytest.fixture(autouse=True)
def work_before_the_answer(settings):
    """Without a broker, work queued in a request runs before the request answers (not in the web process's
    background thread, BACKGROUND_THREADS), so a test finds it done; a test of the thread turns it back on."""
    settings.BACKGROUND_THREADS = False


@pytest.fixture(autouse=True)
def celery_eager_unless_worker(request):
    """Tasks run in-process unless the test is marked `worker` (and so starts a real worker on the broker).

    With CELERY_BROKER_URL set (CI), a test that sends a task without a worker would wait forever.
    """
    from config.celery import app

    if request.node.get_closest_marker("worker"):
        yield
        return
    before = (app.conf.task_always_eager, app.conf.task_eager_propagates)
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, True
    try:
        yield
    finally:
        app.conf.task_always_eager, app.conf.task_eager_propagates = before
