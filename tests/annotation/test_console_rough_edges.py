"""The console's rough edges of issue 32 (items 8 to 19), each through the test client."""

import pytest

from annotation.services.assignment import assign_campaign
from tests import factories
from tests.annotation.test_assignment import make_campaign
from tests.annotation.test_console_pages import OUTLINES  # the organiser fixture: tests/annotation/conftest.py

pytestmark = pytest.mark.django_db


@pytest.fixture
def disagreeing(organiser):
    """A CAR campaign of one topic whose two assessors give the first passage different facets."""
    campaign, made, _ = make_campaign("edges", topics=1, runs=1, passages=2)
    topic, (p1, _) = made[0]
    ann, bob = factories.user("ann"), factories.user("bob")
    assign_campaign(campaign, ["ann", "bob"], overlap=2)
    for who, facet in ((ann, "H1"), (bob, "H2")):
        factories.judgement(who, topic, p1, relevance="must", facet=f"{topic.external_id}/{facet}", campaign=campaign)
    return campaign


def test_the_campaign_tabs_are_on_the_dashboard_and_adjudication_too(client, disagreeing):  # item 8
    for page, tab in (("dashboard", "Dashboard"), ("adjudication", "Adjudication")):
        html = client.get(f"/campaigns/edges/{page}/").content.decode()
        assert 'aria-label="Campaign edges"' in html, page
        assert f'aria-current="page">{tab}</a>' in html, page


def test_adjudication_shows_facet_headings_and_preselects_no_final_label(client, disagreeing):  # item 9
    html = client.get("/campaigns/edges/adjudication/").content.decode()
    assert "<strong>ann</strong>: First heading" in html and "<strong>bob</strong>: Second heading" in html
    assert "edges-T0/H1</span>" not in html and ": edges-T0/H1" not in html
    form = html[html.index('class="adjudicate-form"'):]
    form = form[:form.index("</form>")]
    assert " selected" not in form
    for name in ("facet", "relevance"):
        select = form[form.index(f'<select name="{name}"'):]
        select = select[:select.index("</select>")]
        assert '<option value="">' in select.split("</option>")[0], name


def test_the_work_page_says_statuses_in_words(client, disagreeing):  # item 10
    from annotation.models import Assignment

    Assignment.objects.filter(assessor__username="bob").update(status=Assignment.Status.IN_PROGRESS)
    html = client.get("/campaigns/edges/work/").content.decode()
    table = html[html.index('id="held-table"'):]
    assert "1 to do</td>" in table and "1 in progress</td>" in table
    assert "in_progress" not in table and " todo" not in table


def test_the_dashboard_shows_only_the_campaign_s_layers_and_a_short_campaign_by_minute(client, disagreeing):  # item 11
    from datetime import timedelta

    from django.utils import timezone

    from assessments.models import JudgementChange

    start = timezone.now() - timedelta(minutes=30)
    for n, change in enumerate(JudgementChange.objects.order_by("pk")):
        JudgementChange.objects.filter(pk=change.pk).update(received_at=start + timedelta(minutes=3 * n))
    html = client.get("/campaigns/edges/dashboard/").content.decode()
    assert 'id="chart-grades"' in html and 'id="chart-transitions"' in html
    assert 'id="chart-plot-grades"' not in html  # a CAR campaign has no plot grades
    progress = html[html.index('id="chart-progress"'):]
    progress = progress[:progress.index("</figure>")]
    assert "(per minute)" in progress and "<polyline" in progress and "No data yet" not in progress


