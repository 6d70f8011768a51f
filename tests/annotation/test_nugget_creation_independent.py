"""Two assessors writing a topic's nugget bank (overlap 2 at stage create) write it independently: a page starts from
the imported (or adjudicated) bank, never from the other assessor's, whose nuggets would reach it and anchor the
second bank on the first (bank adjudication compares the two)."""

import json

import pytest
from django.utils import timezone

from annotation.models import Assignment
from annotation.services.assignment import assign_campaign
from tests import factories
from tests.annotation.nuggets_setup import BANK, nuggets_world
from tests.annotation.test_nugget_support_page import save

pytestmark = pytest.mark.django_db


def page_state(client, unit):
    client.force_login(unit.assessor)
    html = client.get(f"/a/{unit.token}/").content.decode()
    start = html.index(">", html.index('id="nugget-bank-data"')) + 1
    return json.loads(html[start:html.index("</script>", start)])


@pytest.mark.parametrize("imported", [True, False])
def test_a_second_writer_starts_from_the_imported_bank_not_the_first_writers(client, imported):
    first, second = factories.user("writer-1"), factories.user("writer-2")
    world = nuggets_world(bank=imported)
    assign_campaign(world["campaign"], [first.username, second.username], stage="create", overlap=2)
    units = {u.assessor.username: u for u in Assignment.objects.filter(campaign=world["campaign"])}
    assert set(units) == {"writer-1", "writer-2"}
    mine = [{"id": "w1", "text": "Only the first writer wrote this", "importance": "vital", "origin": "assessor"}]
    client.force_login(first)
    response = save(client, units["writer-1"], layer="nuggets", value=mine, client_time=timezone.now().isoformat())
    assert response.status_code == 200, response.content

    state = page_state(client, units["writer-2"])
    assert "Only the first writer wrote this" not in json.dumps(state)
    assert [n["text"] for n in state["nuggets"]] == ([t for t, _ in BANK] if imported else [])
    assert state["own"] is False
    assert [n["text"] for n in page_state(client, units["writer-1"])["nuggets"]] == [mine[0]["text"]]
