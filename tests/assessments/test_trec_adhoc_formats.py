"""An ordinary TREC ad hoc campaign end to end through the commands: topics (zero-padded TREC-1 numbers, TSV, JSON
lines), documents (SGML, an unclosed <TEXT>), runs and qrels (plain and gzip, ties, negative grades), export_qrels
and evaluate_runs, whose numbers are checked against ir_measures on the same files."""

import gzip
import io
import json

import ir_measures
import pytest
from django.core.management import CommandError, call_command

from assessments.importers.topic_ids import topic_id
from assessments.models import Qrel, Run, RunEntry, Topic
from retrieval.models import Passage
from tests import factories
from tests.factories import db_snapshot

pytestmark = pytest.mark.django_db

TREC1_TOPICS = """<top>
<head> Tipster Topic Description
<num> Number:  051
<dom> Domain:  International Economics
<title> Topic:  Airbus Subsidies

<desc> Description:
Document will discuss government assistance to Airbus Industrie.

<narr> Narrative:
To be relevant, a document must cite or discuss assistance to Airbus.

<fac> Factor(s):
<nat> Nationality:  NOT U.S.
</fac>
</top>

<top>
<num> Number: 052
<title> Topic: South African Sanctions
<desc> Description:
Document discusses sanctions against South Africa.
<narr> Narrative:
A relevant document will discuss any aspect of South African sanctions.
</top>

<top>
<num> Number: 053
<title> Topic: Leveraged Buyouts
<desc> Description:
Document will report a leveraged buyout.
<narr> Narrative:
A relevant document will name the company.
</top>
"""
# NIST's qrels number the topics 51…; graded, with a -1 (judged, not relevant) and a topic without relevant documents
QRELS = "51 0 AP-1 2\n51 0 AP-2 1\n51 0 AP-3 0\n51 0 AP-4 -1\n52 0 AP-5 1\n52 0 AP-6 3\n53 0 AP-7 0\n"
# ties: AP-1, AP-2, AP-3 and AP-9 all score 1 (written 1.0, 1, 1.00, 1e0): trec_eval's order is docid descending
RUN_A = ("51 Q0 AP-1 1 1.0 runA\n51 Q0 AP-2 2 1 runA\n51 Q0 AP-3 3 1.00 runA\n51 Q0 AP-9 4 1e0 runA\n"
         "51 Q0 AP-4 5 0.5 runA\n52 Q0 AP-6 1 -2 runA\n52 Q0 AP-5 2 -2.0 runA\n53 Q0 AP-7 1 3 runA\n")
RUN_B = "051 Q0 AP-2 1 9 runB\n051 Q0 AP-1 2 8 runB\n52 Q0 AP-5 1 3 runB\n"  # a run that pads, as the topics do
MEASURES = ["AP", "nDCG", "nDCG@10", "P@5", "R@100", "RR", "Rprec", "AP(rel=2)", "P(rel=2)@5", "NumRelRet"]


