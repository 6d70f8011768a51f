"""import_machine_labels: an outside judge's labels (TSV probabilities, UMBRELA qrels, JSON lines of probabilities per
grade), plain or packed, checked whole with line-numbered problems, stored as a machine source with its provenance,
never as human judgements, and read by export_qrels --source machine."""

import bz2
import gzip
import json
import lzma
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Campaign, Track
from assessments.models import Judgement, MachineLabel, MachineLabelSource, Topic
from tests import factories
from tests.factories import db_snapshot

pytestmark = pytest.mark.django_db

TSV = "1\tclueweb-001\t0.91\n1\tclueweb-002\t0.12\n2\tclueweb-002\t0.5\n"
UMBRELA = "1 0 clueweb-001 3\n1 0 clueweb-003 0\n2 0 clueweb-002 2\n"
JSONL = "".join(json.dumps(row) + "\n" for row in [
    {"topic_id": "1", "doc_id": "clueweb-001", "probs": [0.05, 0.15, 0.3, 0.5]},
    {"topic_id": 2, "doc_id": "clueweb-003", "probs": [0.7, 0.2, 0.1, 0.0]},
])


@pytest.fixture
def coll():
    coll = factories.collection("web")
    for t in ("1", "2"):
        factories.topic(coll, t, kind=Topic.Kind.ADHOC, text=f"query {t}")
    for d in ("clueweb-001", "clueweb-002", "clueweb-003"):
        factories.passage(coll, d, text=f"document {d}")
    return coll


def write(tmp_path, text, name="labels.tsv", packer=None):
    path = tmp_path / name
    data = text.encode()
    path.write_bytes(packer(data) if packer else data)
    return path


def run(path, *args, name="umbrela-gpt4o"):
    out = StringIO()
    call_command("import_machine_labels", str(path), "--name", name, "--no-progress", *args, stdout=out)
    return out.getvalue()


def rejected(path, *args, name="umbrela-gpt4o"):
    before = db_snapshot()
    with pytest.raises(CommandError) as exc:
        run(path, *args, name=name)
    assert db_snapshot() == before
    return str(exc.value)


def labels(source):
    return {(l.topic.external_id, l.passage.external_id): (l.grade, l.score, l.value)
            for l in MachineLabel.objects.filter(source=source).select_related("topic", "passage")}


def test_a_tsv_of_probabilities_is_a_source_of_scores_graded_at_one_half(coll, tmp_path):
    out = run(write(tmp_path, TSV), "--collection", "web", "--model", "gpt-4o", "--prompt", "Grade 0-3: {query}")

    source = MachineLabelSource.objects.get(name="umbrela-gpt4o")
    assert "3 labels for 2 topics" in out
    assert source.kind == MachineLabelSource.Kind.IMPORTED and source.status == MachineLabelSource.Status.READY
    assert source.model == "gpt-4o" and source.grades == [0, 1]
    assert source.settings["format"] == "tsv" and source.settings["file"] == "labels.tsv"
    assert source.settings["prompt"] == "Grade 0-3: {query}" and source.settings["imported_by"] is None
    assert len(source.settings["file_sha256"]) == 64 and source.settings["imported_at"]
    assert labels(source) == {("1", "clueweb-001"): (1, 0.91, None), ("1", "clueweb-002"): (0, 0.12, None),
                              ("2", "clueweb-002"): (1, 0.5, None)}
    assert not Judgement.objects.exists()  # never human labels


