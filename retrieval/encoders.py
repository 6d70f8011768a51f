"""Dense bi-encoders with torch + transformers: any Hugging Face encoder, by hub name or local folder.

Worker-only module (imports torch). Texts are tokenised once, sorted by token length so each
batch pads little, run under torch.inference_mode, pooled (mean, CLS or last token) and
L2-normalised, so inner product is cosine similarity. Optional query and passage prefixes
give E5-style models their "query: " / "passage: ". On CUDA the model runs in bf16 (fp16
where bf16 is missing) with pinned, non-blocking input copies; on the CPU in fp32.

On the CPU the batches run side by side, one per torch thread the process has (each batch on one
thread), rather than one at a time split across those threads: the same arithmetic, but no
thread waits at each operator's barrier or spins while Python runs the model's glue code. On
Cranfield's 1,400 abstracts on 2 cores that is a quarter less CPU time (1.34x), the same vectors
bit for bit (docs/benchmarks.md; benchmarks/bench_encoder_threads.py compares both in one run).
"""

import json
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from retrieval import runtime

POOLINGS = ("mean", "cls", "last")
KINDS = ("query", "passage")
MAX_LENGTH_CAP = 512


@dataclass(frozen=True)
class EncoderSpec:
    """What makes two encoders give the same vectors: the model, its pooling, prefixes and input length."""

    model: str
    pooling: str = "auto"  # mean | cls | last | auto (the sentence-transformers config of a local folder, else mean)
    query_prefix: str = ""
    passage_prefix: str = ""
    max_length: int | None = None  # None: the sentence-transformers max_seq_length, else the tokenizer's (≤ 512)

    def resolved(self) -> "EncoderSpec":
        """The spec with `auto` pooling and max_length filled in from the model folder (when it is local)."""
        pooling, max_length = self.pooling, self.max_length
        if pooling == "auto":
            pooling = sentence_transformers_pooling(self.model) or "mean"
        if pooling not in POOLINGS:
            raise ValueError(f"unknown pooling {pooling!r}; use one of {', '.join(POOLINGS)}")
        if max_length is None:
            max_length = sentence_transformers_max_length(self.model)
        return replace(self, pooling=pooling, max_length=max_length)

    def as_dict(self) -> dict:
        return asdict(self)


def sentence_transformers_pooling(model: str) -> str | None:
    """The pooling a local sentence-transformers folder declares (1_Pooling/config.json), if any."""
    folder = Path(model)
    config = _read_json(folder / "modules.json")
    paths = [m.get("path", "") for m in config or [] if m.get("type", "").endswith("Pooling")] or ["1_Pooling"]
    pooling = _read_json(folder / paths[0] / "config.json")
    if not pooling:
        return None
    if pooling.get("pooling_mode_cls_token"):
        return "cls"
    if pooling.get("pooling_mode_lasttoken"):
        return "last"
    if pooling.get("pooling_mode_mean_tokens"):
        return "mean"
    return None


def sentence_transformers_max_length(model: str) -> int | None:
    """max_seq_length of a local sentence-transformers folder, if it says."""
    config = _read_json(Path(model) / "sentence_bert_config.json")
    return int(config["max_seq_length"]) if config and config.get("max_seq_length") else None


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def pool(hidden: torch.Tensor, mask: torch.Tensor, method: str) -> torch.Tensor:
    """One vector per sequence from the last hidden states: mean over real tokens, the first token, or the last real one."""
    if method == "cls":
        return hidden[:, 0]
    if method == "last":
        # the last position whose mask is 1: works for right and left padding alike
        last = mask.shape[1] - 1 - mask.flip(1).argmax(dim=1)
        return hidden[torch.arange(hidden.shape[0], device=hidden.device), last]
    if method == "mean":
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
    raise ValueError(f"unknown pooling {method!r}")


