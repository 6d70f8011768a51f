"""A campaign's results on its page: the runs evaluated against its current qrels (a table and an inline SVG
chart), and the agreement at a glance that the campaign list shows.

The qrels are the campaign's own labels through assessments.services.qrels (the service export_qrels and
the downloads call); the runs are those of its pools, with the runs our retrievers made for them.
"""

from assessments.evaluation.measures import parse_measure
from assessments.evaluation.reusability import leave_one_run_out
from assessments.evaluation.sources import evaluate_stored, stored_ranking
from assessments.exporters.common import ExportFailed
from assessments.models import Answer, CandidateSource, Run, Topic
from assessments.services.qrels import QrelsRequest, qrels_rows
from assessments.services.runs import run_labels

from annotation.reports.dashboard import hbars

OUTLINE_MEASURES = ("nDCG@20", "AP", "P@10", "RR", "Judged@20")
PLOT_MEASURES = ("N-RODCG@10", "nDCG@10", "RR@10", "Judged@10")
GLANCE_LAYER = {"outline": "relevance", "plot": "plot_grade", "adhoc": "grade"}


def campaign_runs(campaign) -> list:
    """The runs of the campaign, by name: those submitted to it (its track: participants' over the API, the
    organisers' on its Data page), those of its pools, the retriever runs made for them, and the runs whose
    generated answers it judges (a nuggets campaign's)."""
    ids = set(Run.objects.filter(pools__in=campaign.pools.all()).values_list("pk", flat=True))
    ids.update(Run.objects.filter(track=campaign.name).values_list("pk", flat=True))
    ids.update(Answer.objects.filter(campaign_id=campaign.pk).values_list("run_id", flat=True).distinct())
    for params in campaign.pools.values_list("params", flat=True):
        built = (params or {}).get("built", {})
        ids.update(built.get("runs", []))
        if built.get("final_run"):
            ids.add(built["final_run"])  # the fused or re-ranked run, the pool's own order
    return list(Run.objects.filter(pk__in=ids).order_by("name"))


def evaluation(campaign, *, aggregate="majority") -> dict:
    """{"measures", "rows": [[run, value...]], "chart", "topics", "qrels_lines", "notes", "report" (the
    assessments.evaluation Report: per topic too)} or {"error": text}."""
    track = getattr(campaign, "track", None)
    runs = campaign_runs(campaign)
    if track is None or not runs:
        return {"error": "No runs to evaluate yet: build a pool first."}
    topics = list(track.topics.all())
    plot = any(t.kind == Topic.Kind.PLOT for t in topics)
    measures = [parse_measure(m) for m in (PLOT_MEASURES if plot else OUTLINE_MEASURES)]
    qrels = {}
    try:
        request = QrelsRequest(collection=track.collection.name, aggregate=aggregate, campaign_id=campaign.pk)
        for topic, docid, grade in qrels_rows(request):
            qrels.setdefault(topic, {})[docid] = grade
    except ExportFailed as exc:
        if "no judgements" not in exc.message:
            return {"error": f"No qrels: {exc}"}
    judged = [t for t in topics if t.external_id in qrels]
    if not judged and not plot:
        return {"error": "Nothing judged yet: the runs are scored once the campaign has labels."}
    report = evaluate_stored(runs, None, measures, topics=judged or topics, qrels=qrels)
    reuse = reusability(campaign, runs, judged, qrels)
    rows = []
    for scores in report.runs:
        values = scores.all(report.measures)
        rows.append([scores.name, *[values.get(m) for m in report.measures]])
    first = report.measures[0]
    ordered = sorted(rows, key=lambda r: -(r[1] or 0))
    chart = hbars("evaluation", f"{first} of each run against the current qrels",
                  [(r[0], r[1]) for r in ordered], unit=str(first), fmt="{:.3f}")
    chart["table"] = {"head": ["run", *[str(m) for m in report.measures]],
                      "rows": [[r[0], *["–" if v is None else f"{v:.4f}" for v in r[1:]]] for r in ordered]}
    return {
        "measures": [str(m) for m in report.measures], "rows": ordered, "chart": chart, "reusability": reuse,
        "report": report, "hybrid": hybrid_intervals(campaign),
        "topics": len(judged), "qrels_lines": sum(len(d) for d in qrels.values()),
        "notes": [f"qrels: the campaign's labels so far, aggregate {aggregate}, page level; {len(judged)} of "
                  f"{len(topics)} topics judged (a judged topic a run lacks scores 0).", *report.notes],
    }


