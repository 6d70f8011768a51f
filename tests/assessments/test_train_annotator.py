"""train_annotator and machine_label: a text-pair classifier trained on CPU on a small slice of a campaign's human
labels, cross-validated before it labels anything, then labelling the unjudged candidates in resumable batches.
The human qrels are byte for byte the same before and after."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Campaign
from assessments.machine import annotator
from assessments.models import Layer, MachineJob, MachineLabel, MachineLabelSource, Pool, PoolCandidate, Qrel, QrelSet, Topic
from assessments.services.judging import record_judgement
from retrieval.classifier import checksum
from tests import factories
from tests.retrieval.tiny_models import tiny_bert

pytestmark = pytest.mark.django_db

RELEVANT = "the wing flutter of the model at supersonic speed was measured in the tunnel"
OTHER = "heat transfer in the laminar boundary layer of a flat plate with suction"
QUERIES = ["wing flutter at supersonic speed", "flutter of a wing in the tunnel", "supersonic wing flutter model"]


@pytest.fixture(autouse=True)
def model_dir(settings, tmp_path):
    settings.MACHINE_MODEL_DIR = tmp_path / "annotators"
    return settings.MACHINE_MODEL_DIR


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny BERT (2 layers, 32 units) built from a config: a base model that trains in a second."""
    return tiny_bert(tmp_path_factory.mktemp("tiny") / "bert")


@pytest.fixture
def campaign():
    """Three ad hoc topics of eight candidates each in a pool; alice and bob grade the first six of each (the same
    items, so their κ exists), the last two are nobody's: what the annotator labels."""
    coll = factories.collection("aero")
    camp = Campaign.objects.create(name="aero-judging", task=Campaign.Task.ADHOC)
    alice, bob = factories.user("alice"), factories.user("bob")
    topics = [factories.topic(coll, str(n), kind=Topic.Kind.ADHOC, text=q) for n, q in enumerate(QUERIES, start=1)]
    pool = Pool.objects.create(name="aero-pool", collection=coll, status=Pool.Status.READY)
    pool.topics.set(topics)
    for topic in topics:
        for rank in range(1, 9):
            relevant = rank % 2 == 1
            doc = factories.passage(coll, f"{topic.external_id}-d{rank}", text=f"{RELEVANT if relevant else OTHER} {rank}")
            PoolCandidate.objects.create(pool=pool, topic=topic, passage=doc, rank=rank)
            if rank <= 6:
                for who in (alice, bob):
                    grade = 2 if relevant else 0
                    if who is bob and rank == 5:
                        grade = 0  # one disagreement a topic (the majority of a tie is the higher grade)
                    record_judgement(assessor=who, layer=Layer.PLOT_GRADE, value=grade, topic=topic, passage=doc,
                                     campaign_id=camp.pk)
    return camp


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
    assert len(figures["folds"]) == 3 and sum(f["test"] for f in figures["folds"]) == 18
    for name in ("precision", "recall", "f1", "auc", "kappa"):
        values = [f[name] for f in figures["folds"] if f[name] is not None]
        assert figures[name] == (pytest.approx(sum(values) / len(values)) if values else None)
    assert figures["auc"] is not None and 0 <= figures["auc"] <= 1
    assert figures["human_kappa"] == pytest.approx(2 / 3)  # agree on 15 of 18, chance 1/2: (15/18 - 1/2) / (1/2)
    source = MachineLabelSource.objects.get(pk=figures["annotator"])
    assert source.status == "ready" and source.kind == "classifier" and source.campaign_id == campaign.pk
    assert source.training["examples"] == 18 and source.training["positives"] == 9
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
    assert "2-fold cross-validation against the human labels" in out and "human–human κ" in out


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
    assert "6 candidates labelled" in out.getvalue()
    assert sorted(labels.values_list("passage__external_id", flat=True)) == sorted(
        f"{t}-d{r}" for t in "123" for r in (7, 8))
    assert all(l.grade in (0, 1) and 0 <= l.score <= 1 and not l.in_training for l in labels)
    call_command("machine_label", "--annotator", str(source.pk), "--pool", "aero-pool", "--no-progress",
                 stdout=StringIO(), stderr=StringIO())
    assert MachineLabel.objects.filter(source=source).count() == 6
    assert qrels("--campaign", "aero-judging") == human_before
    filled = qrels("--campaign", "aero-judging", "--source", "filled")
    assert filled.count("\n") == 24 and human_before in "".join(
        line + "\n" for line in filled.splitlines() if not line.split()[2].endswith(("-d7", "-d8")))


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
    assert len(after) == 6 and all(after[pk] == when for pk, when in first.items())
    assert MachineJob.objects.filter(kind="label").order_by("pk").last().items_done == 2


def test_include_judged_labels_the_training_pairs_too_and_flags_them(campaign, tiny):
    train("--campaign", "aero-judging", "--model", tiny, "--folds", "2", "--max-length", "16")
    source = MachineLabelSource.objects.get()
    call_command("machine_label", "--annotator", str(source.pk), "--pool", "aero-pool", "--include-judged",
                 "--no-progress", stdout=StringIO(), stderr=StringIO())
    assert source.labels.count() == 24 and source.labels.filter(in_training=True).count() == 18


def test_it_trains_on_a_qrel_set_over_a_pools_candidates_of_the_chosen_topics(campaign, tiny):
    coll = Pool.objects.get(name="aero-pool").collection
    qrel_set = QrelSet.objects.create(name="aero-truth", collection=coll)
    for candidate in PoolCandidate.objects.filter(topic__external_id__in=["1", "2"], rank__in=[1, 3, 5, 7]):
        Qrel.objects.create(qrel_set=qrel_set, topic=candidate.topic, passage=candidate.passage, grade=1)

    figures = json.loads(train("--qrels", "aero-truth", "--pool", "aero-pool", "--topics", "1", "2", "--model", tiny,
                               "--folds", "2", "--max-length", "16", "--format", "json"))

    source = MachineLabelSource.objects.get(pk=figures["annotator"])
    assert source.training["examples"] == 16 and source.training["positives"] == 8  # unlisted candidates are 0
    assert source.training["from"] == "qrels" and source.campaign_id is None
    assert figures["human_kappa"] is None and "qrel set" in figures["human"]["reason"]


def test_the_bundled_minilm_fine_tunes_on_cpu_on_a_small_slice(campaign):
    figures = json.loads(train("--campaign", "aero-judging", "--max-examples", "8", "--folds", "2",
                               "--max-length", "16", "--batch-size", "4", "--format", "json"))
    source = MachineLabelSource.objects.get(pk=figures["annotator"])
    assert source.model == "minilm" and source.training["examples"] == 8 and source.training["sampled_from"] == 18
    assert (Path(source.artifact) / "encoder" / "model.safetensors").exists()
    assert figures["folds"][0]["test"] + figures["folds"][1]["test"] == 8


@pytest.mark.parametrize("args, message", [
    (["--campaign", "aero-judging", "--qrels", "x"], "give --campaign NAME, or --qrels NAME --pool NAME"),
    (["--campaign", "nope"], "--campaign: no campaign named 'nope'"),
    (["--campaign", "aero-judging", "--folds", "1"], "--folds: cross-validation needs at least 2 folds"),
    (["--campaign", "aero-judging", "--threshold", "3"], "0 relevant and 18 non-relevant labels"),
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
