"""Fixtures for tests that run retrievers; import the ones a module needs (tests/retrieval/conftest.py imports all)."""

import logging
import os
from contextlib import contextmanager

import pytest

from tests.retrieval import tiny_models

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing is ever downloaded in tests
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def index_dir(settings, tmp_path):
    """Indexes go to a fresh folder for each test."""
    settings.RETRIEVAL_INDEX_DIR = tmp_path / "indexes"
    return settings.RETRIEVAL_INDEX_DIR


@pytest.fixture(scope="session")
def minilm():
    """Path of the bundled all-MiniLM-L6-v2."""
    return tiny_models.minilm_path()


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory):
    """A 2-layer, 32-unit BERT encoder with a Cranfield word-piece vocabulary, built from a config."""
    return tiny_models.tiny_bert(tmp_path_factory.mktemp("tiny-encoder"))


@pytest.fixture(scope="session")
def tiny_cross_encoders(tmp_path_factory):
    """Two tiny sequence-classification BERTs: one label (a logit) and two labels (softmax), different seeds."""
    return [
        tiny_models.tiny_bert(tmp_path_factory.mktemp("tiny-ce-1"), head="classification", num_labels=1, seed=1),
        tiny_models.tiny_bert(tmp_path_factory.mktemp("tiny-ce-2"), head="classification", num_labels=2, seed=2),
    ]


@pytest.fixture
def eager_celery():
    """Tasks run in this process even when CELERY_BROKER_URL names a broker (the suite also runs that way in CI)."""
    from config.celery import app

    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, True
    yield app
    app.conf.task_always_eager, app.conf.task_eager_propagates = saved


@contextmanager
def thread_worker_of(app, **options):
    """celery.contrib.testing.worker.start_worker(app, pool="threads", **options), and the root logger's level and
    handlers as they were afterwards: the worker's set-up sets them (loglevel), which later tests in this process
    would otherwise inherit (a command's INFO progress lines went missing)."""
    from celery.contrib.testing.worker import start_worker

    root = logging.getLogger()
    level, handlers = root.level, root.handlers[:]
    try:
        with start_worker(app, pool="threads", **options):
            yield app
    finally:
        root.setLevel(level)
        root.handlers[:] = handlers
