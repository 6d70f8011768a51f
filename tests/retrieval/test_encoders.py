"""Dense bi-encoders: pooling, prefixes, normalised vectors in input order, precision choice, one load per process."""

import numpy as np
import pytest
import torch

from retrieval import runtime
from retrieval.encoders import Encoder, EncoderSpec, load_encoder, pool
from tests.retrieval.tiny_models import cranfield_documents

TEXTS = [" ".join(text.split()[: 12 * (i + 1)]) for i, (_, text) in enumerate(cranfield_documents(6))] + ["a short one", ""]


@pytest.fixture(scope="module")
def minilm_fp32(minilm):
    return Encoder(EncoderSpec(minilm), device="cpu", dtype="fp32", batch_size=3)


def model_card_vectors(path, texts):
    """all-MiniLM-L6-v2's model-card recipe, one text at a time: mean of the token states, then L2-normalised."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer, model = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path)
    rows = []
    with torch.no_grad():
        for text in texts:
            batch = tokenizer([text], truncation=True, max_length=256, return_tensors="pt")
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).float()
            rows.append(torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1)[0].numpy())
    return np.stack(rows)


def test_minilm_vectors_match_the_model_card_recipe(minilm, minilm_fp32):
    encoder = minilm_fp32
    assert encoder.spec.pooling == "mean" and encoder.max_length == 256  # read from the sentence-transformers config
    ours = encoder.encode_passages(TEXTS)
    reference = model_card_vectors(minilm, TEXTS)
    assert ours.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    np.testing.assert_allclose(ours, reference, atol=2e-5)


def test_vectors_are_normalised_and_in_input_order_whatever_the_batching(tiny_encoder):
    encoder = Encoder(EncoderSpec(tiny_encoder), device="cpu")
    batched = encoder.encode(TEXTS, batch_size=5)
    one_by_one = np.stack([encoder.encode([text])[0] for text in TEXTS])
    np.testing.assert_allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)


@pytest.mark.parametrize("method", ["mean", "cls", "last"])
def test_each_pooling_matches_a_hand_computation(tiny_encoder, method):
    encoder = Encoder(EncoderSpec(tiny_encoder, pooling=method), device="cpu")
    text = "shear flow past a flat plate"
    batch = encoder.tokenizer([text], return_tensors="pt")
    with torch.no_grad():
        hidden = encoder.model(**batch).last_hidden_state[0]
    expected = {"mean": hidden.mean(0), "cls": hidden[0], "last": hidden[-1]}[method]
    expected = torch.nn.functional.normalize(expected, dim=0).numpy()
    np.testing.assert_allclose(encoder.encode([text, "boundary layer"])[0], expected, atol=1e-5)


def test_last_token_pooling_finds_the_last_real_token_with_left_or_right_padding():
    hidden = torch.arange(2 * 4 * 1, dtype=torch.float32).reshape(2, 4, 1)
    right = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1]])
    left = torch.tensor([[0, 0, 1, 1], [1, 1, 1, 1]])
    assert pool(hidden, right, "last")[:, 0].tolist() == [1.0, 7.0]
    assert pool(hidden, left, "last")[:, 0].tolist() == [3.0, 7.0]
    assert pool(hidden, right, "mean")[:, 0].tolist() == [0.5, 5.5]


def test_query_and_passage_prefixes_are_prepended_e5_style(tiny_encoder):
    encoder = Encoder(EncoderSpec(tiny_encoder, query_prefix="query: ", passage_prefix="passage: "), device="cpu")
    plain = Encoder(EncoderSpec(tiny_encoder), device="cpu")
    np.testing.assert_allclose(encoder.encode_queries(["heat transfer"]), plain.encode(["query: heat transfer"]), atol=1e-6)
    np.testing.assert_allclose(
        encoder.encode_passages(["heat transfer"]), plain.encode(["passage: heat transfer"]), atol=1e-6
    )


def test_half_precision_gives_the_same_ranking_as_fp32(minilm, minilm_fp32):
    """The CUDA path runs in bf16; run that precision on the CPU and compare with the fp32 vectors."""
    fp32 = minilm_fp32.encode(TEXTS[:8])
    bf16 = Encoder(EncoderSpec(minilm), device="cpu", dtype="bf16").encode(TEXTS[:8])
    assert bf16.dtype == np.float32
    assert np.min(np.sum(fp32 * bf16, axis=1)) > 0.99
    query = fp32[0]
    assert np.argsort(-(fp32 @ query))[:3].tolist() == np.argsort(-(bf16 @ query))[:3].tolist()


def test_precision_is_bf16_or_fp16_on_cuda_and_fp32_on_the_cpu():
    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    assert runtime.choose_dtype(cuda, bf16_supported=True) == torch.bfloat16
    assert runtime.choose_dtype(cuda, bf16_supported=False) == torch.float16
    assert runtime.choose_dtype(cpu) == torch.float32
    assert runtime.choose_dtype(cpu, "fp16") == torch.float16
    assert runtime.default_batch_size(cuda) > runtime.default_batch_size(cpu)
    with pytest.raises(ValueError, match="unknown precision"):
        runtime.choose_dtype(cpu, "int4")


def test_cuda_batches_go_through_pinned_memory_without_blocking():
    class Recorder:
        def __init__(self):
            self.calls = []

        def pin_memory(self):
            self.calls.append("pin")
            return self

        def to(self, device, non_blocking=False):
            self.calls.append(("to", str(device), non_blocking))
            return self

    tensor = Recorder()
    runtime.to_device({"input_ids": tensor}, torch.device("cuda"))
    assert tensor.calls == ["pin", ("to", "cuda", True)]
    batch = {"input_ids": torch.ones(1)}
    assert runtime.to_device(batch, torch.device("cpu")) is batch


def test_a_process_loads_each_encoder_once(tiny_encoder):
    runtime.models.clear()
    first = load_encoder(EncoderSpec(tiny_encoder), device="cpu")
    loads = runtime.models.loads
    assert load_encoder(EncoderSpec(tiny_encoder), device="cpu") is first
    assert runtime.models.loads == loads
    assert load_encoder(EncoderSpec(tiny_encoder, pooling="cls"), device="cpu") is not first


@pytest.fixture
def two_torch_threads():
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(threads)


def test_cpu_batches_run_side_by_side_with_the_same_vectors_and_torch_threads_restored(minilm_fp32, two_torch_threads):
    """Batches on a pool of threads (one torch thread each) give the one-at-a-time vectors, rows in input order;
    progress is called in the calling thread, batch by batch; torch's thread count is back after."""
    import threading

    encoder = Encoder(EncoderSpec(minilm_fp32.spec.model), device="cpu", batch_size=3)
    assert encoder.batch_workers(10) == 2 and encoder.batch_workers(1) == 1  # torch's thread count by default
    in_worker = []
    original = encoder._forward

    def forward(rows, ids, types):
        in_worker.append((threading.current_thread().name, torch.get_num_threads()))
        return original(rows, ids, types)

    encoder._forward = forward
    calls = []
    side_by_side = encoder.encode(TEXTS, progress=lambda n: calls.append((threading.current_thread().name, n)))
    assert torch.get_num_threads() == 2
    assert {name.startswith("encode") for name, _ in in_worker} == {True}
    assert {threads for _, threads in in_worker} == {1}
    assert [name for name, _ in calls] == [threading.current_thread().name] * 3 and sum(n for _, n in calls) == 8
    encoder.workers = 1
    one_at_a_time = encoder.encode(TEXTS)
    np.testing.assert_allclose(side_by_side, one_at_a_time, atol=1e-6)
    np.testing.assert_allclose(side_by_side, minilm_fp32.encode(TEXTS), atol=1e-6)


