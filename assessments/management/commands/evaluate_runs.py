"""manage.py evaluate_runs [--pool P | --runs NAME…] --measures M… | --qrels FILE --run FILE… --measures M… [--min-rel N]"""

import dataclasses
import json

from django.core.management.base import BaseCommand, CommandError

from assessments.evaluation import MeasureError, parse_measure
from assessments.evaluation.report import RunScores
from assessments.evaluation.reusability import leave_one_run_out
from assessments.evaluation.sources import (
    evaluate_files,
    evaluate_stored,
    ground_truth_qrels,
    pool_coverage,
    pool_recall,
    read_qrels_file,
    read_run_file,
    stored_qrels,
    stored_ranking,
)
from assessments.models import Pool, QrelSet, Run, Topic
from assessments.services.runs import RunLookupError, find_runs, matching, run_labels
from retrieval.ingest import ImportFailed
from retrieval.models import Collection

DEFAULT_MEASURES = ["AP", "nDCG@10", "P@10", "R@100", "RR", "Rprec"]
# Measures whose relevance threshold --min-rel sets (nDCG uses the grades as gains, as trec_eval -l leaves it).
THRESHOLDED = {"AP", "P", "R", "RR", "Rprec", "Success", "NumRel", "NumRelRet"}


def with_min_rel(texts, min_rel):
    """Parse measures; those without their own `(rel=N)` take the threshold min_rel (trec_eval -l)."""
    measures = []
    for text in texts:
        measure = parse_measure(text)
        if measure.name in THRESHOLDED and "rel=" not in text.replace(" ", "").lower():
            measure = dataclasses.replace(measure, rel=min_rel)
        measures.append(measure)
    return list(dict.fromkeys(measures))


