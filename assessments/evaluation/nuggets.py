"""Nugget scores of generated answers (TREC RAG 2024's AutoNuggetizer measures), from the campaign's labels.

Per answer (a run's answer to a topic), over the nuggets of the topic's bank (assessments.services.nuggets):

- `all`: the mean support, support 1, partial_support 0.5, not_support 0; `vital`: the same over the vital nuggets;
- `strict_all`, `strict_vital`: the same with partial_support 0;
- `weighted`: the mean support weighted by importance (vital 1, okay 0.5).

A nugget nobody labelled for the answer counts as not supported (`assessed` says how many were labelled); a mean
over no nuggets (a bank without vital nuggets) is 0, as the nuggetizer has it. Where several assessors labelled
an (answer, nugget), the adjudicated label decides, else the majority, a tie taking the lower label (as
`export_qrels --ties lower`). A run's figure is the mean over every topic with a bank (in the scope scored), a topic
it did not answer counting 0 in each measure and named in its `unanswered`, as the nuggetizer scores a run (its
assign step gives a topic without the run's answer an empty one, so the global mean is over every topic with
nuggets); a topic with answers and no bank (or an empty one) is not scored and is said (`topics_without_nuggets`: {topic: [runs]}), never
averaged as 0 nor left out silently. Only the people's labels (Judgements) count, less the practice ones (qualification answers:
Judgement.objects.without_practice): machine labels are never Judgements (assessments.models.machine). Scores by a
machine source (an LLM's nugget assignments, assessments.machine.nuggets) are had only by naming it (`source`),
and compare_with_people sets them beside the people's: Kendall's τ-b between the two run rankings for each
measure, and Krippendorff's α (ordinal) with the share of equal labels over the (answer, nugget) pairs both
labelled.

Citation support (where the campaign has citation_support labels: the optional citations stage), per answer, as
TREC RAG 2024's support evaluation and ARGUE have it, a cited passage's support scoring full 1, partial 0.5, none 0
(several assessors: adjudicated, else the majority, a tie the lower; a pair nobody labelled counts 0, as an
unlabelled nugget does):
- `citation_precision`: the mean support over the answer's cited (sentence, passage) pairs (an answer citing nothing:
  0);
- `citation_recall`: the share of the answer's sentences with a supporting citation, each sentence counting its
  best citation's support (so a sentence whose best is partial counts 0.5; one citing nothing counts 0).
"""

import math

import csv
import io
from collections import defaultdict

from django.db.models import Count

from assessments.agreement.ratings import ratings_from_triples
from assessments.agreement.statistics import figures
from assessments.exporters.qrels import MAJORITY
from assessments.labels import CitationSupport
from assessments.machine import nuggets as machine_nuggets
from assessments.models import Answer, Judgement, Layer, Run, Topic
from assessments.services import nuggets
from assessments.services.runs import run_labels

MEASURES = ("all", "vital", "strict_all", "strict_vital", "weighted")
# What each exported column is (the JSON's "definitions"; the command's help and docs/nugget-scores.md say the same).
# The nuggetizer's calculate_nugget_scores names the first four all_score, vital_score, strict_all_score,
# strict_vital_score; weighted is TREC RAG 2024's W.
DEFINITIONS = {
    "all": "mean over the topic's nuggets of support 1, partial_support 0.5, not_support 0 (nuggetizer all_score)",
    "vital": "the same over the vital nuggets only, 0 where there are none (nuggetizer vital_score)",
    "strict_all": "mean over the topic's nuggets of support 1, partial_support 0, not_support 0 "
                  "(nuggetizer strict_all_score)",
    "strict_vital": "the same over the vital nuggets only, 0 where there are none (nuggetizer strict_vital_score)",
    "weighted": "mean of support 1, partial_support 0.5, not_support 0 weighted vital 1, okay 0.5 "
                "(TREC RAG 2024's weighted score, partial credit)",
    "citation_precision": "mean over the answer's cited (sentence, passage) pairs of full 1, partial 0.5, none or "
                          "not judged 0 (an answer citing nothing 0)",
    "citation_recall": "mean over the answer's sentences of their best citation's support (full 1, partial 0.5; "
                       "a sentence citing nothing 0)",
}
CITATION_MEASURES = ("citation_precision", "citation_recall")  # where the campaign judges citations
CITATION_SCORE = {CitationSupport.FULL.value: 1.0, CitationSupport.PARTIAL.value: 0.5,
                  CitationSupport.NONE.value: 0.0}
