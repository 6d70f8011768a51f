"""The streamed, columnar TREC readers: the fast path gives exactly what the line-by-line checks give (columns
and problems, in order) on any file, whatever the block boundaries; the stream reads like decode_text, refuses
gzip past its limits as soon as it sees it, and holds a bounded amount of memory whatever the file."""

import gzip
import io
import random
import tracemalloc

import pytest

from assessments.importers.trec_files import QrelsReader, RunReader
from retrieval import ingest
from retrieval.ingest import ImportFailed, InputTooLarge, Problems, decode_text, text_batches


class SlowRunReader(RunReader):
    """Every block line by line: the reference the fast path must agree with."""

    def _fast_block(self, first, columns, count):
        return False


class SlowQrelsReader(QrelsReader):
    def _fast_block(self, first, columns, count):
        return False


def run_line(rng, qid, docid):
    return f"{qid} Q0 {docid} {rng.randrange(1, 1000)} {rng.uniform(-5, 30):.4f} tag\n"


def corrupt(rng, line):
    """One of the ways a run line goes wrong, or the line as it is."""
    cols = line.split()
    kind = rng.randrange(12)
    if kind == 0:
        return " ".join(cols[:5]) + "\n"  # a column short
    if kind == 1:
        return line.rstrip("\n") + " extra\n"
    if kind == 2:
        cols[3] = rng.choice(["one", "1.5", "", "+"]) or "x"
        return " ".join(cols) + "\n"
    if kind == 3:
        cols[4] = rng.choice(["abc", "nan", "-inf", "1e999", "1_0", "0x10", "١٢"])
        return " ".join(cols) + "\n"
    if kind == 4:
        cols[2] = "d" * 201
        return " ".join(cols) + "\n"
    if kind == 5:
        return "\n"
    if kind == 6:
        cols[5] = "other"
        return "\t".join(cols) + "\r\n"
    return line


def random_run(rng, lines=400, bad=0.05):
    """A run of a few topics (some split in two places) with duplicates and broken lines at rate `bad`."""
    out, docs = [], {}
    for _ in range(lines):
        qid = f"{rng.choice([301, 302, 303, 304])}"
        pool = docs.setdefault(qid, [])
        docid = rng.choice(pool) if pool and rng.random() < bad else f"doc-{rng.randrange(10**6)}"
        pool.append(docid)
        line = run_line(rng, qid, docid)
        out.append(corrupt(rng, line) if rng.random() < bad else line)
    return "".join(out)


def read_blocks(reader, text, block_lines):
    """Feed the text in blocks of `block_lines` lines, as text_batches hands them on."""
    lines = text.split("\n")
    for start in range(0, len(lines), block_lines):
        reader.feed(start + 1, "\n".join(lines[start : start + block_lines]))
    return reader.result


def outcome(reader_class, text, block_lines):
    problems = Problems("run.txt")
    parsed = read_blocks(reader_class(problems), text, block_lines)
    columns = {name: list(value) for name, value in vars(parsed).items()}
    return columns, [str(p) for p in problems.items], problems.total


@pytest.mark.parametrize("seed", range(40))
def test_the_fast_path_reads_runs_exactly_as_the_line_by_line_checks(seed):
    rng = random.Random(seed)
    text = random_run(rng, bad=[0, 0.002, 0.05][seed % 3])
    block_lines = rng.choice([1, 7, 50, 1000])
    assert outcome(RunReader, text, block_lines) == outcome(SlowRunReader, text, block_lines)


def test_a_clean_run_takes_the_fast_path_and_a_broken_one_names_every_problem_in_order():
    rng = random.Random(7)
    clean = random_run(rng, bad=0)
    reader = RunReader(Problems("run.txt"))
    reader._slow_block = None  # a clean file never needs it
    assert len(read_blocks(reader, clean, 100)) == 400
    text = "301 Q0 d1 1 1 r\n301 Q0 d2 x 2 r\n\n301 Q0 d3 3 abc r\n301 Q0 d1 4 1 r\n301 Q0 d4 5 5\n"
    _, problems, total = outcome(RunReader, text, 1000)
    assert problems == [
        "run.txt:2: rank: 'x' is not an integer",
        "run.txt:4: score: 'abc' is not a number",
        "run.txt:5: docid: 'd1' appears twice for topic '301' (first on line 1)",
        "run.txt:6: expected 6 columns (qid Q0 docid rank score tag), got 5",
    ]


