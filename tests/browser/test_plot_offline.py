"""Plot labelling keeps the outline page's guarantees: changes made while the server cannot be reached wait in the
browser over a reload and are sent once the network is back; an answer lost on the way never stores a change twice."""

import pytest

from assessments.models import Judgement, JudgementChange, Layer
from annotation.services import plot
from tests.annotation import plot_setup as ps
from tests.browser.save_state import wait_for_save_state
from tests.browser.test_plot_labelling import pressed_grade, sign_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def assignment(tmp_path):
    return ps.labelling(tmp_path, size=4, lines=ps.EXCERPT)


def test_changes_wait_offline_over_a_reload_and_are_stored_once(new_page, assignment):
    order = [c.passage_id for c in plot.candidates(assignment)]
    page = new_page()
    # One route for the page's saves from before it loads, whose network the test switches: "up" lets a save
    # through; "lossy" lets the server store it and loses its answer; "down" reaches nothing. Switching is a
    # plain assignment between two Playwright calls, and the handler runs only inside those calls, so no save
    # meets a network half switched (routes added and taken away one after the other left a gap once).
    network, lost, problems = {"now": "up"}, [], []

    def saves(route):
        if network["now"] == "up":
            route.continue_()
        elif network["now"] == "down":
            route.abort()
        else:
            try:
                route.fetch()
                lost.append(route.request.post_data_json["change_id"])
            except Exception as exc:  # the server was not reached: the page tries again, as after any lost answer
                problems.append(repr(exc))
            finally:
                route.abort()

    page.route("**/save", saves)
    sign_in(page)
    page.goto(f"/a/{assignment.token}/")
    page.wait_for_selector("body[data-ready=plot]")

    # The server stores the first change but its answer is lost: the page sends it again.
    network["now"] = "lossy"
    page.keyboard.press("2")
    page.wait_for_function("() => window.pooljudge.outbox().length === 1")
    wait_for_save_state(page, "pending", lost=lost, problems=problems)
    while not lost:  # the change failed on the way to the server: the page's next try (1-2 s later) brings it
        assert len(problems) < 4, f"the server was never reached: {problems}"
        page.wait_for_timeout(200)  # lets the route handler run; each try adds to `lost` or to `problems`
    network["now"] = "down"  # and now the network is down

    page.keyboard.press("s")  # a span for candidate 1
    page.keyboard.press("j")
    page.keyboard.press("1")
    page.keyboard.press("j")
    page.keyboard.press("0")
    page.wait_for_function("() => window.pooljudge.outbox().length === 4")
    page.reload()
    page.wait_for_selector("body[data-ready=plot]")
    page.wait_for_selector('#savestate[data-state="pending"]')
    assert [pressed_grade(page, n) for n in (1, 2, 3)] == ["2", "1", "0"]  # shown from the outbox
    assert JudgementChange.objects.count() == 1 and lost

    network["now"] = "up"
    wait_for_save_state(page, "saved", lost=lost, problems=problems)
    assert page.evaluate("window.pooljudge.outbox().length") == 0
    assert JudgementChange.objects.count() == 4
    assert JudgementChange.objects.filter(change_id=lost[0]).count() == 1
    grades = dict(Judgement.objects.filter(layer=Layer.PLOT_GRADE).values_list("passage_id", "value"))
    assert grades == {order[0]: 2, order[1]: 1, order[2]: 0}
    words = assignment.topic.text.split()
    assert Judgement.objects.get(layer=Layer.PLOT_SPANS).value == [[0, len(words[0])]]
