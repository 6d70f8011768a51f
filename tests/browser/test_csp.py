"""The Content-Security-Policy holds on every page in Chromium: no page, script or style of ours breaks it.

Each page is loaded as someone who may see it (the pages of the XSS test: queue, outline and plot pages, the
organiser's dashboard, adjudication, studies, the admin, the browsable API), with a listener for
`securitypolicyviolation` installed before any of the page's own code, and the console watched for CSP errors.
The control shows the listener does hear a violation: an inline script added to a page is refused and reported.
"""

import time

import pytest

from tests.browser.test_xss import pages, sign_in, world  # noqa: F401  (the pages and their data)

pytestmark = pytest.mark.django_db(transaction=True)

LISTEN = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', e => window.__csp.push(
  `${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));
"""
MORE = ["/api/", "/api/docs/", "/admin/", "/accounts/login/"]


def watched(new_page):
    page = new_page()
    page.context.add_init_script(LISTEN)
    console = []
    page.on("console", lambda m: console.append(m.text) if "Content Security Policy" in m.text else None)
    return page, console


def test_no_page_breaks_the_content_security_policy(world, new_page):  # noqa: F811
    checked, by_user = [], {}
    for who, url, _visible in pages(world) + [("boss", url, False) for url in MORE]:
        if who not in by_user:
            page, console = watched(new_page)
            sign_in(page, who)
            by_user[who] = (page, console)
        page, console = by_user[who]
        response = page.goto(url)
        assert response.status == 200, (who, url, response.status)
        assert "script-src 'self'" in response.headers["content-security-policy"], url
        page.wait_for_load_state("load")
        page.wait_for_timeout(100)
        assert page.evaluate("window.__csp") == [], url
        assert console == [], url
        checked.append(url)
    assert len(checked) >= 18


def test_an_inline_script_is_refused_and_heard(world, new_page):  # noqa: F811
    page, console = watched(new_page)
    page.goto("/accounts/login/")
    page.evaluate("""() => { const s = document.createElement('script'); s.textContent = 'window.__ran = 1';
                             document.body.appendChild(s); }""")
    # The violation is reported by an event the browser fires later: wait until it is heard (a guard, not a pace).
    page.wait_for_function("() => (window.__csp || []).some(v => v.startsWith('script-src'))")
    assert page.evaluate("typeof window.__ran") == "undefined"
    deadline = time.monotonic() + 60  # a guard: the console message of the same violation arrives as an event
    while not console:
        assert time.monotonic() < deadline, "the violation was not written to the console"
        page.wait_for_timeout(50)  # Playwright delivers the page's events while it waits
