"""What each kind of job does: how it is split into shards, what a shard does, how the job is finished.

Heavy libraries (torch, transformers, faiss, bm25s) are imported inside the functions that use
them, so importing this module (as the web process does when it plans a job) stays light.
"""

import json
import os
import shutil
from pathlib import Path

from django.conf import settings
from django.db.models import Count, Max
from django.utils import timezone

from retrieval import specs as specs_module
from retrieval.model_cache import loaded_models as cache
from retrieval.models import Index, Job, Passage
from retrieval.storage import save_array, write_json

MANIFEST = "manifest.json"
IDS = "ids.npy"


def shard_size() -> int:
    """Passages a dense-encoding shard holds: the setting or environment variable RETRIEVAL_SHARD_SIZE, else 10,000."""
    return int(getattr(settings, "RETRIEVAL_SHARD_SIZE", 0) or os.environ.get("RETRIEVAL_SHARD_SIZE") or 10_000)


def passage_text(title: str, text: str, fields: str = "text") -> str:
    """What is indexed of a passage (Collection.indexed_fields): "title+text" both, one per line; "text" the text,
    else the title; "title" the title, else the text."""
    if fields == "title+text":
        return "\n".join(part for part in (title, text) if part)
    if fields == "title":
        return title or text or ""
    return text or title or ""


def collection_state(collection_id: int) -> dict:
    """Passage count and highest passage id: an index built on a different state is out of date."""
    state = Passage.objects.filter(collection_id=collection_id).aggregate(count=Count("pk"), last=Max("pk"))
    return {"count": state["count"], "last": state["last"]}


def index_fields(job) -> str:
    """The fields an index job indexes (an index made before fields were recorded: the text, as then)."""
    return job.index.config.get("fields", "text")


def index_context(job) -> int:
    """Sentences of the book an index job adds on each side of a chunk (0: an index made before context existed)."""
    return int(job.index.config.get("context", 0))


def passage_rows(collection_id: int, first: int, last: int, fields: str = "text", context: int = 0):
    """(id, indexed text) of the collection's passages with first ≤ id ≤ last, in id order; with `context`, a book
    chunk's text has the `context` sentences of its book before and after it (within the book) joined on."""
    rows = (
        Passage.objects.filter(collection_id=collection_id, pk__gte=first, pk__lte=last)
        .order_by("pk")
        .values_list("pk", "title", "text", "book_id", "first_sentence", "last_sentence")
    )
    rows = list(rows.iterator(chunk_size=5000))
    around = _neighbour_sentences(rows, context) if context > 0 else {}
    result = []
    for pk, title, text, book_id, first_sentence, last_sentence in rows:
        if book_id is not None and first_sentence is not None:
            before = [around.get((book_id, i), "") for i in range(first_sentence - context, first_sentence)]
            after = [around.get((book_id, i), "") for i in range(last_sentence + 1, last_sentence + 1 + context)]
            text = " ".join(part for part in (*before, text, *after) if part)
        result.append((pk, passage_text(title, text, fields)))
    return result


def _neighbour_sentences(rows, context: int) -> dict:
    """{(book id, sentence index): text} of the sentences within `context` of the book chunks among `rows`."""
    from retrieval.models import Sentence

    wanted = {}
    for _, _, _, book_id, first_sentence, last_sentence in rows:
        if book_id is not None and first_sentence is not None:
            low, high = wanted.get(book_id, (first_sentence, last_sentence))
            wanted[book_id] = (min(low, first_sentence - context), max(high, last_sentence + context))
    found = {}
    for book_id, (low, high) in wanted.items():
        sentences = Sentence.objects.filter(book_id=book_id, index__gte=max(low, 0), index__lte=high)
        for index, text in sentences.values_list("index", "text").iterator(chunk_size=5000):
            found[(book_id, index)] = text
    return found


def plan_passage_ranges(collection_id: int, size: int) -> list[tuple[dict, int]]:
    """Shards of at most `size` consecutive passages (by id): ({"first", "last"}, count) each."""
    ids = Passage.objects.filter(collection_id=collection_id).order_by("pk").values_list("pk", flat=True)
    plan, chunk = [], []
    for pk in ids.iterator(chunk_size=10_000):
        chunk.append(pk)
        if len(chunk) == size:
            plan.append(({"first": chunk[0], "last": chunk[-1]}, len(chunk)))
            chunk = []
    if chunk:
        plan.append(({"first": chunk[0], "last": chunk[-1]}, len(chunk)))
    return plan


