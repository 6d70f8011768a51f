"""BM25 with bm25s: English stemming (Snowball, via PyStemmer) and stop words on by default.

Worker-side module (imports bm25s and numpy, no torch). An index is a folder holding bm25s's
arrays, the passage ids of its rows and the settings it was built with, so a query is always
tokenised the way the passages were (seed 004 §7: BM25 without a stemmer cost a TREC team dearly).
"""

import json
import logging
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

SETTINGS_FILE = "pooljudge-bm25.json"
IDS_FILE = "passage-ids.npy"


@dataclass(frozen=True)
class BM25Spec:
    """BM25 parameters and text processing. `stemmer` is a Snowball language or "" for none."""

    k1: float = 1.2
    b: float = 0.75
    method: str = "lucene"
    stemmer: str = "english"
    stopwords: str = "en"  # a bm25s stop-word language, or "" for none

    def as_dict(self) -> dict:
        return asdict(self)


class BM25Index:
    """A BM25 index over passages; search gives (passage id, score) pairs with score > 0, best first."""

    def __init__(self, spec: BM25Spec, retriever, ids: np.ndarray):
        self.spec, self.retriever, self.ids = spec, retriever, np.asarray(ids, dtype=np.int64)
        self._stemmer = _stemmer(spec.stemmer)

    @classmethod
    def build(cls, ids, texts, spec: BM25Spec = BM25Spec()) -> "BM25Index":
        """Index `texts`; `ids[i]` is the passage id of `texts[i]`."""
        import bm25s

        ids = np.asarray(list(ids), dtype=np.int64)
        texts = list(texts)
        if len(ids) != len(texts):
            raise ValueError("ids and texts differ in length")
        tokens = bm25s.tokenize(
            texts, stopwords=spec.stopwords or None, stemmer=_stemmer(spec.stemmer), show_progress=False
        )
        retriever = bm25s.BM25(k1=spec.k1, b=spec.b, method=spec.method)
        with _quiet():
            retriever.index(tokens, show_progress=False)
        return cls(spec, retriever, ids)

    def search(self, queries, k: int = 100) -> list[list[tuple[int, float]]]:
        """The top `k` passages of each query text, best first, ties by passage id; passages matching no term are left out."""
        import bm25s

        queries = list(queries)
        k = min(k, len(self.ids))
        if not queries or k <= 0:
            return [[] for _ in queries]
        tokens = bm25s.tokenize(
            queries, stopwords=self.spec.stopwords or None, stemmer=self._stemmer, return_ids=False,
            show_progress=False,
        )
        with _quiet():
            rows, scores = self.retriever.retrieve(tokens, k=k, show_progress=False, n_threads=0)
        results = []
        for row, row_scores in zip(rows, scores):
            hits = [(int(self.ids[r]), float(s)) for r, s in zip(row, row_scores) if s > 0]
            hits.sort(key=lambda hit: (-hit[1], hit[0]))
            results.append(hits)
        return results

    def scores(self, query: str, ids) -> np.ndarray:
        """BM25 of one query text against the passages `ids` (0 for a passage matching no term, or not indexed)."""
        import bm25s

        if not hasattr(self, "_rows"):
            self._rows = {int(pid): row for row, pid in enumerate(self.ids)}
        ids = [int(pid) for pid in ids]
        tokens = bm25s.tokenize([query or ""], stopwords=self.spec.stopwords or None, stemmer=self._stemmer,
                                return_ids=False, show_progress=False)[0]
        known = [t for t in tokens if t in self.retriever.vocab_dict]
        if not known or not ids:
            return np.zeros(len(ids))
        with _quiet():
            everything = self.retriever.get_scores(known)
        return np.array([float(everything[self._rows[pid]]) if pid in self._rows else 0.0 for pid in ids])

    def save(self, folder: Path) -> None:
        """Write the index to `folder` (replaced whole: written beside it, then renamed into place)."""
        folder = Path(folder)
        tmp = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        with _quiet():
            self.retriever.save(str(tmp), show_progress=False)
        np.save(tmp / IDS_FILE, self.ids)
        (tmp / SETTINGS_FILE).write_text(json.dumps(self.spec.as_dict()), encoding="utf-8")
        old = folder.with_name(f".{folder.name}.{os.getpid()}.old")
        if folder.exists():
            os.replace(folder, old)
        os.replace(tmp, folder)
        shutil.rmtree(old, ignore_errors=True)

    @classmethod
    def load(cls, folder: Path) -> "BM25Index":
        import bm25s

        folder = Path(folder)
        spec = BM25Spec(**json.loads((folder / SETTINGS_FILE).read_text(encoding="utf-8")))
        with _quiet():
            retriever = bm25s.BM25.load(str(folder), load_corpus=False, show_progress=False)
        return cls(spec, retriever, np.load(folder / IDS_FILE))


def _stemmer(language: str):
    if not language:
        return None
    import Stemmer

    return Stemmer.Stemmer(language).stemWords


class _quiet:
    """Silence bm25s's info logging while it indexes and loads."""

    def __enter__(self):
        self.logger = logging.getLogger("bm25s")
        self.level = self.logger.level
        self.logger.setLevel(logging.WARNING)

    def __exit__(self, *exc):
        self.logger.setLevel(self.level)
