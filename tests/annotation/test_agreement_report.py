"""campaign_report on judgements stored in the database, checked against the packages called directly."""

import functools
import json
from io import StringIO

import krippendorff
import numpy as np
import pytest
from scipy.stats import kendalltau
from django.core.management import CommandError, call_command
from statsmodels.stats.inter_rater import cohens_kappa

from annotation.reports.agreement import AgreementFailed, campaign_report
from annotation.models import Assignment, Campaign
from assessments.models import JudgementChange, Layer
from tests import factories

H1, H2 = "tqa2:L_0001/T_1", "tqa2:L_0001/T_2"
# Relevance of passages p1..p6 per assessor: a facet grade (m/s/c) or x (removed) or - (nothing).
RELEVANCE = {
    "ann": "m s c x m s",
    "bob": "m s s x c -",
    "cat": "m c c m - x",
}
GRADE = {"m": 3, "s": 2, "c": 1, "x": 0}
WORD = {"m": "must", "s": "should", "c": "can"}


@pytest.fixture
def campaign():
    coll = factories.collection("car")
    topic = factories.topic(coll, "tqa2:L_0001", facets=[(H1, "Droughts"), (H2, "Scarcity")])
    other = factories.topic(coll, "tqa2:L_0002", facets=[("tqa2:L_0002/T_1", "Rain")])
    passages = [factories.passage(coll, f"p{i}") for i in range(1, 7)]
    # Run r1 ranks the passages as given, r2 backwards, r3 the even ones first.
    runs = [
        factories.run(coll, "r1", {topic: passages}),
        factories.run(coll, "r2", {topic: passages[::-1]}),
        factories.run(coll, "r3", {topic: passages[1::2] + passages[0::2]}),
    ]
    users = {name: factories.user(name) for name in RELEVANCE}
    campaign, _ = factories.assigned_campaign(topic, users.values(), run=runs[0], name="car")
    for name, marks in RELEVANCE.items():
        label = functools.partial(factories.judgement, users[name], topic, campaign=campaign)
        for passage, mark in zip(passages, marks.split()):
            if mark == "x":
                label(passage, layer=Layer.REMOVAL, value=True)
                label(passage, relevance="must", facet=H1)  # a facet left on a removed passage does not count
            elif mark != "-":
                label(passage, relevance=WORD[mark], facet=H2 if (name, passage.external_id) == ("cat", "p2") else H1)
    # Transitions of (p1, p2): two say SAME, one SWITCH.
    for name, value in (("ann", "same"), ("bob", "same"), ("cat", "switch")):
        factories.judgement(users[name], topic, passages[0], passage2=passages[1], layer=Layer.TRANSITION, value=value,
                            campaign=campaign)
    # Not in the report: an adjudicated label, another campaign's topic, a user without an assignment.
    # (bob said nothing of p6; an adjudicated label under his name would make p6 a unit of three)
    factories.judgement(users["bob"], topic, passages[5], relevance="can", facet=H1, campaign=campaign,
                        source=JudgementChange.Source.ADJUDICATION)
    factories.judgement(users["ann"], other, passages[0], relevance="can", facet="tqa2:L_0002/T_1", campaign=campaign)
    factories.judgement(factories.user("eve"), topic, passages[0], relevance="can", facet=H1, campaign=campaign)
    return campaign, topic, passages, runs


def matrix():
    """The relevance matrix the report should see: assessors × passages, NaN where nothing was said."""
    return np.array([[GRADE.get(m, np.nan) for m in marks.split()] for marks in RELEVANCE.values()], dtype=float)


def layer(report, name, level=None):
    return next(x for x in report["layers"] if x["layer"] == name and (level is None or x["level"] == level))


@pytest.mark.django_db
def test_relevance_figures_equal_the_packages_on_the_same_matrix(campaign):
    report = campaign_report(campaign[0])
    relevance = layer(report, "relevance")
    expected = krippendorff.alpha(reliability_data=matrix(), value_domain=[0, 1, 2, 3], level_of_measurement="ordinal")
    assert relevance["level"] == "ordinal"
    assert relevance["alpha"] == pytest.approx(expected)
    assert relevance["units"] == 6 and relevance["assessors"] == 3
    assert relevance["fleiss_units"] == 4 and relevance["fleiss_raters"] == 3  # p5, p6 have two labels each
    # p1 (3, 3, 3) agrees; p5 (3, 1) and p6 (2, 0) disagree entirely; p2, p3, p4 are in between.
    assert relevance["all_agree"] == pytest.approx(1 / 6)
    assert relevance["none_agree"] == pytest.approx(2 / 6)