def command(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue() + err.getvalue()


def write(tmp_path, name, text, *, packed=False):
    data = text.encode()
    path = tmp_path / (name + (".gz" if packed else ""))
    path.write_bytes(gzip.compress(data) if packed else data)
    return path


def refused(*args):
    """The command's error; nothing was written."""
    before = db_snapshot()
    with pytest.raises(CommandError) as exc:
        command(*args)
    assert db_snapshot() == before
    return str(exc.value)


def sgml(*docs):
    return "".join(f"<DOC>\n<DOCNO> {d} </DOCNO>\n<HEAD>{d}</HEAD>\n<TEXT>\nText of {d}.\n</TEXT>\n</DOC>\n" for d in docs)


def lines_of(text):
    return {tuple(line.split("\t")[:3]): float(line.split("\t")[3]) for line in text.splitlines()
            if line.count("\t") == 3}


# --- topic ids: one rule ------------------------------------------------------------------------------------


def test_topic_id_drops_leading_zeros_of_plain_numbers_only():
    assert [topic_id(x) for x in ("051", "0051", "51", "000", "0", "301")] == ["51", "51", "51", "0", "0", "301"]
    # ids that are not plain ASCII numbers are kept exactly: they may genuinely differ
    for kept in ("q051", "MB001", "051a", "31_1", "0x51", "-051", "+051", "٠٥١", "05.1"):
        assert topic_id(kept) == kept


@pytest.mark.parametrize("packed", [False, True])
def test_a_padded_topics_file_its_runs_and_its_qrels_name_the_same_topics(tmp_path, packed):
    """TREC-1 topics say `Number: 051`, NIST's qrels and runs `51`: they were three topics nobody matched."""
    out = command("import_topics", str(write(tmp_path, "topics.51-53", TREC1_TOPICS, packed=packed)),
                  "--collection", "ap88", "--no-progress")
    assert "Imported 3 topics into ap88" in out
    assert sorted(Topic.objects.values_list("external_id", flat=True)) == ["51", "52", "53"]
    airbus = Topic.objects.get(external_id="51")
    assert airbus.title == "Airbus Subsidies" and airbus.metadata["id_as_written"] == "051"
    assert airbus.metadata["narrative"].startswith("To be relevant")
    command("import_documents", str(write(tmp_path, "ap.sgml", sgml(*[f"AP-{n}" for n in range(1, 10)]),
                                          packed=packed)), "--collection", "ap88", "--no-progress")
    command("import_qrels", str(write(tmp_path, "qrels.txt", QRELS, packed=packed)), "--collection", "ap88",
            "--name", "ap88-qrels", "--no-progress")
    command("import_trec_run", str(write(tmp_path, "runA", RUN_A, packed=packed)), "--collection", "ap88",
            "--no-progress")
    command("import_trec_run", str(write(tmp_path, "runB", RUN_B, packed=packed)), "--collection", "ap88",
            "--no-progress")
    assert Topic.objects.count() == 3  # nothing made beside them
    assert set(Qrel.objects.values_list("topic__external_id", flat=True)) == {"51", "52", "53"}
    assert set(RunEntry.objects.filter(run__name="runB").values_list("topic__external_id", flat=True)) == {"51", "52"}
    # the TREC topic export writes the file's number back, and reading it again finds the same topic
    from assessments.importers.topics import trec_topics

    exported = trec_topics(Topic.objects.order_by("external_id"))
    assert "<num> Number: 051\n" in exported and "id_as_written" not in exported
    command("import_topics", str(write(tmp_path, "again.txt", exported)), "--collection", "ap88", "--update",
            "--no-progress")
    assert Topic.objects.count() == 3


def test_stored_runs_score_as_their_files_do_and_as_ir_measures_scores_them(tmp_path):
    """Ties, a -1 grade, a topic without relevant documents and one the run lacks, through import, export_qrels and
    evaluate_runs: the stored evaluation, the files' evaluation and ir_measures give the same numbers."""
    command("import_topics", str(write(tmp_path, "topics", TREC1_TOPICS)), "--collection", "ap88", "--no-progress")
    qrels, run_a = write(tmp_path, "qrels.txt", QRELS, packed=True), write(tmp_path, "runA", RUN_A, packed=True)
    run_b = write(tmp_path, "runB", RUN_B.replace("051", "51"))  # ir_measures matches ids as strings
    command("import_qrels", str(qrels), "--collection", "ap88", "--name", "ap88-qrels", "--create-missing",
            "--no-progress")
    for path in (run_a, run_b):
        command("import_trec_run", str(path), "--collection", "ap88", "--create-missing", "--no-progress")
    assert list(RunEntry.objects.filter(run__name="runA", topic__external_id="51").order_by("rank")
                .values_list("passage__external_id", flat=True)) == ["AP-9", "AP-3", "AP-2", "AP-1", "AP-4"]
    exported = tmp_path / "exported.qrels"
    command("export_qrels", "--qrel-set", "ap88-qrels", "--out", str(exported))
    assert sorted(exported.read_text().splitlines()) == sorted(QRELS.splitlines())  # -1 and 0 kept as they are
    stored = lines_of(command("evaluate_runs", "--runs", "runA", "runB", "--measures", *MEASURES, "--per-topic"))
    files = lines_of(command("evaluate_runs", "--qrels", str(exported), "--run", str(run_a), str(run_b),
                             "--measures", *MEASURES, "--per-topic"))
    assert stored == files and len(stored) == 2 * len(MEASURES) * 4
    for name, path in (("runA", run_a), ("runB", run_b)):
        irq, irr = list(ir_measures.read_trec_qrels(str(exported))), list(ir_measures.read_trec_run(str(path)))
        ours = {ir_measures.parse_measure(m): m for m in MEASURES}  # (their NumRelRet is NumRet(rel=1))
        for value in ir_measures.iter_calc(list(ours), irq, irr):
            assert stored[(name, ours[value.measure], value.query_id)] == pytest.approx(value.value, abs=5e-5)
        for measure, value in ir_measures.calc_aggregate(list(ours), irq, irr).items():  # runB's topic 53: 0, theirs too
            assert stored[(name, ours[measure], "all")] == pytest.approx(value, abs=5e-5)
    assert stored[("runA", "RR", "51")] == pytest.approx(1 / 3, abs=5e-5)  # AP-9, AP-3 (not relevant) tie above AP-2


def test_topics_stored_padded_before_are_still_found_by_runs_qrels_and_topic_files(tmp_path):
    """A collection whose topics were stored as `051` (before ids were read so) takes runs and qrels that say 51."""
    coll = factories.collection("old")
    old = factories.topic(coll, "051", kind=Topic.Kind.ADHOC, title="Airbus Subsidies")
    factories.passage(coll, "AP-1")
    command("import_trec_run", str(write(tmp_path, "run", "51 Q0 AP-1 1 2 r\n", packed=True)), "--collection",
            "old", "--no-progress")
    command("import_qrels", str(write(tmp_path, "qrels", "0051 0 AP-1 1\n")), "--collection", "old", "--no-progress")
    assert RunEntry.objects.get().topic == old and Qrel.objects.get().topic == old
    message = refused("import_topics", str(write(tmp_path, "t.tsv", "51\tairbus subsidies\n")), "--collection", "old")
    assert "t.tsv:1: qid: topic '51' is already in old (--update replaces it)" in message
    command("import_topics", str(write(tmp_path, "t.tsv", "51\tairbus subsidies\n")), "--collection", "old", "--update",
            "--no-progress")
    assert Topic.objects.get().title == "airbus subsidies"


def test_ids_that_differ_are_never_merged(tmp_path):
    command("import_topics", str(write(tmp_path, "t.tsv", "q051\tone\nq51\ttwo\nMB001\tthree\nMB1\tfour\n")),
            "--collection", "mb", "--no-progress")
    assert sorted(Topic.objects.values_list("external_id", flat=True)) == ["MB001", "MB1", "q051", "q51"]
    assert not any("id_as_written" in t.metadata for t in Topic.objects.all())


@pytest.mark.parametrize("name,text,expected", [
    ("t.tsv", "051\tairbus\n51\tairbus again\n",
     "t.tsv:2: qid: topic '51' is in the file twice: line 1 numbers it '051' (leading zeros do not count)"),
    ("t.jsonl", '{"qid": "51", "text": "a"}\n{"qid": 51, "text": "b"}\n',
     "t.jsonl:2: qid: topic '51' is in the file twice (first on line 1)"),
    ("t.txt", "<top>\n<num> Number: 051\n<title> A\n</top>\n<top>\n<num> Number: 51\n<title> B\n</top>\n",
     "t.txt:6: num: topic '51' is in the file twice: line 2 numbers it '051'"),
])
def test_one_topic_numbered_two_ways_in_a_topics_file_is_refused_naming_both_lines(tmp_path, name, text, expected):
    assert expected in refused("import_topics", str(write(tmp_path, name, text)), "--collection", "x")


@pytest.mark.parametrize("packed", [False, True])
def test_a_document_ranked_twice_under_two_spellings_of_a_topic_is_refused_naming_the_spelling(tmp_path, packed):
    coll = factories.collection("web")
    factories.topic(coll, "51", kind=Topic.Kind.ADHOC)
    factories.passage(coll, "d1")
    path = write(tmp_path, "run.txt", "51 Q0 d1 1 2 r\n051 Q0 d1 2 1 r\n", packed=packed)
    message = refused("import_trec_run", str(path), "--collection", "web")
    assert f"{path}:2: docid: 'd1' appears twice for topic '51' (written '051') (first on line 1)" in message
    path = write(tmp_path, "qrels.txt", "51 0 d1 1\n051 0 d1 0\n", packed=packed)
    message = refused("import_qrels", str(path), "--collection", "web")
    assert f"{path}:2: docid: 'd1' is graded twice for topic '51' (written '051') (first on line 1)" in message


# --- TSV topics: a header told by its column names -----------------------------------------------------------


def test_a_one_topic_tsv_file_whose_id_is_id_is_a_topic(tmp_path):
    """The old rule took line 1 for a header when its first column was a header word: a file of one topic "id" lost
    it (then: "no topics")."""
    out = command("import_topics", str(write(tmp_path, "t.tsv", "id\tidentity documents\n")), "--collection", "w",
                  "--no-progress")
    assert "Imported 1 topics" in out and "header" not in out
    assert Topic.objects.get().external_id == "id"


@pytest.mark.parametrize("header", ["qid\tquery", "query_id\ttext", "id\ttitle", "QID\tQuery", "topic_id\tquery_text"])
def test_a_header_is_told_by_both_column_names(tmp_path, header):
    out = command("import_topics", str(write(tmp_path, "t.tsv", f"{header}\nqid\tan id that is a word\n2\ttwo\n",
                                             packed=True)), "--collection", "w", "--no-progress")
    assert f"line 1 is a header ({header.split(chr(9))[0]}…): skipped" in out
    assert sorted(Topic.objects.values_list("external_id", flat=True)) == ["2", "qid"]


def test_a_first_line_with_an_id_word_and_a_query_is_data(tmp_path):
    command("import_topics", str(write(tmp_path, "t.tsv", "topic\tthe word topic\n2\ttwo\n")), "--collection", "w",
            "--no-progress")
    assert sorted(Topic.objects.values_list("external_id", flat=True)) == ["2", "topic"]


# --- documents: an unclosed <TEXT> is repaired and said ------------------------------------------------------


@pytest.mark.parametrize("packed", [False, True])
def test_an_unclosed_text_is_imported_with_a_warning_naming_the_document_and_line(tmp_path, packed):
    text = ("<DOC>\n<DOCNO> AP-1 </DOCNO>\n<HEAD>One</HEAD>\n<!-- a note\n<TEXT> in a comment\n-->\n<TEXT>\n"
            "First text, never closed.\n</DOC>\n" + sgml("AP-2"))
    path = write(tmp_path, "ap.sgml", text, packed=packed)
    out = command("import_documents", str(path), "--collection", "ap", "--no-progress")
    assert "Imported 2 documents into ap (created the collection). 1 warning:" in out
    assert (f"warning: {path}:7: TEXT: document 'AP-1': <TEXT> is never closed; its text was taken up to </DOC>"
            in out)
    assert Passage.objects.get(external_id="AP-1").text == "First text, never closed."


def test_a_closed_text_gives_no_warning_and_a_bad_file_stores_nothing(tmp_path):
    out = command("import_documents", str(write(tmp_path, "ok.sgml", sgml("AP-1"))), "--collection", "ap",
                  "--no-progress")
    assert "warning" not in out
    bad = write(tmp_path, "bad.sgml", "<DOC>\n<DOCNO> AP-2 </DOCNO>\n<TEXT>\nopen\n</DOC>\n<DOC>\n<TEXT>x</TEXT>\n</DOC>\n",
                packed=True)
    message = refused("import_documents", str(bad), "--collection", "ap")
    assert f"{bad}:6: DOCNO: the document has no <DOCNO>" in message


# --- runs and qrels: bad lines name the file, the line and the field; nothing is written ---------------------


@pytest.mark.parametrize("packed", [False, True])
def test_bad_run_and_qrels_lines_are_named_and_nothing_is_written(tmp_path, packed):
    coll = factories.collection("web")
    factories.topic(coll, "51", kind=Topic.Kind.ADHOC)
    for n in (1, 2):
        factories.passage(coll, f"d{n}")
    run = write(tmp_path, "run.txt", "51 Q0 d1 1 1.0 r\n51 Q0 d2 x 0.5 r\n51 Q0 d3 3 nan r\n52 Q0 d1\n", packed=packed)
    message = refused("import_trec_run", str(run), "--collection", "web")
    assert f"{run}:2: rank: 'x' is not an integer" in message
    assert f"{run}:3: score: 'nan' is not a finite number" in message
    assert f"{run}:4: expected 6 columns (qid Q0 docid rank score tag), got 3" in message
    qrels = write(tmp_path, "qrels.txt", "51 0 d1 2\n51 0 d2 1.5\n51 0 d3 1\n", packed=packed)
    message = refused("import_qrels", str(qrels), "--collection", "web")
    assert f"{qrels}:2: grade: '1.5' is not an integer" in message
    assert f"{qrels}:3: docid: unknown document 'd3' in collection 'web'" in message
    assert not Run.objects.exists()


def test_file_evaluation_matches_padded_qrels_with_unpadded_runs(tmp_path):
    """evaluate_runs on files reads topic ids by the same rule: qrels that pad meet runs that do not (trec_eval, which
    compares strings, scores them 0)."""
    qrels = write(tmp_path, "qrels.txt", QRELS.replace("51 0", "051 0").replace("52 0", "052 0"))
    run = write(tmp_path, "runA", RUN_A)
    padded = json.loads(command("evaluate_runs", "--qrels", str(qrels), "--run", str(run), "--measures", "AP",
                                "--format", "json"))
    plain = json.loads(command("evaluate_runs", "--qrels", str(write(tmp_path, "q2", QRELS)), "--run", str(run),
                               "--measures", "AP", "--format", "json"))
    assert padded == plain


@pytest.mark.parametrize("header,body", [
    ("docid\ttext", "d1\tFirst text.\nd2\tSecond text.\n"),
    ("id\ttitle\ttext", "d1\tOne\tFirst text.\nd2\tTwo\tSecond text.\n"),
    ("_id\turl\ttitle\tcontents", "d1\thttp://x/1\tOne\tFirst text.\nd2\thttp://x/2\tTwo\tSecond text.\n"),
])
def test_a_tsv_documents_header_is_skipped_and_said(tmp_path, header, body):
    """A header line (pandas' to_csv writes one) was stored as a document called "docid" or "id"."""
    path = write(tmp_path, "docs.tsv", f"{header}\n{body}", packed=True)
    out = command("import_documents", str(path), "--collection", "c", "--no-progress")
    assert sorted(Passage.objects.values_list("external_id", flat=True)) == ["d1", "d2"]
    assert f"warning: {path}:1: a header line ({header.replace(chr(9), ', ')}), not a document: skipped" in out


def test_a_tsv_document_whose_id_is_a_header_word_but_text_is_not_is_a_document(tmp_path):
    command("import_documents", str(write(tmp_path, "docs.tsv", "id\tidentity documents\nd2\ttwo\n")),
            "--collection", "c", "--no-progress")
    assert sorted(Passage.objects.values_list("external_id", flat=True)) == ["d2", "id"]


def test_topics_a_run_named_first_are_filled_in_by_the_topics_file(tmp_path):
    """Runs imported first with --create-missing make placeholder topics; their topics file was refused ("already in
    the collection, --update replaces it") where documents fill their placeholders in."""
    command("import_trec_run", str(write(tmp_path, "runA", RUN_A, packed=True)), "--collection", "ap88",
            "--create-missing", "--no-progress")
    out = command("import_topics", str(write(tmp_path, "topics", TREC1_TOPICS)), "--collection", "ap88",
                  "--no-progress")
    assert "Imported 0 topics, filled in 3 that runs or qrels had named into ap88." in out
    assert Topic.objects.get(external_id="51").title == "Airbus Subsidies" and Topic.objects.count() == 3
    message = refused("import_topics", str(write(tmp_path, "again", TREC1_TOPICS)), "--collection", "ap88")
    assert "again:3: num: topic '51' is already in ap88 (--update replaces it)" in message  # no longer a placeholder


@pytest.mark.parametrize("name", ["qrels.txt", "qrels.txt.gz"])
def test_a_packed_qrels_file_takes_the_name_its_plain_file_would(tmp_path, name):
    """qrels.txt.gz made a set called 'qrelstxt' (the stem kept .txt), qrels.txt one called 'qrels'."""
    path = tmp_path / name
    path.write_bytes(gzip.compress(QRELS.encode()) if name.endswith(".gz") else QRELS.encode())
    out = command("import_qrels", str(path), "--collection", "ap88", "--create-missing", "--no-progress")
    assert "Imported qrel set 'qrels' into collection 'ap88': 7 qrels for 3 topics" in out


@pytest.mark.parametrize("cmd,name,text,expected", [
    ("import_topics", "runA", RUN_A, "runA:1: expected 2 columns (qid, text) separated by a tab, got 1: this looks "
                                     "like a TREC run, not a topics file"),
    ("import_topics", "ap.sgml", sgml("AP-1"), "ap.sgml: no <topic number=…> elements in the file: this looks like "
                                               "TREC SGML documents, not a topics file"),
    ("import_trec_run", "topics", TREC1_TOPICS, "topics:1: expected 6 columns (qid Q0 docid rank score tag), got 1: "
                                                "this looks like TREC topics, not a TREC run"),
    ("import_qrels", "ap.sgml", sgml("AP-1"), "ap.sgml.gz:1: expected 4 columns (topic iteration docid grade), got 1: "
                                              "this looks like TREC SGML documents, not TREC qrels"),
    ("import_documents", "topics", TREC1_TOPICS, "topics:1: text outside <DOC> … </DOC>: this looks like TREC topics, "
                                                 "not documents (import_topics reads them)"),
])
def test_a_file_given_to_the_wrong_command_says_what_it_looks_like(tmp_path, cmd, name, text, expected):
    path = write(tmp_path, name, text, packed=cmd == "import_qrels")
    assert expected in refused(cmd, str(path), "--collection", "ap88", *(["--create-missing"] if "run" in cmd else []))


def test_an_ir_datasets_dataset_with_padded_topics_meets_its_qrels(tmp_path, monkeypatch):
    """ir_datasets hands the topics file's ids as written (`051`) and the qrels' as theirs (`51`)."""
    ir_datasets = pytest.importorskip("ir_datasets")
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TrecQueries
    from ir_datasets.util import LocalDownload

    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "home"))
    write(tmp_path, "topics.txt", TREC1_TOPICS)
    write(tmp_path, "qrels.txt", QRELS)
    ir_datasets.registry.register("pooljudge-padded/trec1", Dataset(
        TrecQueries(LocalDownload(tmp_path / "topics.txt"), namespace="padded", lang="en"),
        TrecQrels(LocalDownload(tmp_path / "qrels.txt"), {0: "not relevant", 1: "relevant"}),
    ))
    command("import_ir_dataset", "pooljudge-padded/trec1", "--collection", "trec1", "--no-progress")
    assert sorted(Topic.objects.values_list("external_id", flat=True)) == ["51", "52", "53"]
    assert Topic.objects.get(external_id="51").metadata["id_as_written"] == "051"
    assert Qrel.objects.count() == 7 and Qrel.objects.filter(topic__title="").count() == 0


