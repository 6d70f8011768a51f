"""manage.py import_ir_dataset: a local dataset registered with ir_datasets (no internet), read through its iterators
and docs store."""

import io
import itertools

import pytest
from django.core.management import CommandError, call_command

from assessments.models import Qrel, Topic
from retrieval.models import Passage

pytestmark = pytest.mark.django_db
ir_datasets = pytest.importorskip("ir_datasets")

DOCS = "FBIS3-1\tCroatian radio reported that talks resumed.\nFBIS3-2\tSerbian television said the ceasefire held.\n" \
       "LA010189-0001\tAn English poetic life.\n"
QUERIES = """<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal activity.

<narr> Narrative:
A relevant document must as a minimum identify the organization.

</top>
"""
QRELS = "301 0 FBIS3-1 1\n301 0 LA010189-0001 0\n"
_names = itertools.count()


@pytest.fixture
def dataset(tmp_path, monkeypatch):
    """A dataset of three documents (TSV), one TREC topic and two qrels, registered under a fresh id, its docs store
    built under tmp_path (IR_DATASETS_HOME)."""
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TrecQueries, TsvDocs
    from ir_datasets.util import LocalDownload

    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "home"))
    for name, text in (("docs.tsv", DOCS), ("topics.txt", QUERIES), ("qrels.txt", QRELS)):
        (tmp_path / name).write_text(text)
    docs = TsvDocs(LocalDownload(tmp_path / "docs.tsv"), namespace="tiny", lang="en")
    docs.docs_store = lambda field="doc_id": _store(docs, tmp_path)
    dataset_id = f"pooljudge-tiny/{next(_names)}"
    ir_datasets.registry.register(dataset_id, Dataset(
        docs, TrecQueries(LocalDownload(tmp_path / "topics.txt"), namespace="tiny", lang="en"),
        TrecQrels(LocalDownload(tmp_path / "qrels.txt"), {0: "not relevant", 1: "relevant"}),
    ))
    return dataset_id


def _store(docs, tmp_path):
    from ir_datasets.indices import PickleLz4FullStore

    return PickleLz4FullStore(str(tmp_path / "home" / "docs.pklz4"), docs.docs_iter, docs.docs_cls(), "doc_id",
                              ["doc_id"], count_hint=3)


def run(*args):
    out = io.StringIO()
    call_command("import_ir_dataset", *args, "--no-progress", stdout=out)
    return out.getvalue()


def test_queries_qrels_and_documents(dataset):
    out = run(dataset, "--collection", "tiny")
    assert "Imported 1 topics into tiny (created the collection)" in out
    topic = Topic.objects.get(external_id="301")
    assert topic.title == "International Organized Crime"
    assert topic.metadata == {
        "description": "Identify organizations that participate in international criminal activity.",
        "narrative": "A relevant document must as a minimum identify the organization."}
    assert Qrel.objects.count() == 2
    assert "filled in 2 that runs or qrels had named" in out  # the qrels' placeholders got their text
    assert Passage.objects.filter(collection__name="tiny").count() == 3
    assert Passage.objects.get(external_id="FBIS3-2").text == "Serbian television said the ceasefire held."


def test_only_needed_takes_the_documents_the_qrels_name_from_the_docs_store(dataset):
    run(dataset, "--queries", "--qrels")
    assert set(Passage.objects.values_list("text", flat=True)) == {""}
    out = run(dataset, "--docs", "--only-needed")
    assert "filled in 2" in out
    assert not Passage.objects.filter(external_id="FBIS3-2").exists()
    assert Passage.objects.get(external_id="FBIS3-1").text == "Croatian radio reported that talks resumed."


def test_an_unknown_dataset_is_an_error():
    with pytest.raises(CommandError, match="ir_datasets knows no dataset 'no-such/dataset'"):
        run("no-such/dataset")
