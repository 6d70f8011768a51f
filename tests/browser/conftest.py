"""Browser tests: real Chromium (Debian's /usr/bin/chromium) driven by Playwright against pytest-django's live server."""

import os
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SHOTS = os.environ.get("POOLJUDGE_SCREENSHOTS")  # a folder: the tests save screenshots there when set


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"browser tests need Chromium at {CHROMIUM} (Debian package 'chromium')")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop running in this thread; Django would then refuse
    # the test's own (synchronous) database queries without this.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def new_page(browser, live_server):
    """new_page(width=1400, height=900): a page in a fresh browser context (own cookies and storage)."""
    contexts = []

    def make(width=1400, height=900):
        context = browser.new_context(viewport={"width": width, "height": height}, base_url=live_server.url)
        # A guard, not a pace: a passing wait returns as soon as its condition holds. A CI machine runs two xdist
        # processes, two Chromiums and the suite's model training on 2 cores; a 10 s wait once ran out there
        # (27 Nov 2026), so every wait gets a minute, and no test sets a shorter one.
        context.set_default_timeout(60_000)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        return page

    errors = []
    yield make
    for context in contexts:
        context.close()
    assert errors == [], "JavaScript errors on the page"


@pytest.fixture
def shot():
    """shot(page, name): save a full-page screenshot when POOLJUDGE_SCREENSHOTS names a folder."""

    def take(page, name, full_page=False):
        if SHOTS:
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=full_page)

    return take
