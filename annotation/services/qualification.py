"""Qualification before formal work (seed 000 §4.2 Step 3: pre-annotation rounds, 90% pass rate).

A campaign qualifies its assessors when it has qualification topics (CampaignTopic.qualification)
and a qrel set of known answers (Campaign.qualification_gold). assign_campaign gives every assessor
all units of those topics, flagged `qualification`; they are judged on the normal judging pages.

Scoring: when an assessor has marked all of their qualification units of a campaign done, every gold
qrel (section-less lines of the gold set) whose topic and passage lie in those units is an item. The
assessor's answer to an item is the page-level grade the qrels exporter would give (removed 0, else
the highest graded facet; the plot grade for plot topics); it is right when it equals the gold grade.
A passage the assessor left unjudged is wrong. score = right / items; the attempt passes at
score >= Campaign.qualification_threshold (default 0.9).

Until an assessor passes, their formal units of the campaign are locked: the queue shows why, "next"
skips them and their pages refuse to open. Retakes: an assessor has Campaign.qualification_attempts
attempts (default 2). After a failed attempt with attempts left, the qualification units go back to
the assessor as "to revise" (their labels kept; the gold answers are never shown, only the score);
marking them all done again scores the next attempt. With no attempts left, an organiser may raise
the campaign's attempts (admin), which reopens the units (grant_retakes).
"""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import BooleanField, Exists, ExpressionWrapper, OuterRef, Q

from annotation.models import Assignment, Campaign, CampaignTopic, QualificationResult
from annotation.services.status import send_back
from assessments.models import CANDIDATE_GRADES, Judgement, Layer, PoolCandidate, Qrel, RunEntry

GRADED_LAYERS = (Layer.FACET, Layer.REMOVAL, *CANDIDATE_GRADES)


@dataclass(frozen=True)
class Standing:
    """Where an assessor stands with a campaign's qualification; `message` says it to the assessor."""

    required: bool
    passed: bool
    attempts_used: int = 0
    attempts_left: int = 0
    last: QualificationResult | None = None
    pending: int = 0  # qualification units not done yet

    @property
    def message(self) -> str:
        if not self.required or self.passed:
            return ""
        if self.last is None:
            return (f"Qualification first: judge your {self.pending} qualification "
                    f"unit{'s' if self.pending != 1 else ''}; formal work opens when you pass.")
        score = f"{self.last.score:.0%} right ({self.last.threshold:.0%} needed)"
        if self.attempts_left > 0:
            return (f"Qualification attempt {self.attempts_used}: {score}. Your qualification units are open again: "
                    f"check them and mark them done for attempt {self.attempts_used + 1}.")
        return f"Qualification: {score}, and no attempts left. Ask an organiser for a retake."


def requires_qualification(campaign) -> bool:
    """Whether the campaign has qualification topics."""
    return CampaignTopic.objects.filter(campaign=campaign, qualification=True).exists()


def standing(campaign, assessor) -> Standing:
    """The assessor's qualification standing in the campaign."""
    if not requires_qualification(campaign):
        return Standing(required=False, passed=True)
    results = list(QualificationResult.objects.filter(campaign=campaign, assessor=assessor).order_by("attempt"))
    pending = Assignment.objects.filter(campaign=campaign, assessor=assessor, qualification=True).exclude(
        status=Assignment.Status.DONE).count()
    if any(r.passed for r in results):
        return Standing(required=True, passed=True, attempts_used=len(results), last=results[-1])
    return Standing(
        required=True, passed=False, attempts_used=len(results),
        attempts_left=campaign.qualification_attempts - len(results), last=results[-1] if results else None,
        pending=pending,
    )


def locked_campaign_ids(user) -> set[int]:
    """Campaigns whose formal units are locked for `user`: they need qualification and the user has not passed."""
    needing = set(
        CampaignTopic.objects.filter(qualification=True, campaign__assignments__assessor=user)
        .values_list("campaign_id", flat=True)
    )
    if not needing:
        return set()
    passed = set(
        QualificationResult.objects.filter(assessor=user, passed=True, campaign_id__in=needing)
        .values_list("campaign_id", flat=True)
    )
    return needing - passed


def is_locked(assignment) -> bool:
    """Whether this formal assignment waits for its assessor's qualification (read with the assignment when it was
    annotated with locked_annotation())."""
    if hasattr(assignment, "qualification_locked"):
        return bool(assignment.qualification_locked)
    return (
        not assignment.qualification and assignment.campaign_id is not None
        and assignment.campaign_id in locked_campaign_ids(assignment.assessor)
    )