def test_an_ir_datasets_import_whose_documents_fail_stores_nothing(tmp_path, monkeypatch):
    """Queries and qrels were stored, each in its own transaction, before a bad document failed the import: the
    command run again then failed on them ("already in the collection", "a qrel set named … already exists")."""
    ir_datasets = pytest.importorskip("ir_datasets")
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TrecQueries, TsvDocs
    from ir_datasets.util import LocalDownload

    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "home"))
    write(tmp_path, "topics.txt", TREC1_TOPICS)
    write(tmp_path, "qrels.txt", QRELS)
    write(tmp_path, "docs.tsv", "AP-1\tFirst text.\nAP 2\tAn id with a space.\n")
    ir_datasets.registry.register("pooljudge-padded/bad-docs", Dataset(
        TsvDocs(LocalDownload(tmp_path / "docs.tsv"), namespace="bad", lang="en"),
        TrecQueries(LocalDownload(tmp_path / "topics.txt"), namespace="bad", lang="en"),
        TrecQrels(LocalDownload(tmp_path / "qrels.txt"), {0: "not relevant", 1: "relevant"}),
    ))
    message = refused("import_ir_dataset", "pooljudge-padded/bad-docs", "--collection", "bad")
    assert "ir_datasets:pooljudge-padded/bad-docs documents:2: doc_id: 'AP 2' is not a document id" in message
    assert not Topic.objects.exists() and not Qrel.objects.exists()


