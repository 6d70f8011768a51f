"""Triage with machine scores that helps people instead of steering them (issue 18). Two uses:

- **Likely relevant get more assessors** (assign_campaign's `likely`, LikelyRelevant): the candidates of a
  campaign's pool that a machine label source scores at least `threshold` (a classifier's probability of
  relevant, an LLM's grade; a zero-shot source's grade, 1 for its top share of each topic) make a *triage pool* (`<pool>-likely-<source id>`, params {"triage_of": pool id}),
  and each of its (topic, triage pool) units goes to `extra` assessors who do not already judge the topic. The
  topic's own assessors judge every candidate as before; these candidates get k + extra labels. Triage pools are
  not work units of their own in the ordinary assignment (annotation.services.assignment.campaign_units leaves
  them out), are kept when scores change (a later run adds candidates newly above the threshold, never removes
  one somebody may be judging), and the assessors see no score: only which candidates they are asked about.
  Pool-based campaigns only (plot and ad hoc; an outline article is a run's page, judged whole).
- **Audit** (audit_review): a fixed random sample of the human labels the machine disagrees with (relevant or
  not), from batches that are done, goes to review as an ordinary review round of each batch
  (annotation.services.review): the reviewer judges the human label alone, right or wrong, as in any review;
  the machine's label is shown to the reviewer only as why the item was sampled (ReviewItem.labels["machine"]),
  never to the assessor (their remarks show the reviewer's words only).

A source used here must be the campaign's own or one made for no campaign: never another campaign's, and of a
kind in TRIAGE_KINDS (the one rule: the console's pickers read it through triage_sources).
"""

import math
import random
from collections import defaultdict
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Max

from annotation.models import Assignment, Review, ReviewItem
from annotation.services.errors import AssignmentError
from annotation.services.review import _pick_reviewer, batch_labels, batch_units
from annotation.units import tasks
from assessments.machine import compare
from assessments.machine.examples import assessor_grades
from assessments.models import MachineLabelSource, Pool, PoolCandidate, Topic
from assessments.services import machine
from retrieval.models import Passage

TRIAGE_KEY = "triage_of"
# Sources whose labels are a relevance score on a (topic, passage) with a grade: what `likely` thresholds and the
# audit compares with the human label (the model's one rule, MachineLabelSource.PASSAGE_KINDS, says which and why).
TRIAGE_KINDS = MachineLabelSource.PASSAGE_KINDS
MAX_EXTRA = 20
DEFAULT_AUDIT = 20


class TriageInvalid(AssignmentError):
    """Triage that cannot be done as asked; `field` names the option."""


@dataclass(frozen=True)
class LikelyRelevant:
    """Candidates `source_id` scores at least `threshold` go to `extra` more assessors."""

    source_id: int
    threshold: float
    extra: int = 1


def is_triage_pool(pool) -> bool:
    return bool((pool.params or {}).get(TRIAGE_KEY))


def triage_sources(sources) -> list:
    """Those of `sources` (MachineLabelSource rows) triage and the audit take: of a kind in TRIAGE_KINDS."""
    return [s for s in sources if s.kind in TRIAGE_KINDS]


def campaign_source(campaign, source_id, field="machine_source") -> MachineLabelSource:
    """A machine label source the campaign may use: its own, or one made for no campaign, of a kind in
    TRIAGE_KINDS."""
    if isinstance(source_id, bool) or not isinstance(source_id, int):
        raise TriageInvalid(field, "give the id of a machine label source")
    source = MachineLabelSource.objects.usable_by(campaign.pk).filter(pk=source_id, kind__in=TRIAGE_KINDS).first()
    if source is None:
        raise TriageInvalid(field, f"no machine label source {source_id} of this campaign")
    return source


def check_likely(campaign, likely: LikelyRelevant) -> LikelyRelevant:
    """The option checked: a pool-based campaign, a source it may use, a finite threshold, 1 to 20 extra."""
    if tasks.of(campaign).article_runs:  # its units are articles, judged whole
        raise TriageInvalid("likely_source", "extra assessors for likely-relevant candidates need a pool-based "
                                             "campaign (plot or ad hoc); an outline article is judged whole")
    campaign_source(campaign, likely.source_id, "likely_source")
    if isinstance(likely.threshold, bool) or not isinstance(likely.threshold, (int, float)) or not math.isfinite(
            likely.threshold):
        raise TriageInvalid("likely_threshold", "expected a number, e.g. 0.5 (a probability) or 2 (an LLM grade)")
    if isinstance(likely.extra, bool) or not isinstance(likely.extra, int) or not 1 <= likely.extra <= MAX_EXTRA:
        raise TriageInvalid("likely_extra", f"expected a whole number from 1 to {MAX_EXTRA}")
    return likely


