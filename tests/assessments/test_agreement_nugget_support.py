"""Agreement on nugget support (issue 29, item 6): an ordinal layer (not_support < partial_support < support) over
units (topic, "<answer id>:<nugget id>"); the campaign report's α equals the krippendorff package's on the same
matrix, adjudicated labels are not read, and the dashboard shows the layer."""

import math

import krippendorff
import numpy as np
import pytest

from annotation.reports.agreement import campaign_report
from annotation.services.assignment import assign_campaign
from assessments.agreement.judgements import LAYERS, LEVELS, SUPPORT_SCALE
from assessments.models import JudgementChange, Layer
from assessments.services import nuggets
from assessments.services.judging import record_judgement
from tests import factories
from tests.annotation.nuggets_setup import RUNS, nuggets_world

pytestmark = pytest.mark.django_db

S, P, N, _ = "support", "partial_support", "not_support", None
# rows: assessors amy, ben, cy; columns: (answer of RUNS[0], nuggets 1-4), then (answer of RUNS[1], nuggets 1-4)
MATRIX = [
    [S, S, P, N, N, P, S, _],
    [S, P, P, N, P, P, _, N],
    [S, S, N, _, N, S, S, N],
]


@pytest.fixture
def world():
    found = nuggets_world()
    campaign = found["campaign"]
    names = ["amy", "ben", "cy"]
    users = [factories.user(name) for name in names]
    assign_campaign(campaign, names, overlap=3)
    units = [(found["answers"][run], nugget["id"]) for run in RUNS for nugget in found["bank"]]
    for user, row in zip(users, MATRIX):
        for (answer, nugget), value in zip(units, row):
            if value is not None:
                record_judgement(campaign_id=campaign.pk, assessor=user, layer=Layer.NUGGET_SUPPORT, value=value,
                                 topic=answer.topic, item=nuggets.support_item(answer.pk, nugget))
    found.update(units=units, users=users)
    return found


def test_nugget_support_is_an_ordinal_layer_on_its_scale():
    assert "nugget_support" in LAYERS and LEVELS["nugget_support"] == ("ordinal",)
    assert SUPPORT_SCALE == ("not_support", "partial_support", "support")


def test_alpha_equals_the_krippendorff_package_on_the_same_matrix(world):
    code = {value: i for i, value in enumerate(SUPPORT_SCALE)}
    matrix = np.array([[np.nan if v is None else code[v] for v in row] for row in MATRIX], dtype=float)
    expected = krippendorff.alpha(reliability_data=matrix, value_domain=[0, 1, 2], level_of_measurement="ordinal")

    report = campaign_report(world["campaign"])
    (entry,) = [e for e in report["layers"] if e["layer"] == "nugget_support"]
    assert entry["level"] == "ordinal" and entry["units"] == 8 and entry["assessors"] == 3
    assert math.isclose(entry["alpha"], expected, abs_tol=1e-9)
    assert len(entry["pairs"]) == 3 and [t["topic"] for t in entry["topics"]] == ["2024-145979"]

    # an organiser's adjudicated label is not an assessor's: the figure stays
    organiser = factories.user("org", is_staff=True)
    answer, nugget = world["units"][0]
    record_judgement(campaign_id=world["campaign"].pk, assessor=organiser, layer=Layer.NUGGET_SUPPORT, value=N,
                     topic=answer.topic, item=nuggets.support_item(answer.pk, nugget),
                     source=JudgementChange.Source.ADJUDICATION)
    (again,) = [e for e in campaign_report(world["campaign"])["layers"] if e["layer"] == "nugget_support"]
    assert math.isclose(again["alpha"], expected, abs_tol=1e-9)


def test_the_dashboard_shows_the_layer(client, world):
    from django.urls import reverse

    from annotation.reports.dashboard import agreement

    (entry,) = [e for e in agreement(world["campaign"])["layers"] if e["layer"] == "nugget_support"]
    assert entry["alpha"] is not None and entry["pairs"][0]["chart"]
    organiser = factories.user("boss", is_staff=True)
    client.force_login(organiser)
    page = client.get(reverse("annotation:dashboard", args=[world["campaign"].name])).content.decode()
    assert "nugget_support" in page
