"""manage.py simulate_judging --qrels FILE|NAME --runs FILE|NAME… [--depth 100] [--orders …] [--min-rel 1]
[--format text|json] [--plot OUT] [--features FILE.npz] [--prior FILE|SOURCE]

Under a budget with a machine judge (issue 41): … --machine FILE|SOURCE [--budget SHARE…] [--orders hybrid lara
machine depth] [--write-qrels OUT] [--write-intervals OUT] [--seed N]"""

import argparse
import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from assessments.exporters.common import ExportFailed
from assessments.importers.machine_labels import read_labels
from assessments.evaluation.sources import (
    read_prior_file, read_qrels_file, read_run_file, stored_prior, stored_qrels, stored_ranking,
)
from assessments.models import MachineLabelSource, QrelSet, Run, Topic
from assessments.models.machine import several_sources
from assessments.ordering import LIVE_ORDERS, ORDERS, OrderError
from assessments.services.runs import RunLookupError, find_run, matching
from assessments.services.simulation import (
    BUDGET_ORDERS, BUDGET_SHARES, BUDGETS, RECALLS, TAU_MEASURES, load_features, simulate, simulate_budget,
    write_budget_intervals, write_budget_qrels,
)
from assessments.services.simulation_plot import write_plot
from retrieval.ingest import ImportFailed, Problems, progress


