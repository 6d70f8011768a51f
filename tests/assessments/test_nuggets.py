"""Nugget evaluation (issue 29, part 1): TREC RAG answers, nugget banks and assignments in, banks and scores out."""

import gzip
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotation.services.campaigns import create_campaign
from assessments.evaluation.nuggets import nugget_scores, scores_tsv
from assessments.models import Answer, AnswerCitation, Judgement, JudgementChange, Layer, Run, Topic
from assessments.services import nuggets
from assessments.services.judging import record_judgement
from retrieval.models import Collection, Passage
from tests import factories

pytestmark = pytest.mark.django_db

T1, T2 = "2024-145979", "2024-32912"
D = [f"msmarco_v2.1_doc_{n:02d}_1{n}0#{n}_2{n}" for n in range(4)]


def line(**fields):
    return json.dumps(fields)


def answer(run_id, topic_id, references, *sentences, topic="what is vicarious trauma and how can it be coped with"):
    return line(run_id=run_id, topic_id=topic_id, topic=topic, references=references, response_length=42,
                answer=[{"text": text, "citations": cites} for text, cites in sentences])


ANSWERS = "\n".join([
    answer("ragnarok", T1, [D[0], D[1]],
           ("Vicarious trauma is the emotional residue of exposure to the trauma of others.", [0]),
           ("Self-care, supervision and peer support help people cope with it.", [1, 0])),
    answer("ragnarok", T2, [D[2]], ("Bone density falls with age.", [0]), topic="how bone density changes"),
    answer("baseline", T1, [D[3], D[1]],
           ("It is secondary traumatic stress felt by helpers.", [1]), ("Therapy can help.", [])),
]) + "\n"

NUGGETS = "\n".join([
    line(qid=T1, query="what is vicarious trauma and how can it be coped with", nuggets=[
        {"text": "Vicarious trauma is indirect exposure to trauma", "importance": "vital"},
        {"text": "Coping includes self-care", "importance": "vital"},
        {"text": "Supervision helps", "importance": "okay"},
        {"text": "It affects therapists", "importance": "okay"},
    ]),
    line(qid=T2, query="how bone density changes", nuggets=[
        {"text": "Bone density decreases with age", "importance": "vital"},
        {"text": "Exercise slows bone loss", "importance": "okay"},
    ]),
]) + "\n"


def assignment(qid, run_id, *labels):
    return line(qid=qid, run_id=run_id, nuggets=[{"text": t, "importance": i, "assignment": a} for t, i, a in labels])


ASSIGNMENTS = "\n".join([
    assignment(T1, "ragnarok",
               ("Vicarious trauma is indirect exposure to trauma", "vital", "support"),
               ("Coping includes self-care", "vital", "partial_support"),
               ("Supervision helps", "okay", "support"),
               ("It affects therapists", "okay", "not_support")),
    assignment(T2, "ragnarok",
               ("Bone density decreases with age", "vital", "support"),
               ("Exercise slows bone loss", "okay", "not_support")),
    assignment(T1, "baseline",
               ("Vicarious trauma is indirect exposure to trauma", "vital", "partial_support"),
               ("Coping includes self-care", "vital", "not_support"),
               ("Supervision helps", "okay", "partial_support"),
               ("It affects therapists", "okay", "support")),
]) + "\n"


@pytest.fixture
def rag(db):
    coll = factories.collection("msmarco-v21", kind=Collection.Kind.DOCUMENTS)
    factories.topic(coll, T1, kind=Topic.Kind.ADHOC, title="what is vicarious trauma and how can it be coped with")
    factories.topic(coll, T2, kind=Topic.Kind.ADHOC, title="how bone density changes")
    factories.topic(coll, "2024-99999", kind=Topic.Kind.ADHOC, title="not in the campaign")
    for docid in D:
        factories.passage(coll, docid)
    return create_campaign(name="rag24", task="nuggets", topics=[T1, T2])


def write(tmp_path, name, text, packed=False):
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if packed else text.encode())
    return str(path)


def imported(tmp_path, command, text, name="in.jsonl", **options):
    call_command(command, write(tmp_path, name, text), campaign="rag24", no_progress=True, **options)


def failure(tmp_path, command, text, **options):
    with pytest.raises(CommandError) as caught:
        imported(tmp_path, command, text, **options)
    return str(caught.value)


