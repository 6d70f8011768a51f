"""POST /api/runs/ with TREC six-column runs: every problem listed with its line, nothing stored; the variants
users send are accepted."""

import gzip
import json

import pytest

from assessments.models import Run, RunEntry
from tests.api.helpers import gz, problem, rejected, upload

pytestmark = pytest.mark.django_db

GOOD = "301 Q0 d1 1 3.5 teamA\n301 Q0 d2 2 2.0 teamA\n302 Q0 d3 1 9 teamA\n"


def stored(name="teamA"):
    run = Run.objects.get(name=name)
    entries = list(
        RunEntry.objects.filter(run=run).order_by("topic__external_id", "rank")
        .values_list("topic__external_id", "passage__external_id", "score")
    )
    return run, entries


def test_a_good_run_is_stored_as_the_participants_upload_to_the_campaign(adhoc, team_a):
    response = upload(team_a, "adhoc", GOOD)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["name"] == "teamA" and body["campaign"] == "adhoc" and body["owner"] == "team-a"
    assert body["collection"] == "web" and body["source"] == "uploaded"
    assert body["topic_count"] == 2 and body["entry_count"] == 3 and body["pooled"] is False
    run, entries = stored()
    assert run.owner.username == "team-a" and run.track == "adhoc" and run.source == Run.Source.UPLOADED
    assert run.source_file == "run.txt"
    assert entries == [("301", "d1", 3.5), ("301", "d2", 2.0), ("302", "d3", 9.0)]


# --- rejections ------------------------------------------------------------------------------------------------


def test_a_line_with_the_wrong_number_of_columns_is_rejected_naming_the_line(adhoc, team_a):
    body = rejected(team_a, "adhoc", "301 Q0 d1 1 3.5 teamA\n301 Q0 d2 2 2.0\n")
    assert "expected 6 columns" in problem(body, 2, None)
    assert body["total"] == 1
    assert "nothing was stored" in body["detail"]


def test_a_rank_that_is_not_an_integer_is_rejected(adhoc, team_a):
    body = rejected(team_a, "adhoc", "301 Q0 d1 1 3.5 teamA\n301 Q0 d2 two 2.0 teamA\n")
    assert problem(body, 2, "rank") == "'two' is not an integer"


@pytest.mark.parametrize("score", ["inf", "-Infinity", "nan", "1e999", "abc", "0x1p3"])
def test_a_score_that_is_not_a_finite_number_is_rejected(adhoc, team_a, score):
    body = rejected(team_a, "adhoc", f"301 Q0 d1 1 {score} teamA\n")
    assert repr(score) in problem(body, 1, "score")


def test_two_run_names_in_one_file_are_rejected_at_the_line_of_the_second(adhoc, team_a):
    body = rejected(team_a, "adhoc", "301 Q0 d1 1 3 teamA\n301 Q0 d2 2 2 teamA\n302 Q0 d3 1 1 teamB\n")
    message = problem(body, 3, "tag")
    assert "'teamB' differs from 'teamA' (line 1)" in message
    assert "--" not in message  # the importer's command-line hint is not shown to API clients


def test_the_same_document_twice_in_a_topic_is_rejected(adhoc, team_a):
    body = rejected(team_a, "adhoc", "301 Q0 d1 1 3 teamA\n301 Q0 d1 2 2 teamA\n")
    assert problem(body, 2, "docid") == "'d1' appears twice for topic '301' (first on line 1)"


def test_an_unknown_topic_is_rejected(adhoc, team_a):
    body = rejected(team_a, "adhoc", "301 Q0 d1 1 3 teamA\n999 Q0 d2 1 2 teamA\n")
    assert problem(body, 2, "qid") == "unknown topic '999' in collection 'web'"


def test_a_topic_of_the_collection_that_is_not_the_campaigns_is_rejected(adhoc, team_a):
    body = rejected(team_a, "adhoc", "303 Q0 d1 1 3 teamA\n")
    assert problem(body, 1, "qid") == "topic '303' is not a topic of campaign 'adhoc'"


def test_an_unknown_document_is_rejected(adhoc, team_a):
    body = rejected(team_a, "adhoc", "301 Q0 d1 1 3 teamA\n301 Q0 nope 2 2 teamA\n")
    assert problem(body, 2, "docid") == "unknown document 'nope' in collection 'web'"


def test_more_documents_for_a_topic_than_the_track_allows_are_rejected(adhoc, team_a):
    adhoc.track.max_per_topic = 2
    adhoc.track.save()
    body = rejected(team_a, "adhoc", "301 Q0 d1 1 3 teamA\n301 Q0 d2 2 2 teamA\n301 Q0 d3 3 1 teamA\n")
    assert problem(body, 3, "docid") == "topic '301' has more than 2 documents, the most the track allows"