def locked_annotation():
    """is_locked as an annotation for Assignment querysets (`.annotate(qualification_locked=locked_annotation())`):
    a formal unit of a campaign with qualification topics whose assessor has not passed it. Read with the
    assignment itself, so a save asks nothing more."""
    needs = Exists(CampaignTopic.objects.filter(campaign_id=OuterRef("campaign_id"), qualification=True))
    passed = Exists(QualificationResult.objects.filter(
        campaign_id=OuterRef("campaign_id"), assessor_id=OuterRef("assessor_id"), passed=True))
    return ExpressionWrapper(Q(qualification=False, campaign__isnull=False) & needs & ~passed,
                             output_field=BooleanField())


def notices(user) -> list[dict]:
    """One line per campaign whose qualification stands between `user` and formal work, for the queue page
    (reading only: units are reopened for a retake when the attempts are raised, by grant_retakes)."""
    lines = []
    for campaign in Campaign.objects.filter(pk__in=locked_campaign_ids(user)).order_by("name"):
        state = standing(campaign, user)
        settings = campaign.settings if isinstance(campaign.settings, dict) else {}
        lines.append({"campaign": campaign, "standing": state, "message": state.message,
                      "examples": len(settings.get(EXAMPLES_KEY) or [])})
    return lines


def grant_retakes(campaign) -> int:
    """After an organiser raised the campaign's attempts: reopen the qualification units of every assessor who
    failed, has attempts left and has no unit open; returns how many assessors got a retake."""
    granted = 0
    assessors = set(Assignment.objects.filter(campaign=campaign, qualification=True).values_list("assessor_id", flat=True))
    for assessor in get_user_model().objects.filter(pk__in=assessors):
        state = standing(campaign, assessor)
        if not state.passed and state.last is not None and state.attempts_left > 0 and state.pending == 0:
            _reopen(campaign, assessor)
            granted += 1
    return granted


def score_attempt(campaign, assessor) -> QualificationResult | None:
    """Score the assessor's next attempt once all their qualification units are done; None before that.

    A failed attempt with attempts left sends the units back as "to revise". Nothing happens once the
    assessor has passed or has no attempts left.
    """
    with transaction.atomic():
        units = list(Assignment.objects.select_for_update().filter(
            campaign=campaign, assessor=assessor, qualification=True))
        if not units or any(a.status != Assignment.Status.DONE for a in units):
            return None
        results = QualificationResult.objects.filter(campaign=campaign, assessor=assessor)
        if results.filter(passed=True).exists() or results.count() >= campaign.qualification_attempts:
            return None
        items, correct = _score(campaign, assessor, units)
        score = correct / items if items else 0.0
        result = QualificationResult.objects.create(
            campaign=campaign, assessor=assessor, attempt=results.count() + 1, items=items, correct=correct,
            score=score, threshold=campaign.qualification_threshold,
            passed=items > 0 and score >= campaign.qualification_threshold,
        )
        if not result.passed and result.attempt < campaign.qualification_attempts:
            _reopen(campaign, assessor)
    return result


def _reopen(campaign, assessor):
    send_back(Assignment.objects.filter(campaign=campaign, assessor=assessor, qualification=True))


def _score(campaign, assessor, units) -> tuple[int, int]:
    """(items, right) of the assessor's qualification units against the campaign's gold qrels."""
    passages = set()
    for unit in units:
        if unit.run_id:
            rows = RunEntry.objects.filter(run_id=unit.run_id, topic_id=unit.topic_id)
        else:
            rows = PoolCandidate.objects.filter(pool_id=unit.pool_id, topic_id=unit.topic_id)
        passages.update((unit.topic_id, pid) for pid in rows.values_list("passage_id", flat=True))
    topics = {t for t, _ in passages}
    gold = {
        (t, p): g for t, p, g in Qrel.objects.filter(
            qrel_set_id=campaign.qualification_gold_id, topic_id__in=topics, subtopic="",
        ).values_list("topic_id", "passage_id", "grade")
        if (t, p) in passages
    }
    answers = page_grades(
        Judgement.objects.in_campaign(campaign).filter(
            assessor=assessor, topic_id__in=topics, adjudicated=False, layer__in=GRADED_LAYERS,
        )
    )
    return len(gold), sum(1 for key, grade in gold.items() if answers.get(key) == grade)


def page_grades(judgements) -> dict:
    """{(topic id, passage id): page-level grade} of one assessor's judgements, by the qrels exporter's rule."""
    removed, graded = set(), {}
    for topic_id, passage_id, layer, grade in judgements.filter(grade__isnull=False).values_list(
        "topic_id", "passage_id", "layer", "grade"
    ):
        key = (topic_id, passage_id)
        if layer == Layer.REMOVAL:
            removed.add(key)
        else:
            graded[key] = max(grade, graded.get(key, grade))
    return {**graded, **dict.fromkeys(removed, 0)}


# Worked examples ----------------------------------------------------------------------------------------------
#
# Before their qualification an assessor reads the campaign's worked examples: items with the label expected and
# why. They live in the campaign's settings (EXAMPLES_KEY: [{topic, passage, grade, explanation}], external ids),
# are checked and changed by annotation.services.campaign_settings like every setting, and are never items the
# qualification scores: an example on a qualification topic would give its answer away.

