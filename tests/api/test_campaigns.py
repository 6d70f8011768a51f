"""create_campaign, and GET /api/campaigns/…: what a campaign takes, and its topics (JSON, TREC format)."""

import io

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Campaign
from annotation.services.campaigns import CampaignError, create_campaign
from assessments.models import Topic
from retrieval.models import Collection
from tests import factories

pytestmark = pytest.mark.django_db


def command(*args):
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_campaign_takes_every_topic_of_the_tasks_kind_by_default(web):
    out = command("create_campaign", "trec-web", "--task", "adhoc", "--title", "Web track")
    assert out.strip() == "Campaign 'trec-web' (Ad hoc relevance) takes runs for 3 topics of collection 'web'."
    campaign = Campaign.objects.get(name="trec-web")
    assert campaign.title == "Web track" and campaign.track.collection == web
    assert sorted(campaign.track.topics.values_list("external_id", flat=True)) == ["301", "302", "303"]


def test_create_campaign_with_some_topics_and_limits(web):
    command("create_campaign", "two", "--task", "adhoc", "--topics", "302", "301", "--max-runs", "3",
            "--max-per-topic", "100")
    track = Campaign.objects.get(name="two").track
    assert sorted(track.topics.values_list("external_id", flat=True)) == ["301", "302"]
    assert (track.max_runs, track.max_per_topic) == (3, 100)


def test_create_campaign_asks_for_a_collection_when_the_topics_are_in_several(web):
    other = factories.collection("news")
    factories.topic(other, "401", kind=Topic.Kind.ADHOC)
    with pytest.raises(CommandError, match=r"in several collections \('news', 'web'\): name one"):
        command("create_campaign", "c", "--task", "adhoc")
    command("create_campaign", "c", "--task", "adhoc", "--collection", "news")
    assert list(Campaign.objects.get(name="c").track.topics.values_list("external_id", flat=True)) == ["401"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--topics", "301", "999"], "collection 'web' has no topics '999'"),
        (["--collection", "nope"], "no collection named 'nope'"),
        (["--max-runs", "0"], "--max-runs must be from 1 to 2147483647"),
    ],
)
def test_create_campaign_refuses_what_does_not_exist(web, args, message):
    with pytest.raises(CommandError, match=message):
        command("create_campaign", "c", "--task", "adhoc", *args)
    assert not Campaign.objects.exists()


@pytest.mark.parametrize("option", ["--max-runs", "--max-per-topic"])
@pytest.mark.parametrize("value", ["2147483648", "4294967295", "4294967296", "99999999999"])
def test_create_campaign_refuses_a_limit_past_the_column_instead_of_storing_it_wrapped(web, option, value):
    """On PostgreSQL 4294967296 was stored as 0 (no uploads), 99999999999 as 1215752191, and 4294967295 broke the
    column's check (a 500): the limits are bounded to the column's range (issue 31, finding 7)."""
    with pytest.raises(CommandError, match=f"{option} must be from 1 to 2147483647"):
        command("create_campaign", "c", "--task", "adhoc", option, value)
    assert not Campaign.objects.exists()


@pytest.mark.parametrize("field", ["max_runs", "max_per_topic"])
@pytest.mark.parametrize("value", [0, -1, 2**31, 2**32, 99999999999])
def test_the_campaign_service_validates_the_track_before_saving_it(web, field, value):
    with pytest.raises(CampaignError, match=f"^{field}: "):
        create_campaign(name="c", task="adhoc", **{field: value})
    assert not Campaign.objects.exists()


def test_the_largest_limits_are_stored_as_given(web):
    command("create_campaign", "c", "--task", "adhoc", "--max-runs", "2147483647", "--max-per-topic", "2147483647")
    track = Campaign.objects.get(name="c").track
    track.refresh_from_db()
    assert (track.max_runs, track.max_per_topic) == (2147483647, 2147483647)