class Command(BaseCommand):
    help = (
        "Evaluate runs against qrels, as trec_eval does, with measures in ir_measures' notation: AP, AP@k, nDCG, "
        "nDCG@k, P@k, R@k, RR, RR@k, Rprec, Success@k, Judged@k, NumRet, NumRel, NumRelRet, P(rel=2)@k…, and "
        "N-RODCG@k for plot topics (N-RODCG(ideal=retrieved)@k for the paper's literal ideal). Stored runs "
        "(--runs, or every run of --pool, which also reports how many of each run's top-k are judged and pooled) "
        "against a stored qrel set, or files alone (--qrels FILE --run FILE…). Prints `run measure topic value` "
        "lines, topic `all` for the mean; --format json for machines."
    )

    def add_arguments(self, parser):
        parser.add_argument("--pool", help="Evaluate the pool's runs (its inputs and the retriever runs it made).")
        parser.add_argument(
            "--runs", nargs="+", default=[], metavar="NAME",
            help="Stored runs: names, or OWNER/NAME where several teams use a name (results show them so).",
        )
        parser.add_argument("--collection", help="Collection of the runs (when run names are ambiguous).")
        parser.add_argument("--qrel-set", help="Stored qrel set (default: the collection's only one).")
        parser.add_argument("--qrels", metavar="FILE", help="A TREC qrels file (with --run).")
        parser.add_argument("--run", nargs="+", default=[], metavar="FILE", dest="run_files", help="TREC run files.")
        parser.add_argument("--measures", nargs="+", default=DEFAULT_MEASURES, metavar="M")
        parser.add_argument(
            "--min-rel", type=int, default=1, metavar="N",
            help="A document is relevant when its grade is at least N (trec_eval -l; default 1, trec_eval's), for "
            "every measure without its own (rel=N) and for pool recall. Cranfield's −1 (stored as 0) is not relevant.",
        )
        parser.add_argument("--per-topic", action="store_true", help="Also print each topic's values.")
        parser.add_argument(
            "--only-run-topics", action="store_true",
            help="Score only topics the run has (trec_eval without -c); by default every qrels topic counts, "
            "a topic the run lacks scoring 0 (trec_eval -c, ir_measures).",
        )
        parser.add_argument("--format", choices=("text", "json"), default="text")
        parser.add_argument("--judged-depth", type=int, metavar="K", help="With --pool: k for Judged@k (default: its depth).")
        parser.add_argument(
            "--leave-one-out", type=int, metavar="K", nargs="?", const=0,
            help="Pool reusability (Zobel's leave-one-run-out): each run's MAP and rank with and without the judged "
            "documents only it brought to the depth-K pool of the runs evaluated (K default: the --pool's depth, "
            "else 100).",
        )

    def handle(self, *args, **opts):
        try:
            measures = with_min_rel(opts["measures"], opts["min_rel"])
        except MeasureError as exc:
            raise CommandError(str(exc)) from exc
        if opts["qrels"] or opts["run_files"]:
            if opts["pool"] or opts["runs"]:
                raise CommandError("use either files (--qrels FILE --run FILE…) or stored runs (--runs / --pool)")
            if not (opts["qrels"] and opts["run_files"]):
                raise CommandError("files need both --qrels FILE and --run FILE…")
            try:
                report = evaluate_files(opts["qrels"], opts["run_files"], measures, only_run_topics=opts["only_run_topics"])
                if opts["leave_one_out"] is not None:
                    self.inputs = (dict(read_run_file(path) for path in opts["run_files"]),
                                   read_qrels_file(opts["qrels"]), 100)
            except ImportFailed as exc:
                raise CommandError(f"cannot read the files:\n{exc.report()}") from exc
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
        else:
            report = self.stored(opts, measures)
        reuse = self.reusability(opts) if opts["leave_one_out"] is not None else None
        if opts["format"] == "json":
            text = report.as_json(opts["per_topic"])
            if reuse is not None:
                text = json.dumps({"evaluation": json.loads(text), "reusability": reuse.as_dict()}, indent=2)
            self.stdout.write(text)
        else:
            for note in report.notes:
                self.stderr.write(f"# {note}")
            for line in report.lines(opts["per_topic"]):
                self.stdout.write(line)
            if reuse is not None:
                self.stdout.write("")
                for line in reuse.lines():
                    self.stdout.write(line)

    def reusability(self, opts):
        """Leave-one-run-out over the runs and qrels just evaluated (assessments.evaluation.reusability)."""
        rankings, qrels, default_depth = self.inputs
        depth = opts["leave_one_out"] or default_depth
        if depth < 1:
            raise CommandError("--leave-one-out: the pool depth K must be at least 1")
        measure = "AP" if opts["min_rel"] == 1 else f"AP(rel={opts['min_rel']})"
        return leave_one_run_out(rankings, qrels, depth, measure)

    def stored(self, opts, measures):
        pool, topics = None, None
        if opts["pool"]:
            pool = Pool.objects.filter(name=opts["pool"]).select_related("collection").first()
            if pool is None:
                raise CommandError(f"no pool named {opts['pool']!r}")
            collection = pool.collection
            built = pool.params.get("built", {})
            ids = {*pool.runs.values_list("pk", flat=True), *built.get("runs", []), built.get("final_run")}
            runs = list(Run.objects.filter(pk__in=[i for i in ids if i]).order_by("name"))
            topics = list(pool.topics.all())
        elif opts["runs"]:
            collection = self.collection(opts)
            missing = [n for n in opts["runs"] if not matching(Run.objects.filter(collection=collection), n).exists()]
            if missing:
                raise CommandError(f"collection {collection.name!r} has no runs {', '.join(missing)}")
            try:
                runs = find_runs(opts["runs"], Run.objects.filter(collection=collection), field="--runs")
            except RunLookupError as exc:
                raise CommandError(str(exc)) from None
        else:
            raise CommandError("name --runs, a --pool, or files (--qrels FILE --run FILE…)")
        needed = any(m.name != "N-RODCG" for m in measures) or pool
        qrel_set = self.qrel_set(opts, collection, needed=needed)
        qrels = None
        if qrel_set is None and needed:
            # A book's plot topics without a qrel set: their ground-truth chunks are the qrels (MRR, Recall...).
            qrels = ground_truth_qrels(self.plot_topics(collection) if topics is None else topics)
        report = evaluate_stored(runs, qrel_set, measures, topics=topics, only_run_topics=opts["only_run_topics"],
                                 qrels=qrels)
        if opts["leave_one_out"] is not None:
            labels = run_labels(runs)
            judged = stored_qrels(qrel_set) if qrels is None else qrels
            if topics is not None:
                judged = {t: d for t, d in judged.items() if t in {x.external_id for x in topics}}
            self.inputs = ({labels[r.pk]: stored_ranking(r, topics) for r in runs}, judged,
                           pool.depth if pool is not None else 100)
        if qrels is not None:
            report.notes.append("qrels: the plot topics' ground-truth chunks, grade 1 (no qrel set in the collection)")
        if pool is not None:
            depth = opts["judged_depth"] or pool.depth
            qrels = stored_qrels(qrel_set) if qrels is None else qrels
            coverage = pool_coverage(pool, runs, qrels, depth)
            for scores in report.runs:
                judged, pooled = coverage[scores.name]
                scores.extra_all.update({f"Judged@{depth}": judged, f"InPool@{depth}": pooled})
            recall = pool_recall(pool, qrels, rel=opts["min_rel"])
            rel = f",rel={recall.rel}" if recall.rel != 1 else ""
            report.runs.append(RunScores(f"pool:{pool.name}", {}, {
                f"PoolRecall(micro{rel})": recall.micro, f"PoolRecall(macro{rel})": recall.macro,
            }))
            report.notes.append(
                f"Judged@{depth}: share of each run's top {depth} with a qrel; InPool@{depth}: share in pool "
                f"{pool.name}; PoolRecall: share of the qrels' relevant passages (grade ≥ {recall.rel}) that the pool "
                f"holds, micro over all {recall.relevant} of them ({recall.found} pooled), macro the mean over the "
                f"{recall.topics} topics with any"
            )
        return report

    def collection(self, opts):
        if opts["collection"]:
            found = Collection.objects.filter(name=opts["collection"]).first()
            if found is None:
                raise CommandError(f"no collection named {opts['collection']!r}")
            return found
        ids = set()
        for name in opts["runs"]:
            ids.update(matching(Run.objects.all(), name).values_list("collection_id", flat=True))
        if len(ids) == 1:
            return Collection.objects.get(pk=ids.pop())
        if not ids:
            raise CommandError(f"no runs named {', '.join(opts['runs'])}")
        raise CommandError("these run names exist in several collections: name one with --collection")

    @staticmethod
    def plot_topics(collection):
        """The collection's plot topics that have ground-truth chunks."""
        return Topic.objects.filter(collection=collection, kind=Topic.Kind.PLOT, ground_truth__isnull=False).distinct()

    def qrel_set(self, opts, collection, needed):
        if opts["qrel_set"]:
            found = QrelSet.objects.filter(name=opts["qrel_set"]).first()
            if found is None:
                raise CommandError(f"no qrel set named {opts['qrel_set']!r}")
            return found
        sets = list(QrelSet.objects.filter(collection=collection).order_by("name"))
        if len(sets) == 1:
            return sets[0]
        if not needed or (not sets and self.plot_topics(collection).exists()):
            return None  # N-RODCG alone, or a book's plot topics: scored against their ground truth
        if not sets:
            raise CommandError(f"collection {collection.name!r} has no qrel set (import or freeze qrels first)")
        raise CommandError(f"name the qrel set with --qrel-set (one of {', '.join(s.name for s in sets)})")
