"""simulate_judging --machine with several budgets writes one --write-qrels and one --write-intervals file a budget
(the share before the suffix), not only the last budget's; with one budget, the file named."""

from assessments.evaluation.sources import read_qrels_file
from tests.assessments.test_hybrid_command import base, files, simulate_judging  # noqa: F401 (files: a fixture)


def test_several_budgets_write_one_file_each(files):  # noqa: F811
    folder, runs = files
    simulate_judging(*base(folder, runs), "--budget", "0.05", "0.2", "--orders", "hybrid",
                     "--write-qrels", folder / "out.qrels", "--write-intervals", folder / "out.tsv")
    assert not (folder / "out.qrels").exists() and not (folder / "out.tsv").exists()
    small, large = read_qrels_file(folder / "out-0.05.qrels"), read_qrels_file(folder / "out-0.2.qrels")
    assert sum(map(len, small.values())) == sum(map(len, large.values())) > 0  # every pooled candidate, each file
    truth = read_qrels_file(folder / "qrels")
    # people judged more at 0.2: more of its lines carry the assessor's 2 (the fill writes 0 or 1 only)
    twos = [sum(g == 2 for docs in q.values() for g in docs.values()) for q in (small, large)]
    assert twos[0] < twos[1] <= sum(g == 2 for docs in truth.values() for g in docs.values())
    for share in ("0.05", "0.2"):
        rows = (folder / f"out-{share}.tsv").read_text().splitlines()
        assert rows[0] == "run\testimate\tlow\thigh" and len(rows) == 6


def test_one_budget_writes_the_file_named(files):  # noqa: F811
    folder, runs = files
    simulate_judging(*base(folder, runs), "--budget", "0.1", "--orders", "hybrid", "--write-qrels",
                     folder / "one.qrels")
    assert (folder / "one.qrels").exists() and not list(folder.glob("one-*.qrels"))


def test_the_help_says_how_the_files_are_named():
    from django.core.management import load_command_class

    help_text = load_command_class("assessments", "simulate_judging").create_parser("manage.py", "simulate_judging")
    assert "OUT-0.05.qrels" in help_text.format_help()
