"""POST /api/runs/ to an outline campaign: TREC CAR Y3 submissions (JSON lines), checked with the importer's Y3
rules plus the campaign's topics and the collection's passages; nothing stored on any problem."""

import json

import pytest

from assessments.models import Run, RunEntry
from tests.api.helpers import PARA, gz, page, problem, rejected, upload

pytestmark = pytest.mark.django_db


def article(run_name="teamA-1"):
    run = Run.objects.get(name=run_name)
    return run, list(RunEntry.objects.filter(run=run).order_by("rank").values_list("passage__external_id", "score"))


def test_a_y3_submission_is_stored_as_the_article_in_its_order(outline, team_a):
    origins = [{"para_id": PARA[2], "rank_score": -1.5e-3, "rank": 1, "section_path": "x"}]
    response = upload(team_a, "car-y3", page(paragraphs=[PARA[2], PARA[0], PARA[1]], paragraph_origins=origins) + "\n")
    assert response.status_code == 201, response.content
    run, entries = article()
    assert run.owner.username == "team-a" and run.track == "car-y3" and run.source == Run.Source.UPLOADED
    assert entries == [(PARA[2], -0.0015), (PARA[0], None), (PARA[1], None)]


@pytest.mark.parametrize(
    "wrap",
    [
        lambda text: text.replace("\n", "\r\n"),
        lambda text: "\ufeff" + text,
        lambda text: text + "\n\n  \n",
        lambda text: gz(text),
    ],
    ids=["crlf", "bom", "trailing blank lines", "gzip"],
)
def test_the_variants_users_send_are_accepted(outline, team_a, wrap):
    response = upload(team_a, "car-y3", wrap(page() + "\n"), name="run.jsonl")
    assert response.status_code == 201, response.content
    assert [pid for pid, _ in article()[1]] == PARA[:3]


def test_a_para_id_that_is_not_40_hex_characters_is_rejected(outline, team_a):
    body = rejected(team_a, "car-y3", page(paragraphs=[PARA[0], "ABC123"]))
    assert problem(body, 1, "paragraphs[1].para_id") == "'ABC123' is not 40 hexadecimal characters (0-9, a-f)"


@pytest.mark.parametrize("run_id", ["a-run-id-of-16ch", "team A", "team/1", ""])
def test_a_run_id_that_is_not_a_y3_run_id_is_rejected(outline, team_a, run_id):
    body = rejected(team_a, "car-y3", page(run_id=run_id))
    assert problem(body, 1, "run_id")


def test_more_paragraphs_than_y3_allows_are_rejected(outline, team_a):
    body = rejected(team_a, "car-y3", page(paragraphs=PARA[:21]))
    assert problem(body, 1, "paragraphs") == "21 paragraphs: a Y3 article has at most 20"


def test_more_paragraphs_than_the_track_allows_are_rejected(outline, team_a):
    outline.track.max_per_topic = 2
    outline.track.save()
    body = rejected(team_a, "car-y3", page(paragraphs=PARA[:3]))
    assert problem(body, 1, "paragraphs") == "3 paragraphs: the track allows at most 2 a page"


def test_an_unknown_topic_is_rejected(outline, team_a):
    body = rejected(team_a, "car-y3", page() + "\n" + page(squid="tqa2:L_0999"))
    assert problem(body, 2, "squid") == "unknown topic 'tqa2:L_0999' in collection 'car'"


def test_a_topic_that_is_not_the_campaigns_is_rejected(outline, team_a):
    body = rejected(team_a, "car-y3", page(squid="tqa2:L_0002"))
    assert problem(body, 1, "squid") == "topic 'tqa2:L_0002' is not a topic of campaign 'car-y3'"


def test_an_unknown_paragraph_is_rejected_even_with_its_text(outline, team_a):
    unknown = "f" * 40
    line = json.loads(page())
    line["paragraphs"].append({"para_id": unknown, "para_body": [{"text": "Injected text."}]})
    body = rejected(team_a, "car-y3", json.dumps(line))
    assert problem(body, 1, "paragraphs[3].para_id") == f"unknown document '{unknown}': collection 'car' has no such passage"


def test_a_paragraph_twice_in_an_article_is_rejected(outline, team_a):
    body = rejected(team_a, "car-y3", page(paragraphs=[PARA[0], PARA[1], PARA[0]]))
    assert "a paragraph appears once in an article" in problem(body, 1, "paragraphs[2].para_id")


def test_two_run_ids_in_one_file_are_rejected(outline, team_a):
    body = rejected(team_a, "car-y3", page(run_id="teamA-1") + "\n" + page(run_id="teamA-2"))
    assert "differs from 'teamA-1' (line 1)" in problem(body, 2, "run_id")


def test_a_heading_id_of_the_wrong_form_is_rejected(outline, team_a):
    line = json.loads(page())
    line["query_facets"][0]["heading_id"] = "tqa2:L_0001/H1"
    body = rejected(team_a, "car-y3", json.dumps(line))
    assert "not of the form tqa2:L_xxxx/T_yyyy" in problem(body, 1, "query_facets[0].heading_id")


def test_a_line_that_is_not_json_is_rejected_naming_it(outline, team_a):
    body = rejected(team_a, "car-y3", page() + "\n{not json\n")
    assert problem(body, 2, None).startswith("invalid JSON")


def test_a_missing_key_is_rejected(outline, team_a):
    line = json.loads(page())
    del line["paragraphs"]
    body = rejected(team_a, "car-y3", json.dumps(line))
    assert problem(body, 1, None) == "missing key 'paragraphs'"


def test_a_trec_run_sent_to_an_outline_campaign_is_rejected(outline, team_a):
    body = rejected(team_a, "car-y3", "301 Q0 d1 1 3 teamA\n")
    assert problem(body, 1, None).startswith("invalid JSON")


def test_a_run_name_the_uploader_already_has_in_the_campaign_is_rejected(outline, team_a, client_as):
    assert upload(client_as("participant_b"), "car-y3", page()).status_code == 201  # another team's: no matter
    assert upload(team_a, "car-y3", page()).status_code == 201
    body = rejected(team_a, "car-y3", page())
    assert problem(body, 1, "run_id") == "you already have a run named 'teamA-1' in campaign 'car-y3'"


def test_a_binary_file_is_rejected(outline, team_a):
    body = rejected(team_a, "car-y3", b"\x89PNG\r\n\x1a\n\x00\x00")
    assert problem(body, 3, None) == "not a text file: NUL byte at offset 8"


def test_a_number_of_more_digits_than_python_converts_is_a_problem_not_a_500(outline, team_a):
    body = rejected(team_a, "car-y3", '{"run_id": ' + "1" * 5000 + "}\n")
    assert problem(body, 1, None) == "invalid JSON: a number of 5,000 digits (at most 4,300 are taken) at column 12"
    body = rejected(team_a, "car-y3", page() + "\n" + '{"title": ' + "1" * 5000 + "}\n")
    assert problem(body, 2, None).startswith("invalid JSON: a number of 5,000 digits")
