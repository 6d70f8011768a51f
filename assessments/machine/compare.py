"""Honest measures of machine labels: machine against human, and what machine labels do to a system ranking.

- agreement(): on the items both labelled (never the pairs the source was trained on), Cohen's κ, the
  confusion matrix (rows human, columns machine) and the same per topic. A binary source (the auto-annotator:
  relevant or not) is compared with the human grades made binary at the threshold; a graded one (the LLM judge,
  0-3) with the grades themselves, and with the linearly weighted κ and the binary κ beside.
- rankings(): the runs ranked by one measure with the reference qrels (the humans'), and with each other qrels
  (machine, filled...): Kendall's τ-b between the two rankings, and the run whose rank moves most.
- anchoring(): when a campaign shows machine labels, the share of human labels equal to the machine's among
  items it was shown for and among the blind calibration items (the anchoring effect: 72% against 56% in the
  study the issue cites).
- audit_sample(): a fixed random sample of the items where machine and human disagree, for an organiser to review.

Pure where it can be: qrels as {topic: {docid: grade}} dicts and runs as {name: {topic: [docid, …]}}.
"""

import math
import random
from collections import Counter, defaultdict

from django.db.models import F
from scipy.stats import kendalltau

from assessments.evaluation import aggregate, evaluate
from assessments.exporters.common import Scope
from assessments.exporters.qrels import judgement_qrels
from assessments.machine.metrics import cohen_kappa
from assessments.models import CANDIDATE_GRADES, Judgement, JudgementChange, Layer, MachineLabel, Run, RunEntry
from assessments.services.runs import run_labels
from config.ids import natural_key

GRADED_LAYERS = (Layer.FACET, Layer.REMOVAL, *CANDIDATE_GRADES)

NOTES = [
    "Machine labels are compared on the items a person also labelled, never on the pairs the source was trained on.",
    "Human grades: the majority of the campaign's assessors (or the qrel set's grade); a binary source is compared "
    "with them made binary (grade at least the threshold is relevant).",
    "Kendall's τ-b between the runs ranked by the measure with the human qrels and with the other qrels; each qrels "
    "over the topics it has; a topic a run lacks scores 0.",
]


def as_qrels(pairs: dict) -> dict:
    """{(topic, docid): grade} → {topic: {docid: grade}}."""
    qrels = defaultdict(dict)
    for (topic, docid), grade in pairs.items():
        qrels[topic][docid] = grade
    return dict(qrels)


def flat(qrels: dict) -> dict:
    """{topic: {docid: grade}} → {(topic, docid): grade}."""
    return {(topic, docid): grade for topic, docs in qrels.items() for docid, grade in docs.items()}


def binary_source(grades) -> bool:
    return sorted(grades or []) == [0, 1]


def agreement(human: dict, machine: dict, *, binary: bool, threshold: int = 1) -> dict:
    """κ, confusion matrix and per-topic figures of `machine` against `human` ({(topic, docid): grade}) on the
    items both have."""
    items = sorted(human.keys() & machine.keys())
    to_human = (lambda g: int(g >= threshold)) if binary else (lambda g: g)
    h = [to_human(human[i]) for i in items]
    m = [machine[i] for i in items]
    labels = sorted(set(h) | set(m))
    kappa, why = cohen_kappa(h, m, labels) if items else (None, "no item labelled by both")
    out = {"items": len(items), "human_only": len(human.keys() - machine.keys()),
           "machine_only": len(machine.keys() - human.keys()), "kappa": kappa, "reason": why,
           "agree": (sum(a == b for a, b in zip(h, m)) / len(items)) if items else None,
           "binary": binary, "threshold": threshold,
           "confusion": {"labels": labels, "matrix": _matrix(h, m, labels)}}
    if not binary and items:
        out["weighted_kappa"] = _weighted_kappa(h, m, labels)
        hb, mb = [int(x >= threshold) for x in h], [int(x >= threshold) for x in m]
        out["binary_kappa"] = cohen_kappa(hb, mb, [0, 1])[0]
    per_topic = defaultdict(list)
    for i, a, b in zip(items, h, m):
        per_topic[i[0]].append((a, b))
    out["topics"] = []
    for topic in sorted(per_topic, key=lambda t: natural_key(str(t))):
        pairs = per_topic[topic]
        value, reason = cohen_kappa([a for a, _ in pairs], [b for _, b in pairs], labels)
        out["topics"].append({"topic": topic, "items": len(pairs), "kappa": value, "reason": reason,
                              "agree": sum(a == b for a, b in pairs) / len(pairs),
                              "human_relevant": sum(int(a >= (1 if binary else threshold)) for a, _ in pairs),
                              "machine_relevant": sum(int(b >= (1 if binary else threshold)) for _, b in pairs)})
    return out


def _matrix(h, m, labels):
    index = {label: i for i, label in enumerate(labels)}
    table = [[0] * len(labels) for _ in labels]
    for a, b in zip(h, m):
        table[index[a]][index[b]] += 1
    return table


