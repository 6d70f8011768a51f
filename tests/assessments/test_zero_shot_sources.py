"""Zero-shot machine sources (issue 28, item 3): fusion of the pool's runs and encoder similarity label a pool with no
human label at all, as a machine source of their own (kind zero_shot), never in the human qrels; and the stored
vectors they read are refused, with the file's name, when their dimension is wrong."""

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotation.models import Campaign
from assessments.models import Judgement, MachineLabel, MachineLabelSource, Pool
from retrieval import specs
from retrieval.services import index_for, scoring
from tests import factories
from tests.assessments.machine_setup import campaign, model_dir  # noqa: F401 — four topics, two runs
from tests.assessments.test_train_annotator import qrels

pytestmark = pytest.mark.django_db


def label(*args):
    out = StringIO()
    call_command("machine_label", *args, "--no-progress", stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.mark.parametrize("method", ["fusion", "encoder"])
def test_a_zero_shot_source_labels_a_pool_without_any_human_label(campaign, method):  # noqa: F811
    fresh = factories.campaign("fresh", Campaign.Task.ADHOC, pools=[Pool.objects.get(name="aero-pool")])  # unjudged
    human_before = qrels("--campaign", "fresh")

    out = label("--zero-shot", method, "--pool", "aero-pool", "--campaign", "fresh")

    source = MachineLabelSource.objects.get()
    assert source.kind == "zero_shot" and source.model == method and source.campaign_id == fresh.pk
    assert source.training == {} and f"40 candidates labelled by {method}-{source.pk}" in out
    labels = MachineLabel.objects.filter(source=source)
    assert labels.count() == 40 and all(l.score is not None and l.grade in (0, 1) for l in labels)
    assert all(labels.filter(topic__external_id=t, grade=1).count() == 2 for t in "1234")  # the top 20% of ten
    assert qrels("--campaign", "fresh") == human_before == ""  # never in the human qrels
    assert not Judgement.objects.filter(campaign_id=fresh.pk).exists()
    machine = qrels("--source", "machine", "--machine-source", str(source.pk))
    assert machine.count("\n") == 40  # asked for by name, they are there


def test_fusion_scores_follow_the_runs_and_encoder_scores_the_text(campaign):  # noqa: F811
    label("--zero-shot", "fusion", "--pool", "aero-pool")
    label("--zero-shot", "encoder", "--pool", "aero-pool")
    fusion, encoder = MachineLabelSource.objects.order_by("pk")
    # the two runs rank d1…d10 and d10…d1: the fused score is symmetric about the middle
    first = MachineLabel.objects.get(source=fusion, topic__external_id="1", passage__external_id="1-d1").score
    last = MachineLabel.objects.get(source=fusion, topic__external_id="1", passage__external_id="1-d10").score
    assert first == pytest.approx(last)
    relevant = MachineLabel.objects.filter(source=encoder, topic__external_id="1", passage__external_id__in=[
        "1-d1", "1-d3", "1-d5"]).values_list("score", flat=True)
    other = MachineLabel.objects.filter(source=encoder, topic__external_id="1", passage__external_id__in=[
        "1-d2", "1-d4", "1-d6"]).values_list("score", flat=True)
    assert min(relevant) > max(other)  # flutter passages are nearer the flutter query


def test_a_zero_shot_source_is_refused_an_unknown_method_or_pool(campaign):  # noqa: F811
    with pytest.raises(CommandError, match="invalid choice"):
        label("--zero-shot", "magic", "--pool", "aero-pool")
    with pytest.raises(CommandError, match="--pool: no pool named 'nope'"):
        label("--zero-shot", "fusion", "--pool", "nope")
    with pytest.raises(CommandError, match="give --annotator ID, or --zero-shot"):
        label("--pool", "aero-pool")
    assert not MachineLabelSource.objects.exists()


def test_a_vectors_file_of_the_wrong_dimension_is_refused_with_its_name(campaign):  # noqa: F811
    collection = Pool.objects.get(name="aero-pool").collection
    ids = list(collection.passages.order_by("pk").values_list("pk", flat=True)[:3])
    assert scoring.passage_vectors(collection, ids).shape == (3, 384)  # built here, stored once
    index = index_for(collection, specs.parse("dense"))
    manifest = json.loads((index.path / "manifest.json").read_text())
    vectors_file = index.path / manifest["shards"][0][0]
    np.save(vectors_file, np.zeros((manifest["count"], 12), dtype=np.float32))

    with pytest.raises(scoring.VectorsInvalid, match=str(vectors_file)):
        scoring.passage_vectors(collection, ids)
    with pytest.raises(CommandError, match=str(vectors_file.name)):
        label("--zero-shot", "encoder", "--pool", "aero-pool")