FORMATS = ("json", "tsv")
SCORE = {nuggets.SUPPORT: 1.0, nuggets.PARTIAL: 0.5, nuggets.NOT_SUPPORT: 0.0}
STRICT = {nuggets.SUPPORT: 1.0, nuggets.PARTIAL: 0.0, nuggets.NOT_SUPPORT: 0.0}
WEIGHT = {nuggets.VITAL: 1.0, nuggets.OKAY: 0.5}


def _mean(values):
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def support_labels(campaign_id, topic_ids=None) -> dict[str, str]:
    """{item "<answer id>:<nugget id>": the label that counts} of the campaign's nugget_support judgements, less the
    practice ones (qualification answers: Judgement.objects.without_practice)."""
    return _labels_that_count(campaign_id, Layer.NUGGET_SUPPORT, nuggets.SUPPORT_ORDER, ("item",), topic_ids)


def citation_labels(campaign_id, topic_ids=None) -> dict[tuple[str, int], str]:
    """{(item "<answer id>:<sentence>", passage id): the label that counts} of the campaign's citation_support
    judgements, less the practice ones."""
    return _labels_that_count(campaign_id, Layer.CITATION_SUPPORT, nuggets.CITATION_ORDER, ("item", "passage_id"),
                              topic_ids)


def _labels_that_count(campaign_id, layer, order, keys, topic_ids) -> dict:
    """{key: label} of a layer's judgements on an ordered scale (`order`: {label: rank}): the adjudicated labels if
    any, else the assessors' majority, a tie the lower; a key is the `keys` fields' value (a tuple of several)."""
    rows = Judgement.objects.in_campaign(campaign_id).of_layer(layer).filter(
        value__isnull=False).without_practice(campaign_id).without_superseded_finals()
    if topic_ids is not None:
        rows = rows.filter(topic_id__in=list(topic_ids))
    given, final = defaultdict(list), defaultdict(list)
    for *key, value, adjudicated in rows.order_by(*keys, "assessor_id").values_list(*keys, "value", "adjudicated"):
        if value in order:
            (final if adjudicated else given)[key[0] if len(key) == 1 else tuple(key)].append(order[value])
    label_of = {rank: label for label, rank in order.items()}
    majority = MAJORITY["lower"]
    return {key: label_of[majority(final.get(key) or ranks)] for key, ranks in {**given, **final}.items()}


def answer_citations(answer_ids) -> dict[int, tuple[int, dict]]:
    """{answer id: (its sentence count, {sentence position: {cited passage ids}})} in two queries."""
    from assessments.models import AnswerCitation, AnswerSentence

    found = {a: (0, defaultdict(set)) for a in answer_ids}
    counts = AnswerSentence.objects.filter(answer_id__in=list(found)).values("answer_id").annotate(n=Count("id"))
    for row in counts:
        found[row["answer_id"]] = (row["n"], found[row["answer_id"]][1])
    for answer_id, position, pid in AnswerCitation.objects.filter(sentence__answer_id__in=list(found)).values_list(
            "sentence__answer_id", "sentence__position", "passage_id"):
        found[answer_id][1][position].add(pid)
    return found


def citation_scores(answer_id, sentences, cited, labels) -> dict:
    """An answer's citation_precision and citation_recall (see the module's doc) with its counts: `sentences` its
    sentence count, `cited` {sentence position: {passage ids}}, `labels` citation_labels'."""
    support = {(pos, pid): CITATION_SCORE.get(labels.get((nuggets.citation_item(answer_id, pos), pid)), 0.0)
               for pos, pids in cited.items() for pid in pids}
    best = [max((v for (pos, _), v in support.items() if pos == p), default=0.0) for p in range(sentences)]
    assessed = sum((nuggets.citation_item(answer_id, pos), pid) in labels for pos, pid in support)
    return {"citation_precision": _mean(support.values()), "citation_recall": _mean(best),
            "citations": len(support), "citations_assessed": assessed}


def answer_scores(bank, labels, answer_id) -> dict:
    """The five measures of one answer over `bank` (a list of nuggets), with its nugget counts."""
    rows = [(n["importance"], labels.get(nuggets.support_item(answer_id, n["id"]))) for n in bank]
    vital = [label for importance, label in rows if importance == nuggets.VITAL]
    every = [label for _, label in rows]
    weights = sum(WEIGHT[importance] for importance, _ in rows)
    return {
        "all": _mean(SCORE.get(label, 0.0) for label in every),
        "vital": _mean(SCORE.get(label, 0.0) for label in vital),
        "strict_all": _mean(STRICT.get(label, 0.0) for label in every),
        "strict_vital": _mean(STRICT.get(label, 0.0) for label in vital),
        "weighted": sum(WEIGHT[imp] * SCORE.get(label, 0.0) for imp, label in rows) / weights if weights else 0.0,
        "nuggets": len(rows), "vital_nuggets": len(vital), "assessed": sum(label is not None for label in every),
    }


