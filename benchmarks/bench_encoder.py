"""Our encoder vs sentence-transformers' encode: same model, same texts, same batch size, same device.

    .venv/bin/python benchmarks/bench_encoder.py [--texts 512] [--batch-size 32] [--model PATH] [--device cpu|cuda]

Prints passages/s for both and the ratio ours / sentence-transformers (aim ≥ 1.0), and checks that
the vectors agree (cosine ≥ 0.999 in fp32). On CUDA it runs ours in its default precision (bf16, or
fp16 where bf16 is missing), sentence-transformers in fp32 and again in fp16, and reports the
achieved TFLOP/s against the GPU's peak: FLOPs per passage ≈ 2 · parameters · tokens (the
attention matrices add 4 · layers · tokens² · hidden).
"""

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# bf16 dense tensor-core peaks (TFLOP/s, no sparsity) of GPUs we may be lent
PEAK_BF16 = {"H100": 989.0, "H200": 989.0, "A100": 312.0, "L4": 121.0, "A10": 125.0, "T4": 65.0}


def book_passages(count):
    """`count` passages of about 3 sentences from the four sample books (paragraphs, long ones split)."""
    from retrieval.books import paragraphs, strip_gutenberg

    texts = []
    for path in sorted((ROOT / "data" / "books").glob("*.txt")):
        for paragraph in paragraphs(strip_gutenberg(path.read_text(encoding="utf-8")).text):
            words = paragraph.split()
            for start in range(0, len(words), 60):
                texts.append(" ".join(words[start : start + 60]))
    step = max(1, len(texts) // count)
    return texts[::step][:count]


def best_of(repeats, fn):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main():
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    from retrieval.encoders import Encoder, EncoderSpec
    from retrieval.specs import BUNDLED_ENCODER, model_label, resolve_model

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=512)
    parser.add_argument("--batch-size", type=int)
    parser.add_argument("--model", default=resolve_model(BUNDLED_ENCODER))
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    batch = args.batch_size or (256 if args.device == "cuda" else 32)
    texts = book_passages(args.texts)
    print(f"{len(texts)} book passages, model {model_label(args.model)}, device {args.device}, batch size {batch}, "
          f"torch threads {torch.get_num_threads()}")

    ours = Encoder(EncoderSpec(args.model), device=args.device, batch_size=batch)
    st = SentenceTransformer(args.model, device=args.device)
    ours.encode(texts[:batch])  # warm up both
    st.encode(texts[:batch], batch_size=batch)

    our_time, our_vectors = best_of(args.repeats, lambda: ours.encode(texts))
    st_time, st_vectors = best_of(args.repeats, lambda: st.encode(texts, batch_size=batch, normalize_embeddings=True))
    agreement = float(np.min(np.sum(our_vectors * st_vectors, axis=1)))
    print(f"ours ({str(ours.dtype).removeprefix('torch.')}): {len(texts) / our_time:8.1f} passages/s")
    print(f"sentence-transformers (fp32): {len(texts) / st_time:8.1f} passages/s")
    print(f"min cosine(ours, sentence-transformers) = {agreement:.5f}")
    print(f"RATIO ours / sentence-transformers = {st_time / our_time:.2f}")

    if args.device == "cuda":
        st.half()
        st.encode(texts[:batch], batch_size=batch)
        half_time, _ = best_of(args.repeats, lambda: st.encode(texts, batch_size=batch, normalize_embeddings=True))
        print(f"sentence-transformers (fp16): {len(texts) / half_time:8.1f} passages/s; "
              f"RATIO ours / sentence-transformers fp16 = {half_time / our_time:.2f}")
        tokens = ours.tokenizer(texts, truncation=True, max_length=ours.max_length)["input_ids"]
        config = ours.model.config
        params = sum(p.numel() for name, p in ours.model.named_parameters() if "embeddings" not in name)
        flops = sum(2 * params * len(t) + 4 * config.num_hidden_layers * len(t) ** 2 * config.hidden_size for t in tokens)
        achieved = flops / our_time / 1e12
        name = torch.cuda.get_device_name()
        peak = next((value for key, value in PEAK_BF16.items() if key in name), None)
        share = f" = {100 * achieved / peak:.1f}% of the {peak:.0f} TFLOP/s bf16 peak" if peak else ""
        print(f"{name}: {achieved:.1f} TFLOP/s achieved{share} "
              f"({sum(map(len, tokens)) / len(tokens):.0f} tokens a passage)")


if __name__ == "__main__":
    main()