def plan_slices(count: int, size: int, weights=None) -> list[tuple[dict, int]]:
    """Shards of consecutive items [start, stop): by count, or so each holds about `size` weight."""
    plan, start = [], 0
    if weights is None:
        weights = [1] * count
    while start < count:
        stop, total = start, 0
        while stop < count and (total == 0 or total + weights[stop] <= size):
            total += weights[stop]
            stop += 1
        plan.append(({"start": start, "stop": stop}, total))
        start = stop
    return plan


def mark_index_ready(job: Job, **fields) -> None:
    state = job.params["state"]
    Index.objects.filter(pk=job.index_id).update(
        status=Index.Status.READY, passage_count=state["count"], last_passage_id=state["last"],
        built_at=timezone.now(), **fields,
    )


# --- BM25 index ------------------------------------------------------------------------------------------


class BM25IndexWork:
    """One shard: the whole collection tokenised, stemmed and indexed by bm25s, saved to the index folder."""

    gpu = False

    @staticmethod
    def plan(job):
        state = job.params["state"]
        if not state["count"]:
            return []
        return [({"first": 0, "last": state["last"]}, state["count"])]

    @staticmethod
    def run(job, shard, beat):
        from retrieval.lexical import BM25Index, BM25Spec

        rows = passage_rows(job.collection_id, shard.params["first"], shard.params["last"], index_fields(job),
                            index_context(job))
        spec = BM25Spec(**specs_module.bm25_part(job.params["spec"]))
        index = BM25Index.build([pk for pk, _ in rows], [text for _, text in rows], spec)
        index.save(job.index.path)
        return len(rows), None

    @staticmethod
    def finish(job):
        mark_index_ready(job)


# --- dense encoding ---------------------------------------------------------------------------------------


def encoder_spec(spec: dict):
    from retrieval.encoders import EncoderSpec

    part = specs_module.encoder_part(spec)
    part["model"] = specs_module.resolve_model(part["model"])
    return EncoderSpec(**part)


def faiss_spec(spec: dict):
    from retrieval.vectors import IndexSpec

    return IndexSpec(**specs_module.index_part(spec))


def shard_files(folder: Path, job_id: int, number: int) -> tuple[Path, Path]:
    base = folder / f"job-{job_id}"
    return base / f"{number:05d}.npy", base / f"{number:05d}.ids.npy"


class EncodeWork:
    """Shards of consecutive passages encoded on the gpu queue; finishing builds the FAISS index from the shards."""

    gpu = True

    @staticmethod
    def plan(job):
        return plan_passage_ranges(job.collection_id, job.params.get("shard_size") or shard_size())

    @staticmethod
    def run(job, shard, beat):
        import numpy as np

        from retrieval.encoders import load_encoder

        rows = passage_rows(job.collection_id, shard.params["first"], shard.params["last"], index_fields(job),
                            index_context(job))
        encoder = load_encoder(encoder_spec(job.params["spec"]))
        vectors = encoder.encode_passages([text for _, text in rows], progress=beat)
        vectors_path, ids_path = shard_files(job.index.path, job.pk, shard.number)
        save_array(ids_path, np.asarray([pk for pk, _ in rows], dtype=np.int64))
        save_array(vectors_path, vectors)
        return len(rows), None

    @staticmethod
    def finish(job):
        import numpy as np

        folder = job.index.path
        shards = list(job.shards.order_by("number").values_list("number", flat=True))
        files = [shard_files(folder, job.pk, number) for number in shards]
        ids = np.concatenate([np.load(ids_path) for _, ids_path in files]) if files else np.zeros(0, np.int64)
        dimension = int(np.load(files[0][0], mmap_mode="r").shape[1]) if files else 0
        manifest = {
            "job": job.pk,
            "shards": [[str(v.relative_to(folder)), str(i.relative_to(folder))] for v, i in files],
            "count": int(len(ids)),
            "dimension": dimension,
            "encoder": specs_module.encoder_part(job.params["spec"]),
        }
        save_array(folder / IDS, ids)
        build_faiss(folder, manifest, faiss_spec(job.params["spec"]))
        write_json(folder / MANIFEST, manifest)
        for old in folder.glob("job-*"):
            if old.name != f"job-{job.pk}":
                shutil.rmtree(old, ignore_errors=True)
        mark_index_ready(job, dimension=dimension or None)


def shard_vectors(folder: Path, manifest: dict):
    """The embeddings of a dense index, shard by shard (memory-mapped)."""
    import numpy as np

    for vectors, _ in manifest["shards"]:
        yield np.load(folder / vectors, mmap_mode="r")


