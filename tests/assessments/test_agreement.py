"""Agreement statistics against published figures, hand-computed tables and degenerate inputs (no database)."""

import json

import numpy as np
import pytest

from assessments.agreement import ratings_from_arrays, ratings_from_triples
from assessments.agreement.csvfile import csv_report, read_labels_csv
from assessments.agreement.formats import report_csv, report_text
from assessments.agreement.ranking import ranking_stability
from assessments.agreement.spans import span_figures
from assessments.agreement.statistics import figures
from assessments.evaluation import parse_measure
from retrieval.ingest import ImportFailed

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example with missing values:
# coders A-D, units 1-12, '*' = no value.
KRIPPENDORFF = {
    "A": "1 2 3 3 2 1 4 1 2 * * *",
    "B": "1 2 3 3 2 2 4 1 2 5 * 3",
    "C": "* 3 3 3 2 3 4 2 2 5 1 *",
    "D": "1 2 3 3 2 4 4 1 2 5 1 *",
}
# Fleiss (1971) as on Wikipedia: 10 subjects, 14 raters, how many put each subject in categories 1-5.
FLEISS = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]


@pytest.fixture
def krippendorff_csv(tmp_path):
    """The worked example as item,assessor,label: a '*' is an empty label or, for coder A, no line at all."""
    lines = ["item,assessor,label"]
    for coder, values in KRIPPENDORFF.items():
        for unit, value in enumerate(values.split(), start=1):
            if value != "*":
                lines.append(f"{unit},{coder},{value}")
            elif coder != "A":
                lines.append(f"{unit},{coder},")
    path = tmp_path / "krippendorff.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("level, alpha",
                         [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)])
def test_krippendorffs_worked_example_through_the_csv_reader(krippendorff_csv, level, alpha):
    report = csv_report(krippendorff_csv, level)
    layer = report["layers"][0]
    assert round(layer["alpha"], 3) == alpha
    assert layer["units"] == 11 and layer["assessors"] == 4  # unit 12 has one value: it does not count


def test_fleiss_classic_example_gives_0_210():
    triples = []
    for subject, row in enumerate(FLEISS):
        raters = iter(range(14))
        triples += [(subject, next(raters), category) for category, n in enumerate(row, start=1) for _ in range(n)]
    result = figures(ratings_from_triples(triples, "nominal"), pairs=False)
    assert round(result["fleiss_kappa"], 3) == 0.210
    assert (result["fleiss_units"], result["fleiss_raters"]) == (10, 14)
    assert result["all_agree"] == pytest.approx(0.1)  # subject 1: all 14 in category 5
    assert result["none_agree"] == 0.0


def test_fleiss_uses_the_units_with_the_most_common_number_of_raters():
    data = {"A": "1 2 3 1", "B": "1 2 3 2", "C": "1 2 * *"}
    result = figures(_ratings(data, "nominal"), pairs=False)
    assert (result["fleiss_units"], result["fleiss_raters"]) == (2, 3)  # two units by 3, two by 2: a tie goes to 3


def _ratings(data, level, scale=None):
    """Ratings from {assessor: "label label * ..."} (units numbered from 1)."""
    triples = [(unit, assessor, int(value)) for assessor, values in data.items()
               for unit, value in enumerate(values.split(), start=1) if value != "*"]
    return ratings_from_triples(triples, level, scale=scale)


def _from_table(table, level, scale):
    """Two assessors whose labels make the contingency table `table` (rows: a, columns: b)."""
    triples, unit = [], 0
    for i, row in enumerate(table):
        for j, n in enumerate(row):
            for _ in range(n):
                triples += [(unit, "a", scale[i]), (unit, "b", scale[j])]
                unit += 1
    return ratings_from_triples(triples, level, scale=scale)


def test_cohens_kappa_of_a_hand_computed_table():
    # po = 35/50 = 0.7; pe = (25·30 + 25·20) / 50² = 0.5; κ = (0.7 - 0.5) / (1 - 0.5) = 0.4
    pair = figures(_from_table([[20, 5], [10, 15]], "nominal", ["yes", "no"]))["pairs"][0]
    assert pair["cohen_kappa"] == pytest.approx(0.4)
    assert pair["weighted_kappa"] is None and "nominal" in pair["reasons"]["weighted_kappa"]
    assert pair["confusion"] == {"labels": ["yes", "no"], "matrix": [[20, 5], [10, 15]]}
    assert pair["units"] == 50


def test_linearly_weighted_kappa_of_a_hand_computed_table():
    # Unweighted: po = 5/7, pe = 17/49, κ = 18/32. Linear weights |i-j|/2: observed disagreement 1/7,
    # expected 20/49, κw = 1 - (1/7)/(20/49) = 0.65.
    pair = figures(_from_table([[2, 1, 0], [0, 2, 1], [0, 0, 1]], "ordinal", [1, 2, 3]))["pairs"][0]
    assert pair["cohen_kappa"] == pytest.approx(18 / 32)
    assert pair["weighted_kappa"] == pytest.approx(0.65)


