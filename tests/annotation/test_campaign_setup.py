"""A campaign made from the console's form: typed settings, the topics of an uploaded file, qualification, and the
campaign list and home that show it; guidelines are Markdown with HTML shown as text."""

import io

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Campaign, CampaignTopic
from annotation.roles import Role, ensure_groups
from annotation.services.campaign_setup import SetupInvalid, new_campaign, plot_settings
from annotation.services.data_imports import Upload
from annotation.templatetags.guidelines import render_markdown
from assessments.models import QrelSet, Topic
from tests import factories
from tests.factories import DATA

pytestmark = pytest.mark.django_db

OUTLINES = DATA / "car-y3" / "tqa-heading-cast-and-more-6.json"


def outline_file():
    return Upload(OUTLINES.name, io.BytesIO(OUTLINES.read_bytes()), OUTLINES.stat().st_size)


def test_a_campaign_takes_the_topics_of_its_uploaded_file_and_its_settings():
    campaign = new_campaign(name="car", task="outline", collection="car-y3", topic_file=outline_file(), overlap=3,
                            review_sample_size=5, review_threshold=0.9, guidelines="Be *kind*.")
    assert campaign.track.topics.count() == 132 and campaign.track.collection.name == "car-y3"
    assert (campaign.overlap, campaign.review_sample_size, campaign.review_threshold) == (3, 5, 0.9)


def test_a_picked_topic_outside_the_collection_makes_nothing():
    web = factories.collection("web")
    factories.topic(web, "301", kind=Topic.Kind.ADHOC)
    with pytest.raises(SetupInvalid) as caught:
        new_campaign(name="adhoc", task="adhoc", collection="web", topics=["301", "999"])
    assert caught.value.field == "collection" or caught.value.field == "topics"
    assert not Campaign.objects.exists()


def test_qualification_topics_need_gold_answers_and_must_be_the_campaigns():
    web = factories.collection("web")
    for qid in ("301", "302"):
        factories.topic(web, qid, kind=Topic.Kind.ADHOC)
    with pytest.raises(SetupInvalid) as caught:
        new_campaign(name="a", task="adhoc", collection="web", qualification_topics=["301"])
    assert caught.value.field == "qualification_gold"
    QrelSet.objects.create(name="gold", collection=web)
    with pytest.raises(SetupInvalid) as caught:
        new_campaign(name="a", task="adhoc", collection="web", topics=["302"], qualification_topics=["301"],
                     qualification_gold="gold")
    assert caught.value.field == "qualification_topics" and not Campaign.objects.exists()
    campaign = new_campaign(name="a", task="adhoc", collection="web", qualification_topics=["301"],
                            qualification_gold="gold")
    assert CampaignTopic.objects.get(campaign=campaign).topic.external_id == "301"


def test_names_are_unique_and_new_is_reserved():
    web = factories.collection("web")
    factories.topic(web, "301", kind=Topic.Kind.ADHOC)
    for name in ("new",):
        with pytest.raises(SetupInvalid) as caught:
            new_campaign(name=name, task="adhoc", collection="web")
        assert caught.value.field == "name"
    new_campaign(name="a", task="adhoc", collection="web")
    with pytest.raises(SetupInvalid) as caught:
        new_campaign(name="a", task="adhoc", collection="web")
    assert caught.value.field == "name"


def test_plot_settings_are_typed_and_checked():
    assert plot_settings(mode="choice", choice_candidates=3)["choice_candidates"] == 3
    for wrong, field in (({"mode": "dance"}, "mode"), ({"scale": [[1, "a"], [1, "b"]]}, "plot_scale"),
                         ({"context_sentences": 99}, "context_sentences"), ({"choice_candidates": 1}, "choice_candidates")):
        with pytest.raises(SetupInvalid) as caught:
            plot_settings(**wrong)
        assert caught.value.field == field