def test_a_run_name_the_uploader_already_has_in_the_campaign_is_rejected(adhoc, team_a, client_as):
    assert upload(client_as("participant_b"), "adhoc", GOOD).status_code == 201  # another team's: no matter
    assert upload(team_a, "adhoc", GOOD).status_code == 201
    body = rejected(team_a, "adhoc", GOOD)
    assert problem(body, None, "name") == "you already have a run named 'teamA' in campaign 'adhoc'"


def test_broken_gzip_is_rejected(adhoc, team_a):
    body = rejected(team_a, "adhoc", gz(GOOD)[:-12], name="run.txt.gz")
    assert problem(body, None, None).startswith("broken gzip data")


def test_gzip_inside_gzip_is_rejected(adhoc, team_a):
    body = rejected(team_a, "adhoc", gzip.compress(gz(GOOD)))
    assert problem(body, None, None) == "the file is gzip inside gzip: compress it once"


def test_a_binary_file_is_rejected(adhoc, team_a):
    body = rejected(team_a, "adhoc", b"301 Q0 d1 1 3 teamA\n\x00\x01\x02binary")
    assert problem(body, 2, None) == "not a text file: NUL byte at offset 20"


def test_bytes_that_are_not_utf8_are_rejected_naming_the_line(adhoc, team_a):
    body = rejected(team_a, "adhoc", b"301 Q0 d1 1 3 teamA\n301 Q0 d\xe92 2 2 teamA\n")
    assert problem(body, 2, None).startswith("not UTF-8 text: byte 0xe9")


@pytest.mark.parametrize("content", [b"", b"\n\n  \r\n", gz("")], ids=["empty", "blank lines", "empty gzip"])
def test_an_empty_file_is_rejected(adhoc, team_a, content):
    body = rejected(team_a, "adhoc", content)
    assert problem(body, None, None) == "the file is empty"


def test_every_problem_is_listed_at_once(adhoc, team_a):
    body = rejected(team_a, "adhoc", "301 Q0 d1 x 3 teamA\n301 Q0 d2 2 y teamA\n301 Q0 nope 3 1 teamA\n999 Q0 d4\n")
    assert body["total"] == 4
    assert [(p["line"], p["field"]) for p in body["problems"]] == [(1, "rank"), (2, "score"), (4, None), (3, "docid")]


def test_the_listed_problems_are_capped_but_the_total_is_given(adhoc, team_a):
    body = rejected(team_a, "adhoc", "".join(f"301 Q0 d1 {n} x teamA\n" for n in range(1, 81)))
    assert body["total"] > 50 and len(body["problems"]) == 50
    assert "the first 50 are listed" in body["detail"]


# --- variants users send ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        GOOD.replace("\n", "\r\n"),
        "\ufeff" + GOOD,
        GOOD.replace(" ", "\t"),
        GOOD.replace(" ", "   \t "),
        GOOD + "\n\n   \n",
        gz(GOOD),
        gz("\ufeff" + GOOD.replace("\n", "\r\n")),
    ],
    ids=["crlf", "bom", "tabs", "runs of spaces", "trailing blank lines", "gzip", "gzip bom crlf"],
)
def test_the_variants_users_send_are_accepted(adhoc, team_a, content):
    response = upload(team_a, "adhoc", content)
    assert response.status_code == 201, response.content
    assert stored()[1] == [("301", "d1", 3.5), ("301", "d2", 2.0), ("302", "d3", 9.0)]


def test_exponent_and_negative_scores_are_accepted(adhoc, team_a):
    response = upload(team_a, "adhoc", "301 Q0 d1 1 1.5E+2 teamA\n301 Q0 d2 2 -2.5e-3 teamA\n301 Q0 d3 3 -7 teamA\n")
    assert response.status_code == 201, response.content
    assert stored()[1] == [("301", "d1", 150.0), ("301", "d2", -0.0025), ("301", "d3", -7.0)]


@pytest.mark.parametrize("tag", ["run\u202ex", "zero\u200bwidth", "bell\x07", "rtl\u2067mark"])
def test_a_run_name_with_characters_a_reader_cannot_see_is_refused(team_a, adhoc, tag):
    response = upload(team_a, "adhoc", f"301 Q0 d1 1 1 {tag}\n")
    assert response.status_code == 400, response.content
    assert "which a reader cannot see" in json.dumps(response.json(), ensure_ascii=False)
    assert not Run.objects.filter(track="adhoc").exists()
