"""Any dataset ir_datasets knows: its queries, qrels and documents, read through its own iterators and docs store.

ir_datasets finds a dataset's files in its cache (IR_DATASETS_HOME, by default ~/.ir_datasets), downloading what
is missing; machines without internet need the cache populated (docs/importing.md). Queries become ad hoc
topics (assessments.importers.topics' fields: a TrecQuery's title, description and narrative; any other field in
metadata), qrels a qrel set named after the dataset (unknown documents made as placeholders, as
`import_qrels --create-missing` does), documents passages (retrieval.documents: title, text or body, every other
field in metadata). With only_needed the documents are looked up in the docs store by the ids the collection's
runs, pools, qrels and answers name, not read whole. The parts asked for go in one transaction: a part that fails
stores nothing, not even the parts before it (a run again then would find them there, half an import).
"""

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

from django.db import transaction
from django.utils.text import slugify

from assessments.importers import trec
from assessments.importers.documents import needed_documents
from assessments.importers.topics import TopicRecord, _check_id, _paragraphs, write_topics
from retrieval.documents import Document, _valid_id, write_documents
from retrieval.ingest import Problems

SKIPPED_FIELDS = {"marked_up_doc"}  # TrecDoc's raw SGML: its text and fields are kept already
TEXT_FIELDS = ("text", "body", "contents", "passage", "segment")  # segment: msmarco-segment-v2.1 (TREC RAG 2024)


def load(dataset_id):
    """The ir_datasets dataset of this id; ImportFailed when ir_datasets does not know it."""
    import ir_datasets

    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        Problems(f"ir_datasets:{dataset_id}").fail(f"ir_datasets knows no dataset {dataset_id!r}", field="dataset")


@contextmanager
def reading(source):
    """ir_datasets failing to get a part's files (a source file missing from its cache, a download that failed:
    FileNotFoundError, requests' errors, RuntimeError 'All download sources failed') as ImportFailed naming the
    file or the addresses tried, not a traceback."""
    try:
        yield
    except FileNotFoundError as exc:
        missing = exc.filename or (exc.args[0] if exc.args else "a file")
        Problems(source).fail(f"ir_datasets has no file {str(missing)!r} (IR_DATASETS_HOME): put it there, or copy in "
                              "a cache that holds the dataset", field="dataset")
    except RuntimeError as exc:
        if exc.args[:1] != ("All download sources failed",):
            raise
        tried = [getattr(mirror, "url", None) or str(mirror) for mirror, _ in (exc.args[1] if len(exc.args) > 1 else [])]
        why = str(exc.args[1][0][1]) if len(exc.args) > 1 and exc.args[1] else ""
        where, md5 = _download_target(exc)
        put = (f"; put the file from {tried[0] if tried else 'its source'} at {where}"
               + (f" (md5 {md5})" if md5 else "") + " and import again") if where else ""
        Problems(source).fail(f"the dataset's files are not in ir_datasets' cache (IR_DATASETS_HOME) and the download "
                              f"failed from {', '.join(tried) or 'every source'}" + (f" ({why[:300]})" if why else "")
                              + put, field="dataset")
    except OSError as exc:  # requests' ConnectionError and HTTPError are OSErrors: one source, and it failed
        Problems(source).fail(f"ir_datasets could not get the dataset's files: {str(exc)[:300]}", field="dataset")


def _download_target(exc) -> tuple[str | None, str | None]:
    """(the path ir_datasets wanted to download a file to, its md5), read from the failed download's frame (the error
    does not carry them); (None, None) when not found."""
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename.endswith(("ir_datasets/util/download.py", "ir_datasets\\util\\download.py")):
            path = frame.f_locals.get("download_path")
            owner = frame.f_locals.get("self")
            if isinstance(path, str) and path != os.devnull:
                return path, getattr(owner, "expected_md5", None)
        tb = tb.tb_next
    return None, None


def collection_name(dataset_id) -> str:
    return slugify(dataset_id.replace("/", "-"))[:100]


def _plain(value):
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return None
    return str(value)