def hybrid_intervals(campaign) -> list[dict] | dict | None:
    """Where the campaign's judging order is hybrid: per pool, each run's MAP and nDCG@10 at the budget with a 95%
    interval from the human labels and the calibrated machine source (assessments.services.hybrid.intervals, the
    simulator's; binary gains, relevant at judging_min_rel): [{"pool", "spent", "budget", "rows": [[run, MAP,
    low, high, nDCG@10, low, high]]}] (rows empty before any human label); None for another order; {"error"} when
    its settings cannot be used."""
    from annotation.services import judging_order
    from assessments.services import hybrid_pool

    try:
        settings = judging_order.settings_of(campaign)
    except judging_order.OrderSettingsInvalid as exc:
        return {"error": f"{exc.field}: {exc.message}"}
    if settings.order != judging_order.HYBRID:
        return None
    out = []
    for pool in hybrid_pool.campaign_pools(campaign.pk):
        state = hybrid_pool.pool_plan(campaign.pk, pool, settings.hybrid)
        found = hybrid_pool.pool_intervals(state)
        rows = [] if found is None else sorted(
            ([run, *(float(x) for m in ("AP", "nDCG@10")
                     for x in (found.estimate[m][i], found.low[m][i], found.high[m][i]))]
             for i, run in enumerate(found.runs)),
            key=lambda row: -row[1])
        out.append({"pool": pool.name, "spent": state.spent, "budget": state.plan.budget, "rows": rows})
    return out


def reusability(campaign, runs=None, judged=None, qrels=None, *, aggregate="majority"):
    """Leave-one-run-out (Zobel) over the campaign's runs and current qrels, at its pools' depth: a
    assessments.evaluation.reusability.Reusability, or None without two runs and a judged topic."""
    if runs is None:
        track = getattr(campaign, "track", None)
        runs = campaign_runs(campaign) if track is not None else []
        qrels = {}
        if len(runs) >= 2:
            try:
                request = QrelsRequest(collection=track.collection.name, aggregate=aggregate, campaign_id=campaign.pk)
                for topic, docid, grade in qrels_rows(request):
                    qrels.setdefault(topic, {})[docid] = grade
            except ExportFailed:
                qrels = {}
            judged = [t for t in track.topics.all() if t.external_id in qrels]
    if len(runs) < 2 or not judged:
        return None
    pools = list(campaign.pools.all())
    depth = max([p.depth for p in pools] or [100])
    labels = run_labels(runs)
    rankings = {labels[r.pk]: stored_ranking(r, judged) for r in runs}
    contributors = pool_contributors(pools, judged, labels)
    pooled = "the campaign's pools as built ({})".format(", ".join(
        f"{p.name}: {p.get_strategy_display()}, depth {p.depth}"
        + (f", at most {p.per_topic} a topic" if p.per_topic else "") for p in pools))
    return leave_one_run_out(rankings, {t.external_id: qrels[t.external_id] for t in judged}, depth,
                             contributors=contributors or None, pooled=pooled if contributors else "")


def pool_contributors(pools, topics, labels) -> dict:
    """{(topic external id, passage external id): {run labels}} of the runs that brought each candidate of these
    pools (their CandidateSource rows) for these topics; a fused or re-ranked run is the pool's order, not a run
    that brought anything (its inputs did). Runs not in `labels` are named by id: they still share a candidate."""
    finals = {((p.params or {}).get("built") or {}).get("final_run") for p in pools} - {None}
    rows = CandidateSource.objects.filter(candidate__pool__in=pools, candidate__topic__in=topics).exclude(
        run_id__in=finals).values_list("candidate__topic__external_id", "candidate__passage__external_id", "run_id")
    found = {}
    for topic, doc, run_id in rows.iterator(chunk_size=5000):
        found.setdefault((topic, doc), set()).add(labels.get(run_id, f"run #{run_id}"))
    return found


def agreement_glance(campaign) -> dict | None:
    """Krippendorff's α of the campaign's main layer (relevance, plot grade): {"layer", "alpha", "units"} or None.

    Computed once per change of the campaign's labels or assignments (agreement.cached), not on every view."""
    from annotation.reports.agreement import cached

    return cached(campaign, "glance", lambda: _agreement_glance(campaign))