def test_interval_weights_use_the_values_not_the_ranks():
    # Labels 0, 1, 10: a 0/1 disagreement is small, 1/10 large; ranks would weigh them alike.
    ranks = figures(_from_table([[3, 2, 0], [0, 3, 0], [0, 0, 3]], "ordinal", [0, 1, 10]))["pairs"][0]
    values = figures(_from_table([[3, 2, 0], [0, 3, 0], [0, 0, 3]], "interval", [0, 1, 10]))["pairs"][0]
    assert values["weighted_kappa"] > ranks["weighted_kappa"]  # the 0/1 disagreements are small in values


def test_one_category_only_gives_null_with_a_reason_not_nan():
    result = figures(_ratings({"A": "2 2 2", "B": "2 2 2", "C": "2 2 *"}, "ordinal"))
    assert result["alpha"] is None and "one category" in result["reasons"]["alpha"]
    assert result["fleiss_kappa"] is None and result["reasons"]["fleiss_kappa"]
    assert result["all_agree"] == 1.0 and result["none_agree"] == 0.0
    assert all(p["cohen_kappa"] is None and p["weighted_kappa"] is None for p in result["pairs"])
    json.dumps(result, allow_nan=False)


def test_one_assessor_or_no_overlap_gives_nulls():
    alone = figures(_ratings({"A": "1 2 3"}, "nominal"))
    assert alone["units"] == 0 and alone["assessors"] == 0 and alone["pairs"] == []
    assert alone["alpha"] is None and alone["fleiss_kappa"] is None and alone["all_agree"] is None
    apart = figures(_ratings({"A": "1 2 * *", "B": "* * 1 2"}, "nominal"))
    assert apart["units"] == 0 and apart["alpha"] is None
    assert apart["pairs"][0]["units"] == 0 and apart["pairs"][0]["reasons"]["cohen_kappa"] == "no unit labelled by both"
    json.dumps([alone, apart], allow_nan=False)


def test_no_labels_at_all():
    result = figures(ratings_from_triples([], "ordinal"))
    assert result["units"] == 0 and result["alpha"] is None and result["pairs"] == []


def test_none_agree_means_every_assessor_gave_a_different_label():
    result = figures(_ratings({"A": "1 1 1 1", "B": "1 2 2 1", "C": "1 3 2 *"}, "nominal"), pairs=False)
    # unit 1: all agree; unit 2: 1, 2, 3: none agree; unit 3: 1, 2, 2: neither; unit 4: 1, 1: all agree
    assert result["all_agree"] == pytest.approx(2 / 4) and result["none_agree"] == pytest.approx(1 / 4)


def test_arrays_and_triples_give_the_same_figures():
    rng = np.random.default_rng(7)
    units, assessors = np.repeat(np.arange(50), 3), np.tile([10, 20, 30], 50)
    grades = rng.integers(0, 4, 150)
    keep = rng.random(150) > 0.2
    a = ratings_from_arrays(units[keep], assessors[keep], grades[keep], "ordinal", scale=[0, 1, 2, 3])
    b = ratings_from_triples(zip(units[keep].tolist(), assessors[keep].tolist(), grades[keep].tolist()), "ordinal",
                             scale=[0, 1, 2, 3])
    fa, fb = figures(a), figures(b)
    assert fa["alpha"] == pytest.approx(fb["alpha"]) and fa["fleiss_kappa"] == pytest.approx(fb["fleiss_kappa"])
    assert [p["confusion"] for p in fa["pairs"]] == [p["confusion"] for p in fb["pairs"]]


def test_a_later_entry_replaces_an_earlier_one_in_arrays():
    ratings = ratings_from_arrays([1, 1, 1], [5, 5, 6], [3, 0, 0], "ordinal", scale=[0, 1, 2, 3])
    assert ratings.codes.tolist() == [[0.0], [0.0]]


# --- the CSV reader ---------------------------------------------------------------------------------------


def _csv(tmp_path, text, level="nominal", **kwargs):
    path = tmp_path / "labels.csv"
    path.write_text(text)
    with pytest.raises(ImportFailed) as failure:
        read_labels_csv(path, level, **kwargs)
    return failure.value.report().replace(str(path), "labels.csv")


def test_csv_without_a_column_names_the_header(tmp_path):
    assert _csv(tmp_path, "item,coder,label\n1,A,x\n") == (
        "labels.csv:1: assessor: missing column assessor (the header must name item, assessor, label)")


def test_csv_line_with_the_wrong_field_count(tmp_path):
    assert _csv(tmp_path, "item,assessor,label\n1,A,x\n2,A\n") == (
        "labels.csv:3: expected 3 fields (item,assessor,label), got 2")


def test_csv_label_not_numeric_for_interval(tmp_path):
    assert _csv(tmp_path, "item,assessor,label\n1,A,3\n1,B,three\n", "interval") == (
        "labels.csv:3: label: 'three' is not a number")


