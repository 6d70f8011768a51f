"""The kinds package (annotation.units): every kind of unit of work has one registered module, its page and its
queue row exist, and every campaign task is described once."""

from pathlib import Path

import pytest
from django.conf import settings

from annotation import units
from annotation.models import Assignment, Campaign
from annotation.units import tasks

ROOT = Path(settings.BASE_DIR)


def test_every_kind_of_unit_is_registered_once():
    assert sorted(unit.kind for unit in units.kinds()) == sorted(Assignment.Kind.values)


@pytest.mark.parametrize("kind", Assignment.Kind.values)
def test_a_kinds_page_and_queue_row_exist(kind):
    unit = units.get(kind)
    assert (ROOT / "templates" / unit.template).is_file() and (ROOT / "templates" / unit.queue_row).is_file()
    assert (ROOT / "annotation" / "static" / unit.script).is_file()
    assert unit.layers and unit.noun and unit.title


def test_an_assignment_reaches_its_kind_by_the_registry():
    assert units.of(Assignment(kind=Assignment.Kind.CITATION_SUPPORT)).kind == "citation_support"
    with pytest.raises(KeyError):
        units.get("no_such_kind")


def test_every_campaign_task_is_described_once():
    assert sorted(tasks.TASKS) == sorted(Campaign.Task.values)
    assert tasks.of(Campaign(task=Campaign.Task.NUGGETS)).stages == tasks.NUGGET_STAGES
    assert all(not tasks.get(task).stages for task in Campaign.Task.values if task != Campaign.Task.NUGGETS)


def test_the_tasks_data_is_the_data_pages_and_the_grading_kinds_are_the_pooled_graders():
    from annotation.services.data_imports import kinds_for

    assert all(list(tasks.get(task).data) == kinds_for(task) for task in Campaign.Task.values)
    assert units.grading_kinds() == [Assignment.Kind.PLOT_LABELS, Assignment.Kind.ADHOC]
    assert [task for task in Campaign.Task.values if tasks.get(task).pooled] == [Campaign.Task.PLOT, Campaign.Task.ADHOC]


RUNS = {Campaign.Task.OUTLINE: [1], Campaign.Task.PLOT: [None], Campaign.Task.ADHOC: [None],
        Campaign.Task.NUGGETS: [None, 1]}  # a task's units have a run (an article, an answer) or not (a pool, a bank)


@pytest.mark.parametrize("task", Campaign.Task.values)
@pytest.mark.parametrize("settings_", [{}, {"mode": "choice"}, {"mode": "pair"}, {"nugget_stage": "create"},
                                       {"nugget_stage": "citations"}])
def test_a_tasks_units_are_of_its_kinds(task, settings_):
    for run in RUNS[task]:
        kind = Assignment.kind_of(Campaign(task=task, settings=settings_), run=run)
        assert kind in tasks.get(task).kinds and units.get(kind)
