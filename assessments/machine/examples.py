"""The human labels a machine learns from and is measured against, and the texts it reads.

Two origins:
- a campaign: its judgements' page-level grades (the qrels rules: removed 0, else the best facet's grade, or the
  plot grade), the majority over its assessors; adjudicated labels are left out, as in every other report;
- a stored qrel set over a pool (e.g. Cranfield's qrels as the "humans"): every candidate of the pool's topics
  is an example, graded by the qrel set (the highest grade over subtopics), a candidate the set does not list
  graded 0, as trec_eval reads it.

A label is relevant (1) when its grade is at least the threshold (default 1). The snapshot of a set is what
an annotator stores of what it was trained on: where the labels came from, the counts, the [topic id, passage id,
label] triples (training reads them, so it is reproducible whatever is judged later), and an id: the SHA-256 of its sorted `topic docid label` lines, the same for the same labels.
"""

import hashlib
import random
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations

from django.db.models import Max

from assessments.exporters.common import Scope
from assessments.exporters.qrels import judgement_qrels, page_level_rows
from assessments.machine.metrics import cohen_kappa
from assessments.models import Judgement, Pool, PoolCandidate, Qrel, QrelSet, Topic
from retrieval.models import Collection, Passage


class ExamplesInvalid(ValueError):
    """Labels that cannot train or measure anything (none, one class only, an unknown name); the message says why."""


@dataclass(frozen=True)
class Example:
    topic_id: int
    passage_id: int
    topic: str  # external ids, for people and the snapshot
    docid: str
    grade: int
    label: int


@dataclass
class TrainingSet:
    """Labelled pairs of one collection, and where they came from."""

    collection: Collection
    examples: list
    origin: dict = field(default_factory=dict)
    threshold: int = 1

    @property
    def positives(self) -> int:
        return sum(e.label for e in self.examples)

    def snapshot(self) -> dict:
        """What an annotator keeps of its training labels (MachineLabelSource.training)."""
        lines = sorted(f"{e.topic}\t{e.docid}\t{e.label}\n" for e in self.examples)
        return {
            **self.origin,
            "id": hashlib.sha256("".join(lines).encode()).hexdigest(),
            "threshold": self.threshold,
            "examples": len(self.examples),
            "positives": self.positives,
            "topics": len({e.topic_id for e in self.examples}),
            "keys": sorted([e.topic_id, e.passage_id, e.label] for e in self.examples),
        }

    def sample(self, size: int | None, seed: int = 0) -> "TrainingSet":
        """At most `size` examples, the same share of positives, drawn with `seed` (a small slice for a quick run)."""
        if not size or size >= len(self.examples):
            return self
        rng = random.Random(seed)
        positives = [e for e in self.examples if e.label]
        negatives = [e for e in self.examples if not e.label]
        keep_pos = max(1, round(size * len(positives) / len(self.examples))) if positives else 0
        keep_pos = min(keep_pos, len(positives), size - 1 if negatives else size)
        picked = rng.sample(positives, keep_pos) + rng.sample(negatives, min(len(negatives), size - keep_pos))
        picked.sort(key=lambda e: (e.topic, e.docid))
        return TrainingSet(self.collection, picked, {**self.origin, "sampled_from": len(self.examples)}, self.threshold)

    def check(self, folds: int = 1):
        """ExamplesInvalid for fewer than MIN_LABELS labels, labels of one class only, or a class with fewer
        examples than `folds` (every fold should test both)."""
        from assessments.machine.model import MIN_LABELS

        positives, negatives = self.positives, len(self.examples) - self.positives
        if not self.examples:
            raise ExamplesInvalid("there are no human labels to learn from")
        if len(self.examples) < MIN_LABELS:
            raise ExamplesInvalid(f"only {len(self.examples)} human labels: an annotator needs at least {MIN_LABELS} "
                                  "(fewer would be a model of noise)")
        if not positives or not negatives:
            raise ExamplesInvalid(f"all {len(self.examples)} human labels are "
                                  f"{'relevant' if positives else 'non-relevant'} (grade ≥ {self.threshold} is "
                                  "relevant): a model needs both classes")
        if min(positives, negatives) < max(1, folds):
            raise ExamplesInvalid(
                f"{positives} relevant and {negatives} non-relevant labels: each needs at least {max(1, folds)} "
                f"(grade ≥ {self.threshold} is relevant)"
            )


def campaign_collection(campaign_id) -> Collection:
    """The collection a campaign's judgements are about; ExamplesInvalid when it has none."""
    collection_id = (Judgement.objects.filter(campaign_id=campaign_id).order_by()
                     .values_list("topic__collection_id", flat=True).first())
    if collection_id is None:
        raise ExamplesInvalid("the campaign has no judgements yet")
    return Collection.objects.get(pk=collection_id)


def campaign_examples(campaign_id: int, *, threshold: int = 1, topics=None, name: str = "") -> TrainingSet:
    """The campaign's human labels (majority over its assessors), as examples."""
    collection = campaign_collection(campaign_id)
    scope = Scope(collection, _topic_ids(collection, topics), None, campaign_id)
    rows = list(judgement_qrels(scope, aggregate="majority", level="page"))
    examples = _examples(collection, rows, threshold)
    return TrainingSet(collection, examples, {"from": "campaign", "campaign": campaign_id, "campaign_name": name,
                                              "aggregate": "majority"}, threshold)


