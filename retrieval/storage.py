"""Where indexes live on disk: RETRIEVAL_INDEX_DIR (default BASE_DIR/var/indexes), shared by every worker.

Workers on several machines must see the same folder (a network filesystem): shards written by
one worker are assembled by another. Files are written beside their final name and renamed into
place, so a reader never sees half a file and a rerun replaces rather than duplicates.
"""

import hashlib
import json
import os
from pathlib import Path

from django.conf import settings


def index_root() -> Path:
    """The folder holding every index (created on first use).

    The setting RETRIEVAL_INDEX_DIR, else the environment variable of that name, else BASE_DIR/var/indexes.
    """
    root = (
        getattr(settings, "RETRIEVAL_INDEX_DIR", None)
        or os.environ.get("RETRIEVAL_INDEX_DIR")
        or Path(settings.BASE_DIR) / "var" / "indexes"
    )
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    return root


def config_key(*parts) -> str:
    """A stable hash of JSON-serialisable parts (dict key order does not matter)."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def save_array(path: Path, array) -> None:
    """np.save, atomically."""
    import numpy as np

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as handle:
        np.save(handle, array)
    os.replace(tmp, path)


def write_json(path: Path, data) -> None:
    """Write JSON, atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)
