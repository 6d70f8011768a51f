"""Nugget scores against the definitions of TREC RAG 2024 and the castorini nuggetizer (its `calculate_nugget_scores`:
all_score, vital_score with partial_support 0.5; strict_all_score, strict_vital_score with partial_support 0; a mean
over no nuggets 0; the run's figure the mean over its answers), computed here by hand from the nuggetizer's own
assignments file, and the organiser's path through bad files and odd data (every problem named file:line: field,
nothing stored; a topic with answers and no nuggets said, never a silent mean)."""

import gzip
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Assignment
from assessments.evaluation.nuggets import nugget_scores, scores_tsv
from assessments.models import Answer, Judgement, JudgementChange, Layer
from assessments.services import nuggets
from assessments.services.judging import record_judgement
from tests import factories
from tests.assessments.test_nuggets import ANSWERS, NUGGETS, D, T1, T2, answer, assignment, line, rag  # noqa: F401

pytestmark = pytest.mark.django_db

# A nuggetizer assignments file (scripts/assign_nuggets.py's output: qid, run_id, query, the nuggets with importance
# and assignment).
ASSIGNED = {
    ("ragnarok", T1): [("Vicarious trauma is indirect exposure to trauma", "vital", "support"),
                       ("Coping includes self-care", "vital", "partial_support"),
                       ("Supervision helps", "okay", "partial_support"),
                       ("It affects therapists", "okay", "not_support")],
    ("ragnarok", T2): [("Bone density decreases with age", "vital", "partial_support"),
                       ("Exercise slows bone loss", "okay", "support")],
    ("baseline", T1): [("Vicarious trauma is indirect exposure to trauma", "vital", "not_support"),
                       ("Coping includes self-care", "vital", "support"),
                       ("Supervision helps", "okay", "support"),
                       ("It affects therapists", "okay", "support")],
}


def nuggetizer_file(assigned=ASSIGNED):
    return "".join(json.dumps({"query": "q", "qid": qid, "run_id": run, "answer_text": "…", "response_length": 9,
                               "nuggets": [{"text": t, "importance": i, "assignment": a} for t, i, a in labels]}) + "\n"
                   for (run, qid), labels in assigned.items())


def by_hand(labels):
    """The definitions, written out: support 1, partial_support 0.5 (0 when strict), not_support 0; `all` over every
    nugget, `vital` over the vital ones (none: 0); `weighted` (TREC RAG 2024): vital weigh 1, okay 0.5, partial
    credit."""
    credit = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
    strict = {"support": 1.0, "partial_support": 0.0, "not_support": 0.0}
    vital = [a for _, i, a in labels if i == "vital"]
    every = [a for _, _, a in labels]
    weight = {"vital": 1.0, "okay": 0.5}

    def mean(values):
        return sum(values) / len(values) if values else 0.0

    return {"all": mean([credit[a] for a in every]), "vital": mean([credit[a] for a in vital]),
            "strict_all": mean([strict[a] for a in every]), "strict_vital": mean([strict[a] for a in vital]),
            "weighted": sum(weight[i] * credit[a] for _, i, a in labels) / sum(weight[i] for _, i, _ in labels)}


def write(tmp_path, name, text, packed=False):
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if packed else text.encode())
    return str(path)


def run_command(name, *args, **options):
    out, err = StringIO(), StringIO()
    call_command(name, *args, stdout=out, stderr=err, **options)
    return out.getvalue(), err.getvalue()


def load(tmp_path, answers=ANSWERS, banks=NUGGETS, assigned=ASSIGNED, packed=False):
    ext = ".jsonl.gz" if packed else ".jsonl"
    run_command("import_rag_answers", write(tmp_path, "answers" + ext, answers, packed), campaign="rag24",
                no_progress=True)
    if banks:
        run_command("import_nuggets", write(tmp_path, "nuggets" + ext, banks, packed), campaign="rag24",
                    no_progress=True)
    if assigned:
        path = write(tmp_path, "assignments" + ext, nuggetizer_file(assigned), packed)
        run_command("import_nugget_assignments", path, campaign="rag24", no_progress=True)


