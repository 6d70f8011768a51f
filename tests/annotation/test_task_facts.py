"""The facts the campaign task module (annotation.units.tasks) holds for the pages that used to name tasks (issue 40,
item 1): each gives what the pages gave before, and few modules outside the kinds package and the models name a task
or a kind of unit."""

import re
from pathlib import Path

import pytest
from django.conf import settings

from annotation.models import Campaign, DataImport
from annotation.units import tasks

ROOT = Path(settings.BASE_DIR)
Kind = DataImport.Kind
Task = Campaign.Task


def test_a_tasks_data_is_what_its_data_page_offered():
    from annotation.services.data_imports import kinds_for

    assert kinds_for(Task.NUGGETS) == [Kind.TOPICS, Kind.DOCUMENTS, Kind.ANSWERS, Kind.NUGGETS,
                                       Kind.NUGGET_ASSIGNMENTS, Kind.TREC_RUN, Kind.QRELS]
    assert kinds_for(Task.OUTLINE) == [Kind.CAR_OUTLINES, Kind.CAR_RUNS, Kind.QRELS, Kind.CAR_ASSESSMENTS]
    assert kinds_for(Task.PLOT) == [Kind.PLOT_QUERIES, Kind.TREC_RUN, Kind.QRELS]
    assert kinds_for(Task.ADHOC) == [Kind.TOPICS, Kind.DOCUMENTS, Kind.TREC_RUN, Kind.QRELS]


HIDDEN = {  # the settings form's fields each task's campaigns never saw
    Task.OUTLINE: {"plot_scale", "context_sentences", "grade_scale", "adhoc_view", "evidence", "show_machine_labels",
                   "machine_source", "blind_share", "nugget_suggestions", "topic_guidelines"},
    Task.PLOT: {"grade_scale", "adhoc_view", "evidence", "nugget_suggestions", "topic_guidelines"},
    Task.ADHOC: {"plot_scale", "context_sentences", "nugget_suggestions"},
    Task.NUGGETS: {"plot_scale", "context_sentences", "grade_scale", "adhoc_view", "evidence", "show_machine_labels",
                   "machine_source", "blind_share", "worked_examples"},
}


@pytest.mark.parametrize("task", Task.values)
def test_the_settings_form_shows_a_tasks_own_settings(task):
    from annotation.views.console.forms import CampaignSettingsForm

    every = set(CampaignSettingsForm(campaign=Campaign(task=Task.ADHOC)).fields) | HIDDEN[Task.ADHOC]
    assert every - set(CampaignSettingsForm(campaign=Campaign(task=task)).fields) == HIDDEN[task]


def test_every_tasks_own_setting_is_one_the_settings_service_takes():
    from annotation.services import campaign_settings as cs

    assert tasks.settings_keys() == {*cs.PLOT_KEYS, *cs.ADHOC_KEYS, *cs.NUGGET_KEYS, *cs.TOPIC_KEYS, cs.EXAMPLES}


def test_the_dashboards_label_charts_and_the_waiting_units():
    from annotation.reports import dashboard as d

    charts = {task: d._layer_charts(Campaign(task=task)) for task in Task.values}
    assert charts == {Task.OUTLINE: [d._grade_distribution, d._transition_distribution],
                      Task.PLOT: [d._plot_distribution], Task.ADHOC: [d._adhoc_distribution], Task.NUGGETS: []}
    assert {task: tasks.get(task).waiting for task in Task.values if tasks.get(task).waiting} == {
        Task.NUGGETS: ("nugget_support",)}
    assert all(set(task.waiting) <= set(task.kinds) for task in tasks.TASKS.values())
    assert [task for task in Task.values if tasks.get(task).answers] == [Task.NUGGETS]
    assert [task for task in Task.values if tasks.get(task).studies] == [Task.PLOT]


NAMED = re.compile(r"(Assignment\.Kind|Campaign\.Task|campaign\.Task|self\.Task)\.[A-Z_]+")


def test_few_modules_outside_the_kinds_package_and_the_models_name_a_task_or_a_kind():
    named = sorted(str(path.relative_to(ROOT)) for app in ("annotation", "assessments", "retrieval", "config")
                   for path in (ROOT / app).rglob("*.py")
                   if "migrations" not in path.parts and "/models" not in str(path)
                   and "annotation/units/" not in str(path) and NAMED.search(path.read_text(encoding="utf-8")))
    assert len(named) <= 2, named  # load_demo and nugget_support.writing_units
