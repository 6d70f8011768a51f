"""Where models run: device and precision choice, batches moved to the device, and the per-process model cache.

Worker-only module: it imports torch. The web process never imports it (nor anything that does).

Precision: on CUDA, bf16 where the GPU supports it, else fp16; fp32 on the CPU (CPU half
precision is slow and only worth it to test the half-precision path). Inputs go to a CUDA
device through pinned memory with non-blocking copies.
"""

import os
import threading
from contextlib import contextmanager

import torch

from retrieval.model_cache import loaded_models as models  # noqa: F401  (the per-process model cache, used through this module)

DTYPES = {"fp32": torch.float32, "float32": torch.float32, "fp16": torch.float16, "float16": torch.float16,
          "bf16": torch.bfloat16, "bfloat16": torch.bfloat16}


def choose_device(device: str | None = None) -> torch.device:
    """The device asked for, else CUDA when there is one, else the CPU."""
    if device:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def choose_dtype(device: torch.device, dtype: str | torch.dtype | None = None, *, bf16_supported=None) -> torch.dtype:
    """The precision asked for, else bf16 (or fp16 where bf16 is missing) on CUDA, fp32 elsewhere."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype:
        try:
            return DTYPES[dtype.lower()]
        except KeyError:
            raise ValueError(f"unknown precision {dtype!r}; use fp32, fp16 or bf16") from None
    if device.type != "cuda":
        return torch.float32
    if bf16_supported is None:
        bf16_supported = torch.cuda.is_bf16_supported()
    return torch.bfloat16 if bf16_supported else torch.float16


def default_batch_size(device: torch.device, cpu: int = 32, cuda: int = 256) -> int:
    """Large batches on a GPU, small ones on the CPU."""
    return cuda if device.type == "cuda" else cpu


def to_device(batch: dict, device: torch.device) -> dict:
    """Tensors of a tokenizer batch moved to `device`: pinned and non-blocking for CUDA, untouched for the CPU."""
    if device.type == "cpu":
        return batch
    if device.type == "cuda":
        return {key: value.pin_memory().to(device, non_blocking=True) for key, value in batch.items()}
    return {key: value.to(device) for key, value in batch.items()}


def offline() -> bool:
    """True when the Hugging Face hub must not be contacted (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE set)."""
    return any(os.environ.get(name, "").lower() in ("1", "true", "yes") for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


_threads_lock = threading.Lock()
_threads_held = 0  # callers inside one_torch_thread()
_threads_before = 1


@contextmanager
def one_torch_thread():
    """torch at one intra-op thread while inside (process-wide: threads started inside take it up when they first run
    an operator); yields the count before. Callers may overlap (the count comes back when the last one leaves)."""
    global _threads_held, _threads_before
    with _threads_lock:
        if not _threads_held:
            _threads_before = torch.get_num_threads()
            torch.set_num_threads(1)
        _threads_held += 1
        before = _threads_before
    try:
        yield before
    finally:
        with _threads_lock:
            _threads_held -= 1
            if not _threads_held:
                torch.set_num_threads(_threads_before)