TREC4_TOPICS = """<top>

<num> Number: 201
<desc> Description:
Did a price fixing scheme exist in the market for
wholesale gasoline?

</top>
<top>
<num> Number: 202
</top>
"""


def test_trec4_topics_without_a_title_take_their_description_as_the_query(tmp_path):
    """TREC-4's ad hoc topics have only <desc>: every one was refused ("the topic has no <title>")."""
    path = write(tmp_path, "topics.201-250", TREC4_TOPICS)
    message = refused("import_topics", str(path), "--collection", "trec4")
    assert message.count("title: the topic has no <title>") == 1
    assert f"{path}:9: title: the topic has no <title> (nor a <desc> to take the query from)" in message
    command("import_topics", str(write(tmp_path, "ok", TREC4_TOPICS.split("<top>\n<num> Number: 202")[0])),
            "--collection", "trec4", "--no-progress")
    topic = Topic.objects.get(external_id="201")
    assert topic.title == topic.text == "Did a price fixing scheme exist in the market for wholesale gasoline?"
    assert topic.metadata == {"description": "Did a price fixing scheme exist in the market for wholesale gasoline?"}


def test_an_empty_title_is_still_refused_though_a_description_is_there(tmp_path):
    path = write(tmp_path, "t.txt", "<top>\n<num> Number: 301\n<title>\n<desc> Description:\nSome words.\n</top>\n")
    assert f"{path}:1: title: the topic has no <title>\n" in refused("import_topics", str(path), "--collection", "x") + "\n"