def _weighted_kappa(h, m, labels):
    n = len(h)
    if not n or len(labels) < 2:
        return None
    span = max(labels) - min(labels)
    distance = lambda a, b: abs(a - b) / span  # noqa: E731
    observed = sum(distance(a, b) for a, b in zip(h, m)) / n
    ch, cm = Counter(h), Counter(m)
    expected = sum(ch[a] * cm[b] * distance(a, b) for a in ch for b in cm) / n**2
    return None if expected == 0 else 1 - observed / expected


def rankings(runs: dict, reference: dict, others: dict, measure, *, reference_name="human") -> dict:
    """The runs' scores and ranks under `reference` and each of `others` ({name: qrels}), with τ and the largest
    rank change against the reference."""
    def scores(qrels):
        return {run: aggregate(evaluate(qrels, ranking, [measure]), [measure]).get(measure, 0.0)
                for run, ranking in runs.items()}

    names = sorted(runs)
    base = scores(reference)
    base_rank = _ranks(base)
    out = {"measure": str(measure), "reference": reference_name, "runs": len(names),
           "reference_topics": len(reference), "rows": [], "table": []}
    table = {run: {"run": run, reference_name: base[run], f"{reference_name}_rank": base_rank[run]} for run in names}
    for name, qrels in others.items():
        other = scores(qrels)
        rank = _ranks(other)
        row = {"qrels": name, "topics": len(qrels), "tau": None, "p_value": None, "largest": None, "reason": None}
        if len(names) < 2:
            row["reason"] = "a ranking needs two runs"
        else:
            tau, p = kendalltau([base[r] for r in names], [other[r] for r in names])
            if math.isfinite(tau):
                row["tau"], row["p_value"] = float(tau), float(p) if math.isfinite(p) else None
            else:
                row["reason"] = "every run scores the same with one of the qrels: τ is undefined"
            moved = max(names, key=lambda r: (abs(rank[r] - base_rank[r]), -base_rank[r]))
            row["largest"] = {"run": moved, "from": base_rank[moved], "to": rank[moved],
                              "change": rank[moved] - base_rank[moved]}
        out["rows"].append(row)
        for run in names:
            table[run][name], table[run][f"{name}_rank"] = other[run], rank[run]
    out["table"] = sorted(table.values(), key=lambda r: r[f"{reference_name}_rank"])
    return out


def _ranks(scores: dict) -> dict:
    """1 for the best score; ties share the better rank."""
    ordered = sorted(scores.values(), reverse=True)
    return {run: ordered.index(value) + 1 for run, value in scores.items()}


def audit_sample(human: dict, machine: dict, scores: dict, *, binary: bool, threshold: int = 1, size: int = 20,
                 seed: int = 0) -> tuple:
    """(sample, how many disagree): a fixed random sample of the items where machine and human disagree on relevant
    or not, each {"topic", "docid", "human", "machine", "score"}, sorted by topic and docid."""
    def relevant(grade, is_machine):
        return grade >= (1 if binary and is_machine else threshold)

    disagreements = sorted(i for i in human.keys() & machine.keys()
                           if relevant(human[i], False) != relevant(machine[i], True))
    picked = random.Random(seed).sample(disagreements, min(size, len(disagreements)))
    return [{"topic": t, "docid": d, "human": human[(t, d)], "machine": machine[(t, d)], "score": scores.get((t, d))}
            for t, d in sorted(picked, key=lambda i: (natural_key(str(i[0])), i[1]))], len(disagreements)


# Reading what the database holds --------------------------------------------------------------------------------


def campaign_human(campaign_id, collection, topic_ids=None) -> dict:
    """{(topic, docid): grade}: the campaign's page-level qrels (majority over its assessors, never adjudicated)."""
    scope = Scope(collection, tuple(sorted(topic_ids)) if topic_ids is not None else None, None, campaign_id)
    return {(t, d): g for t, d, g in judgement_qrels(scope, aggregate="majority", level="page")}


def machine_labels(source, topic_ids=None, *, trained=False) -> tuple:
    """({(topic, docid): grade}, {(topic, docid): score}) of a source's graded labels on passages; the pairs it was
    trained on are left out unless `trained`."""
    rows = MachineLabel.objects.filter(source=source, passage__isnull=False, grade__isnull=False)
    if topic_ids is not None:
        rows = rows.filter(topic_id__in=topic_ids)
    if not trained:
        rows = rows.filter(in_training=False)
    grades, scores = {}, {}
    for topic, docid, grade, score in rows.values_list("topic__external_id", "passage__external_id", "grade", "score"):
        grades[(topic, docid)] = grade
        scores[(topic, docid)] = score
    return grades, scores