EXAMPLES_KEY = "worked_examples"
MAX_EXAMPLES = 50
MAX_EXPLANATION = 4000


@dataclass(frozen=True)
class WorkedExample:
    """One worked example as the assessor sees it: the topic, the passage, the label expected and why."""

    topic: object  # assessments.models.Topic
    passage: object  # retrieval.models.Passage
    grade: int
    label: str
    explanation: str


def example_scale(campaign) -> dict:
    """{grade: name} of the labels the campaign's qualification compares (the page-level grade of its pages), as its
    task says (annotation.units.tasks)."""
    from annotation.units import tasks

    return tasks.of(campaign).example_scale(campaign)


def check_examples(campaign, raw) -> list[dict]:
    """The worked examples `raw` ([{topic, passage, grade, explanation}]) checked against the campaign: topics of
    its own but not qualification topics, passages of its collection, grades of its scale. ServiceError names
    `worked_examples` and the example at fault (1 = first)."""
    from annotation.services.errors import ServiceError
    from retrieval.models import Passage

    def bad(n, message):
        return ServiceError("worked_examples", f"example {n}: {message}")

    if not isinstance(raw, list) or len(raw) > MAX_EXAMPLES:
        raise ServiceError("worked_examples", f"a list of at most {MAX_EXAMPLES} examples")
    scale = example_scale(campaign)
    if raw and not scale:
        raise ServiceError("worked_examples", f"a {campaign.get_task_display()} campaign has no graded qualification")
    track = getattr(campaign, "track", None)
    own = dict(track.topics.values_list("external_id", "pk")) if track else {}
    qualifying = set(CampaignTopic.objects.filter(campaign=campaign, qualification=True).values_list("topic_id", flat=True))
    checked = []
    for n, entry in enumerate(raw, start=1):
        if not isinstance(entry, dict):
            raise bad(n, "expected {topic, passage, grade, explanation}")
        topic, passage, grade = entry.get("topic"), entry.get("passage"), entry.get("grade")
        explanation = entry.get("explanation", "")
        if not isinstance(topic, str) or topic not in own:
            raise bad(n, f"topic {str(topic)[:100]!r} is not one of this campaign's")
        if own[topic] in qualifying:
            raise bad(n, f"topic {topic!r} is a qualification topic: an example would give its answer away")
        if not isinstance(passage, str) or not Passage.objects.filter(
                collection_id=track.collection_id, external_id=passage).exists():
            raise bad(n, f"passage {str(passage)[:100]!r} is not in collection {track.collection.name!r}")
        if isinstance(grade, bool) or not isinstance(grade, int) or grade not in scale:
            raise bad(n, f"grade {grade!r} is not one of the scale's ({', '.join(map(str, sorted(scale)))})")
        if not isinstance(explanation, str) or not explanation.strip() or len(explanation) > MAX_EXPLANATION:
            raise bad(n, f"give the explanation (at most {MAX_EXPLANATION} characters)")
        checked.append({"topic": topic, "passage": passage, "grade": grade, "explanation": explanation.strip()})
    return checked


def worked_examples(campaign) -> list[WorkedExample]:
    """The campaign's worked examples with their topics and passages (reading only; an example whose topic or
    passage is gone is left out)."""
    from assessments.models import Topic
    from retrieval.models import Passage

    settings = campaign.settings if isinstance(campaign.settings, dict) else {}
    raw = settings.get(EXAMPLES_KEY) or []
    if not isinstance(raw, list) or not raw:
        return []
    track = getattr(campaign, "track", None)
    if track is None:
        return []
    entries = [e for e in raw if isinstance(e, dict)]
    topics = {t.external_id: t for t in Topic.objects.filter(
        collection_id=track.collection_id, external_id__in=[e.get("topic") for e in entries]).prefetch_related("facets")}
    passages = {p.external_id: p for p in Passage.objects.filter(
        collection_id=track.collection_id, external_id__in=[e.get("passage") for e in entries])}
    try:
        scale = example_scale(campaign)
    except ValueError:
        scale = {}
    return [WorkedExample(topics[e["topic"]], passages[e["passage"]], e.get("grade"),
                          scale.get(e.get("grade"), str(e.get("grade"))), e.get("explanation", ""))
            for e in entries if e.get("topic") in topics and e.get("passage") in passages]


def examples_first(assignment) -> bool:
    """Whether this unit's page should show the worked examples first: a qualification unit not started yet of a
    campaign that has examples (reading only: the examples page's link says it was read)."""
    if not assignment.qualification or assignment.status != Assignment.Status.TODO or not assignment.campaign_id:
        return False
    settings = assignment.campaign.settings if isinstance(assignment.campaign.settings, dict) else {}
    return bool(settings.get(EXAMPLES_KEY))
