"""The organiser's dashboard: figures per assessor and topic, charts with their numbers, agreement, organisers only."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from annotation.services.assignment import assign_campaign
from annotation.reports.dashboard import dashboard
from annotation.models import Assignment, CampaignTopic, Review
from annotation.services.review import submit_review
from annotation.roles import Role, ensure_groups
from annotation.services.changes import mark
from assessments.models import JudgementChange, Layer, RunEntry, Topic
from assessments.services.judging import record_judgement
from tests import factories
from tests.annotation.test_assignment import make_campaign

pytestmark = pytest.mark.django_db


def judged_campaign():
    """Three assessors (one named with markup), overlap 2 over four topics, everything judged with active times,
    some disagreement, one review passed and one failed. Returns (campaign, organiser)."""
    groups = ensure_groups()
    campaign, made, runs = make_campaign("dash", topics=4, runs=2, passages=4)
    names = ["ada", "bo", "<i>cy</i>"]
    people = [factories.user(n) for n in names]
    reviewer = factories.user("rev")
    reviewer.groups.add(groups[Role.REVIEWER])
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(groups[Role.ORGANISER])
    campaign.review_sample_size = 3
    campaign.save()
    assign_campaign(campaign, names, overlap=2, seed=2)
    grades = ["must", "should", "can"]
    start = timezone.now() - timedelta(hours=5)
    for n, assignment in enumerate(Assignment.objects.filter(campaign=campaign).order_by("assessor__username", "position")):
        who = assignment.assessor
        passages = [e.passage for e in RunEntry.objects.filter(run=assignment.run, topic=assignment.topic).order_by("rank")]
        facet = f"{assignment.topic.external_id}/H1"
        for i, passage in enumerate(passages):
            change = record_judgement(campaign_id=campaign.pk, 
                assessor=who, layer=Layer.FACET, topic=assignment.topic, passage=passage,
                value=[{"facet": facet, "relevance": grades[(i + people.index(who)) % 3 if i == 0 else 0]}],
                active_ms=1500 + 4000 * i + 900 * people.index(who),
            )
            JudgementChange.objects.filter(pk=change.change.pk).update(received_at=start + timedelta(minutes=17 * n + i))
        for a, b in zip(passages, passages[1:]):
            record_judgement(campaign_id=campaign.pk, assessor=who, layer=Layer.TRANSITION, topic=assignment.topic, passage=a, passage2=b,
                             value="same" if people.index(who) else "coherent", active_ms=800)
        mark(assignment, True, reason='test: marked done')
    reviews = list(Review.objects.filter(status=Review.Status.OPEN).order_by("id")[:2])
    for review, ok in zip(reviews, (True, False)):
        items = list(review.items.all())
        submit_review(review, reviewer, {i.pk: (ok or i != items[0], "" if ok or i != items[0] else "no") for i in items})
    return campaign, organiser


def test_the_figures_cover_progress_labels_reviews_and_time():
    campaign, _ = judged_campaign()
    data = dashboard(campaign)
    charts = {c["id"]: c for c in data["charts"]}

    assert data["summary"]["units"] == 16 and data["summary"]["done"] == 15  # one batch failed review: to revise
    progress = charts["progress"]
    assert progress["title"].endswith("(per hour)")
    assert sum(row[-1] for row in progress["table"]["rows"][-1:]) > 0
    assert [row[0] for row in charts["per-assessor"]["table"]["rows"]] == ["<i>cy</i>", "ada", "bo"]
    grades = {row[0]: row[1:] for row in charts["grades"]["table"]["rows"]}
    assert sum(grades["ada"][:-1]) == grades["ada"][-1] > 0
    assert charts["review-rates"]["table"]["rows"]
    medians = {row[0]: row for row in charts["active-time"]["medians"]}
    assert medians["ada"][1] > 0 and float(medians["bo"][2]) > 0
    assert data["agreement"]["available"]
    relevance = next(layer for layer in data["agreement"]["layers"] if layer["layer"] == "relevance")
    assert relevance["assessors"] == 3 and relevance["pairs"][0]["chart"]["kind"] == "matrix"


def test_an_organiser_sees_charts_with_their_numbers_escaped(client):
    campaign, organiser = judged_campaign()
    client.force_login(organiser)
    response = client.get(reverse("annotation:dashboard", args=["dash"]))
    page = response.content.decode()
    assert response.status_code == 200
    assert page.count("<svg") >= 8 and page.count("<summary>Numbers</summary>") == page.count("<svg")
    assert "<i>cy</i>" not in page and "&lt;i&gt;cy&lt;/i&gt;" in page
    assert "Krippendorff" in page and 'id="agreement-layers"' in page
    assert re.search(r"<h3>[^<]*× [^<]*\(columns\)</h3>", page)  # a confusion matrix per pair
    assert reverse("annotation:adjudication", args=["dash"]) in page
    home = client.get(reverse("annotation:home"), follow=True).content.decode()  # organisers land on /campaigns/
    assert reverse("annotation:dashboard", args=["dash"]) in home


def test_only_organisers_reach_the_dashboard(client):
    campaign, organiser = judged_campaign()
    url = reverse("annotation:dashboard", args=["dash"])
    assert client.get(url).status_code == 302  # signed out: to the login page
    for name in ("ada", "rev"):
        client.force_login(get_user_model().objects.get(username=name))
        assert client.get(url).status_code == 404
    client.force_login(organiser)
    assert client.get(reverse("annotation:dashboard", args=["nope"])).status_code == 404


def test_an_empty_campaign_has_a_dashboard_too(client):
    campaign, _, _ = make_campaign("empty", topics=1, runs=1)
    organiser = factories.user("org", is_staff=True)
    client.force_login(organiser)
    page = client.get(reverse("annotation:dashboard", args=["empty"])).content.decode()
    assert "No data yet." in page and "No layer has labels from two assessors yet." in page
    assert "no qualification round" in page and "qualification at" not in page
    CampaignTopic.objects.create(campaign=campaign, topic=Topic.objects.get(external_id="empty-T0"), qualification=True)
    page = client.get(reverse("annotation:dashboard", args=["empty"])).content.decode()
    assert "qualification at 90%" in page


def test_a_confusion_matrix_with_many_labels_keeps_the_most_frequent_and_sums_the_rest():
    from annotation.reports.dashboard import matrix

    labels = [f"L{i}" for i in range(20)]
    counts = [[(10 if i == j else 0) + (i < 3) for j in range(20)] for i in range(20)]
    chart = matrix("m", "big", labels, counts, most=5)
    assert chart["labels"][:4] == ["L0", "L1", "L2", "L3"] and chart["labels"][4] == "(other)"
    assert sum(map(sum, (row[1:] for row in chart["table"]["rows"]))) == sum(map(sum, counts))
    assert len(chart["cells"]) == 25