@pytest.mark.parametrize("packed", [False, True])
def test_the_exported_scores_are_the_nuggetizers_on_its_own_files(rag, tmp_path, packed):
    load(tmp_path, packed=packed)
    text, _ = run_command("export_nugget_scores", campaign="rag24", format="json")
    runs = json.loads(text)["runs"]
    # The nuggetizer's assign step makes a record for every topic with nuggets, a run without an answer there
    # getting an empty one (every nugget not_support), and its global mean is over those records: baseline, which
    # did not answer T2, scores 0 there.
    banks = {json.loads(x)["qid"]: json.loads(x)["nuggets"] for x in NUGGETS.splitlines()}
    for run in ("ragnarok", "baseline"):
        records = {qid: ASSIGNED.get((run, qid)) or [(n["text"], n["importance"], "not_support") for n in nuggets_]
                   for qid, nuggets_ in banks.items()}
        for measure in ("all", "vital", "strict_all", "strict_vital", "weighted"):
            expected = {qid: by_hand(labels)[measure] for qid, labels in records.items()}
            for qid, value in expected.items():
                if (run, qid) in ASSIGNED:
                    assert runs[run]["topics"][qid][measure] == pytest.approx(value), (run, qid, measure)
            assert runs[run][measure] == pytest.approx(sum(expected.values()) / len(expected)), (run, measure)
    assert runs["baseline"]["unanswered"] == [T2] and runs["ragnarok"]["unanswered"] == []
    assert list(runs["baseline"]["topics"]) == [T1]
    # The hand computation, spelled out for ragnarok on T1 (s, p | p, n): all (1 + .5 + .5 + 0) / 4 = .5,
    # vital (1 + .5) / 2 = .75, strict_all 1 / 4, strict_vital 1 / 2, weighted (1 + .5 + .25 + 0) / 3.
    assert runs["ragnarok"]["topics"][T1]["all"] == pytest.approx(0.5)
    assert runs["ragnarok"]["topics"][T1]["vital"] == pytest.approx(0.75)
    assert runs["ragnarok"]["topics"][T1]["strict_all"] == pytest.approx(0.25)
    assert runs["ragnarok"]["topics"][T1]["strict_vital"] == pytest.approx(0.5)
    assert runs["ragnarok"]["topics"][T1]["weighted"] == pytest.approx(1.75 / 3)


def test_a_bank_without_vital_nuggets_scores_vital_zero_as_the_nuggetizer(rag, tmp_path):
    banks = line(qid=T2, query="q", nuggets=[{"text": "Exercise slows bone loss", "importance": "okay"}]) + "\n"
    load(tmp_path, banks=NUGGETS.splitlines()[0] + "\n" + banks,
         assigned={("ragnarok", T2): [("Exercise slows bone loss", "okay", "support")]})
    found = nugget_scores(rag.pk)["runs"]["ragnarok"]["topics"][T2]
    assert (found["all"], found["vital"], found["strict_vital"], found["weighted"]) == (1.0, 0.0, 0.0, 1.0)
    assert found["vital_nuggets"] == 0


def test_the_export_says_which_variant_each_column_is(rag, tmp_path):
    load(tmp_path)
    said = json.loads(run_command("export_nugget_scores", campaign="rag24", format="json")[0])["definitions"]
    assert list(said) == ["all", "vital", "strict_all", "strict_vital", "weighted"]
    assert "partial_support 0.5" in said["all"] and "all_score" in said["all"]
    assert "partial_support 0," in said["strict_all"] and "strict_all_score" in said["strict_all"]
    assert "vital 1, okay 0.5" in said["weighted"] and "partial credit" in said["weighted"]
    text, _ = run_command("export_nugget_scores", campaign="rag24", format="tsv")
    lines = text.splitlines()
    assert lines[0] == "run\ttopic\tall\tvital\tstrict_all\tstrict_vital\tweighted"  # a plain TSV, as before
    assert f"ragnarok\t{T1}\t0.5000\t0.7500\t0.2500\t0.5000\t0.5833" in lines


