"""Where evaluations get their qrels and runs: stored qrel sets and runs, or TREC files (as trec_eval reads them)."""

import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from assessments.evaluation.measures import ALPHA, Measure, evaluate, nrodcg, topic_value
from assessments.evaluation.report import Report, RunScores
from assessments.importers.trec import read_qrels, read_run
from assessments.importers.trec_files import segments
from assessments.models import PoolCandidate, Qrel, RunEntry, Topic
from assessments.services.runs import run_labels
from retrieval.ingest import Problems
from retrieval.models import Passage

IDEAL_NOTES = {
    "book": "N-RODCG ideal=book: the best k chunks of the whole book (penalises missing the plot, as nDCG does)",
    "retrieved": "N-RODCG ideal=retrieved: the retrieved chunks re-sorted (the paper's literal wording)",
}


# --- files --------------------------------------------------------------------------------------------------


def read_qrels_file(path) -> dict:
    """{topic: {docid: grade}} of a TREC qrels file; a document graded under several subtopics keeps its highest grade."""
    problems = Problems(path)
    parsed = read_qrels(path, problems)
    problems.raise_if_any()
    qrels = defaultdict(dict)
    if not any(parsed.subtopics):  # one grade a document: each topic's documents in one go
        for qid, a, b in segments(parsed.qids):
            qrels[qid].update(zip(parsed.docids[a:b], parsed.grades[a:b]))
        return dict(qrels)
    for qid, docid, grade in zip(parsed.qids, parsed.docids, parsed.grades):
        qrels[qid][docid] = max(grade, qrels[qid].get(docid, grade))
    return dict(qrels)


def read_run_file(path) -> tuple[str, dict]:
    """(run name, {topic: [docid…]}) of a TREC run file, each topic in trec_eval's order; the name is the tag."""
    problems = Problems(path)
    parsed = read_run(path, problems)
    problems.raise_if_any()
    tags = parsed.first_tag_line
    name = next(iter(tags)) if len(tags) == 1 else Path(path).stem
    docids, scores = parsed.docids, parsed.scores
    ranking = {}
    for qid, indices in parsed.by_topic().items():
        # trec_eval's order: score descending, ties by docid descending (the reader refused duplicates)
        ranking[qid] = [doc for _, doc in sorted(zip(map(scores.__getitem__, indices),
                                                      map(docids.__getitem__, indices)), reverse=True)]
    return name, ranking


def read_prior_file(path) -> dict:
    """{topic: {docid: score}} from a TREC run file's score column (plain or gzip): a prior score per pair, e.g. a
    machine annotator's probabilities written as a run. The rank and tag columns are read but not used; a malformed
    line is an ImportFailed naming the file, the line and the field."""
    problems = Problems(path)
    parsed = read_run(path, problems)
    if not len(parsed) and not problems:
        problems.add("no run lines in the file")
    problems.raise_if_any()
    prior = defaultdict(dict)
    for qid, docid, score in zip(parsed.qids, parsed.docids, parsed.scores):
        prior[qid][docid] = float(score)
    return dict(prior)


def evaluate_files(qrels_path, run_paths, measures, *, only_run_topics=False) -> Report:
    """Evaluate TREC run files against a TREC qrels file (N-RODCG needs stored runs and books)."""
    plot = [m for m in measures if m.name == "N-RODCG"]
    if plot:
        raise ValueError(f"{plot[0]} needs the books' sentence positions: evaluate stored runs (--runs) instead")
    qrels = read_qrels_file(qrels_path)
    report = Report(measures)
    for path in run_paths:
        name, run = read_run_file(path)
        report.runs.append(RunScores(name, evaluate(qrels, run, measures, only_run_topics=only_run_topics)))
    return report


# --- stored runs --------------------------------------------------------------------------------------------