class Encoder:
    """A loaded bi-encoder: texts in, one L2-normalised float32 vector each out."""

    def __init__(self, spec: EncoderSpec, *, device=None, dtype=None, batch_size=None, workers=None):
        from transformers import AutoModel, AutoTokenizer

        self.spec = spec.resolved()
        self.device = runtime.choose_device(device)
        self.dtype = runtime.choose_dtype(self.device, dtype)
        local = runtime.offline()
        self.tokenizer = AutoTokenizer.from_pretrained(self.spec.model, local_files_only=local)
        self.model = AutoModel.from_pretrained(self.spec.model, dtype=self.dtype, local_files_only=local)
        self.model.to(self.device).eval()
        limit = self.tokenizer.model_max_length if self.tokenizer.model_max_length < 10**6 else MAX_LENGTH_CAP
        self.max_length = min(self.spec.max_length or limit, limit, MAX_LENGTH_CAP)
        self.batch_size = batch_size or runtime.default_batch_size(self.device)
        self.workers = workers  # batches run at once on the CPU; None: torch's thread count when encoding
        self.dimension = int(self.model.config.hidden_size)
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        self.left_padding = self.tokenizer.padding_side == "left"

    def encode(self, texts, kind: str = "passage", batch_size: int | None = None, progress=None) -> np.ndarray:
        """Vectors of `texts` (rows in input order); `kind` picks the query or passage prefix."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}")
        prefix = self.spec.query_prefix if kind == "query" else self.spec.passage_prefix
        texts = [prefix + (text or "") for text in texts]
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        size = batch_size or self.batch_size
        tokens = self.tokenizer(texts, truncation=True, max_length=self.max_length, padding=False)
        ids = tokens["input_ids"]
        types = tokens.get("token_type_ids")
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))  # longest first: the first batch fails fast
        batches = [order[start : start + size] for start in range(0, len(order), size)]
        with self._batch_runner(len(batches)) as run:
            # results come back in batch order, here in the calling thread (progress may write to the database)
            for rows, vectors in zip(batches, run(lambda rows: self._forward(rows, ids, types), batches)):
                out[rows] = vectors
                if progress:
                    progress(len(rows))
        return out

    def _forward(self, rows, ids, types) -> np.ndarray:
        """The normalised vectors of one batch (inference mode is per thread: entered here, in the thread that runs it)."""
        with torch.inference_mode():
            batch = runtime.to_device(self._pad(rows, ids, types), self.device)
            hidden = self.model(**batch).last_hidden_state
            vectors = pool(hidden.float(), batch["attention_mask"], self.spec.pooling)
            return F.normalize(vectors, p=2, dim=-1).cpu().numpy()

    def batch_workers(self, batches: int) -> int:
        """How many batches run at once: one on a GPU; on the CPU `workers`, else torch's thread count, at most `batches`."""
        if self.device.type != "cpu":
            return 1
        return max(1, min(self.workers or torch.get_num_threads(), batches))

    @contextmanager
    def _batch_runner(self, batches: int):
        """A map over batches: in this thread, or on a pool of threads with one torch thread each (restored after)."""
        workers = self.batch_workers(batches)
        if workers == 1:
            yield map
            return
        with runtime.one_torch_thread():
            executor = ThreadPoolExecutor(workers, thread_name_prefix="encode")
            try:
                yield executor.map
            except BaseException:
                executor.shutdown(cancel_futures=True)  # a failed batch or progress call: run no more batches
                raise
            finally:
                executor.shutdown()

    def encode_queries(self, texts, **kwargs) -> np.ndarray:
        return self.encode(texts, kind="query", **kwargs)

    def encode_passages(self, texts, **kwargs) -> np.ndarray:
        return self.encode(texts, kind="passage", **kwargs)

    def _pad(self, rows, ids, types) -> dict:
        width = max(len(ids[i]) for i in rows)
        input_ids = np.full((len(rows), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        type_ids = np.zeros((len(rows), width), dtype=np.int64) if types is not None else None
        for row, i in enumerate(rows):
            n = len(ids[i])
            span = slice(width - n, width) if self.left_padding else slice(0, n)
            input_ids[row, span] = ids[i]
            mask[row, span] = 1
            if type_ids is not None:
                type_ids[row, span] = types[i]
        batch = {"input_ids": torch.from_numpy(input_ids), "attention_mask": torch.from_numpy(mask)}
        if type_ids is not None:
            batch["token_type_ids"] = torch.from_numpy(type_ids)
        return batch


def load_encoder(spec: EncoderSpec, *, device=None, dtype=None) -> Encoder:
    """The encoder for `spec`, loaded once per process (worker) and reused."""
    resolved_device = runtime.choose_device(device)
    key = ("encoder", spec, str(resolved_device), str(dtype))
    return runtime.models.get(key, lambda: Encoder(spec, device=resolved_device, dtype=dtype))
