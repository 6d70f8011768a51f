"""manage.py train_annotator (--campaign NAME | --qrels NAME --pool NAME) [--model features|minilm|ORG/MODEL]
[--folds K] [--run-blind] [--format json]: train an annotator on human labels, cross-validated by topic beside the fusion of the
pool's runs first (seed 000 step 5)."""

import json

from django.core.management.base import BaseCommand, CommandError

from assessments.machine import annotator
from assessments.machine.commands import campaign_id, number, progress_bar
from assessments.models import MachineJob
from assessments.services import machine


class Command(BaseCommand):
    help = (
        "Train an auto-annotator on human labels (at least 20, both classes): k-fold cross-validation by topic first "
        "(precision, recall, F1, ROC AUC and Cohen's κ against the humans, the mean over folds, each beside the same "
        "figure of reciprocal-rank fusion of the pool's runs, and the human–human κ of the campaign), then one model "
        "on every label, stored as a machine label source; prints its id. The default model (features) is a "
        "logistic regression on the runs' ranks and scores, BM25 and the bundled encoder's cosine: seconds on a CPU. "
        "Runs on the gpu queue with a broker (the CPU where there is no GPU), here otherwise."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", help="Learn from this campaign's judgements (majority over its assessors).")
        parser.add_argument("--qrels", metavar="NAME", help="Learn from a stored qrel set over --pool's candidates.")
        parser.add_argument("--pool", help="With --qrels: the candidates to learn from (a candidate not in the set is 0).")
        parser.add_argument("--topics", "--topic", dest="topics", nargs="+", action="extend", default=[], metavar="ID",
                            help="Only these topics' labels (external ids), e.g. the share people judged.")
        parser.add_argument("--model", default=annotator.DEFAULT_MODEL,
                            help="features (default: logistic regression on rank, BM25 and encoder features), or a "
                            "transformer to fine-tune: minilm (the bundled all-MiniLM-L6-v2), or any Hugging Face "
                            "encoder or cross-encoder by name or folder (a GPU worker's job).")
        parser.add_argument("--folds", type=int, default=5, help="k of the k-fold cross-validation (default 5).")
        parser.add_argument("--epochs", type=int, default=1, help="Fine-tuning only (as are the next three).")
        parser.add_argument("--max-length", type=int, default=256, help="Tokens of a (query, passage) pair (default 256).")
        parser.add_argument("--batch-size", type=int, default=16)
        parser.add_argument("--learning-rate", type=float, default=3e-5)
        parser.add_argument("--threshold", type=int, default=1, help="A human grade at least this is relevant (default 1).")
        parser.add_argument("--max-examples", type=int, help="Train on a sample of this many labels (a quick run).")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--run-blind", action="store_true",
                            help="The feature model reads no run's rank or score, only the text and the labelled "
                            "topics: for labels that fill qrels ranking those same runs (export_qrels --source "
                            "filled).")
        parser.add_argument("--name", help="A name for the annotator (default annotator-ID).")
        parser.add_argument("--format", choices=("text", "json"), default="text")
        parser.add_argument("--no-progress", action="store_true", help="No progress bar.")

    def handle(self, *args, **options):
        if bool(options["campaign"]) == bool(options["qrels"]):
            raise CommandError("nothing was trained: give --campaign NAME, or --qrels NAME --pool NAME")
        try:
            job = machine.train(
                campaign_id=campaign_id(options["campaign"], "nothing was trained"),
                campaign_name=options["campaign"] or "", qrels=options["qrels"], pool=options["pool"],
                topics=options["topics"], model=options["model"], folds=options["folds"], epochs=options["epochs"],
                max_length=options["max_length"], batch_size=options["batch_size"],
                learning_rate=options["learning_rate"], threshold=options["threshold"],
                max_examples=options["max_examples"], seed=options["seed"], name=options["name"] or "",
                run_blind=options["run_blind"],
            )
        except machine.MachineInvalid as exc:
            raise CommandError(f"nothing was trained: {flag(exc)}") from exc
        bar = progress_bar(self, job.items_total, "training", not options["no_progress"])
        try:
            job = machine.run(job, bar)
        finally:
            if bar is not None:
                bar.close()
        source = job.source
        source.refresh_from_db()
        if job.status != MachineJob.Status.DONE:
            raise CommandError(f"annotator {source.pk} failed: {job.error or source.error}")
        figures = annotator.figures_of(source)
        if options["format"] == "json":
            self.stdout.write(json.dumps(figures, indent=1))
            return
        self.stdout.write(report(figures))
        self.stdout.write(f"annotator {source.pk}")


def flag(exc) -> str:
    """A service error as the command line says it: the option as a flag."""
    return f"--{exc.field.replace('_', '-')}: {exc.message}" if exc.field else exc.message


def report(figures) -> str:
    """The cross-validation figures as lines of text, each beside the fusion baseline's."""
    human = figures.get("human") or {}
    names = (("precision", "precision"), ("recall", "recall"), ("F1", "f1"), ("ROC AUC", "auc"), ("κ", "kappa"))
    cpu = f", {figures['cpu_seconds']} s of CPU" if figures.get("cpu_seconds") is not None else ""
    lines = [
        f"{figures['name']} (#{figures['annotator']}): {figures['model']}, {figures['examples']:,} human labels "
        f"({figures['positives']:,} relevant) over {figures.get('topics') or '–'} topics, snapshot "
        f"{figures['snapshot'][:12]}, trained in {figures['seconds']} s{cpu}",
        f"{len(figures['folds'])}-fold cross-validation split by {figures.get('folds_by') or 'label'}, against the "
        "human labels (mean over folds):",
        f"  {'':10} {'annotator':>10} {'fusion':>10}",
        *(f"  {name:10} {number(figures[key]):>10} {number(figures.get(f'baseline_{key}')):>10}"
          for name, key in names),
        f"  (fusion: {figures.get('baseline') or 'reciprocal-rank fusion of the pool runs'}; each threshold chosen "
        "on the training folds)",
        f"  human–human κ of the same labels: {number(figures['human_kappa'])}"
        + (f" ({human['reason']})" if human.get("reason") else ""),
    ]
    for fold in figures["folds"]:
        lines.append(f"  fold {fold['fold']}: {fold['test']} held out ({fold['positives']} relevant"
                     + (f", {fold['topics']} topics" if fold.get("topics") else "") + "): "
                     f"precision {number(fold['precision'])}, recall {number(fold['recall'])}, F1 {number(fold['f1'])},"
                     f" AUC {number(fold['auc'])} (fusion {number(fold.get('baseline_auc'))}),"
                     f" κ {number(fold['kappa'])} (fusion {number(fold.get('baseline_kappa'))})")
    return "\n".join(lines)
