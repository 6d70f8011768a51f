"""Where models run: device and precision choice, batches moved to the device, and the per-process model cache.

Worker-only module: it imports torch. The web process never imports it (nor anything that does).

Precision: on CUDA, bf16 where the GPU supports it, else fp16; fp32 on the CPU (CPU half
precision is slow and only worth it to test the half-precision path). Inputs go to a CUDA
device through pinned memory with non-blocking copies.
"""

import os

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

