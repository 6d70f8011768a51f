"""Waits on the judging pages' save state (#savestate) that say, when they run out, what the page showed instead."""

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError


def wait_for_save_state(page, state, **notes):
    """Wait until #savestate says `state`. On running out, fail with what it said, how many changes the outbox held,
    and the test's own `notes` (say, which saves a route handler saw): a wait that ran out once under load
    (test_plot_offline, 7 Dec 2026) said only that it ran out."""
    try:
        page.wait_for_selector(f'#savestate[data-state="{state}"]')
    except PlaywrightTimeoutError:
        shown = page.evaluate("""() => { const box = document.getElementById('savestate');
            return {state: box && box.dataset.state, text: box && box.textContent,
                    outbox: window.pooljudge ? window.pooljudge.outbox().length : null}; }""")
        raise AssertionError(f"#savestate never said {state!r}: the page shows {shown}; {notes}") from None