def test_a_duplicate_of_a_malformed_line_names_that_line():
    text = "301 Q0 d1 x 1 r\n301 Q0 d2 1 1 r\n301 Q0 d1 2 1 r\n"
    _, problems, _ = outcome(RunReader, text, 1)
    assert problems[-1] == "run.txt:3: docid: 'd1' appears twice for topic '301' (first on line 1)"


@pytest.mark.parametrize("seed", range(20))
def test_the_fast_path_reads_qrels_exactly_as_the_line_by_line_checks(seed):
    rng = random.Random(seed)
    lines = []
    for _ in range(300):
        qid, docid = rng.choice(["1", "2", "3"]), f"d{rng.randrange(400)}"
        line = f"{qid} {rng.choice(['0', '0', 'Q0', 'sub1'] if seed % 2 else ['0'])} {docid} {rng.randrange(-1, 4)}"
        if rng.random() < 0.03:
            line = rng.choice([line + " x", "1 0 d1", f"{qid} 0 {docid} two", f"{qid} 0 {docid} 99999999999", ""])
        lines.append(line)
    text = "\n".join(lines)
    block_lines = rng.choice([1, 13, 1000])
    assert outcome(QrelsReader, text, block_lines) == outcome(SlowQrelsReader, text, block_lines)


# --- the stream ----------------------------------------------------------------------------------------------


def streamed(data, **limits):
    lines, expected = [], 1
    for first, text in text_batches(io.BytesIO(data), "f", **limits):
        assert first == expected
        block = text.split("\n")
        lines += block
        expected += len(block)
    return lines


@pytest.mark.parametrize("batch", [7, 64, 1 << 20])
def test_the_stream_reads_as_decode_text_does(monkeypatch, batch):
    monkeypatch.setattr(ingest, "BATCH_BYTES", batch)
    rng = random.Random(batch)
    pieces = [b"abc ", b"\r\n", b"\n", "é".encode(), b"\r", b"  ", b"\t"]
    samples = [b"a\r\nb\r\n\r\n", b"\xef\xbb\xbfa b\rc\n", b"x", b"a\n\n  \n", b"  \n", b"", b"\x00", b"ab\n\xff"]
    samples += [b"".join(rng.choice(pieces) for _ in range(n)) for n in (10, 1000, 20000)]
    for sample in samples:
        for data in (sample, gzip.compress(sample), gzip.compress(sample[:5]) + gzip.compress(sample[5:])):
            try:
                expected = decode_text(data, "f").split("\n")
            except ImportFailed as exc:
                expected = str(exc)
            try:
                got = streamed(data)
            except ImportFailed as exc:
                got = str(exc)
            assert got == expected, sample[:40]


def test_broken_and_double_gzip_are_refused():
    data = gzip.compress(b"301 Q0 d1 1 1 r\n" * 1000)
    for broken in (data[:-12], data[:30]):
        with pytest.raises(ImportFailed, match="broken gzip data"):
            streamed(broken)
    with pytest.raises(ImportFailed, match="gzip inside gzip"):
        streamed(gzip.compress(data))


def test_gzip_past_the_size_or_ratio_limit_is_refused_as_soon_as_it_is_seen():
    bomb = gzip.compress(b"301 Q0 d1 1 1 r\n" * 5_000_000)  # 80 MB in about 80 KB
    with pytest.raises(InputTooLarge, match="unpacks to more than 1,000,000 bytes") as exc:
        streamed(bomb, max_bytes=1_000_000)
    assert exc.value.limit == "bytes"
    with pytest.raises(InputTooLarge, match="more than 100 times its size") as exc:
        streamed(bomb, max_ratio=100, size=len(bomb))
    assert exc.value.limit == "ratio"
    small = gzip.compress(b"301 Q0 d1 1 1 r\n" * 1000)  # packs 100x too, but 16 KB is below the ratio's floor
    assert len(streamed(small, max_ratio=10, size=len(small))) == 1001


def test_reading_a_run_holds_bounded_memory_whatever_it_unpacks_to():
    """A 60 MB run of one repeated line (each a duplicate) read under a problem limit: the peak is a few MB."""
    bomb = gzip.compress(b"301 Q0 d1 1 1 r\n" * 4_000_000)
    tracemalloc.start()
    try:
        problems = Problems("bomb.txt.gz")
        with pytest.raises(ImportFailed):
            RunReader(problems, stop_after=1000).read(text_batches(io.BytesIO(bomb), "bomb.txt.gz"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert problems.total == 1001 and str(problems.items[-1]) == "bomb.txt.gz: stopped reading at line 1,002, after 1,000 problems"
    assert peak < 20 * 1024 * 1024
