"""Run names (issue 16): an upload's answer never tells whether another team has a name; two teams may both call
a run "bm25" in one campaign; where such runs are shown side by side they are `owner/name`, and a bare name that
several runs have is refused, naming the field, wherever a name finds a run."""

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotation.services.campaigns import create_pool
from assessments.importers.trec import import_parsed_run
from assessments.importers.trec_files import RunReader
from assessments.models import Qrel, QrelSet, Run
from assessments.studies import StudyError, resolve_pool_and_run
from retrieval.ingest import Problems, text_batches
from tests.api.helpers import page, upload

BM25 = "301 Q0 d1 1 3 bm25\n301 Q0 d2 2 2 bm25\n302 Q0 d3 1 1 bm25\n"
BM25_B = "301 Q0 d2 1 3 bm25\n301 Q0 d1 2 2 bm25\n302 Q0 d4 1 1 bm25\n"
BAD = "301 Q0 d1 1 3 bm25\n301 Q0 nope 2 2 bm25\n"


def command(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def answer(response):
    return response.status_code, response.json()


def import_organisers_run(text, collection="web"):
    """An organiser's import (no owner), as manage.py import_run makes it."""
    problems = Problems("organisers.run")
    parsed = RunReader(problems).read(text_batches(io.BytesIO(text.encode()), "organisers.run"))
    return import_parsed_run(parsed, problems, collection).run


@pytest.mark.django_db
def test_an_upload_answers_alike_whether_or_not_another_team_or_the_organisers_have_the_name(adhoc, team_a, client_as):
    before = answer(upload(team_a, "adhoc", BAD))
    assert upload(client_as("participant_b"), "adhoc", BM25_B).status_code == 201
    import_organisers_run(BM25)
    assert answer(upload(team_a, "adhoc", BAD)) == before  # no problem speaks of a name taken by someone else
    assert [p["field"] for p in before[1]["problems"]] == ["docid"]
    created = upload(team_a, "adhoc", BM25)
    assert created.status_code == 201, created.content
    assert created.json()["name"] == "bm25" and created.json()["owner"] == "team-a"


@pytest.mark.django_db
def test_a_car_upload_answers_alike_whether_or_not_another_team_has_the_name(outline, team_a, client_as):
    bad = json.dumps({**json.loads(page()), "paragraphs": [{"para_id": "nope"}]})
    before = answer(upload(team_a, "car-y3", bad))
    assert upload(client_as("participant_b"), "car-y3", page()).status_code == 201
    assert answer(upload(team_a, "car-y3", bad)) == before
    assert upload(team_a, "car-y3", page()).status_code == 201
    assert sorted(Run.objects.values_list("owner__username", "name")) == [("team-a", "teamA-1"), ("team-b", "teamA-1")]


@pytest.fixture
def twins(adhoc, team_a, client_as):
    """Teams A and B both uploaded a run named bm25 to campaign adhoc; qrels q over collection web."""
    assert upload(team_a, "adhoc", BM25).status_code == 201
    assert upload(client_as("participant_b"), "adhoc", BM25_B).status_code == 201
    qrels = QrelSet.objects.create(name="q", collection=adhoc.track.collection)
    topics = {t.external_id: t for t in adhoc.track.topics.all()}
    passages = {p.external_id: p for p in adhoc.track.collection.passages.all()}
    Qrel.objects.create(qrel_set=qrels, topic=topics["301"], passage=passages["d1"], grade=1)
    return {run.owner.username: run for run in Run.objects.select_related("owner")}


def test_two_teams_share_a_name_and_the_organiser_sees_whose_is_whose(twins, organiser):
    listed = organiser.get("/api/runs/?campaign=adhoc").json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert sorted((r["owner"], r["name"]) for r in rows) == [("team-a", "bm25"), ("team-b", "bm25")]
    out, _ = command("evaluate_runs", "--runs", "team-a/bm25", "team-b/bm25", "--measures", "AP")
    scores = {line.split("\t")[0]: float(line.split("\t")[3]) for line in out.splitlines() if "\tall\t" in line}
    assert scores == {"team-a/bm25": pytest.approx(1.0), "team-b/bm25": pytest.approx(0.5)}


def test_a_pool_of_both_evaluates_them_apart(twins):
    from annotation.models import Campaign

    pool = create_pool(campaign=Campaign.objects.get(name="adhoc"), name="both",
                       runs=[twins["team-a"].pk, twins["team-b"].pk])
    out, _ = command("evaluate_runs", "--pool", pool.name, "--measures", "AP")
    names = {line.split("\t")[0] for line in out.splitlines() if line}
    assert {"team-a/bm25", "team-b/bm25"} <= names


@pytest.mark.parametrize("args, field", [
    (("export_run", "bm25", "--out", "-"), "name"),
    (("evaluate_runs", "--runs", "bm25", "--measures", "AP"), "--runs"),
    (("build_pool", "--name", "p", "--runs", "bm25"), "--runs"),
    (("simulate_judging", "--qrels", "q", "--runs", "bm25", "--no-progress"), "--runs"),
])
def test_a_name_two_teams_share_is_refused_naming_the_field_and_the_choices(twins, args, field):
    with pytest.raises(CommandError) as refused:
        command(*args)
    expected = f"{field}: several runs are named 'bm25': give one of team-a/bm25, team-b/bm25"
    assert str(refused.value).startswith(expected)


def test_owner_slash_name_finds_the_run(twins):
    out, _ = command("export_run", "team-b/bm25", "--out", "-")
    assert out.splitlines()[0] == "301 Q0 d2 1 3.0 bm25"
    with pytest.raises(CommandError, match="name: no run named 'team-c/bm25'"):
        command("export_run", "team-c/bm25", "--out", "-")


def test_a_study_run_named_by_two_teams_is_refused(twins):
    from annotation.models import Campaign

    pool = create_pool(campaign=Campaign.objects.get(name="adhoc"), name="both",
                       runs=[twins["team-a"].pk, twins["team-b"].pk])
    with pytest.raises(StudyError, match="--run: several runs are named 'bm25'"):
        resolve_pool_and_run(pool.name, "bm25")
    assert resolve_pool_and_run(pool.name, "team-a/bm25")[1] == twins["team-a"]


@pytest.mark.django_db
def test_the_organisers_own_runs_keep_one_name_per_collection(web):
    import_organisers_run(BM25)
    from retrieval.ingest import ImportFailed

    with pytest.raises(ImportFailed, match="collection 'web' already has a run named 'bm25'"):
        import_organisers_run(BM25)
    assert get_user_model().objects.count() == 0 and Run.objects.count() == 1


def test_a_participant_whose_run_shares_a_name_with_others_can_be_deleted(twins):
    import_organisers_run(BM25)  # the organisers' own bm25 beside both teams'
    get_user_model().objects.filter(username__in=["team-a", "team-b"]).delete()  # their runs stay, without owner
    assert sorted(Run.objects.values_list("track", "name")) == [("", "bm25"), ("adhoc", "bm25"), ("adhoc", "bm25")]
    with pytest.raises(CommandError, match="several runs are named 'bm25'"):
        command("export_run", "bm25", "--out", "-")


def test_the_console_shows_whose_run_is_whose(twins, client):
    from annotation.roles import Role, ensure_groups

    boss = get_user_model().objects.get(username="boss")
    boss.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(boss)
    data = client.get("/campaigns/adhoc/data/").content.decode()
    pools = client.get("/campaigns/adhoc/pools/").content.decode()
    for page in (data, pools):
        assert "team-a/bm25" in page and "team-b/bm25" in page