def _fields(record, skip):
    values = record._asdict()
    return {k: _plain(v) for k, v in values.items() if k not in skip and k not in SKIPPED_FIELDS and
            _plain(v) not in (None, "", [], {})}


def query_records(dataset, problems) -> list[TopicRecord]:
    records, seen = [], {}
    for number, query in enumerate(dataset.queries_iter(), start=1):
        values = query._asdict()
        written = str(values.get("query_id", "")).strip()
        qid = _check_id(written, number, seen, problems, "query_id")
        if qid is None:
            continue
        text = " ".join(str(values.get("text") or values.get("title") or values.get("query") or "").split())
        title = " ".join(str(values.get("title") or text).split())
        metadata = _fields(query, {"query_id", "text", "title", "query"})
        if written != qid:
            metadata["id_as_written"] = written
        for name in ("description", "narrative"):
            if isinstance(metadata.get(name), str):
                metadata[name] = _paragraphs(metadata[name])
        if not text:
            problems.add("the query has no text", line=number, field="text")
            continue
        records.append(TopicRecord(qid, number, title=title, text=text, metadata=metadata, id_field="query_id"))
    return records


def _document(number, doc) -> Document:
    values = doc._asdict()
    text = next((values[k] for k in TEXT_FIELDS if isinstance(values.get(k), str)), "")
    title = values.get("title") if isinstance(values.get("title"), str) else ""
    fields = _fields(doc, {"doc_id", "title", *TEXT_FIELDS})
    return Document(str(doc.doc_id).strip(), number, " ".join(title.split()), text.strip(), fields)


def import_dataset(dataset_id, *, collection=None, docs=True, queries=True, qrels=True, only_needed=False,
                   update=False, progress=trec.no_progress) -> list[str]:
    """Import the parts asked for of an ir_datasets dataset into `collection` (default: the id as a slug), in one
    transaction; the summary line of each part."""
    dataset = load(dataset_id)
    with transaction.atomic():
        return _import_parts(dataset, dataset_id, collection, docs, queries, qrels, only_needed, update, progress)


def _import_parts(dataset, dataset_id, collection, docs, queries, qrels, only_needed, update, progress) -> list[str]:
    collection = collection or collection_name(dataset_id)
    source = f"ir_datasets:{dataset_id}"
    done = []
    if queries and dataset.has_queries():
        problems = Problems(f"{source} queries")
        with reading(problems.source):
            records = query_records(dataset, problems)
        done.append(write_topics(records, problems, collection, update=update, progress=progress).summary())
    if qrels and dataset.has_qrels():
        with tempfile.TemporaryDirectory(prefix="pooljudge-irds-") as folder:
            path = Path(folder) / "qrels.txt"
            with reading(f"{source} qrels"), path.open("w", encoding="utf-8") as out:
                for qrel in dataset.qrels_iter():
                    out.write(f"{qrel.query_id} {getattr(qrel, 'iteration', '0') or '0'} {qrel.doc_id} "
                              f"{qrel.relevance}\n")
            result = trec.import_qrels(path, collection, name=collection_name(dataset_id), create_missing=True,
                                       progress=progress)
            done.append(result.summary())
    if docs and dataset.has_docs():
        name = f"{source} documents"
        if only_needed:
            wanted = sorted(needed_documents(collection))

            def reader(problems):
                store = dataset.docs_store()
                for start in range(0, len(wanted), 1000):
                    found = store.get_many(wanted[start : start + 1000])
                    for number, docid in enumerate(wanted[start : start + 1000], start=start + 1):
                        if docid in found:
                            yield _document(number, found[docid])  # (its id is the collection's already)
            needed = set(wanted)
        else:
            def reader(problems):
                for number, doc in enumerate(dataset.docs_iter(), start=1):
                    document = _document(number, doc)
                    if _valid_id(document.docid, number, problems, "doc_id"):
                        yield document
            needed = None
        with reading(name):
            result = write_documents([(name, reader)], collection, update=update, needed=needed, progress=progress,
                                     check_slug=lambda n, p: trec.check_slug(n, "collection name", p, field="collection"))
        done.append(result.summary())
    return done

