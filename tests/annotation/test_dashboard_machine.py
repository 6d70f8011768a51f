"""The dashboard's machine section: machine × people κ with its confusion matrix and per topic, the system ranking's τ
and largest rank change with machine and filled qrels, the anchoring effect, an audit sample; and every human figure
of the dashboard the same with or without machine labels."""

import pytest
from django.urls import reverse

from annotation.reports.dashboard import dashboard
from annotation.roles import Role, ensure_groups
from annotation.services.assignment import assign_campaign
from assessments.machine.metrics import cohen_kappa
from assessments.models import JudgementChange, Layer, MachineLabel, MachineLabelSource
from assessments.services.judging import record_judgement
from tests import factories
from tests.annotation.test_assignment import make_campaign

pytestmark = pytest.mark.django_db

RELEVANCE = {3: "must", 2: "should", 1: "can"}


def grade_of(t, i, who):
    """ada and bo grade passage i of topic t; they differ on one passage of each topic."""
    grade = (i + t) % 4
    return grade if who == "ada" or i != 1 else (grade + 1) % 4


def machine_grade(t, i):
    return (i + t) % 4 if i != 2 else 3


@pytest.fixture
def judged():
    """Four outline topics of five passages in four runs' articles; ada and bo judge the first four passages of each,
    the fifth is nobody's."""
    groups = ensure_groups()
    campaign, made, runs = make_campaign("mach", topics=4, runs=4, passages=5)
    for name in ("ada", "bo"):
        factories.user(name)
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(groups[Role.ORGANISER])
    assign_campaign(campaign, ["ada", "bo"], overlap=2, seed=1)
    from django.contrib.auth import get_user_model

    for who in ("ada", "bo"):
        user = get_user_model().objects.get(username=who)
        for t, (topic, passages) in enumerate(made):
            for i, passage in enumerate(passages[:4]):
                grade = grade_of(t, i, who)
                if grade:
                    record_judgement(assessor=user, layer=Layer.FACET, topic=topic, passage=passage, campaign_id=campaign.pk,
                                     value=[{"facet": f"{topic.external_id}/H1", "relevance": RELEVANCE[grade]}])
                else:
                    record_judgement(assessor=user, layer=Layer.REMOVAL, topic=topic, passage=passage, value=True,
                                     campaign_id=campaign.pk)
    return campaign, made, organiser


def label_everything(campaign, made):
    source = MachineLabelSource.objects.create(name="llm:judge", kind="llm", collection=made[0][0].collection,
                                               model="judge", grades=[0, 1, 2, 3], status="ready")
    for t, (topic, passages) in enumerate(made):
        for i, passage in enumerate(passages):
            MachineLabel.objects.create(source=source, topic=topic, passage=passage, grade=machine_grade(t, i),
                                        score=machine_grade(t, i), raw_answer=f"##final score: {machine_grade(t, i)}")
    MachineLabel.objects.create(source=source, topic=made[0][0], passage=factories.passage(made[0][0].collection, "x"),
                                grade=None, error="unparseable answer")
    return source


def test_it_shows_machine_against_people_and_the_ranking_with_machine_and_filled_qrels(judged, client):
    campaign, made, organiser = judged
    before = dashboard(campaign)
    source = label_everything(campaign, made)

    data = dashboard(campaign)

    assert {k: v for k, v in data.items() if k != "machine"} == {k: v for k, v in before.items() if k != "machine"}
    assert before["machine"]["sources"] == []
    [section] = data["machine"]["sources"]
    assert section["source"] == source.pk and section["unreadable"] == 1
    agreement = section["agreement"]
    # people: ada and bo on the first four passages, a tie going to the higher grade
    people = {(t, i): max(grade_of(t, i, "ada"), grade_of(t, i, "bo")) for t in range(4) for i in range(4)}
    expected, _ = cohen_kappa([people[k] for k in sorted(people)], [machine_grade(*k) for k in sorted(people)])
    assert agreement["items"] == 16 and agreement["kappa"] == pytest.approx(expected)
    assert agreement["machine_only"] == 4  # the fifth passage of each topic (the unreadable answer has no grade)
    assert agreement["confusion"]["labels"] == [0, 1, 2, 3] and sum(map(sum, agreement["confusion"]["matrix"])) == 16
    assert [t["topic"] for t in agreement["topics"]] == [t.external_id for t, _ in made]
    rankings = section["rankings"]
    assert rankings["measure"] == "nDCG@20" and rankings["runs"] == 4
    assert [r["qrels"] for r in rankings["rows"]] == ["machine", "filled"]
    assert all(r["tau"] is not None and -1 <= r["tau"] <= 1 and r["largest"]["run"].startswith("mach-run")
               for r in rankings["rows"])
    assert section["audit"]["disagreeing"] == sum(
        (people[k] >= 1) != (machine_grade(*k) >= 1) for k in people)
    assert section["chart"]["kind"] == "matrix"

    client.force_login(organiser)
    html = client.get(reverse("annotation:dashboard", args=[campaign.name])).content.decode()
    assert "Machine labels" in html and f'id="machine-source-{source.pk}"' in html
    assert f'data-figure="kappa">{expected:.3f}' in html
    assert 'data-figure="tau-machine"' in html and 'data-figure="tau-filled"' in html


