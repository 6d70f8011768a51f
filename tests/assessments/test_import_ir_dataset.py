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
    with pytest.raises(CommandError,  # its source and the field once each: "dataset: dataset:" said it twice
                       match="ir_datasets:no-such/dataset: dataset: ir_datasets knows no dataset 'no-such/dataset'"):
        run("no-such/dataset")


def _register(queries_download):
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQueries

    dataset_id = f"pooljudge-tiny/{next(_names)}"
    ir_datasets.registry.register(dataset_id, Dataset(TrecQueries(queries_download, namespace="tiny", lang="en")))
    return dataset_id


def test_a_source_file_missing_from_the_cache_is_an_error_naming_it(tmp_path, monkeypatch):
    """ir_datasets' FileNotFoundError (a file it cannot download, e.g. TREC disks 4 and 5) was a traceback."""
    from ir_datasets.util import LocalDownload

    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "home"))
    dataset_id = _register(LocalDownload(tmp_path / "home" / "topics.301-450.txt"))
    with pytest.raises(CommandError) as error:
        run(dataset_id, "--collection", "tiny")
    assert f"ir_datasets:{dataset_id} queries: dataset: ir_datasets has no file '{tmp_path}/home/topics.301-450.txt'" \
        in str(error.value)
    assert not Topic.objects.exists()


def test_a_failed_download_is_an_error_naming_where_it_was_tried(tmp_path, monkeypatch):
    """Offline, ir_datasets raised RuntimeError('All download sources failed', …): a traceback."""
    from ir_datasets.util import Download, RequestsDownload

    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "home"))
    urls = ["http://127.0.0.1:9/topics.txt", "http://127.0.0.1:9/mirror/topics.txt"]
    dataset_id = _register(Download([RequestsDownload(url, tries=1) for url in urls],
                                    cache_path=str(tmp_path / "home" / "topics.txt")))
    with pytest.raises(CommandError) as error:
        run(dataset_id, "--queries")
    assert (f"ir_datasets:{dataset_id} queries: dataset: the dataset's files are not in ir_datasets' cache "
            f"(IR_DATASETS_HOME) and the download failed from {urls[0]}, {urls[1]}") in str(error.value)
    # where to put the file by hand (issue 39 item 8: the error named no place)
    assert f"; put the file from {urls[0]} at {tmp_path / 'home' / 'topics.txt'} and import again" in str(error.value)
    assert not Topic.objects.exists()


def test_a_segmented_msmarco_v21_document_keeps_its_segment_as_the_text():
    """ir_datasets' msmarco-segment-v2.1 (the TREC RAG 2024 corpus) names its text `segment`: it went to metadata."""
    from typing import NamedTuple

    from assessments.importers.ir_datasets import _document

    class MsMarcoV21SegmentedDoc(NamedTuple):  # the fields of ir_datasets' class of that name
        doc_id: str
        url: str
        title: str
        headings: str
        segment: str
        start_char: int
        end_char: int

    doc = _document(1, MsMarcoV21SegmentedDoc("msmarco_v2.1_doc_00_0#0_0", "http://a.example/", "Trauma", "Signs",
                                              "Vicarious trauma is the residue.", 0, 32))
    assert (doc.docid, doc.title, doc.text) == ("msmarco_v2.1_doc_00_0#0_0", "Trauma", "Vicarious trauma is the residue.")
    assert doc.fields == {"url": "http://a.example/", "headings": "Signs", "start_char": 0, "end_char": 32}
