"""Review of finished batches: a sample to a reviewer, verdicts, pass rate, revision; who may see which review."""

import pytest
from django.urls import reverse

from annotation.services import review as reviews
from annotation.services.assignment import assign_campaign
from annotation.models import Assignment, Review
from annotation.roles import Role, ensure_groups
from annotation.services import status
from annotation.services.changes import mark, reopen
from annotation.services.progress import Progress
from assessments.models import Layer
from assessments.services.judging import record_judgement
from tests import factories
from tests.annotation.test_assignment import make_campaign
from tests.annotation.test_campaign_end_to_end import article_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup():
    groups = ensure_groups()
    campaign, made, runs = make_campaign("rv", topics=2, runs=1, passages=4)
    judge = factories.user("judge")
    judge.groups.add(groups[Role.ASSESSOR])
    rev1, rev2 = factories.user("rev1"), factories.user("rev2")
    for r in (rev1, rev2):
        r.groups.add(groups[Role.REVIEWER])
    organiser = factories.user("boss", is_staff=True)
    assign_campaign(campaign, ["judge"], overlap=1)
    return campaign, judge, rev1, rev2, organiser, groups


def finish(assignment):
    mark(assignment, True, reason='test: marked done')
    return Review.objects.filter(assignment=assignment).order_by("-round").first()


def test_a_finished_batch_gets_a_sample_of_n_items_for_the_least_busy_reviewer(setup):
    campaign, judge, rev1, rev2, _, _ = setup
    campaign.review_sample_size = 3
    campaign.save()
    first, second = Assignment.objects.filter(campaign=campaign).order_by("position")
    record_judgement(campaign_id=campaign.pk, assessor=judge, layer=Layer.REMOVAL, value=True, topic=first.topic, passage=article_of(first)[0])

    one, two = finish(first), finish(second)

    assert one.items.count() == 3 and two.items.count() == 3
    assert {one.reviewer, two.reviewer} == {rev1, rev2}
    assert one.threshold == 0.95 and one.round == 1
    shown = {i.passage_id: i.labels for i in one.items.all()}
    assert shown.get(article_of(first)[0].pk, {"removal": True}) == {"removal": True}
    assert reviews.open_review(first) is None  # one open review per batch at a time


def test_a_batch_smaller_than_n_is_reviewed_whole_and_zero_turns_review_off(setup):
    campaign, *_ = setup
    first, second = Assignment.objects.filter(campaign=campaign).order_by("position")
    assert finish(first).items.count() == 4  # default n = 10, the batch has 4 passages
    campaign.review_sample_size = 0
    campaign.save()
    second.campaign.refresh_from_db()
    assert finish(second) is None


def test_the_pass_rate_decides_and_a_wrong_item_needs_a_remark(setup):
    campaign, judge, rev1, *_ = setup
    first = Assignment.objects.filter(campaign=campaign).order_by("position").first()
    review = finish(first)
    items = list(review.items.all())
    with pytest.raises(reviews.ReviewInvalid) as missing:
        reviews.submit_review(review, rev1, {items[0].pk: (True, "")})
    assert missing.value.field == f"correct-{items[1].pk}"
    with pytest.raises(reviews.ReviewInvalid, match="say what is wrong") as no_remark:
        reviews.submit_review(review, rev1, {i.pk: (i is not items[0], "") for i in items})
    assert no_remark.value.field == f"remark-{items[0].pk}"

    done = reviews.submit_review(review, rev1, {i.pk: (i is not items[0], "fix it") for i in items})

    assert (done.status, done.pass_rate) == (Review.Status.FAILED, 0.75)
    first.refresh_from_db()
    assert first.status == Assignment.Status.REVISE
    assert [i.remark for i in reviews.revision_remarks(judge)[first.pk]] == ["fix it"]
    with pytest.raises(reviews.ReviewInvalid, match="already finished"):
        reviews.submit_review(review, rev1, {i.pk: (True, "") for i in items})


def test_an_assessor_cannot_reach_review_pages(client, setup):
    campaign, judge, *_ = setup
    review = finish(Assignment.objects.filter(campaign=campaign).first())
    client.force_login(judge)
    assert client.get(reverse("annotation:review_queue")).status_code == 404
    assert client.get(reverse("annotation:review", args=[review.pk])).status_code == 404
    assert client.post(reverse("annotation:review", args=[review.pk]), {}).status_code == 404


def test_a_reviewer_sees_only_the_batches_given_to_them(client, setup):
    campaign, judge, rev1, rev2, organiser, _ = setup
    first, second = Assignment.objects.filter(campaign=campaign).order_by("position")
    mine, theirs = finish(first), finish(second)
    if mine.reviewer != rev1:
        mine, theirs = theirs, mine
    client.force_login(rev1)

    queue = client.get(reverse("annotation:review_queue")).content.decode()
    assert reverse("annotation:review", args=[mine.pk]) in queue
    assert reverse("annotation:review", args=[theirs.pk]) not in queue
    assert client.get(reverse("annotation:review", args=[mine.pk])).status_code == 200
    assert client.get(reverse("annotation:review", args=[theirs.pk])).status_code == 404
    assert client.get(reverse("annotation:unit", args=[theirs.assignment.token])).status_code == 404
    client.force_login(organiser)
    assert client.get(reverse("annotation:review", args=[theirs.pk])).status_code == 200


