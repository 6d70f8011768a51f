"""Fixtures shared by all tests."""

import os
import sys
from itertools import count

import pytest

from tests.factories import DATA

if os.environ.get("PYTEST_XDIST_WORKER"):
    # make test runs one xdist process per core: each runs PyTorch and faiss (and the processes it starts) on one
    # thread, as two threads a process made four on two cores, spinning against each other (tests/assessments/
    # test_train_annotator.py's fine-tuning: 15 s of CPU on one thread against 35 s on two, at load average 5).
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

# Tests that use the Celery broker (CELERY_BROKER_URL): the `worker` tests start workers that take any task on its
# queues, and tests/browser/test_production.py starts a production worker on them too. Under pytest-xdist
# (`make test`: -n auto --dist loadgroup) they all run in one xdist process, one after another, so no worker takes
# a task that another test sent for its own database.
BROKER_GROUP = "celery-broker"


def pytest_configure(config):
    flush_tables_in_name_order()


def flush_tables_in_name_order():
    """A transactional test ends with Django's flush, which deletes its tables in the order of a Python set: a new
    order in each process (string hashing is seeded per process). On SQLite each deleted row of a table that another
    references is checked against the referring rows, and a judgement's latest_change has no index (on purpose: a
    save's UPDATE then touches no indexed column). So when a process happened to empty assessments_judgementchange
    before assessments_judgement, each of a test's 22,000 changes scanned 20,000 judgements: the data browser test's
    teardown took 22-33 s instead of 0.5 s, in about one process of three. In name order the judgements go first,
    the same in every process."""
    from django.db.backends.base.introspection import BaseDatabaseIntrospection

    tables = BaseDatabaseIntrospection.django_table_names
    if getattr(tables, "in_name_order", False):
        return

    def in_name_order(self, *args, **kwargs):
        return sorted(tables(self, *args, **kwargs))

    in_name_order.in_name_order = True
    BaseDatabaseIntrospection.django_table_names = in_name_order


def pytest_itemcollected(item):
    """Every test under tests/browser/ drives Chromium: marked `browser`, so `pytest -m "not browser"` is the fast
    loop (make test and CI run them all). Marked as collected, before -m deselects."""
    if item.nodeid.startswith("tests/browser/"):
        item.add_marker(pytest.mark.browser)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    long_first(items)
    for item in items:
        if item.get_closest_marker("worker") or item.nodeid.startswith("tests/browser/test_production.py"):
            item.add_marker(pytest.mark.xdist_group(BROKER_GROUP))
    if os.environ.get("PYTEST_XDIST_WORKER") and config.getvalue("loadgroup"):  # set on the xdist processes
        group_node_ids(items)


def long_first(items):
    """Tests marked `long` (tens of seconds each) are collected first, in their order, the rest after in theirs.
    pytest-xdist hands tests out in collection order: a long test collected last ran alone on one process while the
    other had nothing left (tests/security/ sorts last). Scheduling only: no test may depend on another's order."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


def group_node_ids(items):
    """Give each test of an xdist_group the node id '<id>@<group>' by which --dist loadgroup sends a group to one
    process. pytest-xdist 3.8 writes it to item._nodeid, which pytest 9.2 no longer reads (its node ids are
    structured): without this, the groups were spread over the processes like any other test."""
    from _pytest.nodeid import NodeId

    for item in items:
        names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
        suffix = "@" + "_".join(sorted(names))
        if names and not item.nodeid.endswith(suffix):
            item._id = NodeId.parse(item.nodeid + suffix)
            if not item.nodeid.endswith(suffix):
                raise pytest.UsageError(f"cannot put {item.nodeid} in its xdist group {suffix[1:]} (pytest changed?)")


ID_SHIFT = int(os.environ.get("POOLJUDGE_ID_SHIFT") or 0)


@pytest.fixture(autouse=True)
def shifted_ids(request):
    """A check, off by default: with POOLJUDGE_ID_SHIFT=N every table's next id in a database test is past N (plus
    a few hundred that differ by table), as if other tests had run before in the same process. A test that passes
    only with the ids that one order of the tests gives (a hash of ids ordering units, a "first" row) then fails:
    run a folder with two or three values of N and the default to find it."""
    if not ID_SHIFT or request.node.get_closest_marker("django_db") is None:
        return
    import zlib

    from django.db import connection

    request.getfixturevalue("_django_db_helper")
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            if table.startswith("sqlite_") or "id" not in {
                    c.name for c in connection.introspection.get_table_description(cursor, table)}:
                continue
            start = ID_SHIFT + zlib.crc32(table.encode()) % 997
            if connection.vendor == "sqlite":
                cursor.execute("DELETE FROM sqlite_sequence WHERE name = %s", [table])
                cursor.execute("INSERT INTO sqlite_sequence (name, seq) SELECT %s, MAX(%s, COALESCE(MAX(id), 0)) "
                               f'FROM "{table}"', [table, start])
            elif connection.vendor == "postgresql":
                cursor.execute(f"SELECT setval(pg_get_serial_sequence('\"{table}\"', 'id'), "
                               f'GREATEST(%s, (SELECT COALESCE(MAX(id), 0) FROM "{table}") + 1))', [start])


@pytest.fixture
def data_dir():
    """The project's sample data folder (copied from shared/data)."""
    return DATA


FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Tests create many users; a real password hash costs about 0.25 s each, MD5 nothing (tests only)."""
    settings.PASSWORD_HASHERS = FAST_HASHERS


def rows_made_once_per_module(name, make):
    """A module-scoped fixture `name`: the value of make(), whose rows are made once for the module's tests.

    The rows are made in a transaction left open while the module's tests run. Each test runs in a savepoint of
    it, as pytest-django runs a django_db test (its TestCase path, which leaves class transactions to fixtures like
    this one), so what a test writes is rolled back after it and the next test finds the rows as made. The
    transaction is rolled back after the module's last test. For modules of many tests over one world that they
    only read or undo: tests/security/test_url_matrix.py built its world 346 times, 38 s of a run's CPU. Every
    test of such a module is a plain django_db test (a transactional one would flush the shared rows)."""

    @pytest.fixture(scope="module", name=name)
    def made_once(django_db_setup, django_db_blocker, tmp_path_factory):
        from django.db import transaction
        from django.test import override_settings

        folders = tmp_path_factory.mktemp(name)
        with django_db_blocker.unblock():
            outer = transaction.atomic()
            outer._from_testcase = True  # a durable block in the code under test may open inside it, as in TestCase
            outer.__enter__()
        try:
            with django_db_blocker.unblock(), override_settings(
                    PASSWORD_HASHERS=FAST_HASHERS, RETRIEVAL_INDEX_DIR=folders / "indexes",
                    MACHINE_MODEL_DIR=folders / "annotators", EXPORT_DIR=folders / "exports"):
                value = make()
            yield value
        finally:
            with django_db_blocker.unblock():
                transaction.set_rollback(True)
                outer.__exit__(None, None, None)

    return made_once


def part_of_module_rows(key, rows="shared"):
    """A module-scoped fixture `key`: rows_made_once_per_module's value `rows` (a dict) at `key`."""

    @pytest.fixture(scope="module", name=key)
    def part(request):
        return request.getfixturevalue(rows)[key]

    return part


_folder_numbers = count(1)


@pytest.fixture(autouse=True)
def private_folders(settings, tmp_path_factory):
    """Each test writes indexes, trained annotators and campaign exports in folders of its own (made on first use),
    not in var/: their names come from database ids, which every test database (one per xdist process) reuses."""
    root = tmp_path_factory.getbasetemp() / "folders" / str(next(_folder_numbers))
    settings.RETRIEVAL_INDEX_DIR = root / "indexes"
    settings.MACHINE_MODEL_DIR = root / "annotators"
    settings.EXPORT_DIR = root / "exports"


@pytest.fixture(scope="session", autouse=True)
def sentences_split_once():
    """A dozen tests import the same books of data/books, and pysbd takes seconds to split one (Moby-Dick's 2,800
    paragraphs: 10 s). Its answer is a function of the paragraph's text and the splitter's options alone, so each
    test process splits a text once and gives the same answer again; every import still goes through
    retrieval.books.segmenter() and the rest of its path as in production."""
    import pysbd

    from retrieval import books

    answers = {}

    class SplitOnce:
        """The splitter retrieval.books.segmenter() makes, answering a text it has split before from memory."""

        def __init__(self, splitter: pysbd.Segmenter):
            self.splitter = splitter
            self.options = (splitter.language, splitter.clean, splitter.doc_type, splitter.char_span)

        def segment(self, text):
            key = (self.options, text)
            if key not in answers:
                answers[key] = self.splitter.segment(text)
            return list(answers[key])

        def __getattr__(self, name):
            return getattr(self.splitter, name)

    made = books.segmenter
    books.segmenter = lambda: SplitOnce(made())
    yield
    books.segmenter = made


@pytest.fixture(autouse=True)
def empty_cache():
    """The cache holds login failure counts (config/throttle.py): each test starts without any. Nor does a test
    find another's topic pools of a judging order or hybrid pools, plans and intervals (kept per process by pool id,
    and a test database reuses ids)."""
    from django.core.cache import cache

    from annotation.services import judging_order
    from assessments.services import hybrid_pool

    cache.clear()
    judging_order._pools.clear()
    for kept in (hybrid_pool._pools, hybrid_pool._plans, hybrid_pool._intervals):
        kept.clear()


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