def build_faiss(folder: Path, manifest: dict, spec):
    """Build and save the FAISS index `spec` over the stored embeddings; IVF trains on up to 100k of them."""
    import numpy as np

    from retrieval import vectors as faiss_vectors

    if spec.kind == "ivf":
        sample, taken = [], 0
        for block in shard_vectors(folder, manifest):
            sample.append(np.asarray(block[: 100_000 - taken]))
            taken += len(sample[-1])
            if taken >= 100_000:
                break
        index = faiss_vectors.build(np.concatenate(sample) if sample else np.zeros((0, manifest["dimension"])), spec)
        index.reset()  # keep the trained lists, add every vector below
    else:
        index = faiss_vectors.build(np.zeros((0, manifest["dimension"]), dtype=np.float32), spec)
    for block in shard_vectors(folder, manifest):
        index.add(np.ascontiguousarray(block, dtype=np.float32))
    faiss_vectors.save(index, folder / spec.filename)
    return index


def load_dense(index: Index, spec):
    """(FAISS index, passage ids) of a ready dense index, loaded once per process; a missing FAISS kind is built."""
    import numpy as np

    from retrieval import vectors as faiss_vectors

    folder = index.path
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))

    def load():
        path = folder / spec.filename
        built = faiss_vectors.load(path, spec) if path.exists() else build_faiss(folder, manifest, spec)
        return built, np.load(folder / IDS)

    return cache.get(("faiss", str(folder), manifest["job"], spec), load)


def load_bm25(index: Index):
    from retrieval.lexical import BM25Index

    return cache.get(("bm25", str(index.path), str(index.built_at)), lambda: BM25Index.load(index.path))


# --- search and re-ranking ------------------------------------------------------------------------------------


class SearchWork:
    """Slices of queries; each shard ranks its queries' passages with BM25 or a dense index."""

    @staticmethod
    def gpu_for(params):
        return params["spec"]["kind"] == "dense"

    @staticmethod
    def plan(job):
        return plan_slices(len(job.params["queries"]), 1000)

    @staticmethod
    def run(job, shard, beat):
        queries = job.params["queries"][shard.params["start"] : shard.params["stop"]]
        texts = [text for _, text in queries]
        spec, k = job.params["spec"], job.params["k"]
        if spec["kind"] == "bm25":
            hits = load_bm25(job.index).search(texts, k)
        else:
            from retrieval import vectors as faiss_vectors
            from retrieval.encoders import load_encoder

            vectors = load_encoder(encoder_spec(spec)).encode_queries(texts)
            beat()
            faiss_index, ids = load_dense(job.index, faiss_spec(spec))
            hits = faiss_vectors.search(faiss_index, ids, vectors, k)
        result = {key: [[pid, score] for pid, score in ranking] for (key, _), ranking in zip(queries, hits)}
        return len(queries), result

    @staticmethod
    def finish(job):
        pass


class RerankWork:
    """Slices of (query, candidates) scored by every cross-encoder of the ensemble, then averaged."""

    gpu = True

    @staticmethod
    def plan(job):
        items = job.params["items"]
        return plan_slices(len(items), 2000, weights=[max(1, len(item[2])) for item in items])

    @staticmethod
    def run(job, shard, beat):
        from retrieval.rerankers import RerankerSpec, load_cross_encoder, rerank

        items = job.params["items"][shard.params["start"] : shard.params["stop"]]
        wanted = {pid for _, _, pids in items for pid in pids}
        texts = {
            pk: passage_text(title, text, job.params.get("fields", "text"))
            for pk, title, text in Passage.objects.filter(pk__in=wanted).values_list("pk", "title", "text")
        }
        models = [
            load_cross_encoder(RerankerSpec(specs_module.resolve_model(m["model"]), m["max_length"]))
            for m in job.params["models"]
        ]
        result, pairs = {}, 0
        for key, query, pids in items:
            candidates = [(pid, texts.get(pid, "")) for pid in pids]
            fused, per_model = rerank(query, candidates, models, job.params.get("normalisation", "minmax"))
            result[key] = {
                "ranking": [[pid, score] for pid, score in fused],
                "models": [[[pid, score] for pid, score in scores] for scores in per_model],
            }
            pairs += len(pids)
            beat()
        return pairs, result

    @staticmethod
    def finish(job):
        pass


HANDLERS = {
    Job.Kind.BM25_INDEX: BM25IndexWork,
    Job.Kind.ENCODE: EncodeWork,
    Job.Kind.SEARCH: SearchWork,
    Job.Kind.RERANK: RerankWork,
}


def handler(kind):
    return HANDLERS[kind]


def uses_gpu(kind, params) -> bool:
    """Whether a job's shards belong on the gpu queue."""
    work = HANDLERS[kind]
    return work.gpu_for(params) if hasattr(work, "gpu_for") else work.gpu
