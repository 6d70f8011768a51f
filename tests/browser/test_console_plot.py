"""An organiser runs a plot-retrieval campaign in Chromium alone, from an empty site with one organiser account:
a book and its queries uploaded, a pool of BM25 and the bundled MiniLM encoder fused by RRF built through the
retrieval workers (in-process here), two assessors given every query with overlap 2 who grade candidates with the
keys, and the qrels and plot labels downloaded from the campaign's page say what they judged."""

import json

import pytest

from annotation.models import Assignment, Campaign
from assessments.models import Pool, Run
from retrieval.models import Book, Passage
from tests.browser.console_steps import (
    add_person, download, organiser_account, qrels_lines, sign_in, sign_out, whole_page_shot,
)
from tests.factories import DATA
from tests.retrieval.fixtures import index_dir  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

BOOK = "call-of-the-wild"
GRADES = {"ann": ["2", "1", "0"], "bob": ["2", "0", "0"]}  # keys for the first three candidates each is shown
BUILD_TIMEOUT = 300_000  # ms: BM25 and MiniLM over the book's chunks on a shared CPU
EXCERPT = 500  # lines of the book: its first two chapters hold both queries' ground truth (and encode faster)


def book_excerpt(tmp_path):
    source = (DATA / "books" / f"{BOOK}.txt").read_text(encoding="utf-8").splitlines()[:EXCERPT]
    path = tmp_path / f"{BOOK}.txt"
    path.write_text("\n".join(source) + "\n", encoding="utf-8")
    return path


def book_queries(tmp_path):
    """The sample queries about the book (the sample file names other books too)."""
    lines = [line for line in (DATA / "plot" / "sample-queries.jsonl").read_text(encoding="utf-8").splitlines()
             if line.strip() and json.loads(line)["book"] == BOOK]
    path = tmp_path / f"{BOOK}-queries.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, [json.loads(line)["query_id"] for line in lines]


def grade_first_candidates(page, username, password):
    """Sign in, open the next assignment with N, grade the first candidates; (topic id, {passage id: grade})."""
    sign_in(page, username, password)
    page.wait_for_selector("body[data-ready=home]")
    page.keyboard.press("N")
    page.wait_for_selector("body[data-ready=plot]")
    order = page.evaluate("JSON.parse(document.getElementById('plot-data').textContent).candidates.map(c => c.id)")
    given = {}
    for n, key in enumerate(GRADES[username]):
        page.keyboard.press(key)
        given[order[n]] = int(key)
        if n < len(GRADES[username]) - 1:
            page.keyboard.press("j")
    page.wait_for_selector('#savestate[data-state="saved"]')
    assert page.is_visible("#guidelines")  # the campaign's guidelines, rendered from Markdown
    assert page.locator("#guidelines strong", has_text="whole chunk").count() == 1
    token = page.url.rstrip("/").split("/")[-1]
    topic = Assignment.objects.select_related("topic").get(token=token).topic
    sign_out(page)
    return topic, given


def majority(grades):
    """The majority grade, ties to the higher (as assessments.exporters.qrels)."""
    counts = {g: grades.count(g) for g in grades}
    return max(counts, key=lambda g: (counts[g], g))


