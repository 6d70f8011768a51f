"""An organiser runs a CAR campaign in Chromium alone, from an empty site with one organiser account to qrels:
the Y3 outline file and the trial runs uploaded, a depth-20 pool built, two assessors made and given the work
with overlap 2, each signs in and judges with the keyboard, and the qrels and Y3 assessments downloaded from the
campaign's page say what they judged."""

import io
import json
import zipfile

import pytest

from annotation.models import Assignment, Campaign
from assessments.models import Pool, Run, Topic
from retrieval.models import Passage
from tests.browser.console_steps import (
    add_person, download, organiser_account, qrels_lines, sign_in, sign_out, whole_page_shot,
)
from tests.factories import DATA

pytestmark = pytest.mark.django_db(transaction=True)

OUTLINES = DATA / "car-y3" / "tqa-heading-cast-and-more-6.json"
RUNS = sorted((DATA / "car-y3" / "runs").glob("*.json"))
# What each assessor does on the first three passages of their first article: keys, and the page-level grade.
JUDGING = {
    "ann": [(["1", "m"], 3), (["x"], 0), (["2", "c"], 1)],
    "bob": [(["1", "s"], 2), (["x"], 0), (["o", "c"], 1)],
}
MAJORITY = [3, 0, 1]  # ties go to the higher grade


def judge_first_article(page, username, password):
    """Sign in, open the next assignment with N, judge its first passages; (topic id, [passage ids]) judged."""
    sign_in(page, username, password)
    page.wait_for_selector("body[data-ready=home]")
    page.keyboard.press("N")
    page.wait_for_selector("body[data-ready=outline]")
    pids = [int(p) for p in page.eval_on_selector_all(".passage", "ps => ps.map(p => p.dataset.pid)")][:3]
    assert page.locator("#guidelines strong", has_text="gold article").count() == 1  # Markdown, on the outline page
    for n, (keys, _) in enumerate(JUDGING[username]):
        for key in keys:
            page.keyboard.press(key)
        if n < 2:
            page.keyboard.press("j")
    page.wait_for_selector('#savestate[data-state="saved"]')
    token = page.url.rstrip("/").split("/")[-1]
    assignment = Assignment.objects.select_related("topic").get(token=token)
    sign_out(page)
    return assignment.topic, pids