def stored_qrels(qrel_set) -> dict:
    """{topic external id: {passage external id: grade}}; a passage graded under several subtopics keeps its highest."""
    qrels = defaultdict(dict)
    rows = Qrel.objects.filter(qrel_set=qrel_set).values_list("topic__external_id", "passage__external_id", "grade")
    for topic, passage, grade in rows.iterator(chunk_size=5000):
        qrels[topic][passage] = max(grade, qrels[topic].get(passage, grade))
    return dict(qrels)


def stored_ranking(run, topics=None) -> dict:
    """{topic external id: [passage external id…]} in the run's stored rank order (trec_eval's, for imports)."""
    entries = RunEntry.objects.filter(run=run)
    if topics is not None:
        entries = entries.filter(topic__in=topics)
    ranking = defaultdict(list)
    rows = entries.order_by("topic_id", "rank").values_list("topic__external_id", "passage__external_id")
    for topic, passage in rows.iterator(chunk_size=10_000):
        ranking[topic].append(passage)
    return dict(ranking)


def stored_prior(source) -> tuple[dict, int]:
    """({topic external id: {passage external id: score}}, pairs left out) of a machine label source's scores on
    passages (a classifier's probability, an LLM's grade): a prior for a judging order. The pairs the source was
    trained on are left out (their scores learnt the human label: a prior must not carry the qrels), as
    assessments.machine.compare.machine_labels leaves them out."""
    from assessments.machine.compare import machine_labels

    _, scores = machine_labels(source)
    prior = defaultdict(dict)
    for (topic, passage), score in scores.items():
        if score is not None:
            prior[topic][passage] = float(score)
    left_out = source.labels.filter(passage__isnull=False, in_training=True).count()
    return dict(prior), left_out


def evaluate_stored(runs, qrel_set, measures, *, topics=None, only_run_topics=False, qrels=None) -> Report:
    """Evaluate stored runs against a stored qrel set, or the given `qrels` (over `topics` only, when given).

    N-RODCG is scored against the plot topics' ground truth whatever the qrels. Each run is reported under its
    name, or `owner/name` where several of `runs` share the name (assessments.services.runs.run_labels).
    """
    runs = list(runs)
    labels = run_labels(runs)
    if qrels is None:
        qrels = stored_qrels(qrel_set) if qrel_set is not None else {}
    if topics is not None:
        wanted = {t.external_id for t in topics}
        qrels = {topic: judged for topic, judged in qrels.items() if topic in wanted}
    report = Report(measures)
    plot_measures = [m for m in measures if m.name == "N-RODCG"]
    for measure in plot_measures:
        note = IDEAL_NOTES[measure.ideal] + (f", α={measure.alpha}" if measure.alpha != ALPHA else ", α=5")
        if note not in report.notes:
            report.notes.append(note)
    if qrel_set is not None:
        report.notes.append(f"qrels: {qrel_set.name}" + (f" ({qrel_set.description})" if qrel_set.description else ""))
    for run in runs:
        ranking = stored_ranking(run, topics)
        per_topic = evaluate(qrels, ranking, measures, only_run_topics=only_run_topics)
        if plot_measures:
            for topic, values in plot_scores(run, plot_measures, topics, only_run_topics=only_run_topics).items():
                per_topic.setdefault(topic, {}).update(values)
        report.runs.append(RunScores(labels[run.pk], per_topic))
    return report


def plot_scores(run, measures, topics=None, *, only_run_topics=False) -> dict:
    """{topic: {N-RODCG measure: value}} for the plot topics with ground-truth chunks (of `topics`, else the run's collection).

    As for the other measures, a plot topic the run has no entry for scores 0 (an empty list), unless
    only_run_topics keeps just the topics the run has.
    """
    plot_topics = Topic.objects.filter(kind=Topic.Kind.PLOT, collection_id=run.collection_id)
    if topics is not None:
        plot_topics = plot_topics.filter(pk__in=[t.pk for t in topics])
    if only_run_topics:
        plot_topics = plot_topics.filter(run_entries__run=run).distinct()
    scores = {}
    book_positions = {}
    for topic in plot_topics.prefetch_related("ground_truth"):
        truth = [p.position for p in topic.ground_truth.all() if p.position is not None]
        if not truth:
            continue
        if topic.book_id not in book_positions:
            chunks = Passage.objects.filter(book_id=topic.book_id).values_list("first_sentence", "last_sentence")
            book_positions[topic.book_id] = [(a + b) / 2 for a, b in chunks if a is not None]
        entries = RunEntry.objects.filter(run=run, topic=topic).order_by("rank")
        retrieved = [
            (a + b) / 2 if a is not None else None
            for a, b in entries.values_list("passage__first_sentence", "passage__last_sentence")
        ]
        scores[topic.external_id] = {m: nrodcg(retrieved, truth, book_positions[topic.book_id], m) for m in measures}
    return scores