def test_practice_labels_do_not_count_in_nugget_scores(rag, tmp_path):
    """A trainee's qualification unit of a topic (and no formal one): their nugget labels are practice
    (Judgement.objects.without_practice), never a voice in the scores."""
    load(tmp_path)
    before = nugget_scores(rag.pk)
    first = Answer.objects.get(run__name="ragnarok", topic__external_id=T1)
    trainee = factories.user("trainee")
    factories.assignment(trainee, first.topic, campaign=rag, run=first.run, qualification=True,
                         kind=Assignment.Kind.NUGGET_SUPPORT)
    # n1 was support (imported); the trainee's not_support would make a tie, taking the lower.
    record_judgement(assessor=trainee, layer=Layer.NUGGET_SUPPORT, value="not_support", topic=first.topic,
                     item=nuggets.support_item(first.pk, "n1"), campaign_id=rag.pk)
    assert nugget_scores(rag.pk) == before
    # Once the trainee holds a formal unit of the topic (here another run's answer), their label counts.
    factories.assignment(trainee, first.topic, campaign=rag, run=Answer.objects.get(run__name="baseline").run,
                         kind=Assignment.Kind.NUGGET_SUPPORT)
    assert nugget_scores(rag.pk)["runs"]["ragnarok"]["topics"][T1]["all"] == pytest.approx((0 + .5 + .5 + 0) / 4)


def test_practice_labels_do_not_count_in_citation_scores(rag, tmp_path):
    load(tmp_path)
    first = Answer.objects.get(run__name="ragnarok", topic__external_id=T1)
    cited = first.sentences.get(position=0).citations.get()
    judge, trainee = factories.user("judge"), factories.user("trainee")
    factories.assignment(judge, first.topic, campaign=rag, run=first.run, kind=Assignment.Kind.CITATION_SUPPORT)
    factories.assignment(trainee, first.topic, campaign=rag, run=first.run, qualification=True,
                         kind=Assignment.Kind.CITATION_SUPPORT)
    for who, value in ((judge, "full"), (trainee, "none")):
        record_judgement(assessor=who, layer=Layer.CITATION_SUPPORT, value=value, topic=first.topic,
                         passage=cited.passage, item=nuggets.citation_item(first.pk, 0), campaign_id=rag.pk)
    found = nugget_scores(rag.pk)["runs"]["ragnarok"]["topics"][T1]
    assert found["citations_assessed"] == 1
    assert found["citation_precision"] == pytest.approx(1 / 3)  # three cited pairs, one full (the trainee's none: not)
    assert found["citation_recall"] == pytest.approx(1 / 2)


def test_a_topic_with_answers_and_no_nuggets_is_said_not_scored_silently(rag, tmp_path):
    load(tmp_path, banks=NUGGETS.splitlines()[0] + "\n",
         assigned={k: v for k, v in ASSIGNED.items() if k[1] == T1})
    text, err = run_command("export_nugget_scores", campaign="rag24", format="json")
    found = json.loads(text)
    assert list(found["runs"]["ragnarok"]["topics"]) == [T1]
    assert found["topics_without_nuggets"] == {T2: ["ragnarok"]}
    assert f"topic {T2}" in err and "no nuggets" in err and "ragnarok" in err
    tsv, err = run_command("export_nugget_scores", campaign="rag24", format="tsv")
    assert T2 not in tsv and f"not scored: topic {T2} has answers (1: ragnarok) and no nuggets" in err


