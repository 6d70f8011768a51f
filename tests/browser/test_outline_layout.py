"""The pages fit desktop and narrow laptop widths: no sideways scrolling, a one-line top bar, keys on screen.

Set POOLJUDGE_SCREENSHOTS=/some/folder to keep screenshots of what is checked here.
"""

from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Assignment
from assessments.models import Layer, Run
from assessments.services.judging import record_judgement
from tests import factories
from tests.factories import DATA

pytestmark = pytest.mark.django_db(transaction=True)

ARTICLE = DATA / "car-y3" / "runs" / "guir-tqa-protecting-the-water-supply.json"


@pytest.fixture
def half_judged():
    """A real article (8 facets) with its first passages judged, one removed, and a second article queued."""
    call_command("import_car_run", str(ARTICLE), str(DATA / "car-y3" / "runs" / "jordan.json"),
                 "--create-topics", "--no-progress", stdout=StringIO())
    run = Run.objects.get(name="guir")
    topic = run.entries.first().topic
    # The trial pages carry no gold article or facet notes; give the topic some, as Y3 outlines have.
    topic.gold_text = ("Water supply systems get water from a variety of locations after appropriate treatment.\n\n"
                       "Protecting the water supply means conserving water and keeping it clean.")
    topic.save()
    topic.facets.filter(position=1).update(notes="metering, saving water, low-flow fixtures")
    assessor = factories.user("judge")
    assignment = Assignment.objects.create(assessor=assessor, topic=topic, run=run)
    Assignment.objects.create(assessor=assessor, topic=topic, run=Run.objects.get(name="uog-linear-ltr-hier"), position=1)
    passages = [e.passage for e in run.entries.filter(topic=topic).order_by("rank")]
    facets = list(topic.facets.order_by("position").values_list("heading_id", flat=True))
    judge = dict(assessor=assessor, topic=topic, run_ids=[run.name])
    record_judgement(layer=Layer.FACET, passage=passages[0], value=[
        {"facet": facets[0], "relevance": "must"}, {"facet": "general", "relevance": "should"}], **judge)
    record_judgement(layer=Layer.NOTES, passage=passages[0], value="introduces the topic; names the main threats", **judge)
    record_judgement(layer=Layer.FACET, passage=passages[1], value=[{"facet": facets[2], "relevance": "can"}], **judge)
    record_judgement(layer=Layer.REMOVAL, passage=passages[2], value=True, **judge)
    record_judgement(layer=Layer.TRANSITION, passage=passages[0], passage2=passages[1], value="coherent", **judge)
    record_judgement(layer=Layer.TRANSITION, passage=passages[1], passage2=passages[3], value="switch", **judge)
    return assignment


def sign_in(page):
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "judge")
    page.fill("input[name=password]", "pw-judge")
    page.click("button[type=submit]")
    page.wait_for_selector("body[data-ready=home]")


@pytest.mark.parametrize("width", [1400, 1024])
def test_the_outline_page_fits_the_screen(new_page, half_judged, shot, width):
    page = new_page(width=width, height=900)
    sign_in(page)
    shot(page, f"home-{width}")
    page.goto(f"/a/{half_judged.token}/")
    page.wait_for_selector("body[data-ready=outline]")

    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert page.locator(".topbar").bounding_box()["height"] < 70
    assert page.is_visible(".keys") and page.is_visible("#passages-left")
    # The page opens where the work left off: passage 4, the first one not graded yet.
    assert "is-current" in page.get_attribute("#passage-4", "class")
    page.keyboard.press("Home")
    shot(page, f"outline-top-{width}")

    # Further down: the removed passage, the transition that skips it, and the next transition armed.
    for _ in range(3):
        page.keyboard.press("j")
    page.keyboard.press("t")
    assert page.locator(".transition.is-armed").count() == 1
    assert "Removed (click to show)" in page.text_content("#passage-3")
    shot(page, f"outline-middle-{width}")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.keyboard.press("Escape")
    page.keyboard.press("k")
    page.keyboard.press("k")
    shot(page, f"outline-removed-{width}")


def test_the_login_page(new_page, shot):
    page = new_page(width=1024, height=700)
    page.goto("/")
    assert page.is_visible("input[name=username]")
    shot(page, "login-1024")