def loaded(tmp_path, assignments=ASSIGNMENTS):
    imported(tmp_path, "import_rag_answers", ANSWERS, "answers.jsonl")
    imported(tmp_path, "import_nuggets", NUGGETS, "nuggets.jsonl")
    if assignments:
        imported(tmp_path, "import_nugget_assignments", assignments, "assignments.jsonl")


@pytest.mark.parametrize("packed", [False, True])
def test_answers_import_with_their_sentences_and_citations(rag, tmp_path, packed):
    imported(tmp_path, "import_rag_answers", ANSWERS, "answers.jsonl.gz" if packed else "answers.jsonl")
    runs = Run.objects.filter(collection__name="msmarco-v21").order_by("name")
    assert [(r.name, r.owner, r.source, r.track) for r in runs] == [
        ("baseline", None, "imported", ""), ("ragnarok", None, "imported", "")]
    first = Answer.objects.get(run__name="ragnarok", topic__external_id=T1)
    assert first.campaign_id == rag.pk and first.references == [D[0], D[1]] and first.response_length == 42
    sentences = list(first.sentences.order_by("position"))
    assert [s.text[:10] for s in sentences] == ["Vicarious ", "Self-care,"]
    cites = AnswerCitation.objects.filter(sentence=sentences[1]).order_by("position")
    assert [(c.reference, c.passage.external_id) for c in cites] == [(1, D[1]), (0, D[0])]
    assert Answer.objects.count() == 3


BAD_ANSWERS = [
    (answer("r", T1, [D[0]], ("A sentence.", [1])), "answer[0].citations[0]", "not an index"),
    (answer("r", "2024-99999", [D[0]], ("A sentence.", [0])), "topic_id", "not a topic of campaign"),
    (answer("ok", T2, [D[2]], ("Again.", [0])), "topic_id", "on line 1 too"),
    (answer("r", T1, [D[0]], ("  ", [0])), "answer[0].text", "empty"),
    (line(run_id="r", topic_id=T1, references=[D[0]], answer=[{"citations": [0]}]), "answer[0].text", "missing"),
    (answer("r", T1, ["unknown-doc"], ("A sentence.", [0])), "references[0]", "unknown document"),
    ('{"run_id": "r", "topic_id": ', "line", "invalid JSON"),
    ('["a list"]', "line", "expected a JSON object"),
    (answer("r\u202e", T1, [D[0]], ("A sentence.", [0])), "run_id", "a reader cannot see"),
    ('{"run_id": "' + "x" * 1_000_001 + '"}', "line", "at most 1,000,000"),
]


@pytest.mark.parametrize("text, field, words", BAD_ANSWERS)
def test_a_bad_answers_file_names_file_line_and_field_and_stores_nothing(rag, tmp_path, text, field, words):
    good = answer("ok", T2, [D[2]], ("Fine.", [0]))
    message = failure(tmp_path, "import_rag_answers", good + "\n" + text + "\n")
    assert "nothing was imported" in message
    problem = next(p for p in message.splitlines() if words in p)
    assert problem.startswith(f"{tmp_path / 'in.jsonl'}:2: {field}: "), message
    assert not Answer.objects.exists() and not Run.objects.exists()


def test_unknown_documents_become_placeholders_with_create_missing(rag, tmp_path):
    imported(tmp_path, "import_rag_answers", answer("r", T1, ["new-doc"], ("A sentence.", [0])) + "\n",
             create_missing=True)
    assert Passage.objects.get(external_id="new-doc").text == ""
    assert AnswerCitation.objects.get().passage.external_id == "new-doc"


def test_only_needed_documents_fill_the_placeholders_answers_made(rag, tmp_path):
    """import_rag_answers --create-missing makes placeholders for the references, to be filled by import_documents
    --only-needed from the corpus (TREC RAG's: 113M segments, read for the few cited); but --only-needed took only
    what runs, pools and qrels name, so the cited passages stayed empty on the support pages."""
    imported(tmp_path, "import_rag_answers", answer("r", T1, ["seg-1", "seg-2"], ("A sentence.", [0])) + "\n",
             create_missing=True)
    corpus = "".join(json.dumps({"docid": f"seg-{n}", "title": "T", "segment": f"Segment {n}."}) + "\n"
                     for n in (1, 2, 3))
    call_command("import_documents", write(tmp_path, "corpus.jsonl", corpus), collection="msmarco-v21",
                 only_needed=True, no_progress=True)
    texts = dict(Passage.objects.filter(external_id__startswith="seg-").values_list("external_id", "text"))
    assert texts == {"seg-1": "Segment 1.", "seg-2": "Segment 2."}  # every reference; seg-3 not needed


