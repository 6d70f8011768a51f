"""Agreement on citation support (issue 29, items 5 and 6): an ordinal layer (none < partial < full) over units
(topic, passage, "<answer id>:<sentence>"), read by the same machinery as nugget support: the campaign report's α
equals the krippendorff package's on the same matrix with gaps, an adjudicated label is not read, and the agreement
API, agreement_report and the dashboard show the layer."""

import io
import math

import krippendorff
import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.reports.agreement import campaign_report
from annotation.roles import Role, ensure_groups
from annotation.services.assignment import assign_campaign
from assessments.agreement.judgements import CITATION_SCALE, LAYERS, LEVELS
from assessments.models import JudgementChange, Layer
from assessments.services import nuggets
from assessments.services.judging import record_judgement
from retrieval.models import Passage
from tests import factories
from tests.annotation.nuggets_setup import DOCS, RUNS, nuggets_world

pytestmark = pytest.mark.django_db

F, P, N, _ = "full", "partial", "none", None
# The cited pairs: RUNS[0] sentence 0 cites doc 0, its sentence 1 docs 1 and 0; RUNS[1] sentence 0 cites doc 2.
PAIRS = [(RUNS[0], 0, 0), (RUNS[0], 1, 1), (RUNS[0], 1, 0), (RUNS[1], 0, 2)]
MATRIX = [  # rows: assessors amy, ben, cy; columns: PAIRS
    [F, P, N, F],
    [F, N, _, P],
    [P, N, N, _],
]


def label(campaign, who, answer, position, passage, value, **extra):
    record_judgement(campaign_id=campaign.pk, assessor=who, layer=Layer.CITATION_SUPPORT, value=value,
                     topic=answer.topic, passage=passage, item=nuggets.citation_item(answer.pk, position), **extra)


@pytest.fixture
def world():
    found = nuggets_world()
    campaign = found["campaign"]
    names = ["amy", "ben", "cy"]
    users = [factories.user(name) for name in names]
    assign_campaign(campaign, names, overlap=3, stage="citations")
    doc = {p.external_id: p for p in Passage.objects.all()}
    units = [(found["answers"][run], position, doc[DOCS[d][0]]) for run, position, d in PAIRS]
    for user, row in zip(users, MATRIX):
        for (answer, position, passage), value in zip(units, row):
            if value is not None:
                label(campaign, user, answer, position, passage, value)
    found.update(units=units, users=users)
    return found


def expected_alpha():
    code = {value: i for i, value in enumerate(CITATION_SCALE)}
    matrix = np.array([[np.nan if v is None else code[v] for v in row] for row in MATRIX], dtype=float)
    return krippendorff.alpha(reliability_data=matrix, value_domain=[0, 1, 2], level_of_measurement="ordinal")


def entry_of(report):
    (entry,) = [e for e in report["layers"] if e["layer"] == "citation_support"]
    return entry


def test_citation_support_is_an_ordinal_layer_on_its_scale():
    assert "citation_support" in LAYERS and LEVELS["citation_support"] == ("ordinal",)
    assert CITATION_SCALE == ("none", "partial", "full")


def test_alpha_equals_the_krippendorff_package_and_an_adjudicated_label_is_not_read(world):
    expected = expected_alpha()
    entry = entry_of(campaign_report(world["campaign"]))
    assert entry["level"] == "ordinal" and entry["units"] == 4 and entry["assessors"] == 3
    assert math.isclose(entry["alpha"], expected, abs_tol=1e-9)
    assert len(entry["pairs"]) == 3 and [t["topic"] for t in entry["topics"]] == ["2024-145979"]

    # cy, an assessor of the campaign, adjudicates the pair they left unlabelled: were it read, α would be 0.413
    answer, position, passage = world["units"][3]
    label(world["campaign"], world["users"][2], answer, position, passage, N,
          source=JudgementChange.Source.ADJUDICATION)
    assert math.isclose(entry_of(campaign_report(world["campaign"]))["alpha"], expected, abs_tol=1e-9)


def test_the_api_the_command_and_the_dashboard_show_the_layer(client, world):
    campaign = world["campaign"]
    organiser = factories.user("boss", is_staff=True)
    organiser.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(organiser)
    api = client.get(f"/api/campaigns/{campaign.name}/agreement/", {"layer": "citation_support"}).json()
    assert [e["layer"] for e in api["layers"]] == ["citation_support"]
    assert math.isclose(api["layers"][0]["alpha"], expected_alpha(), abs_tol=1e-9)
    out = io.StringIO()
    call_command("agreement_report", "--campaign", campaign.name, "--layer", "citation_support", stdout=out)
    assert "citation_support" in out.getvalue()
    page = client.get(reverse("annotation:dashboard", args=[campaign.name])).content.decode()
    assert "citation_support" in page