def share(text):
    """A budget: a share of the whole pool, above 0 and at most 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (a share of the pool, e.g. 0.05)") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share of the pool above 0 and at most 1 (e.g. 0.05)")
    return value


class Command(BaseCommand):
    help = (
        "Replay judging orders with qrels as the assessor: depth (the pool's order), mtf (Move-to-Front), maxmean "
        "(Losada et al.'s bandit) and active (continuous active learning). For each order, prints the judgements "
        "needed to find 50/80/90/95% of the relevant documents in the depth-k pool (⌈p × a topic's relevant "
        "documents in its pool⌉, summed over topics) and Kendall's τ between the runs ranked by MAP and nDCG@10 "
        "with each topic judged to 10/20/30/50% of its pool and with the whole pool judged. Runs and qrels are "
        "TREC files (gzipped or not) or the names of stored runs and qrel sets. With --prior (a score per topic and "
        "document), active starts from it as the live order does, and machine judges by it alone."
    )

    def add_arguments(self, parser):
        parser.add_argument("--qrels", required=True, metavar="FILE|NAME",
                            help="A TREC qrels file or a stored qrel set.")
        parser.add_argument("--runs", nargs="+", required=True, metavar="FILE|NAME",
                            help="TREC run files or stored runs.")
        parser.add_argument("--collection", help="Collection of the stored runs (when run names are ambiguous).")
        parser.add_argument("--depth", type=int, default=100, metavar="K", help="Pool depth (default 100).")
        parser.add_argument("--orders", nargs="+", choices=list(dict.fromkeys([*LIVE_ORDERS, *BUDGET_ORDERS])),
                            metavar="ORDER",
                            help=f"Orders to replay (default: all of {', '.join(ORDERS)}, and machine with --prior; "
                            f"with --machine: {', '.join(BUDGET_ORDERS)}).")
        parser.add_argument("--min-rel", type=int, default=1, metavar="N",
                            help="Relevant means grade ≥ N (trec_eval -l; default 1).")
        parser.add_argument("--format", choices=("text", "json"), default="text")
        parser.add_argument("--tau-measure", choices=TAU_MEASURES, default="AP",
                            help="The measure whose τ the JSON gives (the text shows both; default AP, i.e. MAP).")
        parser.add_argument(
            "--features", metavar="FILE.npz",
            help="Embeddings for the active order: arrays ids and vectors (one row per document), and optionally "
            "topics and topic_vectors (each topic's text encoded alike, the model's seed).",
        )
        parser.add_argument(
            "--prior", metavar="FILE|SOURCE",
            help="A prior score per (topic, document) for active (its start and one more feature) and machine (by "
            "the prior alone): a TREC run file's score column (gzipped or not), or a stored machine label source "
            "(id or name) whose scores are taken, the pairs it was trained on left out.",
        )
        parser.add_argument("--plot", metavar="OUT",
                            help="Draw relevant found against judgements (.svg, or .png with matplotlib).")
        parser.add_argument("--no-progress", action="store_true", help="Do not show a progress bar.")
        budget = parser.add_argument_group(
            "judging under a budget with a machine judge (issue 41)",
            "People judge a share of the whole pool (all topics together), the calibrated machine labels the rest: "
            "hybrid (calibrated uncertainty with the runs' evidence), lara (LARA, Takehi et al. SIGIR 2025), machine "
            "(its labels alone) and depth (each topic judged to the share in depth order).",
        )
        budget.add_argument(
            "--machine", metavar="FILE|SOURCE",
            help="The machine judge's labels: a file as import_machine_labels reads it (TSV topic doc p, TREC qrels "
            "of grades 0-3, JSON lines with probs) or a stored machine label source (id or name).",
        )
        budget.add_argument("--budget", type=share, nargs="+", action="extend", metavar="SHARE",
                            help="Shares of the pool people judge, e.g. 0.05 0.1 (default both; may repeat).")
        budget.add_argument("--write-qrels", metavar="OUT",
                            help="Write the final labels of the first of hybrid/lara/machine in --orders as TREC qrels "
                            "(the assessor's grade where people judged, 0/1 elsewhere). With several budgets, one file "
                            "a budget, the share before the suffix: OUT.qrels → OUT-0.05.qrels, OUT-0.1.qrels.")
        budget.add_argument("--write-intervals", metavar="OUT",
                            help="Write each run's MAP estimate with its 95%% interval (TSV: run estimate low high) "
                            "of the first of hybrid/lara in --orders. With several budgets, one file a budget, named "
                            "as --write-qrels' are.")
        budget.add_argument("--seed", type=int, default=0, help="Seed of the random sample and the draws (default 0).")

    def handle(self, *args, **opts):
        if opts["depth"] < 1:
            raise CommandError("--depth must be at least 1")
        budget_mode = opts["machine"] is not None or opts["budget"] or any(
            o in ("hybrid", "lara") for o in opts["orders"] or [])
        if budget_mode:
            return self.handle_budget(opts)
        for name in ("write_qrels", "write_intervals"):
            if opts[name]:
                raise CommandError(f"--{name.replace('_', '-')}: writes the labels of judging under a budget: give "
                                   "--machine FILE|SOURCE (and --budget)")
        if opts["plot"] and Path(opts["plot"]).suffix.lower() not in (".svg", ".png"):
            raise CommandError(f"--plot: {opts['plot']!r} must end in .svg or .png")
        started = time.perf_counter()
        try:
            qrels = self.qrels(opts["qrels"])
            runs = self.runs(opts["runs"], opts["collection"])
            features, seeds = load_features(opts["features"]) if opts["features"] else (None, None)
        except ImportFailed as exc:
            raise CommandError(f"cannot read the input:\n{exc.report()}") from exc
        except (OSError, ValueError) as exc:
            raise CommandError(f"--features: {exc}") from exc
        prior, prior_notes = self.prior(opts["prior"], opts["collection"], qrels) if opts["prior"] else (None, [])
        orders = opts["orders"] or [*ORDERS, *(["machine"] if prior is not None else [])]
        if "machine" in orders and prior is None:
            raise CommandError("--orders: machine judges by a prior score: give --prior FILE|SOURCE")
        read = time.perf_counter() - started
        try:
            result = simulate(
                qrels, runs, depth=opts["depth"], orders=list(dict.fromkeys(orders)),
                min_rel=opts["min_rel"], features=features, seeds=seeds, prior=prior,
                progress=lambda items, **kw: progress(items, enabled=not opts["no_progress"], **kw),
            )
        except OrderError as exc:
            raise CommandError(f"--features: {exc}") from exc
        result.notes[:0] = prior_notes
        if not result.topics:
            raise CommandError("no topic of the qrels was retrieved by any run: nothing to simulate")
        if opts["plot"]:
            try:
                write_plot(result, opts["plot"])
            except (OSError, RuntimeError, ExportFailed) as exc:
                raise CommandError(f"--plot: {exc}") from exc
        if opts["format"] == "json":
            self.stdout.write(json.dumps(result.as_json(opts["tau_measure"]), indent=1))
            return
        self.text(result, read)

    def handle_budget(self, opts):
        """--machine / --budget: people and a machine judge under a budget (simulation.simulate_budget)."""
        if not opts["machine"]:
            raise CommandError("--machine: judging under a budget needs the machine judge's labels (FILE|SOURCE)")
        for name in ("features", "prior", "plot"):
            if opts[name]:
                raise CommandError(f"--{name}: not used with --machine (judging under a budget)")
        orders = list(dict.fromkeys(opts["orders"] or BUDGET_ORDERS))
        other = [o for o in orders if o not in BUDGET_ORDERS]
        if other:
            raise CommandError(f"--orders: {other[0]} is not an order under a budget; use {', '.join(BUDGET_ORDERS)}")
        labelled = [o for o in orders if o in ("hybrid", "lara", "machine")]
        if opts["write_qrels"] and not labelled:
            raise CommandError("--write-qrels: needs hybrid, lara or machine in --orders")
        with_intervals = [o for o in orders if o in ("hybrid", "lara")]
        if opts["write_intervals"] and not with_intervals:
            raise CommandError("--write-intervals: needs hybrid or lara in --orders")
        for name in ("write_qrels", "write_intervals"):
            if opts[name] and not Path(opts[name]).resolve().parent.is_dir():
                raise CommandError(f"--{name.replace('_', '-')}: no folder {str(Path(opts[name]).parent)!r}")
        budgets = list(dict.fromkeys(opts["budget"] or BUDGET_SHARES))
        for b in budgets:
            if not isinstance(b, (int, float)) or not 0 < b <= 1:
                raise CommandError(f"--budget: {b!r} is not a share of the pool above 0 and at most 1 (e.g. 0.05)")
        try:
            qrels = self.qrels(opts["qrels"])
            runs = self.runs(opts["runs"], opts["collection"])
        except ImportFailed as exc:
            raise CommandError(f"cannot read the input:\n{exc.report()}") from exc
        machine, notes = self.machine(opts["machine"], opts["collection"], qrels)
        if not any(ranking.get(topic) for topic in qrels for ranking in runs.values()):
            raise CommandError("no topic of the qrels was retrieved by any run: nothing to simulate")
        result = simulate_budget(qrels, runs, machine, depth=opts["depth"], budgets=budgets, orders=orders,
                                 min_rel=opts["min_rel"], seed=opts["seed"])
        if not len(result.flat):
            raise CommandError("no topic of the qrels was retrieved by any run: nothing to simulate")
        if not result.machine_covered:
            raise CommandError("--machine: no score for any pooled candidate (do its topic and document ids match "
                               "the runs'?)")
        for b in budgets:
            try:
                if opts["write_qrels"]:
                    write_budget_qrels(result.get(labelled[0], b), result.flat,
                                       budget_path(opts["write_qrels"], b, budgets))
            except OSError as exc:
                raise CommandError(f"--write-qrels: {exc}") from exc
            try:
                if opts["write_intervals"]:
                    write_budget_intervals(result.get(with_intervals[0], b),
                                           budget_path(opts["write_intervals"], b, budgets))
            except OSError as exc:
                raise CommandError(f"--write-intervals: {exc}") from exc
        if opts["format"] == "json":
            self.stdout.write(json.dumps(result.as_json(), indent=1))
            return
        w = self.stdout.write
        flat = result.flat
        w(f"Pool: {len(flat.topics):,} topics, {len(flat):,} candidates, {result.relevant:,} relevant (grade ≥ "
          f"{result.min_rel}) at depth {result.depth} over {len(flat.runs)} runs; machine scores for "
          f"{result.machine_covered:,}, Cohen's κ {result.kappa:.3f} with the qrels")
        for measure in TAU_MEASURES:
            label = "MAP" if measure == "AP" else measure
            w(f"Kendall's τ of the runs by {label}, people judging b of the whole pool, against the whole pool judged:")
            w(f"  {'order':<9}" + "".join(f"{b:>8.1%}" for b in budgets))
            for order in orders:
                w(f"  {order:<9}" + "".join(_tau(result.get(order, b).tau[measure]) for b in budgets))
        for order in with_intervals:
            for b in budgets:
                r = result.get(order, b)
                w(f"{order} at {b:.1%}: {r.judged:,} judged; 95% intervals hold the whole-pool MAP for "
                  f"{r.coverage['AP']} of {len(flat.runs)} runs, nDCG@10 for {r.coverage['nDCG@10']}")
        for note in notes:
            w(f"Note: {note}.")

    def machine(self, given, collection, qrels) -> tuple[dict, list]:
        """({topic: {doc: score}}, notes) from a machine labels file (import_machine_labels' formats) or a stored
        machine label source."""
        path = Path(given)
        if path.is_file():
            problems = Problems(path)
            try:
                _, parsed = read_labels(path, problems)
                problems.raise_if_any()
            except ImportFailed as exc:
                raise CommandError(f"--machine: cannot read the labels file:\n{exc.report()}") from exc
            except OSError as exc:
                raise CommandError(f"--machine: {exc}") from exc
            machine = {}
            for qid, docid, score in zip(parsed.qids, parsed.docids, parsed.scores):
                machine.setdefault(qid, {})[docid] = float(score)
            return machine, []
        return self.prior(given, collection, qrels, option="--machine")

    def text(self, result, read_seconds):
        w = self.stdout.write
        w(f"Pool: {result.topics:,} topics, {result.candidates:,} candidates, {result.relevant:,} relevant "
          f"(grade ≥ {result.min_rel}) at depth {result.depth} over {len(result.runs)} runs")
        w("Judgements to find p of the relevant documents in the pool (per topic ⌈p × relevant⌉, summed):")
        header = f"  {'order':<9}" + "".join(f"{p:>8.0%}" for p in RECALLS) + "   90% vs depth"
        w(header)
        depth = result.orders.get("depth")
        for name, order in result.orders.items():
            row = f"  {name:<9}" + "".join(f"{order.judgements_to_recall[p]:>8,}" for p in RECALLS)
            if depth and depth.judgements_to_recall[0.9] and order is not depth:
                saving = 1 - order.judgements_to_recall[0.9] / depth.judgements_to_recall[0.9]
                row += f"   {saving:.1%} fewer" if saving >= 0 else f"   {-saving:.1%} more"
            w(row)
        for measure in TAU_MEASURES:
            label = "MAP" if measure == "AP" else measure
            w(f"Kendall's τ of the runs by {label}, each topic judged to b of its pool, against the whole pool:")
            w(f"  {'order':<9}" + "".join(f"{b:>8.0%}" for b in BUDGETS))
            for name, order in result.orders.items():
                w(f"  {name:<9}" + "".join(_tau(order.tau_at_budget[measure][b]) for b in BUDGETS))
        if result.prior is not None:
            w(f"Prior: scores for {result.prior['topics']} of {result.topics} topics (active starts from them and "
              "weighs them as a feature; machine judges by them alone)")
        for note in result.notes:
            w(f"Note: {note}.")
        times = ", ".join(f"{name} {order.seconds:.1f} s" for name, order in result.orders.items())
        w(f"Time: reading {read_seconds:.1f} s; {times}. Candidates the qrels do not grade count as not relevant.")

    def qrels(self, given):
        path = Path(given)
        if path.is_file():
            return read_qrels_file(path)
        found = QrelSet.objects.filter(name=given).first()
        if found is None:
            raise CommandError(f"--qrels: {given!r} is neither a file nor a stored qrel set")
        return stored_qrels(found)

    def prior(self, given, collection, qrels, option="--prior") -> tuple[dict, list]:
        """({topic: {doc: score}}, notes) from a run-format file or a stored machine label source (id or name)."""
        path = Path(given)
        if path.is_file():
            try:
                return read_prior_file(path), []
            except ImportFailed as exc:
                raise CommandError(f"--prior: cannot read the prior file:\n{exc.report()}") from exc
            except OSError as exc:
                raise CommandError(f"--prior: {exc}") from exc
        sources = MachineLabelSource.objects.all()
        if collection:
            sources = sources.filter(collection__name=collection)
        found = sources.named(given)  # digits are an id (no source is named with digits only)
        if not found:
            raise CommandError(f"{option}: {given[:100]!r} is neither a file nor a stored machine label source (id or "
                               "name)")
        if len(found) > 1:
            raise CommandError(f"{option}: {several_sources(given, found)}")
        source = found[0]
        prior, left_out = stored_prior(source)
        if not prior:
            raise CommandError(f"{option}: machine label source {source.pk} ({source.name}) has no scores on passages")
        notes = []
        if left_out:
            notes.append(f"prior: {left_out:,} scores of source {source.pk} ({source.name}) on pairs it was trained "
                         "on are left out (they learnt the human label)")
        trained = {t for t, _, _ in (source.training or {}).get("keys", [])}
        if trained:
            names = set(Topic.objects.filter(pk__in=trained).values_list("external_id", flat=True))
            overlap = sorted(names & set(qrels))
            if overlap:
                notes.append(f"prior: source {source.pk} ({source.name}) was trained on human labels of "
                             f"{len(overlap)} of these topics; its other scores there are not held out by topic")
        return prior, notes

    def runs(self, given, collection):
        runs = {}
        for item in given:
            path = Path(item)
            if path.is_file():
                name, ranking = read_run_file(path)
            else:
                stored = Run.objects.filter(collection__name=collection) if collection else Run.objects.all()
                if not matching(stored, item).exists():
                    raise CommandError(f"--runs: {item!r} is neither a file nor a stored run")
                try:
                    run = find_run(item, stored, field="--runs")
                except RunLookupError as exc:
                    raise CommandError(f"{exc} (or name the collection with --collection)") from None
                name, ranking = item, stored_ranking(run)
            if name in runs:
                name = f"{name}:{path.name if path.is_file() else item}"
            if name in runs:
                raise CommandError(f"--runs: {item!r} is given twice")
            runs[name] = ranking
        return runs


def budget_path(given, budget, budgets) -> Path:
    """The file of one budget's output: `given` itself with one budget; with several, the share before the
    suffix (out.qrels → out-0.05.qrels), so no budget's file replaces another's."""
    path = Path(given)
    if len(budgets) == 1:
        return path
    return path.with_name(f"{path.stem}-{budget:g}{path.suffix}")


def _tau(value):
    return f"{'n/a':>8}" if value is None or value != value else f"{value:>8.3f}"