def ground_truth_qrels(topics) -> dict:
    """{topic external id: {chunk external id: 1}}: plot topics' ground-truth chunks as binary qrels (MRR, Recall)."""
    qrels = defaultdict(dict)
    rows = Topic.ground_truth.through.objects.filter(topic__in=topics).values_list(
        "topic__external_id", "passage__external_id"
    )
    for topic, passage in rows:
        qrels[topic][passage] = 1
    return dict(qrels)


def pool_coverage(pool, runs, qrels, depth) -> dict:
    """{run label (as evaluate_stored names it): (Judged@depth over the qrels, share of the run's top-depth in the
    pool)}, averaged over the pool's topics."""
    runs = list(runs)
    labels = run_labels(runs)
    topics = list(pool.topics.all())
    in_pool = defaultdict(set)
    for topic, passage in PoolCandidate.objects.filter(pool=pool).values_list("topic__external_id", "passage__external_id"):
        in_pool[topic].add(passage)
    judged_at = Measure("Judged", depth)
    coverage = {}
    for run in runs:
        ranking = stored_ranking(run, topics)
        judged = [topic_value(judged_at, docs, qrels.get(topic, {})) for topic, docs in ranking.items()]
        pooled = [sum(1 for d in docs[:depth] if d in in_pool[t]) / len(docs[:depth]) for t, docs in ranking.items() if docs]
        coverage[labels[run.pk]] = (
            sum(judged) / len(judged) if judged else 0.0,
            sum(pooled) / len(pooled) if pooled else 0.0,
        )
    return coverage


@dataclass(frozen=True)
class PoolRecall:
    """How many of the qrels' relevant passages (grade ≥ rel) a pool holds, named both ways reports give it.

    micro: found / relevant over all topics (relevant documents weigh alike; what most reports give);
    macro: the mean over topics of each topic's share (topics weigh alike); topics without a relevant
    passage are left out of both (their recall is undefined).
    """

    micro: float
    macro: float
    found: int
    relevant: int
    topics: int
    rel: int = 1


def recall_of(candidates: dict, qrels: dict, topics, rel: int = 1) -> PoolRecall:
    """PoolRecall of {topic: set of candidate doc ids} against {topic: {doc: grade}}, over `topics`."""
    found = relevant = 0
    shares = []
    for topic in topics:
        wanted = {doc for doc, grade in qrels.get(topic, {}).items() if grade >= rel}
        if wanted:
            hits = len(wanted & candidates.get(topic, set()))
            found, relevant = found + hits, relevant + len(wanted)
            shares.append(hits / len(wanted))
    return PoolRecall(
        micro=found / relevant if relevant else 0.0,
        macro=math.fsum(shares) / len(shares) if shares else 0.0,
        found=found, relevant=relevant, topics=len(shares), rel=rel,
    )


def pool_recall(pool, qrels, rel=1) -> PoolRecall:
    """The share of the qrels' relevant passages (grade ≥ rel) that are candidates of the pool, micro and macro."""
    candidates = defaultdict(set)
    for topic, passage in PoolCandidate.objects.filter(pool=pool).values_list("topic__external_id", "passage__external_id"):
        candidates[topic].add(passage)
    return recall_of(candidates, qrels, pool.topics.values_list("external_id", flat=True), rel)