def test_rel_means_what_ir_measures_says_or_is_refused(tmp_path):
    """NumRet(rel=3) gave every retrieved document (ir_measures: those graded 3 or more), nDCG(rel=2) nDCG's own value
    under another name; the first is now NumRelRet(rel=3), the second refused naming why."""
    qrels, run = factories.DATA / "trec_eval" / "qrels.rel_level", factories.DATA / "trec_eval" / "results.test"
    out = lines_of(command("evaluate_runs", "--qrels", str(qrels), "--run", str(run), "--measures", "NumRet(rel=3)",
                           "NumRet"))
    theirs = ir_measures.calc_aggregate([ir_measures.parse_measure("NumRet(rel=3)"), ir_measures.NumRet],
                                        list(ir_measures.read_trec_qrels(str(qrels))),
                                        list(ir_measures.read_trec_run(str(run))))
    assert out[("STANDARD", "NumRelRet(rel=3)", "all")] == theirs[ir_measures.parse_measure("NumRet(rel=3)")] == 51
    assert out[("STANDARD", "NumRet", "all")] == theirs[ir_measures.NumRet] == 1500
    for measure in ("nDCG(rel=2)", "nDCG(rel=2)@10", "Judged(rel=2)@10"):
        with pytest.raises(CommandError, match=r"takes no rel="):
            command("evaluate_runs", "--qrels", str(qrels), "--run", str(run), "--measures", measure)


