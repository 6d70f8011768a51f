"""FAISS indexes over normalised vectors: exact inner product by default, IVF or HNSW for large collections.

Worker-only module (imports faiss). An index is stored beside the ids of its rows (passage
ids, int64); searching gives (passage id, score) pairs, best first, ties by id.
"""

import os
from dataclasses import asdict, dataclass
from pathlib import Path

import faiss
import numpy as np

KINDS = ("flat", "ivf", "hnsw")


@dataclass(frozen=True)
class IndexSpec:
    """Which FAISS index: `flat` (exact), `ivf` (nlist lists, nprobe searched) or `hnsw` (m links, ef_search)."""

    kind: str = "flat"
    nlist: int | None = None  # IVF: None → about 4·√n, at most n/39 so every list can train
    nprobe: int = 16
    m: int = 32
    ef_construction: int = 200
    ef_search: int = 128

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown index kind {self.kind!r}; use one of {', '.join(KINDS)}")

    @property
    def filename(self) -> str:
        """The file name this index is stored under: one file per kind and its build parameters."""
        if self.kind == "flat":
            return "faiss-flat.index"
        if self.kind == "ivf":
            return f"faiss-ivf{self.nlist or 'auto'}.index"
        return f"faiss-hnsw{self.m}-{self.ef_construction}.index"

    def as_dict(self) -> dict:
        return asdict(self)


def build(vectors: np.ndarray, spec: IndexSpec = IndexSpec()) -> faiss.Index:
    """An inner-product index over the rows of `vectors` (float32, normalised)."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    n, dim = vectors.shape
    if spec.kind == "flat":
        index = faiss.IndexFlatIP(dim)
    elif spec.kind == "ivf":
        nlist = spec.nlist or max(1, min(int(4 * np.sqrt(n)), n // 39 or 1))
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
        index.cp.seed = 1234  # k-means seed: the same vectors train the same lists
        index.train(vectors)
        index.nprobe = min(spec.nprobe, nlist)
    else:
        index = faiss.IndexHNSWFlat(dim, spec.m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = spec.ef_construction
        index.hnsw.efSearch = spec.ef_search
    if n:
        index.add(vectors)
    return index


def search(index: faiss.Index, ids: np.ndarray, queries: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
    """The top `k` (passage id, score) pairs of each query row, best first, ties by passage id."""
    k = min(k, index.ntotal)
    if k <= 0:
        return [[] for _ in range(len(queries))]
    scores, positions = index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
    results = []
    for row_scores, row_positions in zip(scores, positions):
        hits = [(int(ids[p]), float(s)) for s, p in zip(row_scores, row_positions) if p >= 0]
        hits.sort(key=lambda hit: (-hit[1], hit[0]))
        results.append(hits)
    return results


def save(index: faiss.Index, path: Path) -> None:
    """Write the index atomically (a temporary file renamed into place)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    faiss.write_index(index, str(tmp))
    os.replace(tmp, path)


def load(path: Path, spec: IndexSpec | None = None) -> faiss.Index:
    """Read an index; search-time parameters (nprobe, ef_search) come from `spec` when given."""
    index = faiss.read_index(str(path))
    if spec is not None:
        if spec.kind == "ivf":
            faiss.extract_index_ivf(index).nprobe = spec.nprobe
        elif spec.kind == "hnsw":
            index.hnsw.efSearch = spec.ef_search
    return index