@pytest.mark.django_db
def test_pairs_have_cohen_kappa_and_the_confusion_matrix(campaign):
    relevance = layer(campaign_report(campaign[0]), "relevance")
    pair = next(p for p in relevance["pairs"] if (p["a"], p["b"]) == ("ann", "bob"))
    m = matrix()
    both = ~np.isnan(m[0]) & ~np.isnan(m[1])
    table = np.zeros((4, 4), dtype=int)
    for a, b in zip(m[0, both].astype(int), m[1, both].astype(int)):
        table[a, b] += 1
    assert pair["units"] == 5
    assert pair["confusion"] == {"labels": [0, 1, 2, 3], "matrix": table.tolist()}
    assert pair["cohen_kappa"] == pytest.approx(cohens_kappa(table).kappa)
    assert pair["weighted_kappa"] == pytest.approx(cohens_kappa(table, wt="linear").kappa)


@pytest.mark.django_db
def test_nominal_layers_and_adjudicated_labels(campaign):
    report = campaign_report(campaign[0])
    removal = layer(report, "removal")
    assert removal["level"] == "nominal" and removal["units"] == 6
    facet = layer(report, "facet")
    # Removed passages' facets are not read: p4 and p6 keep one facet label each, so 4 units are pairable.
    assert facet["units"] == 4
    transition = layer(report, "transition")
    assert transition["units"] == 1 and transition["all_agree"] == 0.0 and transition["none_agree"] == 0.0
    assert transition["alpha"] is not None
    names = {name for x in report["layers"] for p in x["pairs"] for name in (p["a"], p["b"])}
    assert names == {"ann", "bob", "cat"}  # not the organiser's adjudicated label, not eve (no assignment)
    assert layer(report, "relevance")["assessors"] == 3


@pytest.mark.django_db
def test_per_topic_figures_and_the_topic_filter(campaign):
    campaign_obj, topic, _, _ = campaign
    report = campaign_report(campaign_obj, topic=topic.external_id, layers=["relevance"])
    relevance = layer(report, "relevance")
    assert [t["topic"] for t in relevance["topics"]] == [topic.external_id]
    assert relevance["topics"][0]["alpha"] == pytest.approx(relevance["alpha"])
    assert "pairs" not in relevance["topics"][0]
    assert [x["layer"] for x in report["layers"]] == ["relevance"]
    overall_only = layer(campaign_report(campaign_obj, topic=topic.external_id, per_topic=False), "relevance")
    assert overall_only["topics"] == [] and overall_only["alpha"] == pytest.approx(relevance["alpha"])
    with pytest.raises(AgreementFailed, match="topic: campaign 'car' has no assigned topic 'nope'"):
        campaign_report(campaign_obj, topic="nope")
    with pytest.raises(AgreementFailed, match="layer: 'gr4de'"):
        campaign_report(campaign_obj, layers=["gr4de"])


@pytest.mark.django_db
def test_ranking_stability_is_kendall_tau_of_the_runs_scored_with_each_assessors_qrels(campaign):
    from assessments.evaluation import aggregate, evaluate, parse_measure

    campaign_obj, topic, passages, runs = campaign
    pool = factories.pool(topic.collection, [topic], runs)
    Assignment.objects.filter(campaign=campaign_obj).update(run=None, pool=pool, kind=Assignment.Kind.PLOT_LABELS)
    campaign_obj.pools.add(pool)
    stability = campaign_report(campaign_obj)["ranking_stability"]
    measure = parse_measure("nDCG@20")
    m = matrix()

    def scores(row):
        qrels = {topic.pk: {p.pk: int(g) for p, g in zip(passages, m[row]) if not np.isnan(g)}}
        rankings = [{topic.pk: [e.passage_id for e in run.entries.order_by("rank")]}
                    for run in sorted(runs, key=lambda r: r.name)]
        return [aggregate(evaluate(qrels, r, [measure]), [measure])[measure] for r in rankings]

    pair = next(p for p in stability["pairs"] if (p["a"], p["b"]) == ("ann", "cat"))
    assert stability["layer"] == "relevance" and stability["measure"] == "nDCG@20" and stability["runs"] == 3
    assert pair["topics"] == 1 and pair["runs"] == 3
    assert pair["tau"] == pytest.approx(kendalltau(scores(0), scores(2)).statistic)


@pytest.mark.django_db
def test_an_empty_campaign_gives_an_empty_report_that_is_valid_json():
    campaign = factories.campaign("empty", Campaign.Task.PLOT)
    report = campaign_report(campaign)
    assert report["layers"] == [] and report["ranking_stability"]["pairs"] == []
    json.dumps(report, allow_nan=False)


