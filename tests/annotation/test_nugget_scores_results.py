"""A nuggets campaign's scores on its console results page (a table, a chart, a JSON download) and through
GET /api/campaigns/NAME/nugget-scores/ (issue 29, part 2), equal to a hand computation from labels saved on the
nugget support page."""

import json

import pytest

from tests import factories
from tests.annotation.nuggets_setup import RUNS, TOPIC, nuggets_world
from tests.annotation.test_nugget_support_page import save
from tests.browser.console_steps import organiser_account

pytestmark = pytest.mark.django_db

LABELS = {  # the four nuggets in bank order: vital, vital, okay, okay
    RUNS[0]: ["support", "partial_support", "support", "not_support"],
    RUNS[1]: ["not_support", "not_support", "partial_support", "support"],
}
# By hand. all: support 1, partial 0.5; vital: the first two; strict: partial 0; weighted: vital 1, okay 0.5.
EXPECTED = {
    RUNS[0]: {"all": (1 + 0.5 + 1 + 0) / 4, "vital": (1 + 0.5) / 2, "strict_all": (1 + 0 + 1 + 0) / 4,
              "strict_vital": (1 + 0) / 2, "weighted": (1 * 1 + 1 * 0.5 + 0.5 * 1 + 0.5 * 0) / 3},
    RUNS[1]: {"all": (0 + 0 + 0.5 + 1) / 4, "vital": 0.0, "strict_all": (0 + 0 + 0 + 1) / 4,
              "strict_vital": 0.0, "weighted": (0 + 0 + 0.5 * 0.5 + 0.5 * 1) / 3},
}
MEASURES = ("all", "vital", "strict_all", "strict_vital", "weighted")


@pytest.fixture
def judged(client):
    judge = factories.user("nuggeteer")
    world = nuggets_world(judge)
    client.force_login(judge)
    seq = 0
    for run, values in LABELS.items():
        for nugget, value in zip(world["bank"], values):
            seq += 1
            assert save(client, world["units"][run], seq=seq, layer="nugget_support", nugget=nugget["id"],
                        value=value).status_code == 200
    client.force_login(organiser_account())
    return world


def test_the_results_page_shows_each_runs_five_scores_and_offers_them_as_json(client, judged):
    name = judged["campaign"].name
    html = client.get(f"/campaigns/{name}/results/").content.decode()
    table = html[html.index('id="nugget-scores-table"'):]
    table = table[:table.index("</table>")]
    rows = [row for row in table.split("<tr>")[2:]]
    assert [RUNS[0] in rows[0], RUNS[1] in rows[1]] == [True, True]  # best `all` first
    for row, run in zip(rows, RUNS):
        cells = [c.split("</td>")[0] for c in row.split('<td class="num">')[1:]]
        assert cells == [f"{EXPECTED[run][m]:.4f}" for m in MEASURES]
    assert 'id="nugget-chart"' in html or "nugget-chart" in html
    assert 'id="download-nugget-scores"' in html and 'id="evaluation-table"' not in html
    download = client.get(f"/campaigns/{name}/results/nugget-scores/")
    assert download.status_code == 200 and "attachment" in download["Content-Disposition"]
    scores = json.loads(b"".join(download).decode())
    for run in RUNS:
        assert {m: scores["runs"][run][m] for m in MEASURES} == pytest.approx(EXPECTED[run])
        assert scores["runs"][run]["topics"][TOPIC]["assessed"] == 4


def test_the_api_gives_the_scores_to_organisers(client, judged):
    name = judged["campaign"].name
    response = client.get(f"/api/campaigns/{name}/nugget-scores/")
    assert response.status_code == 200
    body = response.json()
    assert set(body["runs"]) == set(RUNS)
    for run in RUNS:
        assert {m: body["runs"][run][m] for m in MEASURES} == pytest.approx(EXPECTED[run])
        assert {m: body["runs"][run]["topics"][TOPIC][m] for m in MEASURES} == pytest.approx(EXPECTED[run])
    client.force_login(factories.user("someone-else"))
    assert client.get(f"/api/campaigns/{name}/nugget-scores/").status_code == 403


def test_a_campaign_of_another_task_has_no_nugget_scores(client, db):
    client.force_login(organiser_account())
    coll = factories.collection("adhoc-coll")
    factories.topic(coll, "q1", kind="adhoc", title="q")
    from annotation.services.campaigns import create_campaign

    create_campaign(name="plain-adhoc", task="adhoc", topics=["q1"])
    response = client.get("/api/campaigns/plain-adhoc/nugget-scores/")
    assert response.status_code == 400 and "campaign" in response.json()["detail"]
    assert client.get("/campaigns/plain-adhoc/results/nugget-scores/").status_code == 400


def test_the_results_page_lists_each_answers_scores(client, judged):
    """Issue 39 item 5: a per-answer score table (run, topic, the five measures, nuggets labelled of the bank)."""
    html = client.get(f"/campaigns/{judged['campaign'].name}/results/").content.decode()
    table = html[html.index('id="nugget-answers-table"'):]
    table = table[:table.index("</table>")]
    rows = table.split("<tr>")[2:]
    assert len(rows) == 2 and "Per answer (2)" in html
    for row, run in zip(rows, sorted(RUNS)):
        assert f'<td class="mono">{run}</td><td class="mono">{TOPIC}</td>' in row
        cells = [c.split("</td>")[0] for c in row.split('<td class="num">')[1:]]
        assert cells == [*(f"{EXPECTED[run][m]:.4f}" for m in MEASURES), "4/4"]
