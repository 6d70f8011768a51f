"""A machine label source's name is never read as its id, nor its id as a name: a new source may not be named with
ASCII digits only (MachineLabelSource.name_problem), so the digits a person gives to --source, --machine-source,
--prior or ?source= are an id; a source named so before that rule makes such digits name two sources, which every
lookup (MachineLabelSource.objects.named) refuses, naming both ids, rather than pick one."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.services.errors import ServiceError
from annotation.services.nuggets import scores
from assessments.models import MachineLabelSource
from assessments.services import machine
from tests import factories
from tests.annotation.nuggets_setup import RUNS, nuggets_world
from tests.assessments.machine_setup import campaign, model_dir  # noqa: F401 — four topics, two runs
from tests.assessments.test_train_annotator import qrels
from tests.assessments.test_zero_shot_sources import label

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("name", ["42", " 7 ", "0", "9" * 30])
def test_a_new_source_may_not_be_named_with_digits_only(campaign, name):  # noqa: F811
    with pytest.raises(CommandError, match="--name: a name of digits only would be read as a source's id"):
        label("--zero-shot", "fusion", "--pool", "aero-pool", "--name", name)
    with pytest.raises(machine.MachineInvalid) as refused:
        machine.train(campaign_id=campaign.pk, model="features", name=name)
    assert refused.value.field == "name"
    assert not MachineLabelSource.objects.exists()


def test_a_name_with_a_letter_or_other_digits_is_a_name(campaign):  # noqa: F811
    label("--zero-shot", "fusion", "--pool", "aero-pool", "--name", "7b")
    label("--zero-shot", "encoder", "--pool", "aero-pool", "--name", "٧")  # not ASCII: no id is spelt so
    assert sorted(MachineLabelSource.objects.values_list("name", flat=True)) == ["7b", "٧"]
    assert qrels("--source", "machine", "--machine-source", "٧").count("\n") == 40


def test_digits_that_are_one_sources_id_and_an_older_sources_name_are_refused_not_guessed(campaign):  # noqa: F811
    label("--zero-shot", "fusion", "--pool", "aero-pool", "--name", "rrf")
    label("--zero-shot", "encoder", "--pool", "aero-pool", "--name", "cosine")
    rrf, cosine = MachineLabelSource.objects.order_by("pk")
    MachineLabelSource.objects.filter(pk=cosine.pk).update(name=str(rrf.pk))  # named so before the rule
    both = f"'{rrf.pk}' is the id of one machine label source and the name of another: give its id " \
           f"({rrf.pk} (rrf), {cosine.pk} ({rrf.pk}))"

    with pytest.raises(CommandError) as refused:
        qrels("--source", "machine", "--machine-source", str(rrf.pk))
    assert str(refused.value) == f"nothing was exported: --machine-source: {both}"
    with pytest.raises(CommandError) as refused:
        call_command("machine_report", "--source", str(rrf.pk), "--campaign", campaign.name, stdout=StringIO())
    assert str(refused.value) == f"--source: {both}"

    rows = {name: qrels("--source", "machine", "--machine-source", name) for name in (str(cosine.pk), "rrf")}
    assert all(text.count("\n") == 40 for text in rows.values())
    assert rows[str(cosine.pk)] != rows["rrf"]  # another id, or a name with a letter, is one source


def test_nugget_scores_refuse_digits_that_are_an_id_and_another_sources_name(db):
    world = nuggets_world(factories.user("nuggeteer"))
    collection = world["answers"][RUNS[0]].topic.collection
    made = [MachineLabelSource.objects.create(name=f"nugget-assign:m{n}", kind=MachineLabelSource.Kind.NUGGET_ASSIGN,
                                              collection=collection, campaign_id=world["campaign"].pk, model="m")
            for n in range(2)]
    MachineLabelSource.objects.filter(pk=made[1].pk).update(name=str(made[0].pk))  # named so before the rule

    with pytest.raises(ServiceError) as refused:
        scores(world["campaign"], source=str(made[0].pk))

    assert refused.value.field == "source"
    assert "is the id of one machine label source and the name of another" in refused.value.message
    assert scores(world["campaign"], source=str(made[1].pk))["source"] == {"id": made[1].pk, "name": str(made[0].pk)}
    assert scores(world["campaign"], source="nugget-assign:m0")["source"]["id"] == made[0].pk
