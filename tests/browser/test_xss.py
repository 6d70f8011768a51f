"""Untrusted text carrying script payloads is shown as text on every page, and none of it runs (real Chromium).

Passages, topic titles and facet headings, notes, run names, campaign titles and guidelines, plot queries and
usernames all carry PAYLOAD: each piece sets window.__xss if it ever runs (a script element, an event handler
attribute, a closing </script> inside page data, a javascript: URL, a quote breaking out of a JS string).
Each page is loaded as someone who may see it; window.__xss must stay undefined, no dialog may open, no element
may carry an event handler or a javascript: link, and the payload's text must be visible as text.
"""

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Group
from django.urls import NoReverseMatch, reverse

from annotation.services.campaigns import create_campaign
from annotation.models import Assignment, Campaign
from annotation.roles import Role
from assessments.models import Topic
from assessments.services.judging import record_judgement
from retrieval.models import Collection
from tests import factories
from tests.annotation.plot_setup import assign, load_query, plot_pool

pytestmark = pytest.mark.django_db(transaction=True)

PAYLOAD = (
    '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">"><svg onload="window.__xss=3"></svg>'
    "';window.__xss=4;//</script><script>window.__xss=5</script> javascript:window.__xss=6 "
    '<a href="javascript:window.__xss=7">link</a>'
)
MARK = "window.__xss=1"  # a piece of the payload that must appear as text


@pytest.fixture
def world(tmp_path):
    """An outline assignment, a plot assignment, an ad hoc campaign taking runs; payloads everywhere."""
    assessor = factories.user("judge")
    assessor.groups.add(Group.objects.get(name=Role.ASSESSOR))
    organiser = factories.user("boss", is_staff=True, is_superuser=True)
    coll = factories.collection("car")
    topic = factories.topic(coll, "tqa2:L_0001", title=f"Water {PAYLOAD}",
                            facets=[("tqa2:L_0001/T_1", f"Droughts {PAYLOAD}"), ("tqa2:L_0001/T_2", "Floods")])
    passages = [factories.passage(coll, f"{i:040x}", text=f"Passage {i} {PAYLOAD}") for i in range(1, 4)]
    run = factories.run(coll, f"run{PAYLOAD}"[:100], {topic: passages})
    campaign = Campaign.objects.create(name="xss", task=Campaign.Task.OUTLINE, title=f"Campaign {PAYLOAD}",
                                       guidelines=f"Guidelines {PAYLOAD}", show_run_names=True)  # run names shown
    outline = Assignment.objects.create(campaign=campaign, assessor=assessor, topic=topic, run=run)
    record_judgement(assessor=assessor, layer="notes", value=f"My notes {PAYLOAD}", topic=topic,
                     passage=passages[0], client_time=datetime(2024, 5, 1, tzinfo=UTC), run_ids=[run.name])

    plot_topic = load_query(tmp_path, text=f"A dog {PAYLOAD} pulls a sled", lines=300)
    pool, _ = plot_pool(plot_topic, size=3)
    plot_campaign = Campaign.objects.create(name="xss-plot", task=Campaign.Task.PLOT, title=f"Plot {PAYLOAD}")
    plot = assign(assessor, plot_topic, pool, plot_campaign)

    web = factories.collection("web", kind=Collection.Kind.DOCUMENTS)
    factories.topic(web, "301", kind=Topic.Kind.ADHOC, title=f"Ad hoc {PAYLOAD}", text=f"What is {PAYLOAD}?")
    factories.passage(web, "d1", text=PAYLOAD)
    create_campaign(name="adhoc", task="adhoc", topics=["301"], title=f"Ad hoc {PAYLOAD}")
    return {"outline": outline, "plot": plot, "campaign": campaign, "pool": pool, "topic": topic}


def optional(name, *args):
    """A page that another part of the site adds; None while it does not exist."""
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return None


def pages(world):
    """(who, url, whether the payload's text must be visible there)."""
    staff = [
        reverse("admin:annotation_campaign_changelist"), reverse("admin:annotation_assignment_changelist"),
        reverse("admin:assessments_topic_changelist"), reverse("admin:assessments_run_changelist"),
        reverse("admin:retrieval_passage_changelist"), reverse("admin:assessments_judgement_changelist"),
        reverse("admin:assessments_judgementchange_changelist"),
        reverse("admin:assessments_topic_change", args=[world["topic"].pk]),
        reverse("admin:annotation_campaign_change", args=[world["campaign"].pk]),
        "/api/campaigns/?format=api", "/api/campaigns/adhoc/topics/?format=api",
        f"/api/pools/{world['pool'].name}/candidates/?format=api",
        optional("annotation:dashboard", "xss"), optional("annotation:adjudication", "xss"),
        optional("annotation:study_index"), optional("annotation:study_results", world["pool"].name),
        reverse("annotation:unit", args=[world["outline"].token]),  # read-only, as an organiser sees it
        # The organiser's console: the campaign list, each campaign's parts, people, data.
        optional("annotation:campaigns"), optional("annotation:console_people"), optional("annotation:console_site_data"),
        *[optional(f"annotation:{part}", name) for name in ("xss", "adhoc")
          for part in ("campaign_home", "console_data", "console_pools", "console_work", "console_results")],
    ]
    shown = {reverse("admin:assessments_topic_changelist"), reverse("admin:retrieval_passage_changelist"),
             "/api/campaigns/adhoc/topics/?format=api"}
    return (
        [("judge", "/", True), ("judge", f"/a/{world['outline'].token}/", True),
         ("judge", f"/a/{world['plot'].token}/", True)]
        + [("boss", url, url in shown) for url in staff if url]
    )


def sign_in(page, username):
    page.goto("/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", f"pw-{username}")
    page.click("button[type=submit]")
    page.wait_for_load_state()


def test_no_payload_runs_on_any_page_and_each_shows_as_text(world, new_page):
    dialogs, checked = [], []
    signed_in = {}
    for who, url, visible in pages(world):
        if who not in signed_in:
            page = new_page()
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            sign_in(page, who)
            signed_in[who] = page
        page = signed_in[who]
        response = page.goto(url)
        assert response.status == 200, (who, url, response.status)
        page.wait_for_load_state("load")
        page.wait_for_timeout(150)  # event handlers of broken images fire after load
        assert page.evaluate("typeof window.__xss") == "undefined", (url, page.evaluate("window.__xss"))
        handlers = page.evaluate(
            "document.querySelectorAll('[onerror],[onload],[onclick],[onmouseover]').length"
        )
        assert handlers == 0, url
        assert page.evaluate("document.querySelectorAll('a[href^=\"javascript:\" i]').length") == 0, url
        if visible:
            assert MARK in page.inner_text("body"), url
        checked.append(url)
    assert dialogs == []
    assert len(checked) >= 14


def test_the_payload_does_run_when_it_is_not_escaped(browser):
    """The control: the same payload put into a page as markup sets window.__xss, so the checks above can fail."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_content(f"<html><body><p>{PAYLOAD}</p></body></html>")
        page.wait_for_function("() => [1, 2, 3, 5].includes(window.__xss)")  # a broken image's handler fires later
    finally:
        context.close()
