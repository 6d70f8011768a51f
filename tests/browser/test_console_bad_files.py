"""A malformed file uploaded in the browser, of every kind the importers take, shows its problems with line and
field on the page and stores nothing (only the failed import's record, its file emptied)."""

import json

import pytest

from annotation.models import Campaign, DataImport, DataImportFile
from tests import factories
from tests.browser.console_steps import organiser_account, sign_in
from tests.factories import DATA

pytestmark = pytest.mark.django_db(transaction=True)

GOOD_ARTICLE = json.loads((DATA / "car-y3" / "runs" / "guir-tqa-water-distribution.json").read_text().splitlines()[0])
BAD_ARTICLE = {**GOOD_ARTICLE, "run_id": "another-run", "paragraphs": [{"para_id": "nothex", "para_body": []}]}

# kind, file name, content, form fields, [(line, field or None, words of the message)] that must be listed
CASES = [
    ("car-outlines", "outlines.json", b'{"headings": [],\n "notes": [],\n "titles": {oops}\n}\n', {},
     [(3, None, "invalid JSON")]),
    ("car-runs", "runs.jsonl",
     (json.dumps(GOOD_ARTICLE) + "\n" + json.dumps(BAD_ARTICLE) + "\n{not json\n").encode(), {"create_topics": True},
     [(2, "run_id", "a file holds one run"), (2, "paragraphs[0].para_id", "not 40 hexadecimal"),
      (3, None, "invalid JSON")]),
    ("trec-run", "run.trec", b"301 Q0 d1 1 1.5 tag\n301 Q0 d2 2 abc tag\n302 Q0\n",
     {"collection": "web", "create_missing": True},
     [(2, "score", "'abc' is not a number"), (3, None, "expected 6 columns")]),
    ("qrels", "qrels.txt", b"301 0 d1 1\n301 0 d2 x\nonly three cols\n", {"collection": "web", "create_missing": True},
     [(2, "grade", "'x' is not an integer"), (3, None, "expected 4 columns")]),
    ("plot-queries", "queries.jsonl",
     b'{"query_id": "q1", "book": "no-such-book", "query": "x"}\n{"query_id": 5}\nnot json\n', {},
     [(1, "book", "unknown book 'no-such-book'"), (2, "query_id", "must be a string"), (3, None, "invalid JSON")]),
    ("book", "book.txt", b"Chapter 1\n\nSome text.\n\x00 more\n", {"title": "A book"},
     [(4, None, "NUL byte")]),
    ("topics", "topics.txt", b"<top>\n<num> Number: 301\n<title> Crime\n\n<top>\n<num> Number: 302\n</top>\n",
     {"collection": "web"}, [(1, "top", "<top> is never closed")]),
    ("documents", "docs.sgml", b"<DOC>\n<DOCNO> A </DOCNO>\n<TEXT>x</TEXT>\n</DOC>\n<DOC>\n<DOCNO> A </DOCNO>\n</DOC>\n",
     {"collection": "web"}, [(5, "id", "document 'A' is in the files twice (first on line 1)")]),
]


def listed(page):
    """(line, field, message) of each problem on the page."""
    rows = page.eval_on_selector_all(
        "#problems tbody tr", "rs => rs.map(r => Array.from(r.cells).map(c => c.textContent.trim()))")
    return [(int(line) if line else None, field or None, message) for _, line, field, message in rows]


def without_import_records(snapshot):
    return {k: v for k, v in snapshot.items() if k not in ("annotation.DataImport", "annotation.DataImportFile")}


@pytest.mark.parametrize("kind, name, content, fields, expected", CASES, ids=[c[0] for c in CASES])
def test_a_malformed_file_lists_its_problems_and_stores_nothing(new_page, shot, tmp_path, kind, name, content, fields,
                                                                expected):
    organiser_account()
    path = tmp_path / name
    path.write_bytes(content)
    before = without_import_records(factories.db_snapshot())
    page = new_page()
    sign_in(page, "boss", "pw-boss")
    page.goto("/data/")
    page.select_option("#id_kind", kind)
    page.set_input_files("#id_files", str(path))
    for field, value in fields.items():
        if value is True:
            page.check(f"#id_{field}")
        else:
            page.fill(f"#id_{field}", value)
    page.click("#upload")
    page.wait_for_selector("#problems")
    shot(page, f"console-problems-{kind}")
    assert page.evaluate("document.activeElement.id") == "problems"  # a screen reader hears it first
    problems = listed(page)
    for line, field, words in expected:
        assert any(p[0] == line and p[1] == field and words in p[2] for p in problems), (line, field, words, problems)
    assert all(p[0] is not None for p in problems), problems
    assert "Nothing was imported" in page.text_content("#problems h2")
    assert page.input_value("#id_kind") == kind  # the form keeps what was chosen
    assert without_import_records(factories.db_snapshot()) == before
    failed = DataImport.objects.get()
    assert failed.status == DataImport.Status.FAILED and failed.problem_total == len(problems)
    assert bytes(DataImportFile.objects.get().content) == b""  # the upload is not kept


def test_a_malformed_topic_file_on_the_new_campaign_form_makes_nothing(new_page, tmp_path):
    organiser_account()
    path = tmp_path / "outlines.json"
    path.write_bytes(b'{"headings": [],\n "notes": [],\n "titles": {oops}\n}\n')
    before = factories.db_snapshot()
    page = new_page()
    sign_in(page, "boss", "pw-boss")
    page.goto("/campaigns/new/")
    page.fill("#id_name", "car")
    page.fill("#id_collection", "car-y3")
    page.check("input[name=topics_from][value=file]")
    page.set_input_files("#id_topic_file", str(path))
    page.click("#create-campaign")
    page.wait_for_selector("#problems")
    assert listed(page) == [(3, None, "invalid JSON: Expecting property name enclosed in double quotes at column 13")]
    assert "outlines.json" in page.text_content("#problems tbody")
    assert page.input_value("#id_name") == "car"
    assert factories.db_snapshot() == before and not Campaign.objects.exists()
