"""Review of finished batches (seed 000 §4.2: a second person checks a random sample, 95% pass rate).

When an assessor marks a formal assignment (a batch) done, a review opens: a random sample of
Campaign.review_sample_size items of the batch (default 10; all when the batch is smaller; 0 turns
review off) with the assessor's labels as they were at that moment. The reviewer is one of the
campaign's reviewers (Campaign.reviewers, else everyone in the reviewer group), never the assessor nor
anyone judging the same topic in the campaign (they would see a peer's labels): the one who reviewed the batch
before, else the one with the fewest open reviews (ties by username). A campaign without any reviewer samples no
review (its home says so); when no reviewer is left (its only reviewer is the batch's own assessor, or judges the
topic too), the review has none, and any organiser may take it.

The reviewer marks each item right or wrong with a remark. The pass rate (right / items) is stored;
under Campaign.review_threshold (default 0.95) the batch goes back to its assessor as "to revise",
with the remarks on the assessor's queue. Marking it done again opens the next round of review.

Who sees what: a reviewer sees only the reviews given to them (the labels of those batches, nothing
else); organisers see every review.
"""

import random
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation import units
from annotation.models import Assignment, Review, ReviewItem
from annotation.services.qualification import score_attempt
from annotation.services.status import send_back
from annotation.roles import Role, has_role, is_organiser, is_reviewer  # noqa: F401 (is_reviewer: callers)
from assessments.labels import CITATION_SUPPORT_NAMES, NUGGET_SUPPORT_SAID
from assessments.models import Facet, Layer, Relevance, SpecialFacet
from assessments.services import nuggets

MAX_REMARK = 2000


class ReviewInvalid(ValueError):
    """A verdict that cannot be stored; `field` names the offending form field."""

    def __init__(self, field, message):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def on_assignment_done(assignment):
    """Called when an assignment becomes done: score a qualification attempt, or open a review of a batch."""
    if assignment.campaign_id is None:
        return
    if assignment.qualification:
        score_attempt(assignment.campaign, assignment.assessor)
    else:
        open_review(assignment)


# Opening ---------------------------------------------------------------------------------------------------------


def batch_units(assignment) -> list[tuple[int | None, str]]:
    """The batch's items as (passage id, study item key) in a fixed order, as its kind says (annotation.units:
    an article's passages, a pool's candidates, study items, an answer's nugget labels or cited pairs, a bank)."""
    return units.of(assignment).review_units(assignment)


def batch_labels(assignment, units_) -> dict:
    """{(passage id, item key): {layer: value}} of the assessor's current labels in the unit's campaign (not
    transitions), for the reviewer."""
    return units.of(assignment).review_labels(assignment, units_)


def open_review(assignment) -> Review | None:
    """Open the next round of review of a finished batch; None when review is off or a review is already open."""
    campaign = assignment.campaign
    if campaign.review_sample_size == 0 or not campaign_reviewers(campaign).exists():
        return None
    with transaction.atomic():
        Assignment.objects.select_for_update().filter(pk=assignment.pk).first()
        earlier = list(Review.objects.filter(assignment=assignment).order_by("round"))
        if any(r.status == Review.Status.OPEN for r in earlier):
            return None
        units = batch_units(assignment)
        if not units:
            return None
        round_ = len(earlier) + 1
        rng = random.Random(f"{assignment.seed}:{round_}")
        picked = sorted(rng.sample(range(len(units)), min(campaign.review_sample_size, len(units))))
        labels = batch_labels(assignment, [units[i] for i in picked])
        review = Review.objects.create(
            assignment=assignment, round=round_, threshold=campaign.review_threshold,
            reviewer=_pick_reviewer(assignment, earlier),
        )
        ReviewItem.objects.bulk_create(
            ReviewItem(review=review, position=i + 1, passage_id=units[i][0], item=units[i][1], labels=labels[units[i]])
            for i in picked
        )
    return review


def campaign_reviewers(campaign):
    """Who may be given the campaign's reviews: its own reviewers, else everyone in the reviewer group (active)."""
    candidates = campaign.reviewers.all()
    if not candidates.exists():
        candidates = get_user_model().objects.filter(groups__name=Role.REVIEWER)
    return candidates.filter(is_active=True)