def test_export_qrels_finds_a_topic_named_as_the_topics_file_writes_it(tmp_path):
    """--topic 051 is topic 51, as the files' ids are (topic_ids.topic_id); an id stored nowhere is still refused."""
    from assessments.models import Layer
    from assessments.services.judging import record_judgement

    command("import_topics", str(write(tmp_path, "topics.51-53", TREC1_TOPICS)), "--collection", "ap88",
            "--no-progress")
    command("import_documents", str(write(tmp_path, "ap.sgml", sgml("AP-1", "AP-2"))), "--collection", "ap88",
            "--no-progress")
    for doc, grade in (("AP-1", 2), ("AP-2", 0)):
        record_judgement(assessor=factories.user(f"judge-{doc}"), layer=Layer.GRADE, value=grade,
                         topic=Topic.objects.get(external_id="51"), passage=Passage.objects.get(external_id=doc))
    out = io.StringIO()
    call_command("export_qrels", "--collection", "ap88", "--topics", "051", stdout=out, stderr=io.StringIO())
    assert out.getvalue() == "51 0 AP-1 2\n51 0 AP-2 0\n"
    with pytest.raises(CommandError, match="no topic '054'"):
        call_command("export_qrels", "--collection", "ap88", "--topics", "054", stdout=io.StringIO(),
                     stderr=io.StringIO())
