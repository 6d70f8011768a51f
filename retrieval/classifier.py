"""Text-pair classifiers fine-tuned on labelled (query, passage) pairs: the auto-annotator of seed 000 step 5.

Worker-only module (imports torch). Pairs and 0/1 labels in, a model that gives each pair the probability
of "relevant" out; it knows nothing of topics or people. Two kinds of base model:

- a bare encoder (a bi-encoder such as the bundled all-MiniLM-L6-v2, BERT, E5...): the pair is read as one
  sequence ([CLS] query [SEP] passage [SEP]), pooled as the model pools (mean, CLS or last token, from its
  sentence-transformers config), and a new linear head gives one logit;
- a cross-encoder (a sequence-classification model): its own head, kept when it has one label, else replaced by
  a one-label head.

Training: binary cross-entropy on the logit (positives weighted by the negatives/positives ratio, at most 10,
so a pool with few relevant pairs still teaches the positives), AdamW with linear warm-up and decay, a fixed
seed, batches of similar length. On CUDA the forward pass runs under bf16 autocast. A saved classifier is a
folder: the model, its tokenizer and `annotator.json`; its checksum is the SHA-256 of every file in it.
"""

import hashlib
import json
import math
import random
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from retrieval import runtime
from retrieval.encoders import pool, sentence_transformers_pooling

MAX_POS_WEIGHT = 10.0
CONFIG = "annotator.json"


@dataclass(frozen=True)
class ClassifierSpec:
    """How to fine-tune: the base model and the training settings (all of them are stored with the annotator)."""

    model: str
    max_length: int = 256
    epochs: int = 1
    batch_size: int = 16
    learning_rate: float = 3e-5
    warmup: float = 0.1
    weight_decay: float = 0.01
    seed: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


class EncoderHead(nn.Module):
    """A bare encoder read as a cross-encoder: the pair's pooled states and one new logit."""

    def __init__(self, encoder, pooling: str, dropout: float = 0.1):
        super().__init__()
        self.encoder, self.pooling = encoder, pooling
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(encoder.config.hidden_size, 1)

    def forward(self, **batch):
        hidden = self.encoder(**batch).last_hidden_state
        pooled = pool(hidden, batch["attention_mask"], self.pooling)
        return self.head(self.dropout(pooled)).squeeze(-1)


