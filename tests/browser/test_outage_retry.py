"""In Chromium: while the database is unreachable the page keeps the change and retries on the server's 503;
a retry whose first answer was lost on the way is stored once.

The network layer (Playwright's routing) answers the first saves with exactly what the server answers during
an outage (config.middleware: 503, Retry-After, {"retry": true, ...}); benchmarks/faults/pg_restart.py does
the same against a real PostgreSQL restart. Owned by the reliability work (issue 8).
"""

import json

import pytest

from annotation.models import Assignment
from assessments.models import Judgement, JudgementChange, Layer
from config.middleware import RETRY_AFTER_SECONDS
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)
OUTAGE = json.dumps({"retry": True, "message": "The database is unreachable for a moment; nothing was stored. Try again."})


@pytest.fixture
def assignment():
    coll = factories.collection("car")
    topic = factories.topic(coll, "tqa2:L_0001", title="Water", facets=[("tqa2:L_0001/T_1", "Droughts")])
    passages = [factories.passage(coll, f"{i:040x}", text=f"Passage {i}.") for i in range(1, 4)]
    run = factories.run(coll, "guir", {topic: passages})
    return Assignment.objects.create(assessor=factories.user("judge"), topic=topic, run=run)


def test_a_change_made_during_an_outage_waits_is_retried_and_stored_once(new_page, assignment):
    page = new_page()
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "judge")
    page.fill("input[name=password]", "pw-judge")
    page.click("button[type=submit]")
    page.wait_for_selector("body[data-ready=home]")
    page.goto(f"/a/{assignment.token}/")
    page.wait_for_selector("body[data-ready=outline]")

    answers = []

    def outage_then_lost_answer(route):
        if len(answers) < 2:
            answers.append(503)
            route.fulfill(status=503, body=OUTAGE, content_type="application/json",
                          headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
        elif len(answers) == 2:
            answers.append("lost")
            route.fetch()  # the server stores it, but the answer never reaches the page
            route.abort("connectionreset")
        else:
            answers.append("through")
            route.continue_()

    page.route("**/save", outage_then_lost_answer)
    page.keyboard.press("1")
    page.keyboard.press("m")
    page.wait_for_function("() => document.querySelector('#savestate').dataset.state !== 'saved'")
    page.wait_for_selector('#savestate[data-state="saved"]')

    assert answers[:3] == [503, 503, "lost"] and "through" in answers
    assert JudgementChange.objects.count() == 1
    assert Judgement.objects.get(layer=Layer.FACET).value == [{"facet": "tqa2:L_0001/T_1", "relevance": "must"}]
