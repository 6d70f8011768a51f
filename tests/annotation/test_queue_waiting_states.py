"""A nugget support unit's state in the queue, on its page and on the dashboard is one rule (status.state): a unit
that waits for its topic's nuggets (nugget_support.ready_banks) is "waiting", whatever its stored status, so a unit
marked done whose topic's bank was reopened by its writer shows Waiting (not Done) in the queue as on its page, is
not counted done (queue header, dashboard summary and per-topic chart), counts as waiting and is never next. A
waiting row says which step it waits on in the page's words (nugget_support.waiting_on: counts, no names, no
nugget), and its link says it leads to nothing to label yet. The queue reads what rows wait on without a query per
row."""

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Assignment
from annotation.reports.dashboard import dashboard
from annotation.reports.overview import campaign_overview
from annotation.services import nugget_support, queue
from annotation.services.assignment import assign_campaign
from tests import factories
from tests.annotation.nuggets_setup import RUNS, TOPIC
from tests.annotation.test_nugget_support_page import save
from tests.annotation.test_nugget_support_waits import BANK, mark, world, write_bank  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


def rows(html):
    """{token: the row's HTML} of the queue's table."""
    out = {}
    for row in re.findall(r"<tr class=.*?</tr>", html, flags=re.S):
        found = re.search(r'href="/a/([^/"]+)/"', row)
        if found:
            out[found.group(1)] = row
    return out


def page_state(client, unit):
    html = client.get(f"/a/{unit.token}/").content.decode()
    return html, json.loads(html.split('id="nugget-data" type="application/json">', 1)[1].split("</script>", 1)[0])


def label_all(client, unit):
    for seq, nugget in enumerate(BANK, start=1):
        response = save(client, unit, seq, layer="nugget_support", nugget=nugget["id"], value="support")
        assert response.status_code == 200, response.content


def reopen_bank(client, world):
    """The writer reopens their creation unit (the page's reopen): the topic's bank is no longer settled."""
    client.force_login(world["writer"])
    assert client.post(f"/a/{world['creation'].token}/reopen").status_code == 200
    assert Assignment.objects.get(pk=world["creation"].pk).status == Assignment.Status.IN_PROGRESS
    client.force_login(world["judge"])


def test_a_waiting_row_says_which_step_it_waits_on_in_the_pages_words_and_that_its_link_has_nothing_yet(client, world):
    factories.user("cowriter")
    assign_campaign(world["campaign"], ["writer", "cowriter"], overlap=2, stage="create")
    html = client.get("/").content.decode()
    found = rows(html)
    for unit in world["units"].values():
        row = found[unit.token]
        assert "writers are still at work: 0 of 2 finished." in row and "Nothing to label yet" in row
        why = nugget_support.waiting_on(unit)["why"]
        assert why == "The topic's nugget writers are still at work: 0 of 2 finished."
        assert why.replace("'", "&#x27;") in row
        # The link stays (keyboard: the page says when it opens), and is described by the row's words.
        assert f'aria-describedby="waits-{unit.pk}"' in row and f'id="waits-{unit.pk}"' in row
        assert "status-waiting" in row and "is-waiting" in row
    # The page gives the same sentence (one function), and neither names a writer.
    assert why.replace("'", "&#x27;") in client.get(f"/a/{unit.token}/").content.decode()
    assert "cowriter" not in html and ">writer<" not in html
    assert not any(n["text"] in html for n in BANK)