@pytest.mark.parametrize("packer, suffix", [(gzip.compress, ".gz"), (lzma.compress, ".xz"), (bz2.compress, ".bz2")])
def test_umbrela_qrels_are_read_plain_or_packed_and_keep_the_grade_as_the_score(coll, tmp_path, packer, suffix):
    user = factories.user("organiser")
    run(write(tmp_path, UMBRELA, "umbrela.qrels" + suffix, packer), "--collection", "web", "--user", "organiser")

    source = MachineLabelSource.objects.get(name="umbrela-gpt4o")
    assert source.settings["format"] == "qrels" and source.settings["score"] == "grade"
    assert source.settings["imported_by"] == user.username and source.grades == [0, 1, 2, 3]
    assert labels(source) == {("1", "clueweb-001"): (3, 3.0, None), ("1", "clueweb-003"): (0, 0.0, None),
                              ("2", "clueweb-002"): (2, 2.0, None)}


def test_json_lines_keep_the_probabilities_per_grade_with_the_most_probable_grade(coll, tmp_path):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("You are a relevance judge.\n")
    run(write(tmp_path, JSONL, "probs.jsonl.gz", gzip.compress), "--collection", "web", "--prompt", f"@{prompt}")

    source = MachineLabelSource.objects.get(name="umbrela-gpt4o")
    assert source.settings["prompt"] == "You are a relevance judge.\n" and source.grades == [0, 1, 2, 3]
    got = labels(source)
    assert got[("1", "clueweb-001")][0] == 3 and got[("1", "clueweb-001")][1] == pytest.approx(0.95)
    assert got[("2", "clueweb-003")][0] == 0 and got[("2", "clueweb-003")][1] == pytest.approx(0.3)
    assert got[("2", "clueweb-003")][2] == {"probs": [0.7, 0.2, 0.1, 0.0]}


@pytest.mark.parametrize("text, name, expected", [
    ("1\tclueweb-001\t0.9\n1\tclueweb-002\t1.7\n", "a.tsv", "a.tsv:2: p: '1.7' is not a probability (0 to 1)"),
    ("1\tclueweb-001\t0.9\n1\tclueweb-002\n", "b.tsv", "b.tsv:2: expected 3 columns (topic doc p), got 2"),
    ("1\tclueweb-001\t0.9\n2\tclueweb-999\t0.3\n", "c.tsv", "c.tsv:2: doc: unknown document 'clueweb-999' in "
                                                            "collection 'web'"),
    ("7\tclueweb-001\t0.9\n", "d.tsv", "d.tsv:1: topic: unknown topic '7' in collection 'web'"),
    ("1\tclueweb-001\t0.9\n1\tclueweb-001\t0.2\n", "e.tsv", "e.tsv:2: doc: 'clueweb-001' is labelled twice for "
                                                            "topic '1' (first on line 1)"),
    ("1 0 clueweb-001 3\n1 0 clueweb-002 4\n", "f.qrels", "f.qrels:2: grade: 4 is not a grade 0 to 3"),
    ('{"topic_id": "1", "doc_id": "clueweb-001", "probs": [0.5, 0.3, 0.1]}\n', "g.jsonl",
     "g.jsonl:1: probs: the probabilities sum to 0.9, not 1 (±0.01)"),
    ('{"topic_id": "1", "doc_id": "clueweb-001", "probs": [0.5, 0.5]}\n'
     '{"topic_id": "1", "doc_id": "clueweb-002", "probs": [0.5, 0.25, 0.25]}\n', "h.jsonl",
     "h.jsonl:2: probs: 3 probabilities, where line 1 gave 2"),
    ('{"topic_id": "1", "doc_id": "clueweb-001", "probs": [0.5, 0.5]}\n{"topic_id": "1", "probs": [1, 0]}\n',
     "i.jsonl", "i.jsonl:2: doc_id: missing"),
    ("\n\n", "j.tsv", "j.tsv: the file is empty"),
])
def test_a_bad_file_is_refused_whole_with_its_line_and_field(coll, tmp_path, text, name, expected):
    message = rejected(write(tmp_path, text, name), "--collection", "web")

    assert expected in message


def test_a_bad_packed_file_names_its_line_too(coll, tmp_path):
    text = TSV + "2\tclueweb-003\tmaybe\n"
    assert "labels.tsv.xz:4: p: 'maybe' is not a number" in rejected(
        write(tmp_path, text, "labels.tsv.xz", lzma.compress), "--collection", "web")


