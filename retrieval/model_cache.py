"""A per-process cache of loaded models and indexes: each is loaded once per worker process and reused."""

import threading
from collections import OrderedDict

MODEL_CACHE_SIZE = 4


class ModelCache:
    """Models loaded once per process, keyed by their spec; the least recently used goes when full."""

    def __init__(self, size=MODEL_CACHE_SIZE):
        self.size = size
        self._items = OrderedDict()
        self._lock = threading.Lock()
        self.loads = 0

    def get(self, key, load):
        """The cached value for `key`, or `load()` stored under it."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            value = load()
            self.loads += 1
            self._items[key] = value
            while len(self._items) > self.size:
                self._items.popitem(last=False)
            return value

    def clear(self):
        with self._lock:
            self._items.clear()



loaded_models = ModelCache()
