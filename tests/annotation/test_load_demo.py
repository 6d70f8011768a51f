"""The demo loader brings in all the sample data, the demo accounts and a ready pool, and can run again."""

import json
import re
from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from annotation.services import plot
from annotation import units as unit_kinds
from annotation.models import Assignment, Campaign
from assessments.models import Answer, AnswerCitation, Pool, Run, RunEntry, StudyItem, Topic
from retrieval.models import Book, Collection

pytestmark = pytest.mark.django_db


def test_it_loads_everything_and_prints_working_passwords_and_can_run_again(settings, tmp_path, client, caplog):
    settings.RETRIEVAL_INDEX_DIR = tmp_path / "indexes"  # never reuse indexes of another test database
    out = StringIO()
    call_command("load_demo", "--no-progress", "--task-log", str(tmp_path / "tasks.log"),
                 "--rag-answers", str(tmp_path / "rag.jsonl"), stdout=out)
    text = out.getvalue()

    assert Topic.objects.filter(kind=Topic.Kind.OUTLINE, external_id__startswith="tqa2:").count() == 132
    assert Run.objects.filter(collection__name="car-y3").count() == 5
    assert Book.objects.count() == 4
    assert Topic.objects.filter(kind=Topic.Kind.PLOT).count() == 6
    assert Collection.objects.get(name="cranfield").passages.count() == 1400
    pool = Pool.objects.get(name="car-trial-union")
    assert pool.status == Pool.Status.READY and pool.candidates.exists()

    plot_pool = Pool.objects.get(name="plot-call-of-the-wild")
    assert plot_pool.status == Pool.Status.READY
    assert set(plot_pool.topics.values_list("external_id", flat=True)) == {"demo-1", "demo-2"}
    assert plot_pool.candidates.filter(topic__external_id="demo-1").count() == 10
    retriever_runs = Run.objects.filter(collection__name="call-of-the-wild", source=Run.Source.RETRIEVER)
    assert retriever_runs.count() == 3  # bm25, dense, and their RRF fusion

    accounts = dict(re.findall(r"^\s+\w+\s+(organiser|assessor\d)\s+(\S+)$", text, re.M))
    assert set(accounts) == {"organiser", "assessor1", "assessor2", "assessor3"}
    assert all(authenticate(username=u, password=p) for u, p in accounts.items())
    # What is left on the terminal: the accounts and the address, last; Celery's line per task is in the task log.
    last = text.strip().splitlines()[-7:]
    assert last[0] == "Demo accounts (passwords are new each time this runs):"
    assert [line.split()[1] for line in last[1:5]] == ["organiser", "assessor1", "assessor2", "assessor3"]
    assert last[5] == "" and last[6].startswith("Open http://127.0.0.1:8000/ and sign in")
    assert "succeeded in" not in text and not [r for r in caplog.records if "succeeded in" in r.getMessage()]
    assert "Task assessments.tasks.build_pool[" in (tmp_path / "tasks.log").read_text()
    # The CAR campaign's topics are those its units are over (its console home lists them).
    car = Campaign.objects.get(name="car-trial")
    assert car.track.collection.name == "car-y3" and car.track.topics.count() == 4

    articles = set(RunEntry.objects.filter(run__in=pool.runs.all()).values_list("topic_id", "run_id"))
    for name in ("assessor1", "assessor2", "assessor3"):
        queue = Assignment.objects.filter(assessor__username=name, campaign__name="car-trial")
        assert set(queue.values_list("topic_id", "run_id")) == articles
        assert list(queue.values_list("position", flat=True)) == list(range(len(articles)))
        # Then the plot queries: labelling, and forced choice, each query once, after the articles.
        plots = Assignment.objects.filter(assessor__username=name, pool=plot_pool).order_by("position")
        assert [(a.campaign.name, a.topic.external_id) for a in plots] == [
            ("plot-labels", "demo-1"), ("plot-labels", "demo-2"), ("plot-choice", "demo-1"), ("plot-choice", "demo-2")]
        assert [a.position for a in plots] == list(range(len(articles), len(articles) + 4))
    assert not Assignment.objects.filter(assessor__username="organiser").exists()
    assignments = Assignment.objects.count()

    assert Campaign.objects.get(name="plot-labels").settings["mode"] == "label"
    assert Campaign.objects.get(name="plot-choice").settings["mode"] == "choice"
    items = StudyItem.objects.filter(pool=plot_pool, kind=StudyItem.Kind.CHOICE)
    assert items.count() == 2 and items.first().run.name.startswith("dense")
    for item in items:
        assert item.candidates.count() == 20 and item.candidates.filter(pk=item.answer_id).exists()
    labelling = Assignment.objects.get(assessor__username="assessor1", campaign__name="plot-labels", topic__external_id="demo-1")
    assert unit_kinds.of(labelling).kind == Assignment.Kind.PLOT_LABELS and len(plot.candidates(labelling)) == 10
    client.force_login(labelling.assessor)
    assert b'id="plot-data"' in client.get(f"/a/{labelling.token}/").content
    choosing = Assignment.objects.get(assessor__username="assessor1", campaign__name="plot-choice", topic__external_id="demo-2")
    assert client.get(f"/a/{choosing.token}/").content.count(b'class="option"') == 20

    # The ad hoc campaign: Cranfield's first six queries as TREC topics, a BM25 pool, every assessor on each topic.
    adhoc = Assignment.objects.filter(campaign__name="cranfield-adhoc", assessor__username="assessor1").order_by("position")
    assert [a.topic.external_id for a in adhoc] == ["1", "2", "3", "4", "5", "6"]
    first = adhoc.first()
    assert first.kind == Assignment.Kind.ADHOC and first.pool.candidates.filter(topic=first.topic).count() == 10
    assert first.topic.title == "aeroelastic model similarity laws" and "similarity laws" in first.topic.metadata["narrative"]
    page = client.get(f"/a/{first.token}/").content.decode()
    assert 'id="adhoc-data"' in page and "Narrative" in page and "Perfectly relevant" in page

    # The nuggets campaign: two extractive systems' answers to the same six topics, each sentence citing the
    # Cranfield abstract it was taken from; assessor1 writes the banks, assessor2 and 3 label every answer, blind.
    rag = Campaign.objects.get(name="cranfield-rag")
    assert rag.task == Campaign.Task.NUGGETS and not rag.show_run_names
    assert sorted(rag.track.topics.values_list("external_id", flat=True)) == ["1", "2", "3", "4", "5", "6"]
    answers = Answer.objects.filter(campaign_id=rag.pk)
    runs = {"extractive-top3", "extractive-next2"}
    assert answers.count() == 12 and set(answers.values_list("run__name", flat=True)) == runs
    bm25 = Pool.objects.get(name="cranfield-bm25")
    for answer in answers.select_related("run", "topic"):
        sentences = list(answer.sentences.order_by("position"))
        assert len(sentences) == (3 if answer.run.name == "extractive-top3" else 2)
        for sentence in sentences:
            (citation,) = sentence.citations.all()
            doc = citation.passage
            assert doc.collection.name == "cranfield" and doc.text
            assert sentence.text in " ".join(doc.text.split()) and sentence.text != doc.title
            assert bm25.candidates.filter(topic=answer.topic, passage=doc).exists()
    assert AnswerCitation.objects.filter(sentence__answer__campaign_id=rag.pk).count() == 6 * (3 + 2)
    lines = (tmp_path / "rag.jsonl").read_text().splitlines()
    assert len(lines) == 12 and json.loads(lines[0])["answer"][0]["citations"] == [0]
    units = {name: list(Assignment.objects.filter(campaign=rag, assessor__username=name).order_by("position")
                        .values_list("kind", flat=True))
             for name in ("assessor1", "assessor2", "assessor3", "organiser")}
    assert units["assessor1"] == [Assignment.Kind.NUGGET_CREATION] * 6
    assert units["assessor2"] == units["assessor3"] == [Assignment.Kind.NUGGET_SUPPORT] * 12
    assert units["organiser"] == []
    support = Assignment.objects.filter(campaign=rag, assessor__username="assessor2").order_by("position").first()
    client.force_login(support.assessor)
    unit_page, queue_page = (client.get(url).content.decode() for url in (f"/a/{support.token}/", "/"))
    assert 'id="nugget-data"' in unit_page and support.token in queue_page
    assert not [name for name in runs if name in unit_page + queue_page]
    assignments = Assignment.objects.count()

    again = StringIO()
    call_command("load_demo", "--no-progress", stdout=again)
    assert "Already loaded: CAR trial runs." in again.getvalue()
    assert Pool.objects.get(name="car-trial-union").candidates.count() == pool.candidates.count()
    assert Assignment.objects.count() == assignments
    assert Answer.objects.count() == 12 and Campaign.objects.filter(name="cranfield-rag").count() == 1
    assert "Already loaded: nuggets campaign cranfield-rag." in again.getvalue() and "(0 assignments new)" in again.getvalue()
    assert StudyItem.objects.filter(pool=plot_pool).count() == 2
