"""manage.py import_rag_answers reads TREC RAG 2025 answers (the track's guidelines, "Output Format (AG Output)" and
"(RAG Output)"): `{"metadata": {"team_id", "run_id", "type", "narrative_id", "narrative", "prompt"}, "references",
"answer": [{"text", "citations"}]}`, citations as indices into references (format 1) or as their segment ids
(format 2). It was refused: every line "run_id: the text is missing", "topic_id: the text is missing"."""

import gzip
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.services.campaigns import create_campaign
from assessments.models import Answer, AnswerCitation, Run, Topic
from retrieval.models import Collection
from tests import factories

pytestmark = pytest.mark.django_db

SEG = [
    "msmarco_v2.1_doc_16_1041913392#3_1268938142",
    "msmarco_v2.1_doc_14_1198634226#9_2470404444",
    "msmarco_v2.1_doc_12_201312571#0_394394285",
    "msmarco_v2.1_doc_02_1169633399#2_1963227104",
]
NARRATIVES = {
    "1": "I'm trying to understand how the Industrial Revolution began, what caused it, and how it changed "
         "societies, economies, and populations in different countries.",
    "2": "I'm trying to understand how prisons operate, including issues like inmate rights, rehabilitation, "
         "voting, and the impact of race and profit motives on incarceration.",
}


def answer(run_id, narrative_id, references, *sentences, team="my-awesome-team", **metadata):
    head = {"team_id": team, "run_id": run_id, "type": "automatic", "narrative_id": narrative_id,
            "narrative": NARRATIVES.get(str(narrative_id), "?"),
            "prompt": "Based on trusted sources, provide a factual and comprehensive answer.", **metadata}
    return json.dumps({"metadata": head, "references": references,
                       "answer": [{"text": text, "citations": cites} for text, cites in sentences]})


ANSWERS = "\n".join([
    answer("my-awesome-run", 1, [SEG[0], SEG[1], SEG[2]],  # format 1: indices; the id an integer, as the example
           ("The Industrial Revolution began in Britain in the mid-18th century.", [0, 2]),
           ("Technological innovations like the steam engine increased productivity.", [1])),
    answer("my-awesome-run", "2", [SEG[3], SEG[1]],  # format 2: segment ids
           ("Prisons balance discipline and rehabilitation.", [SEG[1], SEG[3]]),
           ("Recidivism depends on support after release.", [])),
    answer("other-run", "1", [SEG[2]], ("Coal and iron fuelled it.", [SEG[2]])),
]) + "\n"


@pytest.fixture
def rag25(db):
    coll = factories.collection("msmarco-v21", kind=Collection.Kind.DOCUMENTS)
    for qid, narrative in NARRATIVES.items():
        factories.topic(coll, qid, kind=Topic.Kind.ADHOC, title=narrative)
    factories.topic(coll, "3", kind=Topic.Kind.ADHOC, title="not in the campaign")
    for docid in SEG:
        factories.passage(coll, docid)
    return create_campaign(name="rag25", task="nuggets", topics=list(NARRATIVES))


def run_import(tmp_path, text, name="ag_output_trec_rag_2025.jsonl"):
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    call_command("import_rag_answers", str(path), campaign="rag25", no_progress=True)
    return path


@pytest.mark.parametrize("name", ["ag_output_trec_rag_2025.jsonl", "ag_output_trec_rag_2025.jsonl.gz"])
def test_trec_rag_2025_answers_import_with_both_citation_formats(rag25, tmp_path, name):
    run_import(tmp_path, ANSWERS, name)
    assert sorted(Run.objects.values_list("name", flat=True)) == ["my-awesome-run", "other-run"]
    first = Answer.objects.get(run__name="my-awesome-run", topic__external_id="1")
    assert first.campaign_id == rag25.pk and first.references == SEG[:3] and first.response_length is None
    sentences = list(first.sentences.order_by("position"))
    assert sentences[0].text.startswith("The Industrial Revolution began")
    cites = AnswerCitation.objects.filter(sentence=sentences[0]).order_by("position")
    assert [(c.reference, c.passage.external_id) for c in cites] == [(0, SEG[0]), (2, SEG[2])]
    second = Answer.objects.get(run__name="my-awesome-run", topic__external_id="2")
    cites = AnswerCitation.objects.filter(sentence__answer=second).order_by("sentence__position", "position")
    assert [(c.reference, c.passage.external_id) for c in cites] == [(1, SEG[1]), (0, SEG[3])]
    assert AnswerCitation.objects.get(sentence__answer__run__name="other-run").passage.external_id == SEG[2]
    assert Answer.objects.count() == 3


