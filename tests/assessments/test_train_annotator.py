"""train_annotator and machine_label: an annotator (the feature model by default, a text-pair classifier fine-tuned
by name) trained on CPU on a campaign's human labels, cross-validated by topic beside the fusion baseline before it
labels anything, then labelling the unjudged candidates in resumable batches. The human qrels are byte for byte the
same before and after."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from assessments.machine import annotator
from assessments.models import MachineJob, MachineLabel, MachineLabelSource, Pool, PoolCandidate, Qrel, QrelSet
from retrieval.classifier import checksum
from tests.assessments.machine_setup import campaign, model_dir, tiny  # noqa: F401 — four topics, two runs, two assessors

pytestmark = pytest.mark.django_db


def train(*args):
    out = StringIO()
    call_command("train_annotator", *args, "--no-progress", stdout=out, stderr=StringIO())
    return out.getvalue()


def qrels(*args):
    out = StringIO()
    call_command("export_qrels", "--collection", "aero", *args, stdout=out)
    return out.getvalue()


def test_it_cross_validates_on_the_campaigns_labels_stores_the_annotator_and_prints_the_figures(campaign, tiny):
    human_before = qrels("--campaign", "aero-judging")

    figures = json.loads(train("--campaign", "aero-judging", "--model", tiny, "--folds", "3", "--epochs", "1",
                               "--max-length", "24", "--format", "json"))

    assert set(figures) >= {"precision", "recall", "f1", "auc", "kappa", "folds", "annotator", "human_kappa"}
    assert len(figures["folds"]) == 3 and sum(f["test"] for f in figures["folds"]) == 32
    for name in ("precision", "recall", "f1", "auc", "kappa"):
        values = [f[name] for f in figures["folds"] if f[name] is not None]
        assert figures[name] == (pytest.approx(sum(values) / len(values)) if values else None)
    assert figures["auc"] is not None and 0 <= figures["auc"] <= 1
    assert figures["human_kappa"] == pytest.approx(3 / 4)  # agree on 28 of 32, chance 1/2: (28/32 - 1/2) / (1/2)
    source = MachineLabelSource.objects.get(pk=figures["annotator"])
    assert source.status == "ready" and source.kind == "classifier" and source.campaign_id == campaign.pk
    assert source.training["examples"] == 32 and source.training["positives"] == 16
    assert len(source.training["id"]) == 64 and source.checksum == checksum(Path(source.artifact))
    assert source.settings["max_length"] == 24 and source.settings["folds"] == 3 and "transformers" in source.model_version
    job = source.jobs.get()
    assert job.kind == "train" and job.status == "done" and job.items_done == job.items_total > 0
    assert MachineLabel.objects.count() == 0  # training labels nothing
    assert qrels("--campaign", "aero-judging") == human_before


def test_the_text_report_ends_with_the_annotators_id(campaign, tiny):
    out = train("--campaign", "aero-judging", "--model", tiny, "--folds", "2", "--max-length", "16")
    source = MachineLabelSource.objects.get()
    assert out.splitlines()[-1] == f"annotator {source.pk}"
    assert "2-fold cross-validation split by topic, against the human labels" in out and "human–human κ" in out


def test_the_same_labels_give_the_same_snapshot(campaign, tiny):
    for _ in range(2):
        train("--campaign", "aero-judging", "--model", tiny, "--folds", "2", "--max-length", "16")
    first, second = MachineLabelSource.objects.order_by("pk")
    assert first.training["id"] == second.training["id"] and first.pk != second.pk


def test_it_labels_the_unjudged_candidates_and_a_second_run_labels_nothing_twice(campaign, tiny):
    human_before = qrels("--campaign", "aero-judging")
    train("--campaign", "aero-judging", "--model", tiny, "--folds", "2", "--max-length", "16")
    source = MachineLabelSource.objects.get()

    out = StringIO()
    call_command("machine_label", "--annotator", str(source.pk), "--pool", "aero-pool", "--no-progress", stdout=out,
                 stderr=StringIO())

    labels = MachineLabel.objects.filter(source=source)
    assert "8 candidates labelled" in out.getvalue()
    assert sorted(labels.values_list("passage__external_id", flat=True)) == sorted(
        f"{t}-d{r}" for t in "1234" for r in (9, 10))
    assert all(l.grade in (0, 1) and 0 <= l.score <= 1 and not l.in_training for l in labels)
    call_command("machine_label", "--annotator", str(source.pk), "--pool", "aero-pool", "--no-progress",
                 stdout=StringIO(), stderr=StringIO())
    assert MachineLabel.objects.filter(source=source).count() == 8
    assert qrels("--campaign", "aero-judging") == human_before
    filled = qrels("--campaign", "aero-judging", "--source", "filled")
    assert filled.count("\n") == 40 and human_before in "".join(
        line + "\n" for line in filled.splitlines() if not line.split()[2].endswith(("-d9", "-d10")))


def test_a_labelling_stopped_half_way_goes_on_where_it_stopped(campaign, tiny, monkeypatch):
    train("--campaign", "aero-judging", "--model", tiny, "--folds", "2", "--max-length", "16")
    source = MachineLabelSource.objects.get()
    from retrieval.classifier import TextPairClassifier

    real, calls = TextPairClassifier.predict, []

    def dies_on_the_second_batch(self, pairs, **kwargs):
        calls.append(len(pairs))
        if len(calls) == 2:
            raise RuntimeError("worker lost")
        return real(self, pairs, **kwargs)

    monkeypatch.setattr(TextPairClassifier, "predict", dies_on_the_second_batch)
    with pytest.raises(CommandError, match="worker lost"):
        call_command("machine_label", "--annotator", str(source.pk), "--pool", "aero-pool", "--batch-size", "4",
                     "--no-progress", stdout=StringIO(), stderr=StringIO())
    first = {l.pk: l.created_at for l in MachineLabel.objects.filter(source=source)}
    assert len(first) == 4 and MachineJob.objects.filter(kind="label").get().status == "failed"

    monkeypatch.setattr(TextPairClassifier, "predict", real)
    call_command("machine_label", "--annotator", str(source.pk), "--pool", "aero-pool", "--batch-size", "4",
                 "--no-progress", stdout=StringIO(), stderr=StringIO())
    after = {l.pk: l.created_at for l in MachineLabel.objects.filter(source=source)}
    assert len(after) == 8 and all(after[pk] == when for pk, when in first.items())
    assert MachineJob.objects.filter(kind="label").order_by("pk").last().items_done == 4


def test_include_judged_labels_the_training_pairs_too_and_flags_them(campaign, tiny):
    train("--campaign", "aero-judging", "--model", tiny, "--folds", "2", "--max-length", "16")
    source = MachineLabelSource.objects.get()
    call_command("machine_label", "--annotator", str(source.pk), "--pool", "aero-pool", "--include-judged",
                 "--no-progress", stdout=StringIO(), stderr=StringIO())
    assert source.labels.count() == 40 and source.labels.filter(in_training=True).count() == 32


def test_it_trains_on_a_qrel_set_over_a_pools_candidates_of_the_chosen_topics(campaign, tiny):
    coll = Pool.objects.get(name="aero-pool").collection
    qrel_set = QrelSet.objects.create(name="aero-truth", collection=coll)
    for candidate in PoolCandidate.objects.filter(topic__external_id__in=["1", "2"], rank__in=[1, 3, 5, 7]):
        Qrel.objects.create(qrel_set=qrel_set, topic=candidate.topic, passage=candidate.passage, grade=1)

    figures = json.loads(train("--qrels", "aero-truth", "--pool", "aero-pool", "--topics", "1", "2", "--model", tiny,
                               "--folds", "2", "--max-length", "16", "--format", "json"))

    source = MachineLabelSource.objects.get(pk=figures["annotator"])
    assert source.training["examples"] == 20 and source.training["positives"] == 8  # unlisted candidates are 0
    assert source.training["from"] == "qrels" and source.campaign_id is None
    assert figures["human_kappa"] is None and "qrel set" in figures["human"]["reason"]


@pytest.mark.long
def test_the_bundled_minilm_fine_tunes_on_cpu_on_a_small_slice(campaign):
    figures = json.loads(train("--campaign", "aero-judging", "--model", "minilm", "--max-examples", "20", "--folds",
                               "2", "--max-length", "16", "--batch-size", "8", "--format", "json"))
    source = MachineLabelSource.objects.get(pk=figures["annotator"])
    assert source.model == "minilm" and source.training["examples"] == 20 and source.training["sampled_from"] == 32
    assert (Path(source.artifact) / "encoder" / "model.safetensors").exists()
    assert figures["folds"][0]["test"] + figures["folds"][1]["test"] == 20


@pytest.mark.parametrize("args, message", [
    (["--campaign", "aero-judging", "--qrels", "x"], "give --campaign NAME, or --qrels NAME --pool NAME"),
    (["--campaign", "nope"], "--campaign: no campaign named 'nope'"),
    (["--campaign", "aero-judging", "--folds", "1"], "--folds: cross-validation needs at least 2 folds"),
    (["--campaign", "aero-judging", "--threshold", "3"], "--campaign: all 32 human labels are non-relevant"),
    (["--campaign", "aero-judging", "--topics", "1", "2"], "--campaign: only 16 human labels: an annotator needs at least 20"),
    (["--campaign", "aero-judging", "--folds", "5"], "--folds: 5 folds split by topic need at least 5 topics"),
    (["--qrels", "nope", "--pool", "aero-pool"], "--qrels: no qrel set named 'nope'"),
])
def test_it_refuses_what_it_cannot_learn_from(campaign, args, message):
    with pytest.raises(CommandError, match=message):
        train(*args)
    assert not MachineLabelSource.objects.exists()


def test_stratified_folds_put_both_classes_in_every_fold():
    folds = annotator.stratified_folds([1, 0, 0, 1, 0, 0, 0, 1, 0], 3, seed=1)
    assert sorted(i for f in folds for i in f) == list(range(9))
    assert all(sum(1 for i in f if i in (0, 3, 7)) == 1 for f in folds)


def test_the_default_feature_model_reports_each_figure_beside_the_fusion_baseline(campaign):
    figures = json.loads(train("--campaign", "aero-judging", "--folds", "2", "--format", "json"))

    keys = {"precision", "recall", "f1", "auc", "kappa", "baseline_auc", "baseline_kappa"}
    assert keys <= set(figures) and all(figures[k] is not None for k in ("auc", "baseline_auc", "baseline_kappa"))
    assert figures["folds_by"] == "topic" and all(keys <= set(fold) for fold in figures["folds"])
    source = MachineLabelSource.objects.get(pk=figures["annotator"])
    assert source.model == "features" and "scikit-learn" in source.model_version
    assert source.checksum and len(source.checksum) == 64
    assert source.metrics["runs"] == ["dense", "lexical"]
    text = train("--campaign", "aero-judging", "--folds", "2")
    assert "annotator     fusion" in text and "ROC AUC" in text


def test_cross_validation_never_puts_a_topic_in_a_training_and_a_test_fold(campaign, monkeypatch):
    from assessments.machine import model

    seen = []
    real = model.topic_folds

    def recording(labels, groups, k, seed=0):
        parts = real(labels, groups, k, seed)
        seen.append((list(groups), parts))
        return parts

    monkeypatch.setattr(model, "topic_folds", recording)
    train("--campaign", "aero-judging", "--folds", "3", "--format", "json")
    groups, parts = seen[0]
    assert len(parts) == 3 and sorted(i for part in parts for i in part) == list(range(32))
    topics = [{groups[i] for i in part} for part in parts]
    for a in range(3):
        for b in range(a + 1, 3):
            assert not topics[a] & topics[b], "a topic is in two folds"


def test_topic_folds_split_by_topic_and_refuse_fewer_topics_than_folds():
    from assessments.machine import model

    labels = [1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0, 1]
    groups = [7, 7, 7, 8, 8, 8, 9, 9, 9, 5, 5, 5]
    parts = model.topic_folds(labels, groups, 3, seed=2)
    owner = {}
    for number, part in enumerate(parts):
        for i in part:
            assert owner.setdefault(groups[i], number) == number
    with pytest.raises(model.ModelInvalid, match="folds: 5 folds split by topic need at least 5 topics"):
        model.topic_folds(labels, groups, 5)


def test_the_feature_model_labels_the_unjudged_candidates(campaign):
    human_before = qrels("--campaign", "aero-judging")
    figures = json.loads(train("--campaign", "aero-judging", "--folds", "2", "--format", "json"))
    call_command("machine_label", "--annotator", str(figures["annotator"]), "--pool", "aero-pool", "--no-progress",
                 stdout=StringIO(), stderr=StringIO())
    labels = MachineLabel.objects.filter(source_id=figures["annotator"])
    assert labels.count() == 8 and all(0 <= l.score <= 1 and l.grade in (0, 1) for l in labels)
    assert qrels("--campaign", "aero-judging") == human_before


def test_the_feature_model_keeps_its_neighbour_topics_and_an_older_saved_model_still_labels(campaign):
    from assessments.machine import features, model

    figures = json.loads(train("--campaign", "aero-judging", "--folds", "2", "--format", "json"))
    source = MachineLabelSource.objects.get(pk=figures["annotator"])
    meta = json.loads((Path(source.artifact) / annotator.META_FILE).read_text())
    assert meta["features"][-3:] == model.NEIGHBOUR_NAMES and "cluster" in meta["features"]
    saved, runs, columns = annotator.load_features_model(source.artifact)
    assert saved.neighbours is not None and len(saved.neighbours.topics) == 4  # every labelled topic has a relevant
    assert model.NEIGHBOUR_NAMES[0] not in columns

    # a model saved before the cluster and neighbour features: fourteen columns, no neighbours; it labels with those
    old_names = [name for name in model.feature_names(runs) if name not in ("cluster", "agreement")]
    pairs = [(t, p) for t, p, _ in source.training["keys"]]
    labels = [label for _, _, label in source.training["keys"]]
    known = features.pair_features(pairs, source.settings["pools"], source.collection, runs=runs)
    old = model.RelevanceModel().fit(known.matrix(old_names), labels, tune_threshold=False)
    data, checksum_ = old.dumps()
    (Path(source.artifact) / annotator.MODEL_FILE).write_bytes(data)
    (Path(source.artifact) / annotator.META_FILE).write_text(json.dumps({"runs": runs, "features": old_names}))
    call_command("machine_label", "--annotator", str(source.pk), "--pool", "aero-pool", "--no-progress",
                 stdout=StringIO(), stderr=StringIO())
    assert MachineLabel.objects.filter(source=source).count() == 8


def label_scores(source_id):
    MachineLabel.objects.filter(source_id=source_id).delete()
    call_command("machine_label", "--annotator", str(source_id), "--pool", "aero-pool", "--no-progress",
                 stdout=StringIO(), stderr=StringIO())
    return dict(((l.topic_id, l.passage_id), l.score) for l in MachineLabel.objects.filter(source_id=source_id))


def test_a_run_blind_annotator_reads_no_run_so_reordering_the_runs_leaves_its_labels_as_they_were(campaign):
    from assessments.machine import model
    from assessments.models import CandidateSource

    blind = json.loads(train("--campaign", "aero-judging", "--folds", "2", "--run-blind", "--format", "json"))
    default = json.loads(train("--campaign", "aero-judging", "--folds", "2", "--format", "json"))
    source = MachineLabelSource.objects.get(pk=blind["annotator"])
    assert source.settings["run_blind"] is True
    assert "run_blind" not in MachineLabelSource.objects.get(pk=default["annotator"]).settings
    meta = json.loads((Path(source.artifact) / annotator.META_FILE).read_text())
    assert meta["features"] == model.run_blind_names(meta["runs"]) + model.NEIGHBOUR_NAMES
    assert not [n for n in meta["features"] if n.startswith(("rank:", "score:")) or n in ("share", "rrf")]
    before = {pk: label_scores(pk) for pk in (blind["annotator"], default["annotator"])}
    assert len(before[blind["annotator"]]) == 8

    for entry in CandidateSource.objects.filter(run__name="lexical"):  # the lexical run now ranks the other way
        entry.rank = 11 - entry.rank
        entry.score = 20.0 - entry.rank
        entry.save(update_fields=["rank", "score"])

    after = {pk: label_scores(pk) for pk in before}
    assert after[blind["annotator"]] == pytest.approx(before[blind["annotator"]], abs=1e-12)
    assert after[default["annotator"]] != pytest.approx(before[default["annotator"]], abs=1e-6)  # it reads the runs


def test_run_blind_is_refused_for_a_fine_tuned_model_which_reads_no_run_anyway(campaign, tiny):
    with pytest.raises(CommandError, match="--run-blind: only the feature model reads the runs"):
        train("--campaign", "aero-judging", "--model", tiny, "--run-blind")
    assert not MachineLabelSource.objects.exists()
