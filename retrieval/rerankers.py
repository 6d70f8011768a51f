"""Cross-encoder re-ranking with any sequence-classification model, and ensembles of re-rankers (seed 002 A.1).

Worker-only module (imports torch). A cross-encoder reads (query, passage) together and gives
one relevance score: the logit of a one-label head, or the log-probability of the last
("relevant") label of a multi-label head. An ensemble normalises each model's scores over a
query's candidates (min-max by default) and averages them, as seed 002 averages its four
re-rankers' predictions.
"""

from dataclasses import dataclass

import numpy as np
import torch

from retrieval import runtime
from retrieval.fusion import normalise


@dataclass(frozen=True)
class RerankerSpec:
    """A cross-encoder: hub name or local folder, and the most tokens a (query, passage) pair may use."""

    model: str
    max_length: int = 512


class CrossEncoder:
    """A loaded cross-encoder: scores (query, passage) pairs."""

    def __init__(self, spec: RerankerSpec, *, device=None, dtype=None, batch_size=None):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.spec = spec
        self.device = runtime.choose_device(device)
        self.dtype = runtime.choose_dtype(self.device, dtype)
        local = runtime.offline()
        self.tokenizer = AutoTokenizer.from_pretrained(spec.model, local_files_only=local)
        self.model = AutoModelForSequenceClassification.from_pretrained(
            spec.model, dtype=self.dtype, local_files_only=local
        )
        self.model.to(self.device).eval()
        if self.tokenizer.pad_token is None and self.tokenizer.eos_token is not None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
            self.model.config.pad_token_id = self.tokenizer.pad_token_id
        limit = self.tokenizer.model_max_length if self.tokenizer.model_max_length < 10**6 else spec.max_length
        self.max_length = min(spec.max_length, limit)
        self.batch_size = batch_size or runtime.default_batch_size(self.device, cpu=16, cuda=128)

    def score(self, query: str, passages, batch_size: int | None = None) -> np.ndarray:
        """One score per passage for `query`, in the passages' order."""
        return self.score_pairs([(query, p) for p in passages], batch_size=batch_size)

    def score_pairs(self, pairs, batch_size: int | None = None) -> np.ndarray:
        """One score per (query, passage) pair, in input order; pairs are batched by length."""
        pairs = [(q or "", p or "") for q, p in pairs]
        out = np.zeros(len(pairs), dtype=np.float32)
        size = batch_size or self.batch_size
        order = sorted(range(len(pairs)), key=lambda i: -(len(pairs[i][0]) + len(pairs[i][1])))
        with torch.inference_mode():
            for start in range(0, len(order), size):
                rows = order[start : start + size]
                batch = self.tokenizer(
                    [pairs[i][0] for i in rows], [pairs[i][1] for i in rows], padding=True,
                    truncation="longest_first", max_length=self.max_length, return_tensors="pt",
                )
                logits = self.model(**runtime.to_device(dict(batch), self.device)).logits.float()
                if logits.shape[-1] == 1:
                    scores = logits[:, 0]
                else:
                    scores = torch.log_softmax(logits, dim=-1)[:, -1]
                out[rows] = scores.cpu().numpy()
        return out


def load_cross_encoder(spec: RerankerSpec, *, device=None, dtype=None) -> CrossEncoder:
    """The cross-encoder for `spec`, loaded once per process (worker) and reused."""
    resolved_device = runtime.choose_device(device)
    key = ("cross-encoder", spec, str(resolved_device), str(dtype))
    return runtime.models.get(key, lambda: CrossEncoder(spec, device=resolved_device, dtype=dtype))


def ensemble(per_model: list[list[tuple]], normalisation: str = "minmax") -> list[tuple]:
    """Average of each model's normalised scores for one query: (passage id, score), best first, ties by id.

    `per_model[m]` is model m's (passage id, score) list over the same candidates.
    """
    if not per_model:
        return []
    total: dict = {}
    for scores in per_model:
        for pid, value in normalise(scores, normalisation):
            total[pid] = total.get(pid, 0.0) + value
    count = len(per_model)
    return sorted(((pid, value / count) for pid, value in total.items()), key=lambda item: (-item[1], item[0]))


def rerank(query: str, candidates: list[tuple], models: list[CrossEncoder], normalisation: str = "minmax"):
    """Re-rank `candidates` [(passage id, text)] for `query` with an ensemble of cross-encoders.

    Returns (fused, per_model): fused is [(passage id, averaged normalised score)] best first;
    per_model[m] is [(passage id, raw score)] in the candidates' order.
    """
    ids = [pid for pid, _ in candidates]
    texts = [text for _, text in candidates]
    per_model = [list(zip(ids, (float(s) for s in model.score(query, texts)))) for model in models]
    return ensemble(per_model, normalisation), per_model