def qrels_examples(qrel_set: str, pool: str, *, threshold: int = 1, topics=None) -> TrainingSet:
    """Every candidate of the pool's topics (or of `topics`, external ids), graded by the qrel set (0 if absent)."""
    found = QrelSet.objects.filter(name=qrel_set).select_related("collection").first()
    if found is None:
        raise ExamplesInvalid(f"qrels: no qrel set named {qrel_set!r}")
    the_pool = Pool.objects.filter(name=pool).first()
    if the_pool is None:
        raise ExamplesInvalid(f"pool: no pool named {pool!r}")
    if the_pool.collection_id != found.collection_id:
        raise ExamplesInvalid(f"pool: {pool!r} is not of the qrel set's collection {found.collection.name!r}")
    candidates = PoolCandidate.objects.filter(pool=the_pool)
    topic_ids = _topic_ids(found.collection, topics)
    if topic_ids is not None:
        candidates = candidates.filter(topic_id__in=topic_ids)
    grades = dict(((t, p), g) for t, p, g in Qrel.objects.filter(qrel_set=found).values("topic_id", "passage_id")
                  .annotate(g=Max("grade")).values_list("topic_id", "passage_id", "g"))
    rows = candidates.order_by("topic__external_id", "passage__external_id").values_list(
        "topic_id", "passage_id", "topic__external_id", "passage__external_id")
    examples = [Example(t, p, te, pe, grades.get((t, p), 0), int(grades.get((t, p), 0) >= threshold))
                for t, p, te, pe in rows]
    origin = {"from": "qrels", "qrel_set": qrel_set, "pool": pool}
    if topics:
        origin["topic_ids"] = sorted(topics, key=lambda t: (len(t), t))
    return TrainingSet(found.collection, examples, origin, threshold)


def _topic_ids(collection, topics):
    if not topics:
        return None
    wanted = list(dict.fromkeys(topics))
    found = dict(Topic.objects.filter(collection=collection, external_id__in=wanted).values_list("external_id", "pk"))
    missing = [t for t in wanted if t not in found]
    if missing:
        raise ExamplesInvalid(f"topics: no topic {', '.join(map(repr, missing[:5]))} in {collection.name!r}")
    return tuple(sorted(found.values()))


def _examples(collection, rows, threshold):
    topics = dict(Topic.objects.filter(collection=collection, external_id__in={r[0] for r in rows})
                  .values_list("external_id", "pk"))
    passages = dict(Passage.objects.filter(collection=collection, external_id__in={r[1] for r in rows})
                    .values_list("external_id", "pk"))
    return [Example(topics[t], passages[d], t, d, g, int(g >= threshold)) for t, d, g in rows]


# Texts ---------------------------------------------------------------------------------------------------------


def query_text(topic: Topic) -> str:
    """What a machine reads of a topic: the query text (plot, ad hoc), or an outline's title and its headings."""
    if topic.kind == Topic.Kind.OUTLINE:
        headings = [f.heading for f in topic.facets.all()]
        return topic.title + (": " + "; ".join(headings) if headings else "")
    return topic.text or topic.title


def passage_text(passage: Passage) -> str:
    """What a machine reads of a passage: its title (when it has one) and its text."""
    title = getattr(passage, "title", "") or ""
    return f"{title}. {passage.text}" if title and not passage.text.startswith(title) else passage.text


def texts(pairs) -> list:
    """(query text, passage text) of each (topic id, passage id) pair, read in two queries."""
    topic_ids = {t for t, _ in pairs}
    passage_ids = {p for _, p in pairs}
    topics = {t.pk: query_text(t) for t in Topic.objects.filter(pk__in=topic_ids).prefetch_related("facets")}
    passages = {p.pk: passage_text(p) for p in Passage.objects.filter(pk__in=passage_ids)}
    return [(topics[t], passages[p]) for t, p in pairs]


# Human against human -------------------------------------------------------------------------------------------


def assessor_grades(campaign_id, collection, topic_ids=None) -> dict:
    """{assessor id: {(topic, docid): page-level grade}} of a campaign's judgements (adjudicated ones left out)."""
    scope = Scope(collection, topic_ids, None, campaign_id)
    grades = defaultdict(dict)
    removed = set()
    for topic, docid, assessor, layer, grade in page_level_rows(scope):
        key = (topic, docid)
        if layer == "removal":
            removed.add((assessor, key))
            grades[assessor][key] = 0
        elif (assessor, key) not in removed:
            grades[assessor][key] = max(grade, grades[assessor].get(key, grade))
    return dict(grades)


def human_kappa(campaign_id, collection, threshold: int = 1) -> dict:
    """Cohen's κ between the campaign's assessors on relevant (grade ≥ threshold) or not, the mean over pairs
    weighted by their shared items: what an annotator's κ against the humans is read beside."""
    if campaign_id is None:
        return {"kappa": None, "pairs": [], "reason": "the labels are a qrel set: one assessor, no second opinion"}
    grades = assessor_grades(campaign_id, collection)
    pairs, total, weighted = [], 0, 0.0
    for a, b in combinations(sorted(grades), 2):
        shared = sorted(grades[a].keys() & grades[b].keys())
        kappa, why = cohen_kappa([int(grades[a][k] >= threshold) for k in shared],
                                 [int(grades[b][k] >= threshold) for k in shared], labels=[0, 1])
        pairs.append({"a": a, "b": b, "items": len(shared), "kappa": kappa, "reason": why})
        if kappa is not None:
            total += len(shared)
            weighted += kappa * len(shared)
    if not pairs:
        return {"kappa": None, "pairs": [], "reason": "fewer than two assessors"}
    if not total:
        return {"kappa": None, "pairs": pairs, "reason": "no pair of assessors has a κ (no shared items, or one label)"}
    return {"kappa": weighted / total, "pairs": pairs, "reason": None}