def test_the_api_says_a_topic_without_nuggets(rag, tmp_path, client):
    from annotation.roles import Role, ensure_groups

    load(tmp_path, banks=NUGGETS.splitlines()[0] + "\n", assigned=None)
    organiser = factories.user("chief")
    organiser.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(organiser)
    got = client.get("/api/campaigns/rag24/nugget-scores/")
    assert got.status_code == 200, got.content
    assert got.json()["topics_without_nuggets"] == {T2: ["ragnarok"]}


def test_assignments_whose_importance_differs_from_the_bank_are_refused(rag, tmp_path):
    """The nuggetizer scores an assignments file with the importance it carries; the campaign scores with its bank's.
    A file whose importance differs was stored and scored by the bank's, silently not the file's figures."""
    load(tmp_path, assigned=None)
    changed = {("ragnarok", T2): [("Bone density decreases with age", "okay", "support"),
                                  ("Exercise slows bone loss", "okay", "support")]}
    path = write(tmp_path, "assignments.jsonl", nuggetizer_file(changed))
    with pytest.raises(CommandError) as caught:
        run_command("import_nugget_assignments", path, campaign="rag24", no_progress=True)
    assert f"{path}:1: nuggets[0].importance: 'okay' is not the bank's importance of this nugget ('vital')" in str(
        caught.value)
    assert not Judgement.objects.filter(layer=Layer.NUGGET_SUPPORT).exists()


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("command, text, field, words", [
    ("import_rag_answers", answer("r", T1, ["msmarco_v2.1_doc_99_1#0_2"], ("A sentence.", [0])), "references[0]",
     "unknown document 'msmarco_v2.1_doc_99_1#0_2'"),
    ("import_rag_answers", answer("r", "2024-99999", [D[0]], ("A sentence.", [0])), "topic_id",
     "topic '2024-99999' is not a topic of campaign 'rag24'"),
    ("import_nuggets", line(qid=T1, query="q", nuggets=[{"text": "X", "importance": "high"}]),
     "nuggets[0].importance", "'high' is not one of vital, okay"),
    ("import_nuggets", line(qid="2024-99999", query="q", nuggets=[{"text": "X", "importance": "okay"}]), "qid",
     "topic '2024-99999' is not a topic of campaign 'rag24'"),
])
def test_a_bad_line_names_file_line_and_field_plain_or_packed_and_stores_nothing(rag, tmp_path, packed, command,
                                                                                 text, field, words):
    good = {"import_rag_answers": answer("ok", T2, [D[2]], ("Fine.", [0])),
            "import_nuggets": NUGGETS.splitlines()[1]}[command]
    path = write(tmp_path, "in.jsonl.gz" if packed else "in.jsonl", good + "\n" + text + "\n", packed)
    with pytest.raises(CommandError) as caught:
        run_command(command, path, campaign="rag24", no_progress=True)
    assert f"{path}:2: {field}: {words}" in str(caught.value)
    assert not Answer.objects.exists() and not Judgement.objects.exists()


@pytest.mark.parametrize("command", ["import_rag_answers", "import_nuggets", "import_nugget_assignments"])
def test_a_broken_gzip_file_is_refused_naming_it(rag, tmp_path, command):
    packed = gzip.compress((ANSWERS * 50).encode())
    path = tmp_path / "in.jsonl.gz"
    path.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(CommandError) as caught:
        run_command(command, str(path), campaign="rag24", no_progress=True)
    assert str(path) in str(caught.value)
    assert not Answer.objects.exists() and not Judgement.objects.exists()