class TextPairClassifier:
    """A fine-tuned (or loaded) classifier: pairs in, probabilities of the positive class out."""

    def __init__(self, model, tokenizer, *, kind: str, pooling: str | None, max_length: int, device):
        self.model, self.tokenizer = model, tokenizer
        self.kind, self.pooling, self.max_length, self.device = kind, pooling, max_length, device

    # -- building -------------------------------------------------------------------------------------------

    @classmethod
    def from_base(cls, spec: ClassifierSpec, *, device=None) -> "TextPairClassifier":
        """A new classifier on the base model `spec.model` (a hub name or a folder), its head not trained yet."""
        from transformers import AutoConfig, AutoModel, AutoModelForSequenceClassification, AutoTokenizer

        device = runtime.choose_device(device)
        local = runtime.offline()
        tokenizer = AutoTokenizer.from_pretrained(spec.model, local_files_only=local)
        config = AutoConfig.from_pretrained(spec.model, local_files_only=local)
        torch.manual_seed(spec.seed)
        if any(a.endswith("ForSequenceClassification") for a in (config.architectures or [])):
            model = AutoModelForSequenceClassification.from_pretrained(
                spec.model, num_labels=1, ignore_mismatched_sizes=True, local_files_only=local,
            )
            kind, pooling = "cross-encoder", None
        else:
            pooling = sentence_transformers_pooling(spec.model) or "mean"
            model = EncoderHead(AutoModel.from_pretrained(spec.model, local_files_only=local), pooling)
            kind = "encoder"
        if tokenizer.pad_token is None and tokenizer.eos_token is not None:
            tokenizer.pad_token = tokenizer.eos_token
        limit = tokenizer.model_max_length if tokenizer.model_max_length < 10**6 else spec.max_length
        return cls(model.to(device), tokenizer, kind=kind, pooling=pooling, max_length=min(spec.max_length, limit),
                   device=device)

    @classmethod
    def load(cls, folder, *, device=None) -> "TextPairClassifier":
        """A classifier saved by save()."""
        from transformers import AutoConfig, AutoModel, AutoModelForSequenceClassification, AutoTokenizer

        folder = Path(folder)
        device = runtime.choose_device(device)
        meta = json.loads((folder / CONFIG).read_text(encoding="utf-8"))
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        if meta["kind"] == "cross-encoder":
            model = AutoModelForSequenceClassification.from_pretrained(folder, local_files_only=True)
        else:
            config = AutoConfig.from_pretrained(folder / "encoder", local_files_only=True)
            model = EncoderHead(AutoModel.from_pretrained(folder / "encoder", config=config, local_files_only=True),
                                meta["pooling"])
            model.head.load_state_dict(torch.load(folder / "head.pt", map_location="cpu", weights_only=True))
        return cls(model.to(device).eval(), tokenizer, kind=meta["kind"], pooling=meta.get("pooling"),
                   max_length=meta["max_length"], device=device)

    # -- training and scoring -------------------------------------------------------------------------------

    def fit(self, pairs, labels, spec: ClassifierSpec, progress=None) -> "TextPairClassifier":
        """Fine-tune on `pairs` [(query, passage)] and `labels` (0/1); `progress(n)` after each batch of n pairs."""
        from transformers import get_linear_schedule_with_warmup

        labels = np.asarray(labels, dtype=np.float32)
        positives = float(labels.sum())
        pos_weight = min(MAX_POS_WEIGHT, (len(labels) - positives) / positives) if positives else 1.0
        loss_fn = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(max(1.0, pos_weight), device=self.device))
        decay = [p for n, p in self.model.named_parameters() if not any(k in n for k in ("bias", "LayerNorm", "norm"))]
        rest = [p for n, p in self.model.named_parameters() if any(k in n for k in ("bias", "LayerNorm", "norm"))]
        optimiser = torch.optim.AdamW(
            [{"params": decay, "weight_decay": spec.weight_decay}, {"params": rest, "weight_decay": 0.0}],
            lr=spec.learning_rate,
        )
        steps = spec.epochs * math.ceil(len(pairs) / spec.batch_size)
        schedule = get_linear_schedule_with_warmup(optimiser, int(spec.warmup * steps), max(1, steps))
        rng = random.Random(spec.seed)
        torch.manual_seed(spec.seed)
        self.model.train()
        for _ in range(spec.epochs):
            for rows in _batches(pairs, spec.batch_size, rng):
                batch = self._tokenise([pairs[i] for i in rows])
                target = torch.from_numpy(labels[rows]).to(self.device)
                with self._autocast():
                    logits = self._logits(batch)
                loss = loss_fn(logits.float(), target)
                loss.backward()
                nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                optimiser.step()
                schedule.step()
                optimiser.zero_grad(set_to_none=True)
                if progress:
                    progress(len(rows))
        self.model.eval()
        return self

    def predict(self, pairs, batch_size: int = 64, progress=None) -> np.ndarray:
        """The probability of the positive class for each pair, in input order."""
        out = np.zeros(len(pairs), dtype=np.float32)
        order = sorted(range(len(pairs)), key=lambda i: -(len(pairs[i][0] or "") + len(pairs[i][1] or "")))
        self.model.eval()
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                rows = order[start : start + batch_size]
                with self._autocast():
                    logits = self._logits(self._tokenise([pairs[i] for i in rows]))
                out[rows] = torch.sigmoid(logits.float()).cpu().numpy()
                if progress:
                    progress(len(rows))
        return out

    def save(self, folder) -> str:
        """Write the classifier to `folder` (created; replaced files); returns the SHA-256 of its files."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        if self.kind == "cross-encoder":
            self.model.save_pretrained(folder)
        else:
            self.model.encoder.save_pretrained(folder / "encoder")
            torch.save(self.model.head.state_dict(), folder / "head.pt")
        self.tokenizer.save_pretrained(folder)
        meta = {"kind": self.kind, "pooling": self.pooling, "max_length": self.max_length}
        (folder / CONFIG).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
        return checksum(folder)

    # -- internals ------------------------------------------------------------------------------------------

    def _tokenise(self, pairs) -> dict:
        batch = self.tokenizer(
            [q or "" for q, _ in pairs], [p or "" for _, p in pairs], padding=True, truncation="longest_first",
            max_length=self.max_length, return_tensors="pt",
        )
        return runtime.to_device(dict(batch), self.device)

    def _logits(self, batch):
        if self.kind == "cross-encoder":
            return self.model(**batch).logits[:, 0]
        return self.model(**batch)

    def _autocast(self):
        if self.device.type == "cuda":
            return torch.autocast("cuda", dtype=runtime.choose_dtype(self.device))
        return torch.autocast("cpu", enabled=False)


def _batches(pairs, size, rng):
    """Batches of row numbers: shuffled, then grouped by length within windows of 20 batches (little padding)."""
    rows = list(range(len(pairs)))
    rng.shuffle(rows)
    window = size * 20
    batches = []
    for start in range(0, len(rows), window):
        chunk = sorted(rows[start : start + window], key=lambda i: len(pairs[i][0] or "") + len(pairs[i][1] or ""))
        batches += [chunk[i : i + size] for i in range(0, len(chunk), size)]
    rng.shuffle(batches)
    return batches


def checksum(folder) -> str:
    """SHA-256 over the folder's files (relative names and contents, in name order)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def versions() -> str:
    """The library versions a classifier was trained with (its model_version)."""
    import transformers

    return f"transformers {transformers.__version__}, torch {torch.__version__}"