def test_without_machine_labels_the_section_says_so(judged, client):
    campaign, _, organiser = judged
    client.force_login(organiser)
    html = client.get(reverse("annotation:dashboard", args=[campaign.name])).content.decode()
    assert "No machine label source has labelled this campaign's topics." in html


def test_the_anchoring_effect_compares_items_shown_a_machine_label_with_the_blind_ones(judged):
    campaign, made, _ = judged
    source = label_everything(campaign, made)
    changes = JudgementChange.objects.filter(judgement__campaign_id=campaign.pk, judgement__assessor__username="ada")
    topic0 = made[0][0]
    changes.filter(judgement__topic=topic0).update(machine_shown=True)
    changes.filter(judgement__topic=made[1][0]).update(machine_shown=False)

    anchoring = dashboard(campaign)["machine"]["sources"][0]["anchoring"]

    shown = [(grade_of(0, i, "ada"), machine_grade(0, i)) for i in range(4)]
    blind = [(grade_of(1, i, "ada"), machine_grade(1, i)) for i in range(4)]
    assert anchoring["shown"] == {"items": 4, "agree": sum(a == b for a, b in shown) / 4}
    assert anchoring["blind"] == {"items": 4, "agree": sum(a == b for a, b in blind) / 4}
    assert source.pk


def test_machine_report_gives_the_dashboards_figures_on_the_command_line(judged):
    import json
    from io import StringIO

    from django.core.management import call_command

    campaign, made, _ = judged
    source = label_everything(campaign, made)
    out = StringIO()
    call_command("machine_report", "--source", str(source.pk), "--campaign", campaign.name, "--format", "json", stdout=out)
    report = json.loads(out.getvalue())
    section = dashboard(campaign)["machine"]["sources"][0]
    assert report["agreement"]["kappa"] == pytest.approx(section["agreement"]["kappa"])
    assert [r["tau"] for r in report["rankings"]["rows"]] == pytest.approx([r["tau"] for r in section["rankings"]["rows"]])
    text = StringIO()
    call_command("machine_report", "--source", "llm:judge", "--campaign", campaign.name, stdout=text)
    assert f"κ {section['agreement']['kappa']:.3f}" in text.getvalue() and "filled (4 topics): τ" in text.getvalue()


def test_a_zero_shot_source_is_compared_with_the_people_like_any_other(judged, client):
    """Zero-shot sources (issue 28) grade (topic, passage) pairs like a classifier: the dashboard shows them beside the
    people; the LLM query filter, whose labels are not about passages, is never listed."""
    campaign, made, organiser = judged
    collection = made[0][0].collection
    zero = MachineLabelSource.objects.create(name="fusion-1", kind="zero_shot", collection=collection, model="fusion",
                                             grades=[0, 1], status="ready", campaign_id=campaign.pk)
    query_filter = MachineLabelSource.objects.create(name="filter", kind="query_filter", collection=collection,
                                                     model="judge", grades=[0, 1], status="ready")
    for t, (topic, passages) in enumerate(made):
        for i, passage in enumerate(passages):
            MachineLabel.objects.create(source=zero, topic=topic, passage=passage, grade=int(i < 2), score=1 / (i + 1))
            MachineLabel.objects.create(source=query_filter, topic=topic, passage=passage, grade=1, score=1.0)

    [section] = dashboard(campaign)["machine"]["sources"]

    assert section["source"] == zero.pk and section["agreement"]["items"] == 16
    client.force_login(organiser)
    html = client.get(reverse("annotation:dashboard", args=[campaign.name])).content.decode()
    assert f'id="machine-source-{zero.pk}"' in html and f'id="machine-source-{query_filter.pk}"' not in html