def test_an_organiser_runs_a_car_campaign_in_the_browser_from_an_empty_site(new_page, shot, tmp_path):
    organiser_account()
    page = new_page()
    sign_in(page, "boss", "pw-boss")
    page.wait_for_selector("#new-campaign")  # an organiser lands on the (empty) campaign list
    shot(page, "console-campaigns-empty")

    # A new campaign: its topics come from the Y3 outline file.
    page.click("#new-campaign")
    page.fill("#id_name", "car-trial")
    page.fill("#id_title", "CAR Y3 trial articles")
    page.select_option("#id_task", "outline")
    page.fill("#id_collection", "car-y3")
    page.check("input[name=topics_from][value=file]")
    page.set_input_files("#id_topic_file", str(OUTLINES))
    page.fill("#id_guidelines", "Read the **gold article** first, then judge from top to bottom.")
    page.fill("#id_overlap", "2")
    page.fill("#id_review_sample_size", "0")
    whole_page_shot(page, shot, "console-new-campaign")
    page.click("#create-campaign")
    page.wait_for_selector("text=Campaign car-trial made with 132 topics")
    campaign = Campaign.objects.get(name="car-trial")
    assert campaign.track.topics.count() == 132 and campaign.overlap == 2

    # The trial runs, all files at once; their pages become topics of the campaign.
    page.click("nav.console-tabs >> text=Data")
    page.select_option("#id_kind", "car-runs")
    page.set_input_files("#id_files", [str(p) for p in RUNS])
    page.click("#upload")
    page.wait_for_selector("text=14 articles from 14 files imported")
    assert Run.objects.count() == 5 and campaign.track.topics.count() == 136
    whole_page_shot(page, shot, "console-data")

    # A depth-20 union pool of every run: preview it, then build it.
    page.click("nav.console-tabs >> text=Pools")
    page.fill("#id_name", "car-trial-union")
    page.click("#all-runs")
    page.fill("#id_depth", "20")
    page.click("#preview-pool")
    page.wait_for_selector("#pool-preview")
    assert "4 topics" in page.text_content("#pool-preview")
    whole_page_shot(page, shot, "console-pool-preview")
    page.click("#build-pool")
    page.wait_for_selector("#pool-car-trial-union .status-ready")
    pool = Pool.objects.get(name="car-trial-union")
    assert pool.status == Pool.Status.READY and pool.depth == 20 and pool.runs.count() == 5
    assert pool.topics.count() == 4 and pool.candidates.exists()

    # Two assessors, then the work with overlap 2.
    passwords = {name: add_person(page, name) for name in ("ann", "bob")}
    whole_page_shot(page, shot, "console-people")
    page.goto("/campaigns/car-trial/work/")
    assert not page.is_checked("#assign-form input[value=ann]")  # none ticked until chosen (issue 39 item 7)
    page.check("#assign-form input[value=ann]")
    page.check("#assign-form input[value=bob]")
    page.fill("#id_overlap", "2")
    page.click("#assign")
    page.wait_for_selector("#load-table")
    units = Assignment.objects.filter(campaign=campaign)
    assert units.filter(assessor__username="ann").count() == units.filter(assessor__username="bob").count() > 0
    whole_page_shot(page, shot, "console-work")
    sign_out(page)

    # Each assessor judges the first passages of their first article, with the keys.
    judged = {}
    for name in ("ann", "bob"):
        judged[name] = judge_first_article(page, name, passwords[name])
    topic, pids = judged["ann"]
    assert judged["bob"] == (topic, pids)  # overlap 2 of 2: the same topic, in the same order
    docids = dict(Passage.objects.filter(pk__in=pids).values_list("pk", "external_id"))

    # The organiser downloads the qrels and the Y3 assessments from the campaign's results.
    sign_in(page, "boss", "pw-boss")
    shot(page, "console-campaigns")
    page.goto("/campaigns/car-trial/")
    whole_page_shot(page, shot, "console-campaign-home")
    page.goto("/campaigns/car-trial/dashboard/")
    page.wait_for_selector("figure.chart svg")
    assert page.locator("nav.console-tabs").count() == 1  # the campaign's tabs here too
    whole_page_shot(page, shot, "console-dashboard")
    page.goto("/campaigns/car-trial/adjudication/")
    assert page.locator(".adjudicate-form").count() > 0  # ann and bob disagree on some passages
    whole_page_shot(page, shot, "console-adjudication")
    page.goto("/campaigns/car-trial/results/")
    whole_page_shot(page, shot, "console-results")
    majority = qrels_lines(download(page, lambda: page.click("#download-qrels"), tmp_path, "majority.qrels"))
    assert majority == {(topic.external_id, docids[pid]): grade for pid, grade in zip(pids, MAJORITY)}
    page.select_option("#qrels-aggregate", "assessor:bob")
    bobs = qrels_lines(download(page, lambda: page.click("#download-qrels"), tmp_path, "bob.qrels"))
    assert bobs == {(topic.external_id, docids[pid]): grade for pid, (_, grade) in zip(pids, JUDGING["bob"])}
    page.select_option("#qrels-level", "section")
    page.select_option("#qrels-aggregate", "assessor:ann")
    sections = qrels_lines(download(page, lambda: page.click("#download-qrels"), tmp_path, "ann-sections.qrels"))
    first_facet = topic.facets.order_by("position").values_list("heading_id", flat=True)
    assert (f"{topic.external_id}/{first_facet[0]}", docids[pids[0]]) in sections

    archive = zipfile.ZipFile(io.BytesIO(download(page, lambda: page.click("#download-y3"), tmp_path, "y3.zip")))
    assert len(archive.namelist()) == 2  # one file per topic and assessor
    for name in ("ann", "bob"):
        [member] = [m for m in archive.namelist() if m.endswith(f"__{name}.json")]
        data = json.loads(archive.read(member))
        facets = {pair[0]["paragraph_id"] for pair in data["facet_state"]}
        removed = {pair[0]["paragraph_id"]: pair[1]["value"] for pair in data["nonrelevant_state2"]}
        assert facets == {docids[pids[0]], docids[pids[2]]}, (name, data["facet_state"])
        assert removed == {docids[pids[1]]: True}, (name, data["nonrelevant_state2"])
        assert all(v["annotator_id"] == name for _, values in data["facet_state"] for v in values)

    # The evaluation table scores the five runs against the qrels so far.
    assert page.locator("#evaluation-table tbody tr").count() == 5
    assert Topic.objects.filter(collection__name="car-y3").count() == 136