def _scored(campaign_id, topic_ids, source):
    """What a campaign's nugget scores are made of (nugget_scores and assignment_records read the same): {topic id:
    bank} of the topics whose bank scores (an empty bank scores nothing: its topic is said), the labels that count
    (the people's, or the machine source's), and the campaign's answers, by run and topic."""
    banks = {topic: bank for topic, bank in nuggets.topic_banks(campaign_id, topic_ids).items()
             if isinstance(bank.value, list) and bank.value}
    if source is None:
        labels = support_labels(campaign_id, topic_ids)
    else:
        labels = machine_nuggets.support_labels(source.pk, campaign_id, topic_ids)
    answers = Answer.objects.filter(campaign_id=campaign_id).select_related("topic")
    if topic_ids is not None:
        answers = answers.filter(topic_id__in=list(topic_ids))
    return banks, labels, list(answers.order_by("run_id", "topic__external_id"))


def nugget_scores(campaign_id, *, topic_ids=None, source=None) -> dict:
    """{"runs": {run: {measure: mean over topics, "topics": {topic: {measure: value, counts}}}}} of a campaign's
    answers (runs named as assessments.services.runs.run_labels names them, topics by external id), from the
    people's labels, or from a machine source's when one is named (`source`: a MachineLabelSource; the answer
    then says which: "source": {"id", "name"})."""
    banks, labels, answers = _scored(campaign_id, topic_ids, source)
    unscored = [answer for answer in answers if answer.topic_id not in banks]
    answers = [answer for answer in answers if answer.topic_id in banks]
    per_run = defaultdict(dict)
    if banks:  # a run whose answers are all on topics without nuggets scores 0 on those with (none answered)
        per_run.update((answer.run_id, {}) for answer in unscored)
    for answer in answers:
        bank = banks[answer.topic_id].value
        per_run[answer.run_id][answer.topic.external_id] = answer_scores(bank, labels, answer.pk)
    measures = MEASURES
    cites = citation_labels(campaign_id, topic_ids) if source is None else {}
    if cites:  # the campaign judges citations: each answer's citation support beside its nugget scores
        measures = MEASURES + CITATION_MEASURES
        cited = answer_citations([a.pk for a in answers])
        for answer in answers:
            per_run[answer.run_id][answer.topic.external_id].update(
                citation_scores(answer.pk, *cited[answer.pk], cites))
    names = run_labels(Run.objects.filter(pk__in={*per_run, *(a.run_id for a in unscored)}).select_related("owner"))
    scored = sorted(Topic.objects.filter(pk__in=list(banks)).values_list("external_id", flat=True))
    runs = {}
    for run_id, topics in sorted(per_run.items(), key=lambda item: names[item[0]]):
        # over every topic with nuggets, one the run did not answer counting 0 (the nuggetizer assigns an empty
        # answer there): a run answering only easy topics is not ranked above one that answered them all
        means = {m: sum(t[m] for t in topics.values()) / len(scored) for m in measures}
        runs[names[run_id]] = {**means, "topics": topics,
                               "unanswered": [topic for topic in scored if topic not in topics]}
    found = {"runs": runs, "definitions": {m: DEFINITIONS[m] for m in measures}}
    if unscored:  # said, not averaged as 0 nor dropped in silence: the topic waits for its bank
        waiting = defaultdict(list)
        for answer in unscored:
            waiting[answer.topic.external_id].append(names[answer.run_id])
        found["topics_without_nuggets"] = {topic: sorted(waiting[topic]) for topic in sorted(waiting)}
    if source is not None:
        return {"source": {"id": source.pk, "name": source.name}, **found}
    return found