def test_without_reviewers_no_review_is_sampled(setup):
    campaign, judge, rev1, rev2, organiser, groups = setup
    groups[Role.REVIEWER].user_set.clear()
    assert finish(Assignment.objects.filter(campaign=campaign).first()) is None


def test_when_the_assessor_is_the_only_reviewer_an_organiser_takes_the_review(client, setup):
    campaign, judge, rev1, rev2, organiser, groups = setup
    groups[Role.REVIEWER].user_set.set([judge])
    review = finish(Assignment.objects.filter(campaign=campaign).first())
    assert review.reviewer is None
    client.force_login(organiser)
    form = {f"correct-{i.pk}": "right" for i in review.items.all()}
    assert client.post(reverse("annotation:review", args=[review.pk]), form).status_code == 302
    review.refresh_from_db()
    assert (review.status, review.reviewer) == (Review.Status.PASSED, organiser)


def test_a_bad_form_is_400_naming_the_item_and_text_is_escaped(client, setup):
    campaign, judge, rev1, *_ = setup
    first = Assignment.objects.filter(campaign=campaign).order_by("position").first()
    passage = article_of(first)[0]
    record_judgement(campaign_id=campaign.pk, assessor=judge, layer=Layer.NOTES, value="<script>alert(1)</script>", topic=first.topic,
                     passage=passage)
    review = finish(first)
    review.reviewer = rev1
    review.save()
    client.force_login(rev1)
    page = client.get(reverse("annotation:review", args=[review.pk])).content.decode()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    response = client.post(reverse("annotation:review", args=[review.pk]), {})
    assert response.status_code == 400
    assert "mark it right or wrong" in response.content.decode()
    first = review.items.order_by("position").first()
    response = client.post(reverse("annotation:review", args=[review.pk]),
                           {f"correct-{first.pk}": "wrong", f"remark-{first.pk}": "<b>kept</b>"})
    page = response.content.decode()
    assert response.status_code == 400 and "&lt;b&gt;kept&lt;/b&gt;</textarea>" in page
    assert f'name="correct-{first.pk}" value="wrong" checked' in page


def test_a_plot_batch_is_reviewed_on_its_candidates_with_the_grades_and_spans(setup):
    from annotation.models import Campaign
    from assessments.models import PoolCandidate

    _, judge, rev1, *_ = setup
    book = factories.collection("book")
    query = factories.topic(book, "q1", kind="plot", text="The dog learns the law of club and fang.")
    pool = factories.pool(book, [query], [], name="plots")
    chunks = [factories.passage(book, f"book:{i}", text=f"Chunk {i}.") for i in range(3)]
    for rank, chunk in enumerate(chunks, start=1):
        PoolCandidate.objects.create(pool=pool, topic=query, passage=chunk, rank=rank)
    campaign = factories.campaign("plot-rv", Campaign.Task.PLOT)
    assign_campaign(campaign, ["judge"], pools=[pool])
    batch = Assignment.objects.get(campaign=campaign)
    record_judgement(campaign_id=campaign.pk, assessor=judge, layer=Layer.PLOT_GRADE, topic=query, passage=chunks[1], value=2)
    record_judgement(campaign_id=campaign.pk, assessor=judge, layer=Layer.PLOT_SPANS, topic=query, passage=chunks[1], value=[[4, 7]])

    review = finish(batch)

    assert review.items.count() == 3
    shown = {entry["item"].passage_id: entry["labels"] for entry in reviews.review_items(review)}
    assert shown[chunks[1].pk] == ["grade 2", "span “dog”"] and shown[chunks[0].pk] == ["not judged"]


def test_a_batch_to_revise_is_done_only_when_its_assessor_says_so(setup):
    campaign, judge, rev1, *_ = setup
    batch = Assignment.objects.filter(campaign=campaign).order_by("position").first()
    review = finish(batch)
    reviews.submit_review(review, rev1, {i.pk: (False, "redo") for i in review.items.all()})
    batch.refresh_from_db()
    status.after_change(batch, Progress(total=1, done=1, noun="candidate"))  # a save that completes the batch
    reopen(batch)  # opening it again
    batch.refresh_from_db()
    assert batch.status == Assignment.Status.REVISE and Review.objects.filter(assignment=batch).count() == 1
    mark(batch, True, reason='test: marked done')
    batch.refresh_from_db()
    assert batch.status == Assignment.Status.DONE and Review.objects.get(assignment=batch, round=2).status == "open"