def test_csv_same_item_and_assessor_with_two_labels(tmp_path):
    report = _csv(tmp_path, "item,assessor,label\n1,A,x\n1,B,y\n1,A,x\n1,A,z\n")
    assert report == "labels.csv:5: label: 'A' gave item '1' the label 'z' here and 'x' on line 2"


def test_csv_ordinal_words_need_a_scale(tmp_path):
    assert _csv(tmp_path, "item,assessor,label\n1,A,low\n", "ordinal") == "labels.csv:2: label: 'low' is not a number"
    assert _csv(tmp_path, "item,assessor,label\n1,A,low\n1,B,top\n", "ordinal", scale=["low", "high"]) == (
        "labels.csv:3: label: 'top' is not on the scale low, high")


def test_csv_columns_in_any_order_with_an_ordinal_scale(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("label,item,assessor\nhigh,1,A\nhigh,1,B\nlow,2,A\nmid,2,B\n")
    ratings = read_labels_csv(path, "ordinal", scale=["low", "mid", "high"])
    assert ratings.labels == ["low", "mid", "high"] and ratings.codes.tolist() == [[2.0, 0.0], [2.0, 1.0]]


def test_text_and_csv_formats_carry_the_figures(krippendorff_csv):
    report = csv_report(krippendorff_csv, "ordinal")
    text = report_text(report)
    assert "Krippendorff's α 0.815" in text and "labels (ordinal): 11 units" in text
    rows = report_csv(report).splitlines()
    assert rows[0].startswith("scope,layer,level,topic,a,b,units,assessors,alpha")
    assert rows[1].startswith("layer,labels,ordinal,,,,11,4,0.815")
    assert sum(row.startswith("pair,") for row in rows) == 6


# --- spans and ranking stability ------------------------------------------------------------------------------


def test_span_overlap_is_the_mean_pairwise_character_jaccard():
    marks = {
        "u1": {"a": [[0, 10]], "b": [[5, 15]]},  # 5 shared of 15: 1/3
        "u2": {"a": [], "b": []},  # nothing marked by either: full agreement
        "u3": {"a": [[0, 4]]},  # one assessor: not a unit
    }
    result = span_figures(marks)
    assert result["units"] == 2 and result["span_jaccard"] == pytest.approx((1 / 3 + 1) / 2)
    assert result["pairs"] == [{"a": "a", "b": "b", "units": 2, "span_jaccard": pytest.approx(2 / 3)}]
    assert span_figures({"u3": {"a": [[0, 4]]}})["span_jaccard"] is None


def test_ranking_stability_kendall_tau():
    runs = {"good": {"t": ["d1", "d2", "d3"]}, "mid": {"t": ["d2", "d1", "d3"]}, "bad": {"t": ["d3", "d2", "d1"]}}
    qrels = {
        "a": {"t": {"d1": 3, "d2": 1}},  # good > mid > bad
        "b": {"t": {"d1": 3, "d2": 1}},
        "c": {"t": {"d3": 3}},  # bad > mid = good
        "d": {"u": {"d1": 1}},  # another topic: nothing in common with the others
    }
    result = ranking_stability(qrels, runs, parse_measure("nDCG@10"))
    by_pair = {(p["a"], p["b"]): p for p in result["pairs"]}
    assert by_pair["a", "b"]["tau"] == pytest.approx(1.0) and by_pair["a", "b"]["topics"] == 1
    assert by_pair["a", "c"]["tau"] < 0
    assert by_pair["a", "d"]["tau"] is None and by_pair["a", "d"]["reasons"]["tau"] == "no topic judged by both"
    one_run = ranking_stability(qrels, {"good": runs["good"]}, parse_measure("nDCG@10"))
    assert all(p["tau"] is None for p in one_run["pairs"]) and "a ranking needs two" in one_run["reasons"]["tau"]


def test_span_jaccard_by_intervals_equals_the_character_sets_it_stands_for():
    """covered() keeps merged intervals, not a set of every offset (an evidence span may be a whole document): the
    figure is the same as over the sets of characters, on random marks with overlaps, touching and empty spans."""
    import random

    def by_sets(a, b):
        sa = {o for s, e in a for o in range(s, e)}
        sb = {o for s, e in b for o in range(s, e)}
        return len(sa & sb) / len(sa | sb) if sa | sb else 1.0

    rng = random.Random(7)
    for _ in range(300):
        marks = [[[s, s + rng.randint(0, 12)] for s in rng.sample(range(60), rng.randint(0, 4))] for _ in range(2)]
        result = span_figures({"u": {"a": marks[0], "b": marks[1]}})
        assert result["span_jaccard"] == pytest.approx(by_sets(*marks)), marks
    whole = span_figures({"doc": {"a": [[0, 5_000_000]], "b": [[2_500_000, 7_500_000]]}})
    assert whole["span_jaccard"] == pytest.approx(1 / 3)
