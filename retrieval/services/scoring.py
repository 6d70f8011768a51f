"""Scores of given passages for given query texts, in this process (a worker's task, a script): BM25 from the
collection's BM25 index, and the cosine of the dense encoder's query vector with each passage's STORED embedding.

A passage is encoded once, when its collection's dense index is built (EncodeWork: the shards' vectors files);
the dense retriever, the annotator's features and the active judging order all read those same vectors
(passage_vectors). An index that is missing or out of date is built here first. A vectors file whose dimension is
not the index's is refused with its name (VectorsInvalid), never read as numbers.

Text in, scores out: nothing here knows topics or pools.
"""

import json

import numpy as np

from retrieval import specs as specs_module
from retrieval.services import index_for, is_current, run_here
from retrieval.services import ensure_index
from retrieval.services import work


class VectorsInvalid(ValueError):
    """Stored vectors that cannot be used (wrong dimension, missing); the message names the file."""


def ready_index(collection, spec: dict):
    """The spec's index of the collection, built here first when it is missing or out of date."""
    job = ensure_index(collection, spec, start_now=False)
    if job is not None:
        job = run_here(job)
        if job.status == job.Status.FAILED:
            raise RuntimeError(f"{job}: {job.error.splitlines()[0] if job.error else 'failed'}")
    index = index_for(collection, spec)
    if not is_current(index):
        raise RuntimeError(f"the {specs_module.label(spec)} index of {collection.name} could not be built")
    return index


def bm25_scores(collection, items, spec: dict | None = None) -> list:
    """BM25 (the retriever's index, `bm25` by default) of each (query text, [passage ids]): an array per item,
    0 for a passage matching no term."""
    index = ready_index(collection, spec or specs_module.parse("bm25"))
    bm25 = work.load_bm25(index)
    return [bm25.scores(text, pids) for text, pids in items]


def passage_vectors(collection, passage_ids, spec: dict | None = None) -> np.ndarray:
    """The stored embeddings (rows in the order of `passage_ids`) of the dense index `spec` (the bundled encoder by
    default), read shard by shard from its vectors files. VectorsInvalid when a file's dimension is not the index's
    or a passage has no vector."""
    index = ready_index(collection, spec or specs_module.parse("dense"))
    folder = index.path
    manifest_path = folder / work.MANIFEST
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    dimension = int(manifest["dimension"])
    if index.dimension and dimension != index.dimension:
        raise VectorsInvalid(f"{manifest_path}: dimension {dimension}, the index records {index.dimension}")
    wanted = np.asarray(list(passage_ids), dtype=np.int64)
    out = np.full((len(wanted), dimension), np.nan, dtype=np.float32)
    for vectors_name, ids_name in manifest["shards"]:
        vectors = np.load(folder / vectors_name, mmap_mode="r")
        if vectors.ndim != 2 or vectors.shape[1] != dimension:
            raise VectorsInvalid(f"{folder / vectors_name}: vectors of shape {tuple(vectors.shape)}, the index's "
                                 f"dimension is {dimension}")
        ids = np.load(folder / ids_name)
        if len(ids) != len(vectors):
            raise VectorsInvalid(f"{folder / vectors_name}: {len(vectors)} vectors for {len(ids)} ids")
        order = np.argsort(ids, kind="stable")
        at = np.searchsorted(ids[order], wanted)
        at = np.minimum(at, len(ids) - 1) if len(ids) else at
        found = (ids[order][at] == wanted) if len(ids) else np.zeros(len(wanted), bool)
        rows = np.flatnonzero(found)
        if len(rows):
            out[rows] = vectors[order[at[rows]]]
    missing = np.flatnonzero(np.isnan(out[:, 0])) if dimension else np.array([], int)
    if len(missing):
        raise VectorsInvalid(f"{manifest_path}: no vector for passage {int(wanted[missing[0]])}")
    return out


def query_vectors(collection, texts, dimension: int, spec: dict | None = None) -> np.ndarray:
    """The query texts encoded now by the dense index's encoder; VectorsInvalid (naming the index's manifest) when
    the encoder's dimension is not the stored vectors' `dimension`."""
    from retrieval.encoders import load_encoder

    spec = spec or specs_module.parse("dense")
    queries = load_encoder(work.encoder_spec(spec)).encode_queries(list(texts))
    if queries.shape[1] != dimension:
        index = index_for(collection, spec)
        raise VectorsInvalid(f"{index.path / work.MANIFEST}: stored vectors of dimension {dimension}, the "
                             f"encoder gives {queries.shape[1]}")
    return queries


def dense_scores(collection, items, spec: dict | None = None) -> list:
    """The cosine of each (query text, [passage ids]): the query encoded now, the passages' stored vectors."""
    spec = spec or specs_module.parse("dense")
    items = list(items)
    wanted = sorted({pid for _, pids in items for pid in pids})
    vectors = passage_vectors(collection, wanted, spec)
    row = {pid: i for i, pid in enumerate(wanted)}
    queries = query_vectors(collection, [text for text, _ in items], vectors.shape[1], spec)
    return [vectors[[row[p] for p in pids]] @ q if pids else np.zeros(0) for q, (_, pids) in zip(queries, items)]
