"""Documents for an ad hoc collection: retrieval.documents reads and writes them; here, which ones judging needs
(--only-needed: the documents the collection's runs, pools, qrels and generated answers name)."""

from django.db.models import Exists, OuterRef

from assessments.importers.trec import check_slug, no_progress
from assessments.models import Answer, PoolCandidate, Qrel, RunEntry
from retrieval.documents import import_documents
from retrieval.models import Collection, Passage


def needed_documents(collection_name) -> set[str]:
    """External ids of the collection's passages that a run, a pool, a qrel or an answer's references (TREC RAG:
    the passages its support pages show) name (none if it is new)."""
    collection = Collection.objects.filter(name=collection_name).first()
    if collection is None:
        return set()
    named = [Exists(model.objects.filter(passage=OuterRef("pk"))) for model in (RunEntry, PoolCandidate, Qrel)]
    passages = Passage.objects.filter(collection=collection).filter(named[0] | named[1] | named[2])
    needed = set(passages.values_list("external_id", flat=True))
    for references in Answer.objects.filter(run__collection=collection).values_list("references", flat=True):
        needed.update(docid for docid in (references if isinstance(references, list) else []) if isinstance(docid, str))
    return needed


def import_collection_documents(paths, collection_name, *, fmt="auto", update=False, only_needed=False,
                                progress=no_progress, encoding="utf-8", bad_bytes="refuse", max_bytes=None,
                                retext_judged=False):
    """retrieval.documents.import_documents, with --only-needed's set and the collection name's rule."""
    needed = needed_documents(collection_name) if only_needed else None
    return import_documents(
        paths, collection_name, fmt=fmt, update=update, needed=needed, progress=progress, encoding=encoding,
        bad_bytes=bad_bytes, max_bytes=max_bytes, retext_judged=retext_judged,
        check_slug=lambda name, problems: check_slug(name, "collection name", problems, field="collection"),
    )