BAD = [
    (answer("r", 1, [SEG[0]], ("A sentence.", ["msmarco_v2.1_doc_99_1#0_1"])), "answer[0].citations[0]",
     "is not one of the references"),
    (answer("r", 1, [SEG[0]], ("A sentence.", [3])), "answer[0].citations[0]", "not an index"),
    (answer("r", 3, [SEG[0]], ("A sentence.", [0])), "metadata.narrative_id", "not a topic of campaign"),
    (answer("ok", 2, [SEG[3]], ("Again.", [0])), "metadata.narrative_id", "on line 1 too"),
    (answer("", 1, [SEG[0]], ("A sentence.", [0])), "metadata.run_id", "empty"),
    (json.dumps({"metadata": {"team_id": "t", "run_id": "r"}, "references": [SEG[0]],
                 "answer": [{"text": "A.", "citations": [0]}]}), "metadata.narrative_id", "missing"),
    (json.dumps({"metadata": "r", "references": [], "answer": []}), "metadata", "expected an object"),
]


@pytest.mark.parametrize("text, field, words", BAD)
def test_a_bad_2025_answers_file_names_file_line_and_field_and_stores_nothing(rag25, tmp_path, text, field, words):
    good = answer("ok", 2, [SEG[3]], ("Fine.", [SEG[3]]))
    for name in ("bad.jsonl", "bad.jsonl.gz"):
        with pytest.raises(CommandError) as caught:
            run_import(tmp_path, good + "\n" + text + "\n", name)
        message = str(caught.value)
        problem = next(p for p in message.splitlines() if words in p)
        assert problem.startswith(f"{tmp_path / name}:2: {field}: "), message
        assert not Answer.objects.exists() and not Run.objects.exists()


def test_padded_topic_ids_in_answers_and_nuggets_meet_the_campaigns_topics(rag25, tmp_path):
    """Topic ids follow the one rule (topic_ids.topic_id) in answer and nugget files too: `001` is topic 1, as in
    topics, runs and qrels files; the same topic written both ways on two lines is one topic answered twice."""
    padded = ANSWERS.replace('"narrative_id": 1,', '"narrative_id": "001",').replace(
        '"narrative_id": "2"', '"narrative_id": "02"')
    run_import(tmp_path, padded)
    assert sorted(Answer.objects.values_list("topic__external_id", flat=True)) == ["1", "1", "2"]

    twice = answer("third-run", "1", [SEG[0]], ("One.", [0])) + "\n" + answer("third-run", "01", [SEG[0]], ("Two.", [0]))
    with pytest.raises(CommandError, match=r"twice.jsonl:2: metadata.narrative_id: run 'third-run' answers topic '1' "
                                           r"on line 1 too"):
        run_import(tmp_path, twice + "\n", name="twice.jsonl")

    nuggets = tmp_path / "nuggets.jsonl"
    nuggets.write_text(json.dumps({"qid": "0001", "query": "q", "nuggets": [{"text": "Britain", "importance": "vital"}]})
                       + "\n")
    call_command("import_nuggets", str(nuggets), campaign="rag25", no_progress=True)
    from assessments.services import nuggets as bank

    assert [n["text"] for n in bank.topic_banks(rag25.pk)[Topic.objects.get(external_id="1").pk].value] == ["Britain"]