def triage_pools(campaign, likely: LikelyRelevant) -> list:
    """Make or grow the triage pool of each of the campaign's pools (candidates scored at least the threshold),
    add them to the campaign, and return them (those with no candidate are not made)."""
    made = []
    # A zero-shot source's score is no probability (fusion of ranks scaled to 0–1 is above 0.8 for most of a depth-10
    # pool, an encoder's cosine depends on the encoder): its grade (1 = in the topic's top share) is what is compared
    # with the threshold, so the default 0.5 takes what it labels relevant.
    zero_shot = MachineLabelSource.objects.filter(pk=likely.source_id, kind=MachineLabelSource.Kind.ZERO_SHOT).exists()
    for pool in [p for p in campaign.pools.order_by("pk") if not is_triage_pool(p)]:
        scores = machine.pool_scores(likely.source_id, pool, field="grade" if zero_shot else "score")
        likely_pairs = {pair for pair, score in scores.items() if score >= likely.threshold}
        name = f"{pool.name[:80]}-likely-{likely.source_id}"
        triage = Pool.objects.filter(name=name).first()
        if triage is None and not likely_pairs:
            continue
        if triage is None:
            triage = Pool.objects.create(
                name=name, collection=pool.collection, status=Pool.Status.READY, depth=pool.depth,
                params={TRIAGE_KEY: pool.pk, "source": likely.source_id, "threshold": likely.threshold},
            )
        elif (triage.params or {}).get(TRIAGE_KEY) != pool.pk:
            raise TriageInvalid("likely_source", f"a pool named {name!r} exists and is not this triage pool")
        have = set(PoolCandidate.objects.filter(pool=triage).values_list("topic_id", "passage_id"))
        rows = PoolCandidate.objects.filter(pool=pool).order_by("topic_id", "rank")
        new = [PoolCandidate(pool=triage, topic_id=c.topic_id, passage_id=c.passage_id, rank=c.rank)
               for c in rows if (c.topic_id, c.passage_id) in likely_pairs and (c.topic_id, c.passage_id) not in have]
        PoolCandidate.objects.bulk_create(new, ignore_conflicts=True)
        triage.topics.add(*{c.topic_id for c in new})
        campaign.pools.add(triage)
        made.append(triage)
    return made


# Audit -----------------------------------------------------------------------------------------------------------


def _relevant(grade, threshold):
    return grade >= threshold


def audit_review(campaign, source_id, *, size=DEFAULT_AUDIT, seed=0) -> dict:
    """Open reviews of a sample of the human labels `source_id` disagrees with (relevant or not), in done batches
    without an open review: one review round per batch, its items the sampled labels. Returns what was done."""
    source = campaign_source(campaign, source_id)
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= 1000:
        raise TriageInvalid("size", "expected a whole number from 1 to 1,000")
    threshold = (source.settings or {}).get("grade_threshold", 1)
    binary = compare.binary_source(source.grades)
    machine_threshold = 1 if binary else threshold
    topic_ids = set(Assignment.objects.filter(campaign=campaign, qualification=False).values_list("topic_id", flat=True))
    labels, scores = compare.machine_labels(source, topic_ids)  # never the pairs it was trained on
    if not labels:
        raise TriageInvalid("machine_source", "this source has no labels on the campaign's topics yet")
    grades = assessor_grades(campaign.pk, source.collection, tuple(sorted(topic_ids)))
    topics = dict(Topic.objects.filter(pk__in=topic_ids).values_list("external_id", "pk"))
    docids = {d for per in grades.values() for _, d in per}
    passages = dict(Passage.objects.filter(collection=source.collection, external_id__in=docids)
                    .values_list("external_id", "pk"))

    done = Assignment.objects.filter(campaign=campaign, qualification=False, status=Assignment.Status.DONE,
                                     topic_id__in=topic_ids).exclude(reviews__status=Review.Status.OPEN)
    where = {}  # (assessor, topic id, passage id) -> (assignment, position)
    for assignment in done.select_related("campaign").order_by("pk"):
        for position, (pid, _) in enumerate(batch_units(assignment), start=1):
            if pid is not None:
                where.setdefault((assignment.assessor_id, assignment.topic_id, pid), (assignment, position))

    disagreeing, eligible = 0, []
    for assessor, per in sorted(grades.items()):
        for (topic, docid), grade in sorted(per.items()):
            said = labels.get((topic, docid))
            if said is None or _relevant(grade, threshold) == _relevant(said, machine_threshold):
                continue
            disagreeing += 1
            key = (assessor, topics.get(topic), passages.get(docid))
            if key in where:
                eligible.append((key, topic, docid, grade, said))
    picked = sorted(random.Random(seed).sample(eligible, min(size, len(eligible))), key=lambda e: (e[0][1], e[0][2],
                                                                                                    e[0][0]))
    by_batch = defaultdict(list)
    for key, topic, docid, grade, said in picked:
        assignment, position = where[key]
        by_batch[assignment.pk].append((assignment, position, key[2], topic, docid, said))
    reviews = []
    with transaction.atomic():
        for items in by_batch.values():
            assignment = items[0][0]
            earlier = list(Review.objects.filter(assignment=assignment).order_by("round"))
            round_ = (Review.objects.filter(assignment=assignment).aggregate(last=Max("round"))["last"] or 0) + 1
            review = Review.objects.create(assignment=assignment, round=round_, threshold=campaign.review_threshold,
                                           reviewer=_pick_reviewer(assignment, earlier))
            units = [(pid, "") for _, _, pid, _, _, _ in items]
            human = batch_labels(assignment, units)
            ReviewItem.objects.bulk_create(
                ReviewItem(review=review, position=position, passage_id=pid, labels={
                    **human[(pid, "")],
                    "machine": {"source": source.pk, "name": source.name, "grade": said,
                                "score": scores.get((topic, docid)), "text": _describe(source, said)},
                }) for _, position, pid, topic, docid, said in sorted(items, key=lambda i: i[1])
            )
            reviews.append(review.pk)
    return {"source": source.pk, "disagreeing": disagreeing, "eligible": len(eligible), "sampled": len(picked),
            "reviews": reviews}


def _describe(source, grade) -> str:
    if compare.binary_source(source.grades):
        return "likely relevant" if grade else "likely not relevant"
    return f"grade {grade} of {max(source.grades or [3])}"