def test_an_organiser_runs_a_plot_campaign_in_the_browser_from_an_empty_site(new_page, shot, tmp_path, index_dir):  # noqa: F811
    organiser_account()
    queries, query_ids = book_queries(tmp_path)
    page = new_page()
    sign_in(page, "boss", "pw-boss")

    # The book first (a plot campaign is about one book, its own collection).
    page.goto("/data/")
    page.select_option("#id_kind", "book")
    page.set_input_files("#id_files", str(book_excerpt(tmp_path)))
    page.fill("#id_title", "The Call of the Wild")
    page.fill("#id_slug", BOOK)
    page.click("#upload", timeout=120_000)
    page.wait_for_selector("text=Imported 'The Call of the Wild' as call-of-the-wild", timeout=120_000)
    assert Book.objects.get(slug=BOOK).sentence_count > 200

    # The campaign, its topics from the queries file.
    page.goto("/campaigns/new/")
    page.fill("#id_name", "plot-wild")
    page.select_option("#id_task", "plot")
    page.click(f"button.pick-collection[data-name='{BOOK}']")
    page.check("input[name=topics_from][value=file]")
    page.set_input_files("#id_topic_file", str(queries))
    page.fill("#id_guidelines", "Grade the **whole chunk**, not one sentence.\n\n- 2: the query describes it")
    page.fill("#id_overlap", "2")
    page.fill("#id_review_sample_size", "0")
    assert page.is_visible("#plot-settings")
    page.fill("#id_context_sentences", "3")
    page.click("#create-campaign")
    page.wait_for_selector(f"text=Campaign plot-wild made with {len(query_ids)} topics")
    campaign = Campaign.objects.get(name="plot-wild")
    assert campaign.settings["mode"] == "label" and campaign.settings["context_sentences"] == 3

    # A pool of our retrievers: BM25 and the dense encoder, fused by RRF, 10 candidates a query.
    page.click("nav.console-tabs >> text=Pools")
    page.fill("#id_name", "plot-wild-rrf")
    page.check("#id_bm25")
    page.check("#id_dense")
    page.select_option("#id_strategy", "rrf")
    page.fill("#id_depth", "20")
    page.fill("#id_per_topic", "10")
    page.click("#build-pool", timeout=BUILD_TIMEOUT)
    page.wait_for_selector("#pool-plot-wild-rrf .status-ready", timeout=BUILD_TIMEOUT)
    pool = Pool.objects.get(name="plot-wild-rrf")
    assert pool.status == Pool.Status.READY and pool.params["retrievers"] == ["bm25", "dense"]
    assert all(pool.candidates.filter(topic__external_id=q).count() == 10 for q in query_ids)
    whole_page_shot(page, shot, "console-plot-pool")

    passwords = {name: add_person(page, name) for name in ("ann", "bob")}
    page.goto("/campaigns/plot-wild/work/")
    page.check("#assign-form input[name=assessors][value=ann]")
    page.check("#assign-form input[name=assessors][value=bob]")
    page.fill("#id_overlap", "2")
    page.click("#assign")
    page.wait_for_selector("#load-table")
    assert Assignment.objects.filter(campaign=campaign).count() == 2 * len(query_ids)
    sign_out(page)

    graded = {name: grade_first_candidates(page, name, passwords[name]) for name in ("ann", "bob")}
    topic = graded["ann"][0]
    assert graded["bob"][0] == topic
    per_passage = {}
    for _, given in graded.values():
        for pid, grade in given.items():
            per_passage.setdefault(pid, []).append(grade)
    docids = dict(Passage.objects.filter(pk__in=per_passage).values_list("pk", "external_id"))

    sign_in(page, "boss", "pw-boss")
    page.goto("/campaigns/plot-wild/results/")
    whole_page_shot(page, shot, "console-plot-results")
    qrels = qrels_lines(download(page, lambda: page.click("#download-qrels"), tmp_path, "plot.qrels"))
    assert qrels == {(topic.external_id, docids[pid]): majority(grades) for pid, grades in per_passage.items()}
    labels = download(page, lambda: page.click("#download-plot"), tmp_path, "labels.jsonl").decode().splitlines()
    records = [json.loads(line) for line in labels]
    grades = {(r["assessor"], r["passage"]): r["value"] for r in records if r["layer"] == "plot_grade"}
    expected = {(name, docids[pid]): grade for name, (_, given) in graded.items() for pid, grade in given.items()}
    assert grades == expected

    runs = set(Run.objects.filter(collection__name=BOOK).values_list("name", flat=True))
    assert len(runs) == 3  # bm25, dense and their fusion, each kept as a run
    assert page.locator("#evaluation-table tbody tr").count() == 3