def _pick_reviewer(assignment, earlier):
    # Never the assessor, nor anyone judging the same topic in the campaign: they would see a peer's labels of it.
    judging = Assignment.objects.filter(campaign_id=assignment.campaign_id, topic_id=assignment.topic_id)
    candidates = campaign_reviewers(assignment.campaign).exclude(pk=assignment.assessor_id).exclude(
        pk__in=judging.values("assessor_id"))
    previous = next((r.reviewer_id for r in reversed(earlier) if r.reviewer_id), None)
    if previous and candidates.filter(pk=previous).exists():
        return candidates.get(pk=previous)
    return (
        candidates.annotate(open_reviews=Count("reviews", filter=Q(reviews__status=Review.Status.OPEN)))
        .order_by("open_reviews", "username").first()
    )


# Reading ---------------------------------------------------------------------------------------------------------


def visible_reviews(user):
    """The reviews `user` may open: all for organisers, the ones given to them for reviewers, none otherwise."""
    reviews = Review.objects.select_related(
        "assignment__assessor", "assignment__topic", "assignment__run", "assignment__pool", "assignment__campaign",
        "reviewer",
    )
    if is_organiser(user):
        return reviews
    if has_role(user, Role.REVIEWER):
        return reviews.for_reviewer(user)
    return reviews.none()


@dataclass(frozen=True)
class ReviewQueue:
    """A reviewer's open reviews, and the ones they finished."""

    open: list
    finished: list


def review_queue(user, *, finished=50) -> ReviewQueue:
    """The user's review queue: open reviews oldest first, then the latest finished ones."""
    reviews = visible_reviews(user).annotate(item_count=Count("items"))
    return ReviewQueue(
        open=list(reviews.filter(status=Review.Status.OPEN).order_by("created_at", "id")),
        finished=list(reviews.exclude(status=Review.Status.OPEN).order_by("-finished_at", "-id")[:finished]),
    )


def review_items(review) -> list[dict]:
    """The review's items for the page: {"item", "labels": [what the assessor said, as text], "notes", "reason"
    (why an audit sampled it: the machine's label, for the reviewer only), "name" (the item's key as the reviewer may
    see it: none for a study item, whose key may name the run that made it)}."""
    topic = review.assignment.topic
    names = dict(Facet.objects.filter(topic=topic).values_list("heading_id", "heading"))
    names.update({f.value: f.label for f in SpecialFacet})
    relevance = {r.value: r.label for r in Relevance}
    shown = []
    items = list(review.items.select_related("passage").order_by("position"))
    offered = {}
    unit = units.of(review.assignment)
    study = unit.blind_items
    if any(item.item for item in items):
        from assessments.models import StudyItem

        for study in StudyItem.objects.filter(
            pool_id=review.assignment.pool_id, topic_id=topic.pk, key__in=[i.item for i in items if i.item],
        ).prefetch_related("candidates"):
            offered[study.key] = {p.external_id: p.text for p in study.candidates.all()}
    texts = unit.review_texts(review) if unit.review_texts is not None else {}
    for item in items:
        labels, said = item.labels or {}, []
        if "choice" in labels:
            text = offered.get(item.item, {}).get(labels["choice"], "")
            said.append(f"chose {labels['choice']}" + (f": “{text[:200]}”" if text else ""))
        if labels.get("rating") is not None:
            said.append(f"rated {labels['rating']} of 10")
        if labels.get(Layer.CITATION_SUPPORT) or Layer.CITATION_SUPPORT in unit.layers:
            found = nuggets.CITATION_ITEM.match(item.item or "")
            sentence = f"sentence {int(found.group(2)) + 1}" if found else "its sentence"
            value = labels.get(Layer.CITATION_SUPPORT)
            said.append(f"the cited passage gives {CITATION_WORDS.get(value, value)} to {sentence}" if value
                        else f"citation of {sentence}: not judged")
        if texts or labels.get(Layer.NUGGET_SUPPORT):
            said.extend(_nugget_said(item.item, labels.get(Layer.NUGGET_SUPPORT), texts))
        for i, nugget in enumerate(labels.get(Layer.NUGGETS) or [], start=1):
            if isinstance(nugget, dict):
                said.append(f"nugget {i} ({nugget.get('importance', '')}): {str(nugget.get('text', ''))[:300]}")
        if labels.get("removal"):
            said.append("removed as non-relevant")
        for entry in labels.get("facet") or []:
            said.append(f"{names.get(entry['facet'], entry['facet'])}: {relevance.get(entry['relevance'], entry['relevance'])}")
        if labels.get("plot_grade") is not None:
            said.append(f"grade {labels['plot_grade']}")
        if labels.get("grade") is not None:
            said.append(f"grade {labels['grade']}")
        for start, end in labels.get("evidence") or []:
            said.append(f"evidence “{item.passage.text[start:end][:200]}”" if item.passage else "evidence")
        for start, end in labels.get("plot_spans") or []:
            said.append(f"span “{topic.text[start:end]}”")
        shown.append({"item": item, "labels": said or ["not judged"], "notes": labels.get("notes") or "",
                      "reason": audit_reason(labels), "name": "" if study else _item_name(unit, item.item)})
    return shown


