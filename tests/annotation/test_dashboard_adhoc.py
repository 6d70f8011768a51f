"""An ad hoc campaign's dashboard names its grades as the campaign's scale does (the assessors' page's names), not
as a plot campaign's bare numbers under "Plot grades"."""

import pytest

from annotation.reports.dashboard import dashboard
from assessments.models import Layer
from assessments.services.judging import record_judgement
from tests import factories
from tests.annotation.adhoc_setup import adhoc_world

pytestmark = pytest.mark.django_db


def test_the_grades_chart_of_an_ad_hoc_campaign_uses_the_scales_names():
    ann = factories.user("ann")
    world = adhoc_world(ann, settings={"grade_scale": "robust"})
    for doc, grade in zip(world["documents"], [2, 0, 2]):
        record_judgement(assessor=ann, layer=Layer.GRADE, value=grade, topic=world["topic"], passage=doc,
                         campaign_id=world["campaign"].pk)
    charts = {c["id"]: c for c in dashboard(world["campaign"])["charts"]}
    assert "plot-grades" not in charts
    chart = charts["adhoc-grades"]
    assert chart["title"] == "Grades per assessor, share of documents"
    assert chart["table"]["head"] == ["", "2 Highly relevant", "1 Relevant", "0 Not relevant", "total"]
    assert chart["table"]["rows"] == [["ann", 2, 0, 1, 3]]
