"""Any dataset ir_datasets knows: its queries, qrels and documents, read through its own iterators and docs store.

ir_datasets finds a dataset's files in its cache (IR_DATASETS_HOME, by default ~/.ir_datasets), downloading what
is missing; machines without internet need the cache populated (docs/importing.md). Queries become ad hoc
topics (assessments.importers.topics' fields: a TrecQuery's title, description and narrative; any other field in
metadata), qrels a qrel set named after the dataset (unknown documents made as placeholders, as
`import_qrels --create-missing` does), documents passages (retrieval.documents: title, text or body, every other
field in metadata). With only_needed the documents are looked up in the docs store by the ids the collection's
runs, pools and qrels name, not read whole. Each part is one transaction: a part that fails stores nothing.
"""

import tempfile
from pathlib import Path

from django.utils.text import slugify

from assessments.importers import trec
from assessments.importers.documents import needed_documents
from assessments.importers.topics import TopicRecord, _check_id, _paragraphs, write_topics
from retrieval.documents import Document, _valid_id, write_documents
from retrieval.ingest import Problems

SKIPPED_FIELDS = {"marked_up_doc"}  # TrecDoc's raw SGML: its text and fields are kept already


def load(dataset_id):
    """The ir_datasets dataset of this id; ImportFailed when ir_datasets does not know it."""
    import ir_datasets

    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        Problems("dataset").fail(f"ir_datasets knows no dataset {dataset_id!r}", field="dataset")


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
        qid = str(values.get("query_id", "")).strip()
        if not _check_id(qid, number, seen, problems, "query_id"):
            continue
        text = " ".join(str(values.get("text") or values.get("title") or values.get("query") or "").split())
        title = " ".join(str(values.get("title") or text).split())
        metadata = _fields(query, {"query_id", "text", "title", "query"})
        for name in ("description", "narrative"):
            if isinstance(metadata.get(name), str):
                metadata[name] = _paragraphs(metadata[name])
        if not text:
            problems.add("the query has no text", line=number, field="text")
            continue
        records.append(TopicRecord(qid, number, title=title, text=text, metadata=metadata))
    return records


def _document(number, doc) -> Document:
    values = doc._asdict()
    text = next((values[k] for k in ("text", "body", "contents", "passage") if isinstance(values.get(k), str)), "")
    title = values.get("title") if isinstance(values.get("title"), str) else ""
    fields = _fields(doc, {"doc_id", "title", "text", "body", "contents", "passage"})
    return Document(str(doc.doc_id).strip(), number, " ".join(title.split()), text.strip(), fields)


def import_dataset(dataset_id, *, collection=None, docs=True, queries=True, qrels=True, only_needed=False,
                   update=False, progress=trec.no_progress) -> list[str]:
    """Import the parts asked for of an ir_datasets dataset into `collection` (default: the id as a slug); the
    summary line of each part."""
    dataset = load(dataset_id)
    collection = collection or collection_name(dataset_id)
    source = f"ir_datasets:{dataset_id}"
    done = []
    if queries and dataset.has_queries():
        problems = Problems(f"{source} queries")
        records = query_records(dataset, problems)
        done.append(write_topics(records, problems, collection, update=update, progress=progress).summary())
    if qrels and dataset.has_qrels():
        with tempfile.TemporaryDirectory(prefix="pooljudge-irds-") as folder:
            path = Path(folder) / "qrels.txt"
            with path.open("w", encoding="utf-8") as out:
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
        result = write_documents([(name, reader)], collection, update=update, needed=needed, progress=progress,
                                 check_slug=lambda n, p: trec.check_slug(n, "collection name", p, field="collection"))
        done.append(result.summary())
    return done