def test_an_answer_citing_nothing_scores_citations_zero_and_its_nuggets_as_labelled(rag, tmp_path):
    uncited = answer("quiet", T1, [], ("Vicarious trauma is indirect exposure.", []))
    load(tmp_path, answers=ANSWERS + uncited + "\n",
         assigned={("quiet", T1): [("Vicarious trauma is indirect exposure to trauma", "vital", "support")]})
    quiet = Answer.objects.get(run__name="quiet")
    assert not quiet.references and quiet.sentences.count() == 1
    found = nugget_scores(rag.pk)["runs"]["quiet"]["topics"][T1]
    assert found["all"] == pytest.approx(1 / 4) and found["assessed"] == 1
    # Citations judged on another answer: the quiet one has none, precision and recall 0 with 0 citations.
    first = Answer.objects.get(run__name="ragnarok", topic__external_id=T1)
    cited = first.sentences.get(position=0).citations.get()
    record_judgement(assessor=factories.user("judge"), layer=Layer.CITATION_SUPPORT, value="full", topic=first.topic,
                     passage=cited.passage, item=nuggets.citation_item(first.pk, 0), campaign_id=rag.pk,
                     source=JudgementChange.Source.WEB)
    found = nugget_scores(rag.pk)["runs"]["quiet"]["topics"][T1]
    assert (found["citations"], found["citation_precision"], found["citation_recall"]) == (0, 0.0, 0.0)
    assert "citation_precision" in scores_tsv(nugget_scores(rag.pk))


def test_a_practice_bank_is_never_the_topics_bank(rag, tmp_path):
    """A bank written in a qualification creation unit (and no formal one) is practice: the topic's bank, and so
    every score, stays the one written for the campaign, though the practice bank was changed last."""
    load(tmp_path)
    before = nugget_scores(rag.pk)
    topic = Answer.objects.get(run__name="ragnarok", topic__external_id=T1).topic
    trainee = factories.user("trainee")
    factories.assignment(trainee, topic, campaign=rag, qualification=True, kind=Assignment.Kind.NUGGET_CREATION)
    record_judgement(assessor=trainee, layer=Layer.NUGGETS, topic=topic, campaign_id=rag.pk,
                     value=[{"id": "n1", "text": "Only this", "importance": "vital", "origin": "assessor"}])
    assert nuggets.topic_banks(rag.pk, [topic.pk])[topic.pk].assessor.username == "imported-nuggets"
    assert nugget_scores(rag.pk) == before


def test_an_empty_bank_is_no_bank_to_score_by(rag, tmp_path):
    """A bank of no nuggets scored every answer 0 in every measure, pulling its runs' means down."""
    load(tmp_path, banks=NUGGETS.splitlines()[0] + "\n" + line(qid=T2, query="q", nuggets=[]) + "\n",
         assigned={k: v for k, v in ASSIGNED.items() if k[1] == T1})
    found = nugget_scores(rag.pk)
    assert list(found["runs"]["ragnarok"]["topics"]) == [T1]
    assert found["runs"]["ragnarok"]["all"] == pytest.approx(by_hand(ASSIGNED["ragnarok", T1])["all"])
    assert found["topics_without_nuggets"] == {T2: ["ragnarok"]}