def test_a_confusion_matrix_has_room_for_its_labels():  # item 11
    from annotation.reports.dashboard import CHAR_W, matrix

    labels = ["GENERAL/INTRODUCTION", "OTHER RELEVANT FACET", "Second heading of the topic"]
    chart = matrix("m", "pair", labels, [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    for label in chart["row_labels"]:
        assert len(label["short"]) * CHAR_W <= chart["left"] - 6
    for label in chart["col_labels"]:
        reach = len(label["short"]) * CHAR_W * 0.7
        assert label["x"] + reach <= chart["width"] and reach <= chart["top"] - 6


def test_a_campaign_without_reviewers_samples_no_review_and_its_home_says_so(client, disagreeing):  # item 13
    from annotation.models import Assignment, Review
    from annotation.services.changes import mark

    disagreeing.review_sample_size = 2
    disagreeing.save()
    mark(Assignment.objects.filter(campaign=disagreeing).first(), True, reason="test: marked done")
    assert not Review.objects.exists()
    html = client.get("/campaigns/edges/").content.decode()
    assert 'id="no-reviewer"' in html and "not sampled for review" in html

    reviewer = factories.user("rita")
    disagreeing.reviewers.add(reviewer)
    assert 'id="no-reviewer"' not in client.get("/campaigns/edges/").content.decode()


def _problem_rows(html):
    table = html[html.index('id="problems"'):]
    return table[:table.index("</table>")]


def test_an_empty_file_is_a_row_of_the_problems_table(client, organiser, django_capture_on_commit_callbacks):  # item 15
    from django.core.files.uploadedfile import SimpleUploadedFile

    from annotation.models import DataImport

    with django_capture_on_commit_callbacks(execute=True):
        client.post("/data/", {"kind": "trec-run", "files": SimpleUploadedFile("empty.run", b""), "collection": "c"})
    rows = _problem_rows(client.get(f"/data/imports/{DataImport.objects.get().pk}/").content.decode())
    assert "empty.run" in rows and "the file is empty" in rows

    response = client.post("/campaigns/new/", {
        "name": "x", "task": "outline", "collection": "car-y3", "topics_from": "file",
        "topic_file": SimpleUploadedFile("empty.json", b""), "overlap": 1, "qualification_threshold": 90,
        "qualification_attempts": 2, "review_sample_size": 0, "review_threshold": 95, "mode": "label",
        "plot_scale": "2 Yes\n1 Partly\n0 No", "context_sentences": 5, "choice_candidates": 20, "grade_scale": "dl",
    })
    rows = _problem_rows(response.content.decode())
    assert "empty.json" in rows and "the file is empty" in rows
    assert "The submitted file is empty" not in response.content.decode()


def test_a_file_of_another_kind_is_named(tmp_path):  # item 15
    from assessments.importers.car.assessments import read_assessment_file
    from assessments.importers.car.outlines import parse_cast_outlines
    from assessments.importers.car.runs import parse_articles
    from assessments.importers.sniff import looks_like
    from assessments.importers.trec import parse_qrels, parse_run
    from retrieval.ingest import ImportFailed, Problems

    run = "q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 2.0 bm25\n"
    qrels = "q1 0 d1 1\nq1 0 d2 0\n"
    y3 = '{"facet_state": {}, "transition_label_state": {}}'
    car_run = '{"run_id": "r", "squid": "tqa2:L_1", "paragraphs": []}\n{"run_id": "r", "squid": "tqa2:L_2", "paragraphs": []}\n'
    outlines = OUTLINES.read_text()[:3000]
    assert [looks_like(t) for t in (run, qrels, y3, car_run, outlines, "hello")] == [
        "a TREC run", "TREC qrels", "TREC CAR Y3 assessments", "a CAR run (Y3 JSON lines)",
        "CAR outlines (the Y3 cast file)", None]

    def messages(read, text):
        problems = Problems("up.txt")
        try:
            read(text, problems)
            problems.raise_if_any()
        except ImportFailed as exc:
            return " | ".join(p.message for p in exc.problems)
        return ""

    assert "this looks like TREC qrels, not a TREC run" in messages(parse_run, qrels)
    assert "this looks like a TREC run, not TREC qrels" in messages(parse_qrels, run)
    assert "this looks like TREC CAR Y3 assessments" in messages(parse_articles, y3)
    assert "this looks like a TREC run" in messages(parse_articles, run)
    with pytest.raises(ImportFailed, match="this looks like a CAR run"):
        parse_cast_outlines(car_run, "up.json")
    with pytest.raises(ImportFailed, match="this looks like TREC CAR Y3 assessments"):
        parse_cast_outlines(y3, "up.json")
    path = tmp_path / "up.json"
    path.write_text(car_run)
    problems = Problems(str(path))
    read_assessment_file(path, problems)
    assert "this looks like a CAR run" in problems.items[0].message


def test_the_y3_zip_names_its_files_as_the_export_writes_them_encoded_once(tmp_path):  # item 17
    import zipfile

    from assessments.exporters.car_y3 import export_car_assessments, zipped
    from assessments.exporters.common import resolve_scope

    coll = factories.collection("car-trial")
    topic = factories.topic(coll, "enwiki:Salmon%20run", facets=[("enwiki:Salmon%20run/H1", "Spawning")])
    passage = factories.passage(coll, "ab" * 20)
    factories.judgement(factories.user("bob"), topic, passage, relevance="must", facet="enwiki:Salmon%20run/H1")
    scope = resolve_scope(collection="car-trial")
    export_car_assessments(scope, tmp_path)
    with zipped(scope) as out:
        names = zipfile.ZipFile(out).namelist()
    assert names == sorted(p.name for p in tmp_path.iterdir()) == ["enwiki%3ASalmon%20run__bob.json"]


def test_a_failed_import_names_its_files_and_an_organiser_dismisses_it(client, organiser):  # item 12
    from django.utils import timezone

    from annotation.models import DataImport

    failed = DataImport.objects.create(kind=DataImport.Kind.TREC_RUN, file_names=["bm25.run", "dense.run"],
                                       status=DataImport.Status.FAILED, problem_total=3, finished_at=timezone.now())
    html = client.get("/campaigns/").content.decode()
    assert "bm25.run, dense.run: 3 problems" in html
    assert f'name="dismiss" value="import:{failed.pk}"' in html

    assert client.post("/campaigns/", {"dismiss": "import:999"}).status_code == 400
    response = client.post("/campaigns/", {"dismiss": f"import:{failed.pk}"})
    assert response.status_code == 302
    assert "bm25.run" not in client.get("/campaigns/").content.decode()

    client.force_login(factories.user("nosy"))
    assert client.post("/campaigns/", {"dismiss": f"import:{failed.pk}"}).status_code == 404


SOURCES = ("seed 00", "Appendix", "§")  # where a rule came from is for the code's comments, not for organisers


def test_help_texts_speak_to_organisers(client, disagreeing):  # item 14
    import inspect

    from django import forms
    from django.apps import apps

    from annotation.views.console import forms as console_forms
    from assessments.agreement.statistics import NOTES

    texts = [f"{m.__name__}.{f.name}: {f.help_text}" for m in apps.get_models() for f in m._meta.get_fields()
             if getattr(f, "help_text", "")]
    for name, form in inspect.getmembers(console_forms, inspect.isclass):
        if issubclass(form, forms.BaseForm):
            texts += [f"{name}.{field}: {f.help_text} {f.label}" for field, f in form.base_fields.items()]
    texts += NOTES
    for page in ("/campaigns/new/", "/campaigns/edges/results/", "/campaigns/edges/machine/",
                 "/campaigns/edges/dashboard/", "/campaigns/edges/data/"):
        texts.append(f"{page}: {client.get(page).content.decode()}")
    said = [t[:200] for t in texts if any(s in t for s in SOURCES)]
    assert not said


def test_y3_assessments_are_uploaded_in_the_console(client, organiser, django_capture_on_commit_callbacks):  # item 16
    import json

    from django.core.files.uploadedfile import SimpleUploadedFile

    from annotation.models import DataImport
    from assessments.models import Judgement
    from tests.assessments.test_import_car_assessments import P9, P10, P11, P12, TOPIC, appendix_example

    coll = factories.collection("car-y3")
    factories.topic(coll, TOPIC, facets=[(f"{TOPIC}/T_1512", "toxic chemicals")])
    for pid in (P9, P10, P11, P12):
        factories.passage(coll, pid)
    upload = SimpleUploadedFile("L_0257__NIST.json", json.dumps(appendix_example()).encode())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/data/", {"kind": "car-assessments", "files": upload, "collection": "car-y3"})
    assert response.status_code == 302, response.content.decode()[:3000]
    done = DataImport.objects.get()
    assert (done.kind, done.status) == (DataImport.Kind.CAR_ASSESSMENTS, DataImport.Status.DONE), done.problems
    assert Judgement.objects.filter(topic__external_id=TOPIC).count() == 4
    assert 'value="car-assessments"' in client.get("/data/").content.decode()


def test_the_assign_form_ticks_no_assessor_until_chosen(client, disagreeing):
    """Issue 39 item 7: every assessor was ticked, so assigning "alice" gave units to bob and carol too."""
    import re

    from django.contrib.auth.models import Group, User

    from annotation.roles import Role, ensure_groups

    ensure_groups()
    for user in User.objects.filter(username__in=["ann", "bob"]):
        user.groups.add(Group.objects.get(name=Role.ASSESSOR))
    html = client.get("/campaigns/edges/work/").content.decode()
    form = html[html.index('id="assign-form"'):]
    form = form[:form.index("</form>")]
    boxes = re.findall(r'<input[^>]*name="assessors"[^>]*>', form)
    assert boxes and not [box for box in boxes if "checked" in box]


def test_a_campaigns_data_page_lists_its_own_runs_by_file_name_not_another_campaigns_nor_a_server_path(
        client, organiser):
    """Issue 39 item 12: the Data page listed every run of the collection (another campaign's too) with the path
    the command read it from on the server."""
    from annotation.services.campaigns import create_campaign
    from assessments.models import Topic

    coll = factories.collection("shared-web", kind="documents")
    topic = factories.topic(coll, "401", kind=Topic.Kind.ADHOC, title="t")
    doc = factories.passage(coll, "d1")
    mine = create_campaign(name="mine", task="adhoc", topics=["401"], collection="shared-web")
    create_campaign(name="theirs", task="adhoc", topics=["401"], collection="shared-web")
    factories.run(coll, "our-run", {topic: [doc]}, track="mine", source_file="/srv/pooljudge/uploads/our.run")
    factories.run(coll, "their-secret-run", {topic: [doc]}, track="theirs", source_file="C:\\\\teams\\\\b.run")
    page = client.get(f"/campaigns/{mine.name}/data/").content.decode()
    listed = page[page.index('id="run-list"'):page.index("</table>", page.index('id="run-list"'))]
    assert "our-run" in listed and "our.run" in listed
    assert "their-secret-run" not in page and "/srv/pooljudge" not in page


def test_the_new_campaign_help_names_every_task_and_where_the_judging_order_applies(client, disagreeing):
    """The task's help omitted nuggets and the judging order's began "Plot labelling:", though ad hoc campaigns
    take it too (issue 39, item 12)."""
    from annotation.views.console.forms import CampaignForm

    form = CampaignForm()
    assert "nuggets of generated answers" in form.fields["task"].help_text
    assert form.fields["judging_order"].help_text.startswith("Plot and ad hoc campaigns:")
    page = client.get("/campaigns/new/").content.decode()
    assert "nuggets of generated answers (TREC RAG" in page and "Plot labelling: serve" not in page
