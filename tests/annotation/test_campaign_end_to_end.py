"""A small campaign end to end: three assessors, overlap 2, a qualification round (one retake), a batch failing
review and being revised, an adjudicated disagreement; then the exported qrels and the agreement report."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.services.adjudication import disagreements
from annotation.reports.agreement import campaign_report
from annotation.models import Assignment, QualificationResult, Review
from annotation.roles import Role, ensure_groups
from assessments.models import Judgement, JudgementChange, Qrel, QrelSet, RunEntry
from tests import factories
from tests.annotation.test_assignment import make_campaign

pytestmark = pytest.mark.django_db


def article_of(assignment):
    return [e.passage for e in RunEntry.objects.filter(run=assignment.run, topic=assignment.topic).order_by("rank")]


def judge(client, save, assignment, grade=lambda passage: "must"):
    """Judge a whole article on the page's endpoints: a facet and grade for every passage, SAME for every pair."""
    client.force_login(assignment.assessor)
    passages = article_of(assignment)
    facet = assignment.topic.facets.order_by("position").first().heading_id
    for passage in passages:
        response = save(assignment, "facet", passage, [{"facet": facet, "relevance": grade(passage)}])
        assert response.status_code == 200, response.content
    for first, second in zip(passages, passages[1:]):
        assert save(assignment, "transition", first, "same", pair=second).status_code == 200


def mark_done(client, assignment):
    client.force_login(assignment.assessor)
    response = client.post(reverse("annotation:mark", args=[assignment.token]), json.dumps({"done": True}),
                           content_type="application/json")
    assert response.status_code == 200, response.content
    assignment.refresh_from_db()


@pytest.fixture
def roles():
    return ensure_groups()