def test_a_run_name_already_taken_is_a_problem(rag, tmp_path):
    imported(tmp_path, "import_rag_answers", ANSWERS)
    message = failure(tmp_path, "import_rag_answers", answer("baseline", T2, [D[2]], ("Again.", [0])))
    assert ":1: run_id: collection 'msmarco-v21' already has a run named 'baseline'" in message
    assert Answer.objects.count() == 3


def test_nugget_banks_import_as_judgements_and_export_in_the_nuggetizer_format(rag, tmp_path):
    imported(tmp_path, "import_nuggets", NUGGETS)
    bank = Judgement.objects.get(layer=Layer.NUGGETS, topic__external_id=T1)
    assert bank.assessor.username == "imported-nuggets" and bank.campaign_id == rag.pk
    assert bank.value[0] == {"id": "n1", "text": "Vicarious trauma is indirect exposure to trauma",
                             "importance": "vital", "origin": "imported"}
    assert bank.changes.get().source == JudgementChange.Source.IMPORT
    out = tmp_path / "out.jsonl"
    call_command("export_nuggets", campaign="rag24", out=str(out))
    made_by = {"kind": "import", "user": "imported-nuggets", "file": "in.jsonl"}  # who made each: the file
    written = [json.loads(x) for x in NUGGETS.splitlines()]
    assert [json.loads(x) for x in out.read_text().splitlines()] == [
        {**topic, "nuggets": [{**n, "made_by": made_by} for n in topic["nuggets"]]} for topic in written]
    # Imported again with one nugget dropped and one new: the kept texts keep their ids, the new one gets a new id.
    lines = NUGGETS.splitlines()
    changed = json.loads(lines[0])
    changed["nuggets"] = changed["nuggets"][1:] + [{"text": "Burnout is related", "importance": "okay"}]
    imported(tmp_path, "import_nuggets", json.dumps(changed) + "\n")
    bank.refresh_from_db()
    assert [n["id"] for n in bank.value] == ["n2", "n3", "n4", "n5"]
    assert bank.changes.count() == 2


@pytest.mark.parametrize("command", ["export_nuggets", "export_nugget_scores"])
def test_an_out_file_that_cannot_be_written_is_an_error_naming_it(rag, tmp_path, command):
    """--out in a folder that does not exist, or naming a folder, was a traceback (FileNotFoundError,
    IsADirectoryError), as export_qrels' is not."""
    imported(tmp_path, "import_nuggets", NUGGETS)
    for out in (tmp_path / "no-such-folder" / "out.jsonl", tmp_path):
        with pytest.raises(CommandError, match=f"nothing was exported: cannot write '{out}'"):
            call_command(command, campaign="rag24", out=str(out))
    assert not (tmp_path / "no-such-folder").exists()


def test_a_new_nugget_never_takes_the_id_of_one_taken_out_whose_labels_stay(rag, tmp_path):
    """Support labels name a nugget by id. A bank imported without "It affects therapists" (n4) and then one with a
    new text gave the new text n4 again (ids were picked among the current bank's only), so n4's labels, made for
    the old text, counted for the new one in the scores and on the support pages."""
    loaded(tmp_path)
    t1 = json.loads(NUGGETS.splitlines()[0])
    kept = t1["nuggets"][:3]
    imported(tmp_path, "import_nuggets", line(qid=T1, query=t1["query"], nuggets=kept) + "\n")
    new = {"text": "Burnout is a different thing", "importance": "okay"}
    imported(tmp_path, "import_nuggets", line(qid=T1, query=t1["query"], nuggets=kept + [new]) + "\n")
    bank = nuggets.topic_banks(rag.pk)[Topic.objects.get(external_id=T1).pk].value
    assert [n["id"] for n in bank] == ["n1", "n2", "n3", "n5"]
    baseline = nugget_scores(rag.pk)["runs"]["baseline"]["topics"][T1]
    assert baseline["assessed"] == 3  # the new nugget: nobody labelled it for this answer