def test_a_unit_done_whose_bank_is_reopened_waits_in_the_queue_on_its_page_and_on_the_dashboard(client, world):
    write_bank(client, world)
    unit, other = world["units"][RUNS[0]], world["units"][RUNS[1]]
    label_all(client, unit)
    assert Assignment.objects.get(pk=unit.pk).status == Assignment.Status.DONE
    assert queue.counts(queue.queue(world["judge"])).done == 1 and queue.next_assignment(world["judge"]) == other

    reopen_bank(client, world)
    assert Assignment.objects.get(pk=unit.pk).status == Assignment.Status.DONE  # stored: unchanged
    # The page: waiting (what it showed before this fix too), its script told "waiting", not "done".
    html, state = page_state(client, unit)
    assert 'id="waiting-note"' in html and state["waiting"] is True and state["status"] == "waiting"
    # The queue: the same state, its row Waiting (it said Done), counted waiting and not done, never next.
    html = client.get("/").content.decode()
    row = rows(html)[unit.token]
    assert "status-waiting" in row and "status-done" not in row and "is-done" not in row and "is-waiting" in row
    assert "2 assignments for you, 0 done. 2 wait for their topic" in html and 'id="next-link"' not in html
    assert "has not finished the bank yet" in row
    items = queue.queue(world["judge"])
    assert {a.pk: a.state for a, _ in items} == {unit.pk: "waiting", other.pk: "waiting"}
    counts = queue.counts(items)
    assert (counts.total, counts.done, counts.waiting, counts.left) == (2, 0, 2, 2)
    assert queue.next_assignment(world["judge"]) is None
    assert client.get("/next/").url.endswith("?queue")
    # The dashboard: the unit is not done, it waits.
    data = dashboard(world["campaign"])
    summary = data["summary"]
    judge_row = next(r for r in summary["rows"] if r[0] == "judge")
    assert (summary["done"], summary["waiting"]) == (0, 2)  # it said 1 done, 1 waiting
    assert judge_row[2] == 0 and judge_row[-1] == 2
    per_topic = next(c for c in data["charts"] if c["id"] == "per-topic")
    assert per_topic["table"]["rows"] == [[TOPIC, 0, 3]]  # the writer's unit and the judge's two: none done
    line = next(x for x in campaign_overview() if x.campaign.pk == world["campaign"].pk)  # the organisers' list
    assert (line.units, line.done, line.left) == (3, 0, 3)

    # The writer marks the bank done again: the unit's stored status shows again, everywhere.
    client.force_login(world["writer"])
    assert mark(client, world["creation"]).json()["status"] == "done"
    client.force_login(world["judge"])
    items = queue.queue(world["judge"])
    assert {a.pk: a.state for a, _ in items} == {unit.pk: "done", other.pk: "todo"}
    assert "status-done" in rows(client.get("/").content.decode())[unit.token]
    assert page_state(client, unit)[1]["status"] == "done"
    assert dashboard(world["campaign"])["summary"]["done"] == 2  # the writer's unit and this one
    assert next(x for x in campaign_overview() if x.campaign.pk == world["campaign"].pk).done == 2


def test_the_queue_reads_what_waiting_rows_wait_on_without_a_query_per_row(client, world):
    unit = world["units"][RUNS[1]]
    with CaptureQueriesContext(connection) as two:
        assert client.get("/").status_code == 200
    Assignment.objects.filter(pk=unit.pk).delete()
    with CaptureQueriesContext(connection) as one:
        assert client.get("/").status_code == 200
    assert len(two) == len(one)


def test_the_queue_reads_ready_support_rows_without_a_query_per_row(client, world):
    write_bank(client, world)
    label_all(client, world["units"][RUNS[0]])
    with CaptureQueriesContext(connection) as two:
        assert client.get("/").status_code == 200
    Assignment.objects.filter(pk=world["units"][RUNS[1]].pk).delete()
    with CaptureQueriesContext(connection) as one:
        assert client.get("/").status_code == 200
    assert len(two) == len(one), [q["sql"] for q in two.captured_queries]


def test_the_queue_reads_citation_and_creation_rows_without_a_query_per_row_and_counts_as_each_unit_does(
        client, world):
    from annotation.services import citation_support, nugget_creation

    assign_campaign(world["campaign"], ["judge"], stage="citations")
    cites = sorted(Assignment.objects.filter(kind=Assignment.Kind.CITATION_SUPPORT),
                   key=lambda a: -citation_support.progress(a).total)  # the answer with three cited pairs first
    assert len(cites) == 2
    html = client.get(f"/a/{cites[0].token}/").content.decode()
    state = json.loads(html.split('id="nugget-data" type="application/json">', 1)[1].split("</script>", 1)[0])
    first = state["items"][0]["fields"]
    assert save(client, cites[0], layer="citation_support", value="full", **first).status_code == 200
    write_bank(client, world, done=False)
    with CaptureQueriesContext(connection) as two:
        assert client.get("/").status_code == 200
    Assignment.objects.filter(pk=cites[1].pk).delete()
    with CaptureQueriesContext(connection) as one:
        assert client.get("/").status_code == 200
    assert len(two) == len(one)  # it was one more per citation row
    # The batched progress is each unit's own (the page's and the save path's count).
    assert citation_support.progress_of_units(cites[:1]) == {cites[0].pk: citation_support.progress(cites[0])}
    assert citation_support.progress(cites[0]).done == 1 and citation_support.progress(cites[0]).total > 1
    creation = [Assignment.objects.get(pk=world["creation"].pk)]
    assert nugget_creation.progress_of_units(creation) == {creation[0].pk: nugget_creation.progress(creation[0])}
    assert nugget_creation.progress(creation[0]).size == len(BANK)