def test_create_campaign_refuses_topics_of_another_kind(web, car):
    with pytest.raises(CommandError, match="topics 'tqa2:L_0001' are not plot topics"):
        command("create_campaign", "c", "--task", "plot", "--collection", "car", "--topics", "tqa2:L_0001")
    with pytest.raises(CommandError, match="there are no plot topics"):
        command("create_campaign", "c", "--task", "plot")


def test_create_campaign_refuses_a_name_in_use_or_not_a_slug(web):
    command("create_campaign", "c", "--task", "adhoc")
    with pytest.raises(CommandError, match="already exists"):
        command("create_campaign", "c", "--task", "adhoc")
    with pytest.raises(CommandError, match="name:"):
        command("create_campaign", "not a slug", "--task", "adhoc")


def test_a_participant_sees_the_campaigns_that_take_runs(adhoc, outline, team_a):
    factories.campaign("judging-only")
    response = team_a.get("/api/campaigns/")
    assert response.status_code == 200
    assert response.json()["results"] == [
        {"name": "adhoc", "title": "", "task": "adhoc", "accepts_runs": True, "run_format": "trec",
         "collection": "web", "topic_count": 2, "max_runs": 5, "max_per_topic": 1000},
        {"name": "car-y3", "title": "", "task": "outline", "accepts_runs": True, "run_format": "car-y3",
         "collection": "car", "topic_count": 1, "max_runs": 5, "max_per_topic": 20},
    ]


def test_an_organiser_sees_every_campaign(adhoc, organiser):
    factories.campaign("judging-only")
    names = [c["name"] for c in organiser.get("/api/campaigns/").json()["results"]]
    assert names == ["adhoc", "judging-only"]
    assert organiser.get("/api/campaigns/judging-only/").json()["accepts_runs"] is False


def test_topics_are_listed_with_facets_and_without_answers(outline, team_a):
    topic = Topic.objects.get(external_id="tqa2:L_0001")
    topic.gold_text = "The gold article."
    topic.save()
    topic.facets.update(notes="Assessor notes.")
    response = team_a.get("/api/campaigns/car-y3/topics/")
    assert response.status_code == 200
    assert response.json() == [
        {"id": "tqa2:L_0001", "kind": "outline", "title": "Water", "text": "",
         "facets": [{"heading_id": "tqa2:L_0001/T_0001", "heading": "Droughts"},
                    {"heading_id": "tqa2:L_0001/T_0002", "heading": "Floods"}]},
    ]
    assert b"gold" not in response.content and b"notes" not in response.content


def test_ad_hoc_topics_download_in_trec_topic_format(adhoc, team_a):
    response = team_a.get("/api/campaigns/adhoc/topics/trec/")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="adhoc-topics.txt"'
    assert response.content.decode() == (
        "<top>\n<num> Number: 301\n<title> Topic 301\n\n<desc> Description:\nWhat is 301?\n\n</top>\n\n"
        "<top>\n<num> Number: 302\n<title> Topic 302\n\n<desc> Description:\nWhat is 302?\n\n</top>\n\n"
    )


def test_the_trec_topic_format_is_only_for_ad_hoc_campaigns(outline, team_a):
    response = team_a.get("/api/campaigns/car-y3/topics/trec/")
    assert response.status_code == 404
    assert "for ad hoc topics" in response.json()["detail"]


def test_an_unknown_campaign_is_404(adhoc, team_a):
    assert team_a.get("/api/campaigns/nope/").status_code == 404
    assert team_a.get("/api/campaigns/nope/topics/").status_code == 404


def test_a_plot_campaign_is_about_one_books_collection(db):
    book = factories.collection("moby-dick", kind=Collection.Kind.BOOK)
    factories.topic(book, "q1", kind=Topic.Kind.PLOT)
    command("create_campaign", "plots", "--task", "plot")
    assert Campaign.objects.get(name="plots").track.collection == book