def test_many_unknown_documents_are_looked_up_in_batches_and_each_named(coll, tmp_path):
    text = "".join(f"1\tnot-here-{i}\t0.5\n" for i in range(3000))
    message = rejected(write(tmp_path, text), "--collection", "web")

    assert "labels.tsv:1: doc: unknown document 'not-here-0'" in message and "and 2950 more problems" in message


def test_the_same_name_is_refused_unless_replace_which_keeps_the_source_id(coll, tmp_path):
    run(write(tmp_path, TSV), "--collection", "web")
    first = MachineLabelSource.objects.get(name="umbrela-gpt4o")

    message = rejected(write(tmp_path, UMBRELA, "again.qrels"), "--collection", "web")
    assert "were imported already" in message and "--replace" in message

    out = run(write(tmp_path, UMBRELA, "again.qrels"), "--collection", "web", "--replace")
    source = MachineLabelSource.objects.get(name="umbrela-gpt4o")
    assert "Replaced" in out and source.pk == first.pk and source.settings["format"] == "qrels"
    assert set(labels(source)) == {("1", "clueweb-001"), ("1", "clueweb-003"), ("2", "clueweb-002")}


def test_a_name_of_another_kind_of_source_is_refused_even_with_replace(coll, tmp_path):
    MachineLabelSource.objects.create(name="umbrela-gpt4o", kind=MachineLabelSource.Kind.LLM, collection=coll)

    assert "is already named 'umbrela-gpt4o'" in rejected(write(tmp_path, TSV), "--collection", "web", "--replace")


def test_the_campaign_gives_the_collection_and_scopes_the_source(coll, tmp_path):
    camp = factories.campaign("web-judging", Campaign.Task.ADHOC)
    Track.objects.create(campaign=camp, collection=coll)
    run(write(tmp_path, TSV), "--campaign", "web-judging")

    source = MachineLabelSource.objects.get(name="umbrela-gpt4o")
    assert source.campaign_id == camp.pk and source.collection == coll
    assert list(MachineLabelSource.objects.usable_by(camp.pk)) == [source]


def test_without_a_collection_or_campaign_nothing_is_imported(coll, tmp_path):
    assert "collection: give the collection" in rejected(write(tmp_path, TSV))


def test_export_qrels_source_machine_reads_an_imported_source(coll, tmp_path):
    run(write(tmp_path, UMBRELA, "umbrela.qrels.gz", gzip.compress), "--collection", "web")
    out = StringIO()
    call_command("export_qrels", "--collection", "web", "--source", "machine", "--machine-source", "umbrela-gpt4o",
                 stdout=out)

    assert out.getvalue() == "1 0 clueweb-001 3\n1 0 clueweb-003 0\n2 0 clueweb-002 2\n"


def test_a_tsv_header_line_is_passed_over(coll, tmp_path):
    run(write(tmp_path, "topic\tdoc\tprobability\n" + TSV), "--collection", "web")

    assert len(labels(MachineLabelSource.objects.get(name="umbrela-gpt4o"))) == 3


def test_replace_never_reaches_another_campaigns_source(coll, tmp_path):
    camp = factories.campaign("web-judging", Campaign.Task.ADHOC)
    Track.objects.create(campaign=camp, collection=coll)
    factories.campaign("elsewhere", Campaign.Task.ADHOC)
    run(write(tmp_path, TSV), "--campaign", "web-judging")

    message = rejected(write(tmp_path, UMBRELA, "x.qrels"), "--collection", "web", "--campaign", "elsewhere",
                       "--replace")
    assert "is already named 'umbrela-gpt4o': give another name" in message
    assert "is already named" in rejected(write(tmp_path, UMBRELA, "x.qrels"), "--collection", "web", "--replace")