def test_a_nugget_taken_from_a_suggestion_keeps_it_through_export_and_import(rag, tmp_path):
    imported(tmp_path, "import_nuggets", NUGGETS)
    bank = nuggets.topic_banks(rag.pk)[Topic.objects.get(external_id=T1).pk]
    taken = {"id": "n9", "text": "Helpers feel it too", "importance": "okay", "origin": "machine",
             "suggested": {"text": "Helpers are affected", "importance": "vital"}}
    record_judgement(assessor=factories.user("amy"), layer=Layer.NUGGETS, value=bank.value + [taken],
                     topic=bank.topic, campaign_id=rag.pk)
    out = tmp_path / "out.jsonl"

    call_command("export_nuggets", campaign="rag24", out=str(out))

    exported = out.read_text()
    first = json.loads(exported.splitlines()[0])
    machine = {"kind": "machine", "source": None, "model": None, "model_version": None, "prompt": None}
    assert first["nuggets"][-1] == {"text": "Helpers feel it too", "importance": "okay",
                                    "suggested": {"text": "Helpers are affected", "importance": "vital"},
                                    "made_by": {"kind": "person", "user": "amy", "suggested_by": machine}}
    # the others as the nuggetizer's, and who made them
    assert all(set(n) == {"text", "importance", "made_by"} for n in first["nuggets"][:-1])
    other = create_campaign(name="rag24-again", task="nuggets", topics=[T1, T2])
    call_command("import_nuggets", str(out), campaign="rag24-again", no_progress=True)
    again = nuggets.topic_banks(other.pk)[bank.topic_id].value
    assert again[-1] == {**taken, "id": again[-1]["id"]} and again[0]["origin"] == "imported"
    call_command("export_nuggets", campaign="rag24-again", out=str(tmp_path / "again.jsonl"))
    again_lines = (tmp_path / "again.jsonl").read_text().splitlines()
    assert [without_made_by(x) for x in again_lines] == [without_made_by(x) for x in exported.splitlines()]
    assert json.loads(again_lines[0])["nuggets"][0]["made_by"] == {"kind": "import", "user": "imported-nuggets",
                                                                   "file": "out.jsonl"}  # made_by is not read back
    imported(tmp_path, "import_nuggets", NUGGETS.splitlines()[0].replace('"It affects therapists", "importance": '
                                                                         '"okay"}', '"Helpers feel it too", '
                                                                         '"importance": "okay"}') + "\n")
    kept = nuggets.topic_banks(rag.pk)[bank.topic_id].value  # a file without it: the kept nugget keeps its own
    assert kept[-1] == taken


def without_made_by(text):
    """A nuggets file's line without the nuggets' made_by."""
    topic = json.loads(text)
    return {**topic, "nuggets": [{k: v for k, v in n.items() if k != "made_by"} for n in topic["nuggets"]]}


@pytest.mark.parametrize("text, field, words", [
    (line(qid=T1, nuggets=[{"text": "A", "importance": "crucial"}]), "nuggets[0].importance", "'crucial' is not one"),
    (line(qid="2024-99999", nuggets=[{"text": "A", "importance": "vital"}]), "qid", "not a topic of campaign"),
    (line(qid=T1, nuggets=[{"importance": "vital"}]), "nuggets[0].text", "missing"),
    (line(qid=T1, nuggets=[{"text": "A", "importance": "vital"}, {"text": " A ", "importance": "okay"}]),
     "nuggets[1].text", "same text"),
    (line(qid=T2, nuggets=[]), "qid", "on line 1 too"),
    (line(qid=T1, nuggets=[{"text": "A", "importance": "vital", "suggested": "A"}]), "nuggets[0].suggested",
     "expected {text, importance}"),
    (line(qid=T1, nuggets=[{"text": "A", "importance": "vital", "suggested": {"text": "A", "importance": "high"}}]),
     "nuggets[0].suggested.importance", "'high' is not one"),
    (line(qid=T1, nuggets=[{"text": "A", "importance": "vital", "suggested": {"text": "", "importance": "okay"}}]),
     "nuggets[0].suggested.text", "empty"),
    ("not json", "line", "invalid JSON"),
])
def test_a_bad_nuggets_file_stores_nothing(rag, tmp_path, text, field, words):
    good = line(qid=T2, nuggets=[{"text": "B", "importance": "okay"}])
    message = failure(tmp_path, "import_nuggets", good + "\n" + text + "\n")
    problem = next(p for p in message.splitlines() if words in p)
    assert problem.startswith(f"{tmp_path / 'in.jsonl'}:2: {field}: "), message
    assert not Judgement.objects.exists()