def assignment_records(campaign_id, *, source=None):
    """The labels nugget_scores scores, as the nuggetizer's assignments file (manage.py export_nugget_assignments):
    one record per run and topic with a bank, `{"qid", "query", "run_id", "answer_text", "nuggets": [{"text",
    "importance", "assignment"}]}`, the nuggets the bank's in its order. A nugget nobody labelled for the answer is
    `not_support` (it scores so here), and a topic the run did not answer has the nuggetizer's empty answer
    (answer_text "", every nugget not_support), so the nuggetizer's calculate_nugget_scores of each record, and the
    mean of a run's records, are exactly nugget_scores'. Runs named as nugget_scores names them; the people's
    labels, or a machine source's (`source`)."""
    from assessments.models import AnswerSentence

    banks, labels, answers = _scored(campaign_id, None, source)
    if not banks:
        return
    topics = sorted(Topic.objects.filter(pk__in=list(banks)), key=lambda t: t.external_id)
    names = run_labels(Run.objects.filter(pk__in={a.run_id for a in answers}).select_related("owner"))
    by_key = {(a.run_id, a.topic_id): a for a in answers if a.topic_id in banks}
    texts = defaultdict(list)
    for answer_id, text in (AnswerSentence.objects.filter(answer_id__in=[a.pk for a in by_key.values()])
                            .order_by("answer_id", "position").values_list("answer_id", "text")):
        texts[answer_id].append(text)
    for run_id in sorted(names, key=names.get):
        for topic in topics:
            answer = by_key.get((run_id, topic.pk))
            assigned = [
                {"text": n["text"], "importance": n["importance"],
                 "assignment": (labels.get(nuggets.support_item(answer.pk, n["id"])) if answer else None)
                 or nuggets.NOT_SUPPORT}
                for n in banks[topic.pk].value
            ]
            yield {"qid": topic.external_id, "query": topic.text or topic.title, "run_id": names[run_id],
                   "answer_text": " ".join(texts[answer.pk]) if answer else "", "nuggets": assigned}


def unscored_warning(scores) -> str:
    """A line for each topic with answers and no nuggets (not scored), or "" (the export commands print it)."""
    return "".join(f"not scored: topic {topic} has answers ({len(runs)}: {', '.join(runs)}) and no nuggets in the "
                   "campaign; its runs' means leave it out until a bank is imported or written\n"
                   for topic, runs in scores.get("topics_without_nuggets", {}).items())


def compare_with_people(campaign_id, source, *, people=None, machine=None) -> dict:
    """How a machine source's nugget assignments stand beside the people's: {"source", "name", "runs" (runs scored
    by both), "tau": {measure: Kendall's τ-b of the two run rankings, or None}, "labels" (pairs both labelled),
    "agreement" (share of equal labels), "alpha" (Krippendorff's α, ordinal), "reasons"}. `people` and `machine`:
    the two nugget_scores when the caller has them."""
    from scipy.stats import kendalltau

    people = people or nugget_scores(campaign_id)
    machine = machine or nugget_scores(campaign_id, source=source)
    runs = sorted(set(people["runs"]) & set(machine["runs"]))
    out = {"source": source.pk, "name": source.name, "runs": len(runs), "tau": {}, "labels": 0, "agreement": None,
           "alpha": None, "reasons": {}}
    for measure in MEASURES:
        tau = None
        if len(runs) >= 2:
            value, _ = kendalltau([people["runs"][r][measure] for r in runs],
                                  [machine["runs"][r][measure] for r in runs])
            tau = float(value) if math.isfinite(value) else None
        out["tau"][measure] = tau
    if len(runs) < 2:
        out["reasons"]["tau"] = "fewer than two runs scored by both"
    elif None in out["tau"].values():
        out["reasons"]["tau"] = "one ranking is all ties for some measures"
    human = support_labels(campaign_id)
    machine_labels = machine_nuggets.support_labels(source.pk, campaign_id)
    both = sorted(set(human) & set(machine_labels))
    out["labels"] = len(both)
    if both:
        out["agreement"] = sum(human[i] == machine_labels[i] for i in both) / len(both)
        scale = sorted(nuggets.SUPPORT_ORDER, key=nuggets.SUPPORT_ORDER.get)
        ratings = ratings_from_triples([(i, "people", human[i]) for i in both] +
                                       [(i, "machine", machine_labels[i]) for i in both], "ordinal", scale=scale)
        found = figures(ratings, pairs=False)
        out["alpha"] = found["alpha"]
        if found["reasons"].get("alpha"):
            out["reasons"]["alpha"] = found["reasons"]["alpha"]
    else:
        out["reasons"]["alpha"] = "no (answer, nugget) pair was labelled by both"
    return out


def scores_measures(scores) -> tuple:
    """The measures of these scores: the five nugget measures, and the citation ones where they were scored."""
    runs = list(scores["runs"].values())
    return MEASURES + CITATION_MEASURES if runs and CITATION_MEASURES[0] in runs[0] else MEASURES


def scores_tsv(scores) -> str:
    """The scores as TSV: run, topic (`all` for the run's mean), then each measure; a header line first."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    measures = scores_measures(scores)
    writer.writerow(["run", "topic", *measures])
    for run, figures in scores["runs"].items():
        for topic, values in figures["topics"].items():
            writer.writerow([run, topic, *(f"{values[m]:.4f}" for m in measures)])
        writer.writerow([run, "all", *(f"{figures[m]:.4f}" for m in measures)])
    return out.getvalue()
