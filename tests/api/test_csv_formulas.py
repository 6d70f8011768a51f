"""CSV exports: a text a spreadsheet would run as a formula (leading =, +, -, @, tab, CR) is neutralised with a
leading quote; numbers, negative ones too, stay numbers. Every CSV writer goes through
assessments.exporters.csvcells.safe_row: the agreement report (command and API) and the forced-choice export."""

import csv
import io

import pytest

from annotation.api.agreement import AgreementCsvRenderer
from assessments.agreement.formats import report_csv
from assessments.exporters.csvcells import spreadsheet_safe
from assessments.exporters.plot import CHOICE_FIELDS, write_choices

FORMULAS = ["=HYPERLINK(\"http://x\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)", "\t=1", "\r=1"]


@pytest.mark.parametrize("text", FORMULAS)
def test_a_formula_text_is_neutralised(text):
    assert spreadsheet_safe(text) == "'" + text


@pytest.mark.parametrize("value", [-0.25, -3, 0, 1.5, None, True, "-0.25", "+3", "-1e-05", "ann", "a=b", ""])
def test_numbers_and_plain_texts_are_left_alone(value):
    assert spreadsheet_safe(value) is value


def test_the_agreement_csv_neutralises_names_and_keeps_negative_figures():
    report = {
        "layers": [{
            "layer": "relevance", "level": "ordinal", "units": 4, "assessors": 2, "alpha": -0.25,
            "pairs": [{"a": "@ann", "b": "=bob", "units": 4, "cohen_kappa": -0.5}],
            "topics": [{"topic": "-1+1", "units": 4, "alpha": -0.125}],
        }],
        "ranking_stability": {"layer": "relevance", "measure": "nDCG@20",
                              "pairs": [{"a": "+x", "b": "bob", "runs": 3, "topics": 2, "tau": -1.0}]},
    }
    rows = list(csv.DictReader(io.StringIO(report_csv(report))))
    assert rows[0]["alpha"] == "-0.25"
    assert (rows[1]["a"], rows[1]["b"], rows[1]["cohen_kappa"]) == ("'@ann", "'=bob", "-0.5")
    assert (rows[2]["topic"], rows[2]["alpha"]) == ("'-1+1", "-0.125")
    assert (rows[3]["a"], rows[3]["tau"]) == ("'+x", "-1.0")


def test_the_forced_choice_csv_neutralises_every_text_cell():
    row = dict.fromkeys(CHOICE_FIELDS, "")
    row.update(pool="p", item="choice:1", topic="=1+1", assessor="@judge", chosen="-x", answer="+y", correct=True,
               n=-3, session_id="\tsession", client_time="2024-05-01T12:00:07Z")
    out = io.StringIO()
    write_choices([row], "-", stream=out)
    got = next(csv.DictReader(io.StringIO(out.getvalue())))
    assert (got["topic"], got["assessor"], got["chosen"], got["answer"]) == ("'=1+1", "'@judge", "'-x", "'+y")
    assert (got["session_id"], got["n"], got["correct"], got["item"]) == ("'\tsession", "-3", "True", "choice:1")


def test_the_agreement_api_csv_neutralises_assessor_names():
    """Django's user names may start with @, + or -: the API's CSV renderer writes such names neutralised."""
    report = {"layers": [{"layer": "plot_grade", "level": "ordinal", "units": 3, "assessors": 2, "alpha": -0.5,
                          "pairs": [{"a": "-bob", "b": "@ann", "units": 3, "cohen_kappa": -0.2}], "topics": []}]}
    body = AgreementCsvRenderer().render(report).decode()
    pairs = [r for r in csv.DictReader(io.StringIO(body)) if r["scope"] == "pair"]
    assert [(r["a"], r["b"], r["cohen_kappa"]) for r in pairs] == [("'-bob", "'@ann", "-0.2")]
