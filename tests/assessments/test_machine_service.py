"""assessments.services.machine and the machine comparison's reading helpers: the checks every caller shares, and
which runs a pool's ranking uses."""

import pytest

from assessments.machine import compare
from assessments.models import CandidateSource, Pool, PoolCandidate, Topic
from assessments.services import machine
from tests import factories

pytestmark = pytest.mark.django_db


def test_a_pools_runs_include_the_retriever_runs_that_brought_its_candidates():
    coll = factories.collection("runs-of-pools")
    topic = factories.topic(coll, "1", kind=Topic.Kind.ADHOC, text="q")
    doc = factories.passage(coll, "d1")
    listed = factories.run(coll, "listed", {topic: [doc]})
    retriever = factories.run(coll, "bm25", {topic: [doc]})
    factories.run(coll, "elsewhere", {topic: [doc]})
    pool = Pool.objects.create(name="p", collection=coll, status=Pool.Status.READY)
    pool.runs.set([listed])
    candidate = PoolCandidate.objects.create(pool=pool, topic=topic, passage=doc, rank=1)
    CandidateSource.objects.create(candidate=candidate, run=retriever, rank=1)
    assert compare.pool_run_ids([pool.pk]) == {listed.pk, retriever.pk}


@pytest.mark.parametrize("name, ok", [
    ("minilm", True), ("sentence-transformers/all-MiniLM-L6-v2", True), ("bert-base-uncased", False),
    ("/nowhere/at/all", False), ("two words", False), ("a/b/c", False), ("", True),
])
def test_the_base_model_is_the_bundled_one_a_listed_hub_name_or_a_folder_holding_a_model(name, ok, tmp_path,
                                                                                         settings):
    settings.MODEL_ALLOW_LIST = ["sentence-transformers/all-MiniLM-L6-v2"]  # bert-base-uncased is not listed
    if ok:
        assert machine.check_model(name)
    else:
        with pytest.raises(machine.MachineInvalid) as caught:
            machine.check_model(name)
        assert caught.value.field == "model"
    folder = tmp_path / "model"
    folder.mkdir()
    with pytest.raises(machine.MachineInvalid, match="no config.json"):
        machine.check_model(str(folder))
    (folder / "config.json").write_text("{}")
    assert machine.check_model(str(folder)) == str(folder)


@pytest.mark.parametrize("kwargs, field", [
    ({"folds": 1}, "folds"), ({"folds": 21}, "folds"), ({"epochs": 0}, "epochs"), ({"max_length": 4}, "max_length"),
    ({"learning_rate": float("inf")}, "learning_rate"), ({"learning_rate": 0}, "learning_rate"),
    ({"max_examples": 1}, "max_examples"), ({"campaign_id": None}, "campaign"), ({"run_blind": "yes"}, "run_blind"),
])
def test_training_options_out_of_bounds_are_refused_before_anything_is_stored(kwargs, field):
    with pytest.raises(machine.MachineInvalid) as caught:
        machine.train(**{"campaign_id": 1, **kwargs})
    assert caught.value.field == field


def test_a_campaign_prompt_needs_its_fields():
    assert machine.check_prompt("{query} {passage} ##final score: N") == "{query} {passage} ##final score: N"
    with pytest.raises(machine.MachineInvalid, match="no {passage}"):
        machine.check_prompt("{query}")
    assert machine.check_prompt("{query} ##plot: yes|no", filter_queries=True)
    with pytest.raises(machine.MachineInvalid) as caught:
        machine.check_prompt("  ")
    assert caught.value.field == "llm_prompt"
    for key in machine.PROMPTS:  # every default passes its own check
        assert machine.check_prompt(machine.default_prompt(key=key), key=key) == machine.default_prompt(key=key)
    with pytest.raises(machine.MachineInvalid) as caught:
        machine.check_prompt("{query} {context} {count}", key="llm_nugget_suggest_prompt")
    assert caught.value.field == "llm_nugget_suggest_prompt" and "{count}, which nothing fills" in caught.value.message
    with pytest.raises(machine.MachineInvalid) as caught:
        machine.check_prompt("{query}", key="llm_nope")
    assert caught.value.field == "which"