@pytest.mark.parametrize("case", ["truncated", "bad line"])
def test_a_bad_packed_upload_is_a_400_naming_the_file_and_stores_nothing(rag, case):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from rest_framework.test import APIClient

    from annotation.services.tokens import issue_token

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(username='team-a', role='participant')[1]}")
    good = answer("rag-a", T1, [D[0]], ("Fine.", [0]))
    if case == "truncated":
        data = gzip.compress((good + "\n").encode() * 200)
        data = data[: len(data) // 2]
    else:
        data = gzip.compress((good + "\n" + answer("rag-a", T2, [D[2]], ("Bad.", [3])) + "\n").encode())
    got = client.post("/api/campaigns/rag24/answers/", {"file": SimpleUploadedFile("answers.jsonl.gz", data)},
                      format="multipart")
    assert got.status_code == 400, got.content  # the one file uploaded: its problems by line and field
    if case == "truncated":
        assert "broken gzip data" in got.json()["problems"][0]["message"]
    else:
        assert {(p["line"], p["field"]) for p in got.json()["problems"]} == {(2, "answer[0].citations[0]")}
    assert not Answer.objects.exists()


def test_an_empty_answer_is_refused_saying_an_unanswered_topic_scores_zero(rag, tmp_path):
    """The nuggetizer scores an empty answer 0; here a run's mean counts an unanswered topic 0, so the line can go."""
    text = ANSWERS.replace(answer("ragnarok", T2, [D[2]], ("Bone density falls with age.", [0]),
                                  topic="how bone density changes"),
                           line(run_id="ragnarok", topic_id=T2, references=[], answer=[]))
    path = write(tmp_path, "answers.jsonl", text)
    with pytest.raises(CommandError) as caught:
        run_command("import_rag_answers", path, campaign="rag24", no_progress=True)
    assert f"{path}:2: answer: the answer has no sentences: leave the line out" in str(caught.value)
    run_command("import_rag_answers", write(tmp_path, "fixed.jsonl", "\n".join(
        x for x in text.splitlines() if '"answer": []' not in x) + "\n"), campaign="rag24", no_progress=True)
    run_command("import_nuggets", write(tmp_path, "nuggets.jsonl", NUGGETS), campaign="rag24", no_progress=True)
    found = nugget_scores(rag.pk)["runs"]["ragnarok"]
    assert found["unanswered"] == [T2] and found["all"] == 0.0


def test_the_nuggetizers_empty_answer_lines_are_left_out_and_said(rag, tmp_path):
    """The nuggetizer's assign step writes a line for every topic of the nuggets file, an empty answer_text where
    the run has no answer; importing its file for a run that skipped a topic was refused whole ("no run named")."""
    load(tmp_path, assigned=None)
    lines = nuggetizer_file({k: v for k, v in ASSIGNED.items() if k[0] == "baseline"})
    empty = json.dumps({"query": "q", "qid": T2, "run_id": "baseline", "answer_text": "", "response_length": 0,
                        "nuggets": [{"text": "Bone density decreases with age", "importance": "vital",
                                     "assignment": "not_support"},
                                    {"text": "Exercise slows bone loss", "importance": "okay",
                                     "assignment": "not_support"}]})
    out, _ = run_command("import_nugget_assignments", write(tmp_path, "baseline.jsonl", lines + empty + "\n"),
                         campaign="rag24", no_progress=True)
    assert "left out 1 lines of topics their run did not answer" in out and f"{T2} baseline" in out
    found = nugget_scores(rag.pk)["runs"]["baseline"]
    assert found["all"] == pytest.approx(by_hand(ASSIGNED["baseline", T1])["all"] / 2)
    # A line for a run that is not the campaign's, or with a non-empty answer, is still a problem.
    for run, text in (("nobody", ""), ("baseline", "An answer.")):
        bad = json.loads(empty) | {"run_id": run, "answer_text": text}
        with pytest.raises(CommandError, match=r":1: run_id: no run named"):
            run_command("import_nugget_assignments", write(tmp_path, "bad.jsonl", json.dumps(bad) + "\n"),
                        campaign="rag24", no_progress=True)


def test_a_bank_nugget_without_importance_is_refused_saying_what_the_nuggetizer_would_take(rag, tmp_path):
    path = write(tmp_path, "nuggets.jsonl", line(qid=T1, query="q", nuggets=[{"text": "No importance"}]) + "\n")
    with pytest.raises(CommandError) as caught:
        run_command("import_nuggets", path, campaign="rag24", no_progress=True)
    assert f"{path}:1: nuggets[0].importance: missing: give one of vital, okay" in str(caught.value)
    assert not Judgement.objects.exists()


def test_the_whole_path_from_a_written_bank_to_the_exported_scores(client):
    """A topic's bank written on the creation page (the save path), two assessors' support labels saved on their
    pages, a disagreement adjudicated on the adjudication page, and the exported scores, by hand."""
    from django.urls import reverse
    from django.utils import timezone

    from annotation.roles import Role, ensure_groups
    from annotation.services.assignment import assign_campaign
    from tests.annotation.nuggets_setup import RUNS, nuggets_world
    from tests.annotation.test_nugget_support_page import save

    groups = ensure_groups()
    world = nuggets_world(bank=False)
    campaign = world["campaign"]
    writer, amy, ben = (factories.user(n) for n in ("writer", "amy", "ben"))
    assign_campaign(campaign, ["writer"], stage="create")
    unit = Assignment.objects.get(campaign=campaign, assessor=writer)
    bank = [{"id": "n1", "text": "Vicarious trauma is indirect exposure", "importance": "vital", "origin": "assessor"},
            {"id": "n2", "text": "Self-care helps", "importance": "vital", "origin": "assessor"},
            {"id": "n3", "text": "Supervision helps", "importance": "okay", "origin": "assessor"},
            {"id": "n4", "text": "Therapists are at risk", "importance": "okay", "origin": "assessor"}]
    client.force_login(writer)
    saved = save(client, unit, layer="nuggets", value=bank, client_time=timezone.now().isoformat())
    assert saved.status_code == 200, saved.content
    done = client.post(f"/a/{unit.token}/mark", json.dumps({"done": True}), content_type="application/json")
    assert done.json()["status"] == "done"  # the bank is settled: the support units may take labels
    assign_campaign(campaign, ["amy", "ben"], overlap=2, stage="support")
    given = {amy: {"n1": "support", "n2": "partial_support", "n3": "not_support", "n4": "support"},
             ben: {"n1": "support", "n2": "not_support", "n3": "partial_support", "n4": "support"}}
    answer = world["answers"][RUNS[0]]
    for who, labels in given.items():
        client.force_login(who)
        page = Assignment.objects.get(campaign=campaign, assessor=who, run=answer.run)
        for seq, (nugget, value) in enumerate(labels.items(), start=1):
            got = save(client, page, seq=seq, layer="nugget_support", nugget=nugget, value=value)
            assert got.status_code == 200, got.content
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(groups[Role.ORGANISER])
    client.force_login(organiser)
    settled = client.post(reverse("annotation:adjudication", args=[campaign.name]),
                          {"layer": "nugget_support", "topic": answer.topic.pk,
                           "item": nuggets.support_item(answer.pk, "n2"), "label": "partial_support"})
    assert settled.status_code == 302
    text, err = run_command("export_nugget_scores", campaign=campaign.name, format="json")
    runs = json.loads(text)["runs"]
    # n1 support (both), n2 partial (adjudicated), n3 partial vs not: a tie, the lower (not), n4 support (both).
    labels = [("", "vital", "support"), ("", "vital", "partial_support"), ("", "okay", "not_support"),
              ("", "okay", "support")]
    expected = by_hand(labels)
    assert expected == pytest.approx({"all": .625, "vital": .75, "strict_all": .5, "strict_vital": .5,
                                      "weighted": 2 / 3})
    for measure, value in expected.items():
        assert runs[RUNS[0]][measure] == pytest.approx(value), measure
        assert runs[RUNS[1]][measure] == 0.0  # nobody labelled its answer: every nugget counts not supported
    assert runs[RUNS[0]]["topics"][answer.topic.external_id]["assessed"] == 4 and err == ""


def test_a_run_that_answered_no_topic_with_nuggets_scores_zero_on_them(rag, tmp_path):
    """Under the nuggetizer a run scores 0 on a topic it did not answer; a run whose answers were all on topics
    without nuggets was missing from the scores, as if it had not taken part."""
    only_t2 = answer("late", T2, [D[2]], ("Bone density falls with age.", [0]), topic="how bone density changes")
    load(tmp_path, answers=ANSWERS + only_t2 + "\n", banks=NUGGETS.splitlines()[0] + "\n",
         assigned={k: v for k, v in ASSIGNED.items() if k[1] == T1})
    found = nugget_scores(rag.pk)
    late = found["runs"]["late"]
    assert (late["all"], late["vital"], late["weighted"], late["topics"], late["unanswered"]) == (0, 0, 0, {}, [T1])
    assert found["topics_without_nuggets"] == {T2: ["late", "ragnarok"]}
    assert "late\tall\t0.0000\t0.0000\t0.0000\t0.0000\t0.0000" in scores_tsv(found).splitlines()


def test_the_results_page_says_a_topic_without_nuggets_and_unanswered_topics(rag, tmp_path, client):
    from annotation.roles import Role, ensure_groups

    load(tmp_path, banks=NUGGETS.splitlines()[0] + "\n", assigned=None)
    organiser = factories.user("chief")
    organiser.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(organiser)
    html = client.get("/campaigns/rag24/results/").content.decode()
    assert f"Not scored: 1 topics with answers and no nugget bank ({T2})" in html
    assert "a topic the run did not answer counts 0" in html
    download = client.get("/campaigns/rag24/results/nugget-scores/")
    assert download.status_code == 200
    body = json.loads(b"".join(getattr(download, "streaming_content", [download.content])))
    assert body["topics_without_nuggets"] == {T2: ["ragnarok"]}


@pytest.mark.parametrize("out", [False, True])
def test_the_exported_assignments_score_to_the_platforms_scores_and_read_back(rag, tmp_path, out):
    """export_nugget_assignments writes the nuggetizer's assignments format (issue 39 item 5): scored record by
    record by its definitions (by_hand) and averaged per run, it gives export_nugget_scores' figures exactly;
    read back as another assessor's labels, the same scores. One nugget left unlabelled counts not_support in both."""
    assigned = dict(ASSIGNED)
    assigned["ragnarok", T1] = ASSIGNED["ragnarok", T1][:3]  # "It affects therapists" unlabelled for ragnarok
    load(tmp_path, assigned=assigned)
    people = json.loads(run_command("export_nugget_scores", campaign="rag24")[0])["runs"]
    if out:
        target = tmp_path / "assignments.out.jsonl"
        run_command("export_nugget_assignments", campaign="rag24", out=str(target))
        text = target.read_text()
    else:
        text = run_command("export_nugget_assignments", campaign="rag24")[0]
    records = [json.loads(x) for x in text.splitlines()]
    assert [(r["run_id"], r["qid"]) for r in records] == [("baseline", T1), ("baseline", T2),
                                                          ("ragnarok", T1), ("ragnarok", T2)]
    assert set(records[0]) == {"qid", "query", "run_id", "answer_text", "nuggets"}
    assert records[1]["answer_text"] == "" and {n["assignment"] for n in records[1]["nuggets"]} == {"not_support"}
    assert records[2]["nuggets"][3] == {"text": "It affects therapists", "importance": "okay",
                                        "assignment": "not_support"}
    for run in ("ragnarok", "baseline"):
        mine = [r for r in records if r["run_id"] == run]
        for measure in ("all", "vital", "strict_all", "strict_vital", "weighted"):
            values = [by_hand([(n["text"], n["importance"], n["assignment"]) for n in r["nuggets"]])[measure]
                      for r in mine]
            assert sum(values) / len(values) == pytest.approx(people[run][measure], abs=1e-12), (run, measure)
    # Read back as a second assessor who agrees everywhere (and says not_support where nobody had): the same scores.
    run_command("import_nugget_assignments", write(tmp_path, "back.jsonl", text), campaign="rag24",
                assessor="read-back", no_progress=True)
    assert Judgement.objects.filter(layer=Layer.NUGGET_SUPPORT, assessor__username="read-back").count() == 10  # not baseline T2: unanswered
    again = json.loads(run_command("export_nugget_scores", campaign="rag24")[0])["runs"]
    measures = ("all", "vital", "strict_all", "strict_vital", "weighted")

    def figures(runs):
        return {run: ([found[m] for m in measures], {t: [v[m] for m in measures] for t, v in found["topics"].items()})
                for run, found in runs.items()}

    assert figures(again) == figures(people)
    assert again["ragnarok"]["topics"][T1]["assessed"] == people["ragnarok"]["topics"][T1]["assessed"] + 1