def _item_name(unit, key) -> str:
    """An item's key as the reviewer may see it (its kind may hide a part of it: a nugget support label's answer)."""
    return unit.review_name(key) if unit.review_name is not None else key


CITATION_WORDS = CITATION_SUPPORT_NAMES
SUPPORT_WORDS = NUGGET_SUPPORT_SAID


def _nugget_said(item, value, texts) -> list[str]:
    """A nugget support label in words: the nugget's text (from the topic's bank) and what the assessor said."""
    found = nuggets.SUPPORT_ITEM.match(item or "")
    nugget = texts.get(found.group(2)) if found else None
    name = (f"nugget “{str(nugget.get('text', ''))[:300]}” ({nugget.get('importance', '')})" if nugget
            else f"nugget {found.group(2) if found else item} (no longer in the bank)")
    if value is None:
        return [f"{name}: not judged"]
    return [f"{name}: {SUPPORT_WORDS.get(value, value)} by the answer"]


def audit_reason(labels) -> str:
    """Why a review item was sampled, for the reviewer: the machine's label it disagrees with, as an audit
    (annotation.services.triage.audit_review) stored it in the item's labels ('' for none)."""
    said = (labels or {}).get("machine")
    if not isinstance(said, dict):
        return ""
    score = said.get("score")
    shown = f" (score {score:.2f})" if isinstance(score, (int, float)) else ""
    return (f"Sampled for audit: the machine label source {said.get('name', '')} says "
            f"{said.get('text', '')}{shown}, which disagrees with the assessor's label. Judge the assessor's label "
            "on its own merits.")


def revision_remarks(user) -> dict[int, list[ReviewItem]]:
    """{assignment id: the wrong items with remarks of its latest failed review} for the user's batches to revise."""
    remarks = {}
    reviews = Review.objects.filter(
        assignment__assessor=user, assignment__status=Assignment.Status.REVISE, status=Review.Status.FAILED,
    ).order_by("assignment_id", "-round")
    latest = {}
    for review in reviews:
        latest.setdefault(review.assignment_id, review)
    items = ReviewItem.objects.filter(review__in=latest.values(), correct=False).select_related("review").order_by(
        "review_id", "position")
    for item in items:
        remarks.setdefault(item.review.assignment_id, []).append(item)
    return remarks


# Deciding --------------------------------------------------------------------------------------------------------


def submit_review(review, reviewer, verdicts) -> Review:
    """Store the reviewer's verdicts and the pass rate; under the threshold the batch goes back for revision.

    `verdicts` maps each item id to (correct: bool, remark: str). Every item needs a verdict; a wrong item
    needs a remark (the assessor must know what to fix). Raises ReviewInvalid naming the item's field.
    """
    with transaction.atomic():
        review = Review.objects.select_for_update().select_related("assignment").get(pk=review.pk)
        if review.status != Review.Status.OPEN:
            raise ReviewInvalid("review", "this review is already finished")
        items = list(review.items.order_by("position"))
        for item in items:
            if item.pk not in verdicts or not isinstance(verdicts[item.pk][0], bool):
                raise ReviewInvalid(f"correct-{item.pk}", f"item {item.position}: mark it right or wrong")
            correct, remark = verdicts[item.pk]
            remark = (remark or "").strip()
            if len(remark) > MAX_REMARK:
                raise ReviewInvalid(f"remark-{item.pk}", f"item {item.position}: at most {MAX_REMARK} characters")
            if not correct and not remark:
                raise ReviewInvalid(f"remark-{item.pk}", f"item {item.position}: say what is wrong")
            item.correct, item.remark = correct, remark
        ReviewItem.objects.bulk_update(items, ["correct", "remark"])
        right = sum(1 for item in items if item.correct)
        review.pass_rate = right / len(items) if items else 1.0
        review.status = Review.Status.PASSED if review.pass_rate >= review.threshold else Review.Status.FAILED
        review.reviewer = review.reviewer or reviewer
        review.finished_at = timezone.now()
        review.save(update_fields=["pass_rate", "status", "reviewer", "finished_at"])
        if review.status == Review.Status.FAILED:
            send_back(Assignment.objects.filter(pk=review.assignment_id))
    return review