def command(*args):
    out = StringIO()
    call_command("agreement_report", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_the_command_prints_the_report_as_json_text_and_csv(campaign):
    report = json.loads(command("--campaign", "car", "--format", "json"))
    assert report == json.loads(json.dumps(campaign_report(campaign[0])))
    text = command("--layer", "relevance")  # the only campaign with assignments
    alpha = layer(report, "relevance")["alpha"]
    assert "Agreement in campaign car (outline)" in text and f"Krippendorff's α {alpha:.3f}" in text
    assert "with each assessor's relevance qrels (1 run)\n  (1 run: a ranking needs two)" in text  # no pool yet
    rows = command("--format", "csv").splitlines()
    assert rows[0].split(",")[:3] == ["scope", "layer", "level"]
    assert any(row.startswith("layer,relevance,ordinal,,,,6,3,") for row in rows)
    assert any(row.startswith("pair,relevance,ordinal,,ann,bob,5,") for row in rows)


@pytest.mark.django_db
def test_the_command_says_what_is_wrong(campaign, tmp_path):
    with pytest.raises(CommandError, match="--campaign: no campaign named 'nope'"):
        command("--campaign", "nope")
    with pytest.raises(CommandError, match="--topic: campaign 'car' has no assigned topic 'x'"):
        command("--topic", "x")
    with pytest.raises(CommandError, match="--input needs --level"):
        command("--input", "labels.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("item,assessor,label\n1,a,1\n1,b\n")
    with pytest.raises(CommandError, match=r"bad.csv:3: expected 3 fields"):
        command("--input", str(bad), "--level", "ordinal")


@pytest.mark.django_db
def test_the_command_reads_labels_from_a_csv(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("item,assessor,label\n1,a,x\n1,b,x\n2,a,x\n2,b,y\n3,a,y\n3,b,y\n")
    text = command("--input", str(path), "--level", "nominal")
    assert "Agreement of the labels in" in text and "labels (nominal): 3 units labelled by two or more of 2" in text
    data = json.loads(command("--input", str(path), "--level", "nominal", "--format", "json"))
    assert data["layers"][0]["pairs"][0]["confusion"] == {"labels": ["x", "y"], "matrix": [[1, 1], [0, 1]]}


@pytest.fixture
def plot_campaign():
    """A plot campaign: three assessors grade and mark spans of q1's candidates, choose in a forced-choice set and
    rate a pair (a pair rating keyed without a topic, reached through the campaign's pool)."""
    from assessments.models import StudyItem, Topic

    coll = factories.collection("book")
    topic = factories.topic(coll, "q1", kind=Topic.Kind.PLOT, text="The dog pulls a sled across the ice.")
    chunks = [factories.passage(coll, f"book:{i}") for i in range(4)]
    pool = factories.pool(coll, [topic], [])
    StudyItem.objects.create(pool=pool, kind=StudyItem.Kind.CHOICE, key="set1", topic=topic)
    StudyItem.objects.create(pool=pool, kind=StudyItem.Kind.PAIR, key="pair1", passage=chunks[0], passage2=chunks[1])
    campaign = factories.campaign("plot", Campaign.Task.PLOT, pools=[pool])
    grades = {"ann": [2, 1, 0, 2], "bob": [2, 0, 0, 1], "cat": [1, 1, 0, 2]}
    spans = {"ann": [[4, 7]], "bob": [[4, 13]], "cat": []}
    choices = {"ann": "book:0", "bob": "book:0", "cat": "book:2"}
    ratings = {"ann": 7, "bob": 8, "cat": 3}
    for name in grades:
        user = factories.user(name)
        factories.assignment(user, topic, campaign=campaign, pool=pool)
        label = functools.partial(factories.judgement, user, campaign=campaign)
        for chunk, grade in zip(chunks, grades[name]):
            label(topic, chunk, layer=Layer.PLOT_GRADE, value=grade)
        label(topic, chunks[0], layer=Layer.PLOT_SPANS, value=spans[name])
        label(topic, layer=Layer.CHOICE, value=choices[name], item="set1")
        label(None, chunks[0], passage2=chunks[1], layer=Layer.RATING, value=ratings[name], item="pair1")
    return campaign, grades, ratings


@pytest.mark.django_db
def test_plot_layers_grades_spans_choice_and_ratings(plot_campaign):
    campaign, grades, ratings = plot_campaign
    report = campaign_report(campaign)
    assert [(x["layer"], x["level"]) for x in report["layers"]] == [
        ("plot_grade", "ordinal"), ("plot_spans", "spans"), ("choice", "nominal"), ("rating", "ordinal"),
        ("rating", "interval"),
    ]
    grade = layer(report, "plot_grade")
    expected = krippendorff.alpha(reliability_data=list(grades.values()), value_domain=[0, 1, 2],
                                  level_of_measurement="ordinal")
    assert grade["alpha"] == pytest.approx(expected) and grade["units"] == 4
    spans = layer(report, "plot_spans")
    # ann/bob: 3 of 9 characters shared; ann/cat and bob/cat: something against nothing, 0
    assert spans["span_jaccard"] == pytest.approx((3 / 9) / 3) and spans["units"] == 1
    assert spans["alpha"] is None and "not as categories" in spans["reasons"]["alpha"]
    choice = layer(report, "choice")
    assert (choice["units"], choice["all_agree"], choice["none_agree"]) == (1, 0.0, 0.0)
    interval = layer(report, "rating", "interval")
    assert interval["units"] == 1 and interval["topics"] == [{**interval["topics"][0], "topic": None}]
    assert layer(report, "rating", "ordinal")["pairs"][0]["confusion"]["labels"] == list(range(1, 11))
    assert report["ranking_stability"]["layer"] == "plot_grade"
    assert report["ranking_stability"]["measure"] == "nDCG@10"
    json.dumps(report, allow_nan=False)
    text = command("--campaign", "plot")
    assert "plot_spans (spans): 1 unit labelled by two or more of 3 assessors" in text
    assert "mean pairwise Jaccard 0.111" in text


@pytest.mark.django_db
def test_the_campaign_list_and_dashboard_call_alphas_units_items_not_units_of_work(campaign, client):
    """"6 units" beside α in the campaign list read as units of work, which the column beside it counts (issue 39
    item 12): α's units are items there and on the dashboard."""
    from annotation.roles import Role, ensure_groups

    boss = factories.user("boss", is_staff=True)
    boss.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(boss)
    Assignment.objects.filter(campaign=campaign[0]).update(status=Assignment.Status.IN_PROGRESS)
    listing = " ".join(client.get("/campaigns/").content.decode().split())
    assert "relevance, 6 items</span>" in listing and "6 units" not in listing
    dashboard = client.get(f"/campaigns/{campaign[0].name}/dashboard/").content.decode()
    assert '<th class="num" title="Items labelled (what α calls units)">items</th>' in dashboard


@pytest.mark.django_db
def test_evidence_spans_have_their_agreement_in_the_report_and_its_csv(client):
    """An ad hoc campaign's evidence spans had no agreement figure (issue 39 item 12): the evidence layer is the
    character-level Jaccard of the two assessors' marks, as plot spans are, in the report and the CSV download."""
    from annotation.roles import Role, ensure_groups
    from assessments.agreement.formats import report_csv
    from tests.annotation.adhoc_setup import adhoc_world

    ann, bob = factories.user("ann"), factories.user("bob")
    world = adhoc_world(ann)
    factories.assignment(bob, world["topic"], campaign=world["campaign"], pool=world["pool"])
    first, second = world["documents"][:2]
    for who, doc, spans in ((ann, first, [[0, 10]]), (bob, first, [[5, 15]]), (ann, second, [[0, 4]]),
                            (bob, second, [[0, 4], [6, 8]])):
        factories.judgement(who, world["topic"], doc, layer=Layer.EVIDENCE, value=spans, campaign=world["campaign"])
    evidence = layer(campaign_report(world["campaign"]), "evidence")
    assert evidence["level"] == "spans" and evidence["units"] == 2
    assert evidence["span_jaccard"] == pytest.approx((5 / 15 + 4 / 6) / 2) and evidence["alpha"] is None
    rows = report_csv(campaign_report(world["campaign"])).splitlines()
    assert any(row.startswith("layer,evidence,spans,") for row in rows), rows[:5]
    boss = factories.user("boss", is_staff=True)
    boss.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(boss)
    download = client.get(f"/campaigns/{world['campaign'].name}/results/agreement/")
    assert download.status_code == 200 and "evidence,spans" in download.content.decode()


@pytest.mark.django_db
def test_the_dashboards_pair_table_gives_span_layers_their_jaccard(client):
    """A span layer's assessor-pair table showed "–" under Cohen's κ (stop 44 leftover): the pair's Jaccard is what
    the layer's row says, so the pair table shows it too."""
    from annotation.roles import Role, ensure_groups
    from tests.annotation.adhoc_setup import adhoc_world

    ann, bob = factories.user("ann"), factories.user("bob")
    world = adhoc_world(ann)
    factories.assignment(bob, world["topic"], campaign=world["campaign"], pool=world["pool"])
    doc = world["documents"][0]
    for who, spans in ((ann, [[0, 10]]), (bob, [[5, 15]])):
        factories.judgement(who, world["topic"], doc, layer=Layer.EVIDENCE, value=spans, campaign=world["campaign"])
    boss = factories.user("boss", is_staff=True)
    boss.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(boss)
    page = client.get(f"/campaigns/{world['campaign'].name}/dashboard/").content.decode()
    table = page.split("evidence (spans): assessor pairs", 1)[1].split("</table>", 1)[0]
    assert "Jaccard</th>" in table and "Cohen" not in table
    assert '<td class="num">0.333</td>' in table, table
