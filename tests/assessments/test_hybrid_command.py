"""manage.py simulate_judging --machine … --budget …: judging under a budget with a machine judge (issue 41)."""

import io
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from assessments.evaluation.sources import read_qrels_file


def simulate_judging(*args):
    out = io.StringIO()
    call_command("simulate_judging", *map(str, args), "--no-progress", stdout=out)
    return out.getvalue()


@pytest.fixture
def files(tmp_path):
    """A qrels file, five runs and a machine judge's TSV over 8 topics (depth 20), drawn with a fixed seed."""
    rng = np.random.default_rng(41)
    qrels, machine, runs = [], [], {f"run{r}": [] for r in range(5)}
    for t in range(8):
        topic = str(301 + t)
        rel = rng.random(60) < 0.2
        for i in range(60):
            qrels.append(f"{topic} 0 D{t}-{i} {int(rel[i]) * rng.integers(1, 3)}")
            p = 1 / (1 + np.exp(-(1.5 * rel[i] - 1 + rng.normal(0, 1))))
            machine.append(f"{topic}\tD{t}-{i}\t{p:.4f}")
        for r, name in enumerate(runs):
            order = np.argsort(-(r * 0.5 * rel + rng.normal(0, 1, 60)))[:30]
            runs[name].extend(f"{topic} Q0 D{t}-{i} {k} {100 - k} {name}" for k, i in enumerate(order, start=1))
    (tmp_path / "qrels").write_text("\n".join(qrels) + "\n")
    (tmp_path / "judge.tsv").write_text("\n".join(machine) + "\n")
    paths = []
    for name, lines in runs.items():
        (tmp_path / f"{name}.run").write_text("\n".join(lines) + "\n")
        paths.append(tmp_path / f"{name}.run")
    return tmp_path, paths


def base(folder, runs):
    return ["--qrels", folder / "qrels", "--runs", *runs, "--depth", "20", "--machine", folder / "judge.tsv"]


def test_it_writes_the_final_labels_as_qrels_and_each_runs_interval_as_tsv(files):
    folder, runs = files
    out = simulate_judging(*base(folder, runs), "--budget", "0.1", "--write-qrels", folder / "out.qrels",
                           "--write-intervals", folder / "out.tsv")
    assert "Cohen's κ" in out and "hybrid" in out and "lara" in out and "depth" in out
    lines = (folder / "out.qrels").read_text().splitlines()
    assert all(len(line.split()) == 4 and line.split()[1] == "0" for line in lines)
    written = read_qrels_file(folder / "out.qrels")
    truth = read_qrels_file(folder / "qrels")
    pooled = sum(len(docs) for docs in written.values())
    assert pooled == len(lines) and set(written) == set(truth)
    # where people judged, the assessor's grade (a 2 can only come from the qrels); the fill writes 0 or 1
    twos = [(t, d) for t, docs in written.items() for d, g in docs.items() if g == 2]
    assert all(truth[t][d] == 2 for t, d in twos)
    rows = [line.split("\t") for line in (folder / "out.tsv").read_text().splitlines()]
    assert rows[0] == ["run", "estimate", "low", "high"]
    assert sorted(r[0] for r in rows[1:]) == [f"run{i}" for i in range(5)]
    for _, estimate, low, high in rows[1:]:
        assert float(low) <= float(estimate) <= float(high)


def test_budgets_may_be_repeated_or_listed_and_the_json_gives_each_order_at_each(files):
    folder, runs = files
    result = json.loads(simulate_judging(*base(folder, runs), "--budget", "0.05", "--budget", "0.1", "0.2",
                                         "--orders", "hybrid", "machine", "--format", "json"))
    assert set(result["budget"]) == {f"{o}@{b}" for o in ("hybrid", "machine") for b in ("0.05", "0.1", "0.2")}
    assert result["budget"]["hybrid@0.1"]["judged"] == round(0.1 * result["pool"]["candidates"])
    assert result["budget"]["machine@0.1"]["judged"] == 0
    assert -1 <= result["machine"]["kappa"] <= 1


def test_machine_grades_as_umbrela_qrels_and_json_lines_are_read(files):
    folder, runs = files
    lines = (folder / "judge.tsv").read_text().splitlines()
    grades = [f"{t} 0 {d} {min(3, int(float(p) * 4))}" for t, d, p in (line.split("\t") for line in lines)]
    (folder / "judge.qrels").write_text("\n".join(grades) + "\n")
    probs = [json.dumps({"topic_id": t, "doc_id": d, "probs": [1 - float(p), float(p)]})
             for t, d, p in (line.split("\t") for line in lines)]
    (folder / "judge.jsonl").write_text("\n".join(probs) + "\n")
    for name in ("judge.qrels", "judge.jsonl"):
        args = base(folder, runs)
        args[args.index("--machine") + 1] = folder / name
        out = simulate_judging(*args, "--budget", "0.1", "--orders", "hybrid")
        assert "hybrid" in out and "machine scores for" in out


@pytest.mark.parametrize("extra, option", [
    (["--budget", "2"], "--budget"),
    (["--budget", "0"], "--budget"),
    (["--budget", "five"], "--budget"),
    (["--orders", "mtf"], "--orders"),
    (["--orders", "depth", "--write-intervals", "OUT"], "--write-intervals"),
    (["--orders", "depth", "--write-qrels", "OUT"], "--write-qrels"),
    (["--write-qrels", "/no/such/folder/out.qrels"], "--write-qrels"),
    (["--prior", "judge.tsv"], "--prior"),
])
def test_bad_values_are_refused_naming_the_option(files, extra, option):
    folder, runs = files
    extra = [folder / e if e in ("OUT", "judge.tsv") else e for e in extra]
    with pytest.raises(CommandError, match=option):
        simulate_judging(*base(folder, runs), *extra)


def test_a_machine_file_with_a_bad_line_is_refused_naming_the_option_and_line(files):
    folder, runs = files
    (folder / "bad.tsv").write_text("301\tD0-0\t0.5\n301\tD0-1\t1.7\n")
    args = base(folder, runs)
    args[args.index("--machine") + 1] = folder / "bad.tsv"
    with pytest.raises(CommandError, match=r"--machine(.|\n)*:2"):
        simulate_judging(*args)


@pytest.mark.django_db
def test_a_machine_name_that_is_neither_a_file_nor_a_source_is_refused(files):
    folder, runs = files
    args = base(folder, runs)
    args[args.index("--machine") + 1] = "no-such-judge"
    with pytest.raises(CommandError, match="--machine"):
        simulate_judging(*args)


def test_the_write_options_need_a_machine_judge(files):
    folder, runs = files
    with pytest.raises(CommandError, match="--write-qrels"):
        simulate_judging("--qrels", folder / "qrels", "--runs", *runs, "--write-qrels", folder / "out.qrels")
    with pytest.raises(CommandError, match="--machine"):
        simulate_judging("--qrels", folder / "qrels", "--runs", *runs, "--budget", "0.1")


def test_qrels_whose_topics_no_run_retrieved_are_refused(files):
    folder, runs = files
    (folder / "other.qrels").write_text("999 0 X 1\n")
    with pytest.raises(CommandError, match="no topic of the qrels"):
        simulate_judging("--qrels", folder / "other.qrels", "--runs", *runs, "--machine", folder / "judge.tsv")
