"""In Chromium an assessor with a qualification ahead opens it and is shown the worked examples first: the topic, the
passage, the grade expected and why, no run name; then starts the qualification from there (issue 30, item 3)."""

import pytest

from tests.annotation.test_qualification_examples import EXAMPLE, qualifying_campaign, set_examples
from tests.browser.console_steps import sign_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_assessor_reads_the_worked_examples_then_starts_the_qualification(new_page, shot):
    campaign, _ = qualifying_campaign()
    set_examples(campaign, [EXAMPLE])
    page = new_page()
    sign_in(page, "ann", "pw-ann")
    page.wait_for_selector("body[data-ready=home]")
    assert page.locator(".qualification-notice .examples-link").inner_text() == "Read the 1 worked example"
    page.keyboard.press("N")  # the next unit is the qualification's: its examples come first
    page.wait_for_selector("#worked-examples")
    example = page.locator(".worked-example")
    assert example.count() == 1
    assert example.locator("[data-role=expected]").inner_text() == "1 · Relevant"
    assert example.locator("[data-role=explanation]").inner_text() == EXAMPLE["explanation"]
    assert "Text 1 1." in example.inner_text()
    assert "secret-run-x" not in page.content()
    shot(page, "qualification-examples")
    page.click("#start-qualification")
    page.wait_for_selector("body[data-ready=adhoc]")
    assert "examples=read" in page.url