def test_guidelines_markdown_shows_html_as_text_and_refuses_script_links():
    html = render_markdown('**Read** <script>alert(1)</script> [x](javascript:alert(1)) [ok](https://example.org)\n'
                           '<img src=x onerror=alert(2)>')
    assert "<strong>Read</strong>" in html
    assert "<script" not in html and "<img" not in html and "&lt;script&gt;" in html
    assert 'href="javascript' not in html
    assert '<a href="https://example.org" rel="noopener noreferrer">ok</a>' in html


def test_the_form_shows_each_problem_beside_its_field(client):
    ensure_groups()
    boss = factories.user("boss", is_staff=True)
    boss.groups.add(Group.objects.get(name=Role.ORGANISER))
    client.force_login(boss)
    response = client.post("/campaigns/new/", {"name": "bad name", "task": "outline", "topics_from": "pick",
                                               "overlap": 0, "plot_scale": "x", "qualification_threshold": 90,
                                               "qualification_attempts": 2, "review_sample_size": 10,
                                               "review_threshold": 95, "mode": "label", "context_sentences": 5,
                                               "choice_candidates": 20})
    assert response.status_code == 400
    form = response.context["form"]
    assert set(form.errors) >= {"name", "overlap", "plot_scale", "topics"}
    assert 'aria-invalid="true"' in response.content.decode()


def test_a_topic_file_with_a_huge_number_lists_the_problem_and_makes_nothing(client):
    ensure_groups()
    boss = factories.user("boss", is_staff=True)
    boss.groups.add(Group.objects.get(name=Role.ORGANISER))
    client.force_login(boss)
    topic_file = SimpleUploadedFile("topics.json", b'{"headings": ' + b"1" * 5000 + b"}")
    response = client.post("/campaigns/new/", {
        "name": "car", "task": "outline", "collection": "car-y3", "topics_from": "file", "topic_file": topic_file,
        "overlap": 1, "qualification_threshold": 90, "qualification_attempts": 2, "review_sample_size": 10,
        "review_threshold": 95, "mode": "label", "context_sentences": 5, "choice_candidates": 20,
        "plot_scale": "1 Yes\n0 No",
    })
    assert response.status_code == 400
    assert response.context["problems"] == [{
        "source": "topics.json", "line": 1, "field": None,
        "message": "invalid JSON: a number of 5,000 digits (at most 4,300 are taken) at column 14",
    }]
    assert not Campaign.objects.exists()


@pytest.mark.parametrize("field", ["max_runs", "max_per_topic"])
@pytest.mark.parametrize("value", ["2147483648", "4294967295", "4294967296", "99999999999"])
def test_the_forms_run_limits_stay_within_the_column(client, field, value):
    """The console's limits have the column's maximum: past it PostgreSQL wrapped or refused them (issue 31, 7)."""
    ensure_groups()
    boss = factories.user("boss", is_staff=True)
    boss.groups.add(Group.objects.get(name=Role.ORGANISER))
    client.force_login(boss)
    response = client.post("/campaigns/new/", {
        "name": "car", "task": "outline", "collection": "car-y3", "topics_from": "pick", "overlap": 1,
        "qualification_threshold": 90, "qualification_attempts": 2, "review_sample_size": 10, "review_threshold": 95,
        "mode": "label", "context_sentences": 5, "choice_candidates": 20, field: value,
    })
    assert response.status_code == 400
    assert "2147483647" in " ".join(response.context["form"].errors[field])
    assert not Campaign.objects.exists()


def test_a_topic_file_for_an_ad_hoc_campaign_says_where_its_topics_go(client):
    """From an empty site the form's topic file is refused for an ad hoc campaign; the message said only that its
    topics come from the collection, not how an organiser gets them there (the Data page)."""
    with pytest.raises(SetupInvalid) as caught:
        new_campaign(name="adhoc", task="adhoc", collection="cran",
                     topic_file=Upload("topics.trec", io.BytesIO(b"<top>\n<num> 1\n<title> x\n</top>\n"), 33))
    assert caught.value.field == "topic_file"
    assert "upload them on the Data page" in caught.value.message and "Ad hoc topics" in caught.value.message
    assert not Campaign.objects.exists()
