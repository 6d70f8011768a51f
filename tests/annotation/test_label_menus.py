"""The data browser's label filter menu of each campaign task, value and words in order (issue 40 item 1): pinned so
that moving the menu into the task's facts (annotation.units.tasks' `labels`) changes no menu."""

import pytest

from annotation.models import Campaign
from annotation.services.browser import label_choices
from annotation.units import tasks

MENUS = {
    "outline": [("facet:3", "MUST"), ("facet:2", "SHOULD"), ("facet:1", "CAN"), ("facet", "any facet"),
                ("removal:0", "removed"), ("transition:same", "Same topic"),
                ("transition:coherent", "Coherent transition"), ("transition:switch", "Topic switch"),
                ("notes", "notes")],
    "plot": [("plot_grade:2", "2: Describes it"), ("plot_grade:1", "1: Partly"), ("plot_grade:0", "0: Does not"),
             ("plot_spans", "Query spans describing the plot"), ("choice", "Forced choice"),
             ("rating", "Pair rating (1-10)")],
    "adhoc": [("grade:3", "3: Perfectly relevant"), ("grade:2", "2: Highly relevant"), ("grade:1", "1: Related"),
              ("grade:0", "0: Irrelevant"), ("evidence", "Evidence passages of a document")],
    "nuggets": [("nuggets", "nugget bank"), ("nugget_support:support", "nugget: supported"),
                ("nugget_support:partial_support", "nugget: partly supported"),
                ("nugget_support:not_support", "nugget: not supported"), ("citation_support:full", "citation: full support"),
                ("citation_support:partial", "citation: partial support"), ("citation_support:none", "citation: no support")],
}


@pytest.mark.parametrize("task", sorted(MENUS))
def test_each_task_menu(task):
    assert label_choices(Campaign(task=task, settings={})) == MENUS[task]


def test_every_task_is_pinned():
    assert set(MENUS) == set(Campaign.Task.values) == set(tasks.TASKS)


def test_menus_follow_the_campaign_scale():
    plot = Campaign(task="plot", settings={"plot_scale": [[2, "a"], [0, "b"]]})
    assert label_choices(plot) == [("plot_grade:2", "2: a"), ("plot_grade:0", "0: b")] + MENUS["plot"][3:]
    broken = Campaign(task="adhoc", settings={"grade_scale": "x"})  # a broken setting: the grades as numbers
    assert label_choices(broken) == [(f"grade:{v}", f"{v}: {v}") for v in (3, 2, 1, 0)] + MENUS["adhoc"][4:]


def test_every_task_names_a_menu():
    from annotation.services.browser import LABEL_MENUS

    assert {task.labels for task in tasks.TASKS.values()} == set(LABEL_MENUS)