def pool_run_ids(pool_ids) -> set:
    """The runs of pools: those listed on them, and those that brought their candidates (retriever runs are not
    listed on a pool built with retrievers)."""
    from assessments.models import CandidateSource, Pool

    listed = set(Pool.runs.through.objects.filter(pool_id__in=pool_ids).values_list("run_id", flat=True))
    brought = set(CandidateSource.objects.filter(candidate__pool_id__in=pool_ids).order_by().values_list(
        "run_id", flat=True).distinct())
    return listed | brought


def stored_runs(run_ids, topic_ids=None) -> dict:
    """{run label: {topic external id: [docid…]}} of stored runs, in rank order; the label is the run's name, or
    owner/name where teams share a name (assessments.services.runs.run_labels)."""
    entries = RunEntry.objects.filter(run_id__in=run_ids)
    if topic_ids is not None:
        entries = entries.filter(topic_id__in=topic_ids)
    labels = run_labels(Run.objects.filter(pk__in=run_ids).select_related("owner"))
    runs = {}
    rows = entries.order_by("run_id", "topic_id", "rank").values_list("run_id", "topic__external_id",
                                                                      "passage__external_id")
    for run, topic, docid in rows.iterator(chunk_size=10_000):
        runs.setdefault(labels[run], {}).setdefault(topic, []).append(docid)
    return runs


def anchoring(campaign_id, machine: dict, *, binary: bool, threshold: int = 1) -> dict:
    """Agreement with the machine of the human labels whose latest change showed a machine label, and of those
    that were blind (calibration share). Only campaigns with pre-labels on have either; practice labels never count
    (Judgement.objects.without_practice)."""
    changes = JudgementChange.objects.filter(
        judgement__campaign_id=campaign_id, judgement__latest_change_id=F("pk"), machine_shown__isnull=False,
        judgement__grade__isnull=False, judgement__adjudicated=False, judgement__layer__in=GRADED_LAYERS,
        judgement__in=Judgement.objects.in_campaign(campaign_id).without_practice(campaign_id).values("pk"),
    ).values_list("machine_shown", "judgement__topic__external_id", "judgement__passage__external_id",
                  "judgement__grade")
    groups = {True: [0, 0], False: [0, 0]}
    for shown, topic, docid, grade in changes:
        key = (topic, docid)
        if key not in machine:
            continue
        human_value = int(grade >= threshold) if binary else grade
        groups[shown][0] += int(human_value == machine[key])
        groups[shown][1] += 1
    return {name: {"items": total, "agree": (agree / total) if total else None}
            for name, (agree, total) in (("shown", groups[True]), ("blind", groups[False]))}



def source_report(source, human: dict, runs: dict, measure, *, topic_ids=None, human_topics=None, threshold=None,
                  campaign_id=None, audit: int = 20, seed: int = 0) -> dict:
    """Everything known of one source against people: agreement, rankings (human, machine, filled, and with
    `human_topics` the human share alone), anchoring (a campaign's) and an audit sample of disagreements.

    human: {(topic, docid): grade}, the reference; human_topics: the topics people judged when the reference is
    a complete truth (e.g. Cranfield's qrels): filled then takes people's labels on those topics only.
    """
    binary = binary_source(source.grades)
    if threshold is None:
        threshold = (source.settings or {}).get("grade_threshold", 1)
    machine, scores = machine_labels(source, topic_ids)
    machine_all, _ = machine_labels(source, topic_ids, trained=True)
    judged = human if human_topics is None else {k: g for k, g in human.items() if k[0] in set(human_topics)}
    filled = {**{k: g for k, g in machine_all.items() if k not in judged}, **judged}
    others = {"machine": as_qrels(machine_all), "filled": as_qrels(filled)}
    if human_topics is not None:
        others["human share"] = as_qrels(judged)
    sample, disagreeing = audit_sample(human, machine, scores, binary=binary, threshold=threshold, size=audit,
                                       seed=seed)
    failed = source.labels.filter(grade__isnull=True)
    if topic_ids is not None:
        failed = failed.filter(topic_id__in=topic_ids)
    return {
        "source": source.pk, "name": source.name, "kind": source.kind, "model": source.model,
        "grades": source.grades, "snapshot": (source.training or {}).get("id"),
        "cross_validation": {k: (source.metrics or {}).get(k) for k in ("precision", "recall", "f1", "auc", "kappa")}
        if source.metrics else None,
        "human_kappa": ((source.metrics or {}).get("human") or {}).get("kappa"),
        "labels": len(machine_all), "unreadable": failed.count(),
        "agreement": agreement(human, machine, binary=binary, threshold=threshold),
        "rankings": rankings(runs, as_qrels(human), others, measure),
        "anchoring": anchoring(campaign_id, machine_all, binary=binary, threshold=threshold)
        if campaign_id is not None else None,
        "audit": {"disagreeing": disagreeing, "sample": sample},
        "human_share_topics": len(set(human_topics)) if human_topics is not None else None,
        "notes": NOTES,
    }