@pytest.mark.parametrize("text, field, words", [
    (assignment(T1, "ragnarok", ("Supervision helps", "okay", "maybe")), "nuggets[0].assignment", "'maybe' is not"),
    (assignment(T1, "ragnarok", ("Not a nugget", "okay", "support")), "nuggets[0].text", "no nugget of topic"),
    (assignment(T1, "nobody", ("Supervision helps", "okay", "support")), "run_id", "no run named 'nobody'"),
    (assignment(T2, "baseline", ("Exercise slows bone loss", "okay", "support")), "run_id", "no run named"),
    (assignment(T1, "ragnarok", ("Supervision helps", "important", "support")), "nuggets[0].importance", "not one"),
    (assignment(T2, "ragnarok", ("Exercise slows bone loss", "okay", "support")), "run_id", "on line 1 too"),
])
def test_a_bad_assignments_file_stores_nothing(rag, tmp_path, text, field, words):
    loaded(tmp_path, assignments=None)
    good = assignment(T2, "ragnarok", ("Exercise slows bone loss", "okay", "support"))
    message = failure(tmp_path, "import_nugget_assignments", good + "\n" + text + "\n", assessor="autonuggetizer")
    problem = next(p for p in message.splitlines() if words in p)
    assert problem.startswith(f"{tmp_path / 'in.jsonl'}:2: {field}: "), message
    assert not Judgement.objects.filter(layer=Layer.NUGGET_SUPPORT).exists()
    assert not get_user_model().objects.filter(username="autonuggetizer").exists()


def test_assignments_are_one_assessors_labels_keyed_on_answer_and_nugget(rag, tmp_path):
    loaded(tmp_path)
    labels = Judgement.objects.filter(layer=Layer.NUGGET_SUPPORT)
    assert labels.count() == 10 and {j.assessor.username for j in labels} == {"imported-assignments"}
    first = Answer.objects.get(run__name="ragnarok", topic__external_id=T1)
    label = labels.get(item=f"{first.pk}:n2")
    assert label.value == "partial_support" and label.passage is None and label.run_ids == [first.run.name]


def test_scores_follow_the_formulas(rag, tmp_path):
    loaded(tmp_path)
    out = tmp_path / "scores.json"
    call_command("export_nugget_scores", campaign="rag24", format="json", out=str(out))
    runs = json.loads(out.read_text())["runs"]
    # ragnarok, T1: vital support, partial; okay support, not.
    r1 = {"all": (1 + .5 + 1 + 0) / 4, "vital": (1 + .5) / 2, "strict_all": (1 + 0 + 1 + 0) / 4,
          "strict_vital": (1 + 0) / 2, "weighted": (1 * 1 + 1 * .5 + .5 * 1 + .5 * 0) / (1 + 1 + .5 + .5)}
    # ragnarok, T2: vital support; okay not.
    r2 = {"all": 1 / 2, "vital": 1.0, "strict_all": 1 / 2, "strict_vital": 1.0, "weighted": 1 / 1.5}
    # baseline, T1: vital partial, not; okay partial, support.
    b1 = {"all": (.5 + 0 + .5 + 1) / 4, "vital": .5 / 2, "strict_all": 1 / 4, "strict_vital": 0.0,
          "weighted": (.5 + 0 + .5 * .5 + .5 * 1) / 3}
    for measure in r1:
        assert runs["ragnarok"]["topics"][T1][measure] == pytest.approx(r1[measure])
        assert runs["ragnarok"]["topics"][T2][measure] == pytest.approx(r2[measure])
        assert runs["ragnarok"][measure] == pytest.approx((r1[measure] + r2[measure]) / 2)
        assert runs["baseline"][measure] == pytest.approx(b1[measure] / 2)  # T2 unanswered: 0, as the nuggetizer
    assert list(runs["baseline"]["topics"]) == [T1] and runs["baseline"]["unanswered"] == [T2]
    assert runs["ragnarok"]["topics"][T1]["assessed"] == 4
    tsv = scores_tsv(nugget_scores(rag.pk)).splitlines()
    assert tsv[0] == "run\ttopic\tall\tvital\tstrict_all\tstrict_vital\tweighted"
    assert f"baseline\t{T1}\t0.5000\t0.2500\t0.2500\t0.0000\t0.4167" in tsv


