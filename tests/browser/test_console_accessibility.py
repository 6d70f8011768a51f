"""The console's pages meet WCAG AA contrast (4.5:1 for text, 3:1 for large text) and work from the keyboard."""

import pytest

from annotation.models import DataImport
from annotation.services.campaigns import create_campaign
from assessments.models import Topic
from retrieval.models import Collection
from tests import factories
from tests.browser.console_steps import organiser_account, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

# For every element with its own visible text: its colour against the first opaque background behind it.
CONTRAST = """() => {
  const rgb = c => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const background = el => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] === 1)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const bad = [];
  for (const el of document.querySelectorAll("body *")) {
    const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || el.closest("[hidden], svg, option, select") || !el.getClientRects().length) continue;
    const style = getComputedStyle(el);
    if (style.visibility === "hidden" || el.matches(":disabled")) continue;
    const fg = lum(rgb(style.color)), bg = lum(background(el));
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    const size = parseFloat(style.fontSize), bold = Number(style.fontWeight) >= 700;
    const needed = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    if (ratio < needed) bad.push(`${el.tagName.toLowerCase()}.${el.className} "${el.textContent.trim().slice(0, 40)}" ${ratio.toFixed(2)}`);
  }
  return bad;
}"""

# Every id that more than one element has (a label's `for`, aria-describedby and `#…` links need each to be unique).
REPEATED_IDS = """() => {
  const seen = {};
  for (const el of document.querySelectorAll("[id]")) seen[el.id] = (seen[el.id] || 0) + 1;
  return Object.keys(seen).filter(id => seen[id] > 1);
}"""


@pytest.fixture
def site():
    organiser_account()
    web = factories.collection("web", kind=Collection.Kind.DOCUMENTS)
    topic = factories.topic(web, "301", kind=Topic.Kind.ADHOC, title="Dogs")
    passages = [factories.passage(web, f"d{i}") for i in range(3)]
    factories.run(web, "bm25", {topic: passages})
    create_campaign(name="adhoc", task="adhoc", title="Ad hoc")
    failed = DataImport.objects.create(kind=DataImport.Kind.QRELS, status=DataImport.Status.FAILED, file_names=["q"],
                                       problems=[{"source": "q", "line": 2, "field": "grade", "message": "bad"}],
                                       problem_total=1)
    return failed


def test_every_console_page_meets_aa_contrast(new_page, site):
    page = new_page()
    sign_in(page, "boss", "pw-boss")
    for url in ("/campaigns/", "/campaigns/new/", "/campaigns/adhoc/", "/campaigns/adhoc/data/",
                "/campaigns/adhoc/pools/", "/campaigns/adhoc/work/", "/campaigns/adhoc/machine/",
                "/campaigns/adhoc/results/", "/data/", f"/data/imports/{site.pk}/", "/people/"):
        page.goto(url)
        page.wait_for_selector("body[data-ready=console]")
        assert page.evaluate(CONTRAST) == [], url
        assert page.evaluate(REPEATED_IDS) == [], url
    # The check finds what it should: light grey on white.
    page.evaluate("document.querySelector('main').insertAdjacentHTML('beforeend', '<p style=\"color: #999\">pale</p>')")
    assert [line for line in page.evaluate(CONTRAST) if "pale" in line]


def test_a_person_is_added_with_the_keyboard_alone(new_page, site):
    page = new_page()
    sign_in(page, "boss", "pw-boss")
    page.goto("/people/")
    page.focus("#id_username")
    kb = page.keyboard
    kb.type("kim")
    kb.press("Tab")  # the roles: Assessor is ticked already
    kb.press("Tab")
    kb.press("Space")  # Reviewer too
    page.focus("#id_email")
    kb.type("kim@example.org")
    kb.press("Enter")
    page.wait_for_selector("#new-password")
    assert page.evaluate("document.activeElement.id") == "shown-once"
    from django.contrib.auth import get_user_model

    kim = get_user_model().objects.get(username="kim")
    assert set(kim.groups.values_list("name", flat=True)) == {"assessor", "reviewer"}