def test_a_failed_progress_call_stops_the_side_by_side_batches_and_restores_torch_threads(tiny_encoder, two_torch_threads):
    encoder = Encoder(EncoderSpec(tiny_encoder), device="cpu", batch_size=1, workers=2)
    ran = []
    original = encoder._forward
    encoder._forward = lambda rows, ids, types: ran.append(rows) or original(rows, ids, types)

    def progress(_):
        raise RuntimeError("job cancelled")

    with pytest.raises(RuntimeError, match="job cancelled"):
        encoder.encode(TEXTS * 20, progress=progress)
    assert torch.get_num_threads() == 2
    assert len(ran) < len(TEXTS * 20)  # the batches not yet started were cancelled


def test_a_gpu_runs_one_batch_at_a_time():
    encoder = Encoder.__new__(Encoder)
    encoder.device, encoder.workers = torch.device("cuda"), 4
    assert encoder.batch_workers(100) == 1


def test_overlapping_single_thread_sections_give_torch_its_thread_count_back_when_the_last_one_leaves(two_torch_threads):
    """Two encodes at once in one process (the in-process job runner's threads): the first to finish must not
    restore the count while the other still runs, nor the second 'restore' the first's 1."""
    first = runtime.one_torch_thread()
    second = runtime.one_torch_thread()
    assert first.__enter__() == 2 and torch.get_num_threads() == 1
    assert second.__enter__() == 2
    first.__exit__(None, None, None)
    assert torch.get_num_threads() == 1
    second.__exit__(None, None, None)
    assert torch.get_num_threads() == 2