def test_several_assessors_take_the_majority_a_tie_the_lower_and_adjudication_decides(rag, tmp_path):
    loaded(tmp_path)  # imported-assignments: n1 support for ragnarok's T1 answer
    first = Answer.objects.get(run__name="ragnarok", topic__external_id=T1)
    topic = first.topic

    def label(name, value, source=JudgementChange.Source.IMPORT):
        record_judgement(assessor=factories.user(name) if isinstance(name, str) else name,
                         layer=Layer.NUGGET_SUPPORT, value=value, topic=topic,
                         item=nuggets.support_item(first.pk, "n1"), source=source, campaign_id=rag.pk)

    def n1():
        return nugget_scores(rag.pk)["runs"]["ragnarok"]["topics"][T1]["all"]

    label("bob", "not_support")  # support vs not_support: a tie takes the lower
    assert n1() == pytest.approx((0 + .5 + 1 + 0) / 4)
    label("carol", "support")  # two supports of three
    assert n1() == pytest.approx((1 + .5 + 1 + 0) / 4)
    label(factories.user("boss"), "partial_support", JudgementChange.Source.ADJUDICATION)
    assert n1() == pytest.approx((.5 + .5 + 1 + 0) / 4)


def test_machine_labels_are_no_judgements_and_other_campaigns_do_not_count(rag, tmp_path):
    loaded(tmp_path)
    before = nugget_scores(rag.pk)
    first = Answer.objects.get(run__name="ragnarok", topic__external_id=T1)
    record_judgement(assessor=factories.user("elsewhere"), layer=Layer.NUGGET_SUPPORT, value="not_support",
                     topic=first.topic, item=nuggets.support_item(first.pk, "n1"), campaign_id=rag.pk + 1000)
    assert nugget_scores(rag.pk) == before


def test_a_nuggets_campaign_is_made_from_ad_hoc_topics(rag):
    from io import StringIO

    out = StringIO()
    call_command("create_campaign", "rag-b", task="nuggets", collection="msmarco-v21", topics=[T1], stdout=out)
    assert "takes runs for 1 topics" in out.getvalue()
    create_campaign(name="plain", task="adhoc", collection="msmarco-v21", topics=[T1])
    with pytest.raises(CommandError, match="--campaign: campaign 'plain' is not a nuggets campaign"):
        call_command("export_nugget_scores", campaign="plain")


def test_the_consoles_new_campaign_form_offers_nuggets(rag):
    from annotation.services.campaign_setup import new_campaign
    from annotation.views.console.forms import CampaignForm

    assert "nuggets" in dict(CampaignForm().fields["task"].choices)
    campaign = new_campaign(name="rag-console", task="nuggets", collection="msmarco-v21")
    assert sorted(campaign.track.topics.values_list("external_id", flat=True)) == [T1, T2, "2024-99999"]


def test_the_whole_question_is_exported_and_shown_not_a_cut_title(rag, tmp_path):
    """Issue 39 item 1: a Cranfield topic's title is its query's first words and an ellipsis; export_nuggets wrote
    that as `query`, and the nugget pages showed only it."""
    from annotation.models import Assignment
    from annotation.services import nugget_creation

    full = "how bone density changes with age in adults who run, and what that means for fractures ."
    Topic.objects.filter(external_id=T2).update(title="how bone density changes with age…", text=full)
    imported(tmp_path, "import_nuggets", NUGGETS)
    out = tmp_path / "out.jsonl"
    call_command("export_nuggets", campaign="rag24", out=str(out))
    queries = {json.loads(x)["qid"]: json.loads(x)["query"] for x in out.read_text().splitlines()}
    assert queries[T2] == full
    unit = factories.assignment(factories.user("writer"), Topic.objects.get(external_id=T2), campaign=rag,
                                kind=Assignment.Kind.NUGGET_CREATION)
    page = nugget_creation.creation_page(unit)
    assert page["query"] == "how bone density changes with age…" and page["description"] == full