def _agreement_glance(campaign):
    from annotation.reports.agreement import campaign_report

    layer = GLANCE_LAYER.get(campaign.task)
    if campaign.settings.get("mode") in ("choice", "pair"):
        layer = "choice" if campaign.settings["mode"] == "choice" else "rating"
    try:
        report = campaign_report(campaign, layers=[layer], per_topic=False)
    except Exception:  # noqa: BLE001 — a glance must never break the campaign list
        return None
    for entry in report["layers"]:
        if entry["layer"] == layer:
            return {"layer": layer, "alpha": entry.get("alpha"), "units": entry.get("units"),
                    "reason": (entry.get("reasons") or {}).get("alpha")}
    return None


def nugget_evaluation(campaign) -> dict:
    """A nuggets campaign's answers scored from its nugget labels (assessments.evaluation.nuggets, as
    export_nugget_scores): {"measures", "rows": [[run, value...]] best `all` first, "chart", "notes", "answers":
    [[run, topic, value..., "labelled/nuggets"]] per answer (the first ANSWERS_SHOWN), "answers_total"} or {"error"};
    the measures are the five nugget ones, then citation_precision and citation_recall where citations are judged."""
    from assessments.evaluation.nuggets import CITATION_MEASURES, nugget_scores, scores_measures

    scores = nugget_scores(campaign.pk)
    runs, measures = scores["runs"], scores_measures(scores)
    if not runs:
        return {"error": "No scores yet: the campaign needs answers and a nugget bank for their topics."}
    rows = sorted(([name, *[figures[m] for m in measures]] for name, figures in runs.items()), key=lambda r: -r[1])
    chart = hbars("nugget-chart", "all (mean nugget support) of each run", [(r[0], r[1]) for r in rows],
                  unit="all", fmt="{:.3f}")
    chart["table"] = {"head": ["run", *measures], "rows": [[r[0], *[f"{v:.4f}" for v in r[1:]]] for r in rows]}
    topics = {topic for figures in runs.values() for topic in figures["topics"]}
    notes = [f"Each run's mean over the topics with a nugget bank ({len(topics)} answered in all; a topic the run did "
             "not answer counts 0, as the nuggetizer scores it). Support counts 1, partial support 0.5 (0 in the strict measures), a nugget "
             "nobody labelled 0; several assessors: the adjudicated label, else the majority, a tie the lower. "
             "weighted: vital nuggets weigh 1, okay ones 0.5."]
    waiting = scores.get("topics_without_nuggets", {})
    if waiting:  # answered, not scored: said, so no mean is read as covering them
        notes.append(f"Not scored: {len(waiting)} topics with answers and no nugget bank "
                     f"({', '.join(list(waiting)[:10])}{', …' if len(waiting) > 10 else ''}).")
    if CITATION_MEASURES[0] in measures:
        notes.append("citation_precision: the mean support of the answer's citations (full 1, partial 0.5, none or "
                     "not judged 0); citation_recall: the mean over its sentences of their best citation's support "
                     "(a sentence citing nothing 0).")
    answers = [[run, topic, *[figures["topics"][topic][m] for m in measures],
                f"{figures['topics'][topic]['assessed']}/{figures['topics'][topic]['nuggets']}"]
               for run, figures in sorted(runs.items()) for topic in sorted(figures["topics"])]
    return {"measures": list(measures), "rows": rows, "chart": chart, "notes": notes,
            "answers": answers[:ANSWERS_SHOWN], "answers_total": len(answers)}


ANSWERS_SHOWN = 2000  # per-answer rows on the results page (the JSON download has every one)


def nugget_machine(campaign, source=None) -> dict | None:
    """A nuggets campaign's LLM nugget assignment sources beside the people (annotation.services.nuggets.scores):
    {"sources": [(id, name)], "comparisons": [τ per measure, α, agreement of each], "picked": the source named by
    `source` (id or name) or None, "measures", "rows" (the runs scored by the picked source, best `all` first)};
    None when the campaign has no such source. ServiceError(source) for a source it does not have."""
    from annotation.services.nuggets import scores
    from assessments.evaluation.nuggets import MEASURES
    from assessments.services import machine

    sources = [(s.pk, s.name) for s in machine.nugget_sources(campaign.pk)]
    if not sources and source in (None, ""):
        return None
    people = scores(campaign)
    out = {"sources": sources, "comparisons": people.get("compared_with_machine", []), "picked": None,
           "measures": list(MEASURES), "rows": []}
    if source not in (None, ""):
        found = scores(campaign, source=source)
        out["picked"] = found["source"]
        out["rows"] = sorted(([name, *[figures[m] for m in MEASURES]] for name, figures in found["runs"].items()),
                             key=lambda r: -r[1])
    return out