def test_a_campaign_from_qualification_to_adjudicated_qrels(client, save, roles):
    campaign, made, runs = make_campaign("e2e", topics=4, runs=2, passages=3)
    qual_topic, qual_passages = made[3]
    gold = QrelSet.objects.create(name="e2e-gold", collection=qual_topic.collection)
    Qrel.objects.bulk_create(Qrel(qrel_set=gold, topic=qual_topic, passage=p, grade=3) for p in qual_passages)
    assessors = [factories.user(n) for n in ("ann", "bob", "cat")]
    for a in assessors:
        a.groups.add(roles[Role.ASSESSOR])
    reviewer = factories.user("rev")
    reviewer.groups.add(roles[Role.REVIEWER])
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(roles[Role.ORGANISER])
    campaign.review_sample_size = 2
    campaign.save()

    # Assignment: overlap 2 over three formal topics, the fourth a qualification topic for everyone.
    out = StringIO()
    call_command("assign_campaign", "e2e", "--assessors", "ann", "bob", "cat", "--overlap", "2",
                 "--qualification-topics", qual_topic.external_id, "--qualification-gold", "e2e-gold",
                 "--seed", "1", stdout=out)
    assert "18 assignments new (6 of them qualification)" in out.getvalue()  # 3 topics × 2 runs × 2 + 3 × 2

    # Qualification: formal work is locked until an assessor passes.
    ann, bob, cat = assessors
    formal = Assignment.objects.filter(campaign=campaign, qualification=False)
    first_formal = formal.filter(assessor=cat).first()
    client.force_login(cat)
    assert client.get(reverse("annotation:unit", args=[first_formal.token])).status_code == 302
    assert save(first_formal, "removal", article_of(first_formal)[0], True).status_code == 403
    home = client.get(reverse("annotation:home")).content.decode()
    assert "Qualification first: judge your 2 qualification units" in home
    next_page = client.get(reverse("annotation:next"))
    assert Assignment.objects.get(token=next_page["Location"].strip("/").split("/")[-1]).qualification

    for person in (ann, bob):
        for unit in Assignment.objects.filter(assessor=person, qualification=True):
            judge(client, save, unit)
    for unit in Assignment.objects.filter(assessor=cat, qualification=True):
        judge(client, save, unit, grade=lambda p: "can")  # wrong against the gold MUST
    assert QualificationResult.objects.get(assessor=ann).passed
    failed = QualificationResult.objects.get(assessor=cat)
    assert (failed.passed, failed.score, failed.items) == (False, 0.0, 3)
    client.force_login(cat)
    assert "Qualification attempt 1: 0% right (90% needed)" in client.get(reverse("annotation:home")).content.decode()
    units = list(Assignment.objects.filter(assessor=cat, qualification=True))
    assert {u.status for u in units} == {Assignment.Status.REVISE}
    for unit in units:  # the retake: labels fixed, then each unit marked done
        judge(client, save, unit)
        unit.refresh_from_db()
        assert unit.status == Assignment.Status.REVISE  # a unit to revise is done only when its assessor says so
        mark_done(client, unit)
    assert QualificationResult.objects.get(assessor=cat, attempt=2).passed
    assert client.get(reverse("annotation:unit", args=[first_formal.token])).status_code == 200

    # Formal work: one pair of assessors disagrees on two passages of one topic.
    shared = formal.order_by("topic_id").first().topic
    x, y = sorted({a.assessor for a in formal.filter(topic=shared)}, key=lambda u: u.username)
    contested = {p.pk for p in made[[t for t, _ in made].index(shared)][1][:2]}
    for unit in formal.order_by("assessor__username", "position"):
        lower = unit.assessor == y
        judge(client, save, unit, grade=lambda p, lower=lower: "can" if lower and p.pk in contested else "must")
    assert not formal.exclude(status=Assignment.Status.DONE).exists()
    assert Review.objects.filter(status=Review.Status.OPEN, reviewer=reviewer).count() == 12

    # Review: the reviewer fails one batch; it goes back to its assessor with the remark.
    client.force_login(reviewer)
    queue = client.get(reverse("annotation:review_queue"))
    assert queue.status_code == 200
    review = Review.objects.filter(assignment__topic=shared, assignment__assessor=y).order_by("id").first()
    items = list(review.items.order_by("position"))
    assert len(items) == 2 and all(item.labels.get("facet") for item in items)
    page = client.get(reverse("annotation:review", args=[review.pk])).content.decode()
    assert items[0].passage.text in page
    form = {f"correct-{items[0].pk}": "wrong", f"remark-{items[0].pk}": "Not <b>CAN</b>: it covers the heading.",
            f"correct-{items[1].pk}": "right"}
    assert client.post(reverse("annotation:review", args=[review.pk]), form).status_code == 302
    review.refresh_from_db()
    assert (review.status, review.pass_rate) == (Review.Status.FAILED, 0.5)
    batch = review.assignment
    batch.refresh_from_db()
    assert batch.status == Assignment.Status.REVISE
    client.force_login(y)
    home = client.get(reverse("annotation:home")).content.decode()
    assert "Not &lt;b&gt;CAN&lt;/b&gt;: it covers the heading." in home
    assert client.get(reverse("annotation:next"))["Location"] == reverse("annotation:unit", args=[batch.token])

    # Revision: the assessor changes a note, marks the batch done; the second round passes.
    assert save(batch, "notes", article_of(batch)[0], "checked again").status_code == 200
    mark_done(client, batch)
    second = Review.objects.get(assignment=batch, round=2)
    assert second.reviewer == reviewer
    client.force_login(reviewer)
    form = {f"correct-{item.pk}": "right" for item in second.items.all()}
    client.post(reverse("annotation:review", args=[second.pk]), form)
    second.refresh_from_db()
    assert (second.status, second.pass_rate) == (Review.Status.PASSED, 1.0)

    # Adjudication: the organiser sees the two contested passages and settles one of them.
    found = disagreements(campaign, layer="relevance")
    assert {item.passage.pk for item in found.items} == contested
    assert all(dict(item.labels) == {x.username: "MUST", y.username: "CAN"} for item in found.items)
    settled = min(contested)
    client.force_login(organiser)
    page = client.get(reverse("annotation:adjudication", args=["e2e"]), {"layer": "relevance"})
    assert page.status_code == 200 and "2 items in disagreement" in page.content.decode()
    response = client.post(
        reverse("annotation:adjudication", args=["e2e"]) + "?layer=relevance",
        {"layer": "relevance", "topic": shared.pk, "passage": settled, "facet": f"{shared.external_id}/H1",
         "relevance": "should"},
    )
    assert response.status_code == 302
    final = Judgement.objects.get(assessor=organiser, passage_id=settled, layer="facet")
    assert final.adjudicated and final.latest_change.source == JudgementChange.Source.ADJUDICATION

    # Qrels: the adjudicated grade, the agreed grades, and the one unresolved disagreement by majority (warned).
    out, err = StringIO(), StringIO()
    call_command("export_qrels", "--collection", "e2e-coll", "--aggregate", "adjudicated", stdout=out, stderr=err)
    lines = {tuple(line.split()[::2]): int(line.split()[3]) for line in out.getvalue().splitlines()}
    settled_id = f"{shared.external_id}", next(p.external_id for p in made[[t for t, _ in made].index(shared)][1] if p.pk == settled)
    assert lines[settled_id] == 2
    assert sorted(lines.values()).count(2) == 1 and set(lines.values()) == {2, 3}
    assert len(lines) == 9  # 3 formal topics × 3 passages: the qualification answers are practice, no qrels
    assert "warning: 1 lines have assessors who disagree and no adjudicated label" in err.getvalue()
    majority = StringIO()
    call_command("export_qrels", "--collection", "e2e-coll", "--aggregate", "majority", stdout=majority)
    assert f"{settled_id[0]} 0 {settled_id[1]} 3" in majority.getvalue()  # the adjudicated label is nobody's vote

    # Agreement: three assessors, the organiser's adjudicated label left out.
    report = campaign_report(campaign)
    relevance = next(layer for layer in report["layers"] if layer["layer"] == "relevance")
    assert relevance["assessors"] == 3 and relevance["units"] == 9  # the formal topics' passages only
    pair = next(p for p in relevance["pairs"] if {p["a"], p["b"]} == {x.username, y.username})
    assert sum(map(sum, pair["confusion"]["matrix"])) == pair["units"]
    assert relevance["all_agree"] < 1
