"""The dashboard's agreement as data grows: the same figures as before, a bounded cost, no extra query, cached.

The round here is shaped like benchmarks/scale.py's (outline topics of six facets, every assessor judging every
passage: one or two facets each, some removed, transitions between neighbours), written in bulk with the change
behind each judgement. Its facet layer has many labels (sets of one topic's facets), the case that once made
Krippendorff's α hold a units × labels × labels array.
"""

import math
import random
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Assignment, Campaign
from annotation.reports.agreement import campaign_report
from annotation.roles import Role, ensure_groups
from assessments.models import Judgement, JudgementChange, Layer, Topic
from assessments.models.judgements import RELEVANCE_GRADE
from assessments.services.judging import record_judgement
from tests import factories

pytestmark = pytest.mark.django_db

FACETS = 6
# campaign_report(judged_round()) as the code before the change computed it (commit 527e2df): per layer α,
# Fleiss' κ, the shares, each pair's (Cohen's κ, weighted κ) in pair order, each topic's (α, Fleiss' κ); and each
# pair's Kendall τ of ranking stability.
BEFORE = {'relevance': {'alpha': -0.06882876634805912,
               'fleiss_kappa': 0.0012754145097156747,
               'all_agree': 0.020833333333333332,
               'none_agree': 0.020833333333333332,
               'pairs': [(0.07913669064748197, 0.07981220657277),
                         (0.010600706713780843, -0.12149532710280386),
                         (-0.02127659574468085, -0.09704641350210963),
                         (0.048916408668730614, -0.02170283806343898),
                         (-0.07420494699646647, -0.01383831026948279),
                         (0.011183048852265981, -0.070175438596491)],
               'topics': [(-0.09218450599784744, 0.09940119760479027),
                          (-0.15263485337637883, -0.07462686567164188),
                          (0.010804624456859035, -0.06542056074766366),
                          (-0.02779680246836702, -0.029601029601029703)]},
 'facet': {'alpha': 0.07762026493144303,
           'fleiss_kappa': 0.10068426197458451,
           'all_agree': 0.0,
           'none_agree': 0.625,
           'pairs': [(0.02771855010660981, None),
                     (0.08361486486486486, None),
                     (0.1031031031031031, None),
                     (0.09505106048703849, None),
                     (0.1031031031031031, None),
                     (0.11022840119165839, None)],
           'topics': [(0.04891304347826064, 0.03999999999999999),
                      (-0.022795698924731322, -0.07509881422924904),
                      (-0.02622289460413496, -0.13286713286713286),
                      (0.03508771929824572, 0.06391347099311699)]},
 'removal': {'alpha': -0.0640293350257386,
             'fleiss_kappa': -0.06960016924053374,
             'all_agree': 0.4791666666666667,
             'none_agree': 0.0,
             'pairs': [(0.07692307692307641, None),
                       (-0.15555555555555517, None),
                       (-0.052631578947368814, None),
                       (-0.13833992094861647, None),
                       (-0.16717325227963578, None),
                       (0.0535211267605638, None)],
             'topics': [(-0.03716608594657367, -0.05923344947735227),
                        (-0.11904761904761907, -0.14285714285714285),
                        (-0.07192982456140329, -0.09473684210526315),
                        (0.005291005291005346, -0.015873015873015817)]},
 # transitions into a passage its assessor removed no longer count (issue 32, item 1): these figures changed then
 'transition': {'alpha': -0.007873268829444058,
                'fleiss_kappa': -0.03196664350243234,
                'all_agree': 0.16279069767441862,
                'none_agree': 0.27906976744186046,
                'pairs': [(0.32780082987551873, None),
                          (-0.1483253588516747, None),
                          (-0.23076923076923078, None),
                          (-0.2626931567328919, None),
                          (-0.21276595744680843, None),
                          (0.3283582089552239, None)],
                'topics': [(0.09629629629629632, -0.07876712328767119),
                           (0.11111111111111083, 0.13698630136986306),
                           (-0.06095679012345667, 0.03225806451612906),
                           (-0.21030640668523692, -0.19298245614035084)]}}
STABILITY = [1.0, 0.3333333333333334, -0.3333333333333334, 0.3333333333333334, -0.3333333333333334, 0.3333333333333334]


def judged_round(name="round", *, topics=4, passages=12, assessors=4, seed=7):
    """An outline campaign judged in full (see the module docstring); returns (campaign, topics, passages by topic)."""
    rng = random.Random(seed)
    coll = factories.collection(f"{name}-coll")
    users = [factories.user(f"{name}-a{i}") for i in range(assessors)]
    campaign = factories.campaign(name, Campaign.Task.OUTLINE)
    made, by_topic = [], {}
    for t in range(topics):
        headings = [f"{name}-T{t}/H{h}" for h in range(FACETS)]
        topic = factories.topic(coll, f"{name}-T{t}", facets=[(h, h) for h in headings])
        ps = [factories.passage(coll, f"{name}-T{t}-p{i}") for i in range(passages)]
        run = factories.run(coll, f"{name}-run{t}", {topic: ps})
        Assignment.objects.bulk_create(Assignment(campaign=campaign, assessor=u, topic=topic, run=run, position=t, kind=Assignment.Kind.OUTLINE,
                                                   token=uuid.uuid4().hex) for u in users)
        made.append(topic)
        by_topic[topic.pk] = ps
        for user in users:
            for k, passage in enumerate(ps):
                value = [{"facet": h, "relevance": rng.choice(("must", "should", "can"))}
                         for h in rng.sample(headings, rng.choice((1, 1, 2)))]
                rows = [(Layer.FACET, passage, None, value, max(RELEVANCE_GRADE[v["relevance"]] for v in value))]
                if rng.random() < 0.15:
                    rows.append((Layer.REMOVAL, passage, None, True, 0))
                if k:
                    rows.append((Layer.TRANSITION, ps[k - 1], passage, rng.choice(("same", "coherent", "switch")), None))
                for layer, p1, p2, value, grade in rows:
                    _write(campaign, user, layer, topic, p1, p2, value, grade)
    return campaign, made, by_topic


def _write(campaign, user, layer, topic, passage, passage2, value, grade):
    """One judgement and the change that made it, as record_judgement leaves them (without its checks: fast)."""
    moment = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=Judgement.objects.count())
    judgement = Judgement.objects.create(
        assessor=user, layer=layer, topic=topic, passage=passage, passage2=passage2, campaign_id=campaign.pk,
        key=Judgement.make_key(layer, topic.pk, passage.pk, passage2 and passage2.pk, "", campaign.pk),
        value=value, grade=grade, client_time=moment)
    change = JudgementChange.objects.create(change_id=uuid.uuid4(), judgement=judgement, assessor=user, layer=layer,
                                            value=value, client_time=moment, active_ms=2000)
    Judgement.objects.filter(pk=judgement.pk).update(latest_change=change)


def organiser_client(client):
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(organiser)
    return client


def test_the_agreement_figures_are_those_computed_before_the_change():
    campaign, _, _ = judged_round()
    report = campaign_report(campaign)
    seen = {}
    for layer in report["layers"]:
        # facet: 48 units × 54² > DENSE_CELLS; its pair's matrix holds the 38 labels that pair used (of 54: past
        # FULL_DOMAIN_LABELS the others' rows and columns, all zeros, are left out)
        assert len(layer["pairs"][0]["confusion"]["labels"]) == {"relevance": 4, "facet": 38}.get(
            layer["layer"], len(layer["pairs"][0]["confusion"]["labels"]))
        seen[layer["layer"]] = {
            "alpha": layer["alpha"], "fleiss_kappa": layer["fleiss_kappa"], "all_agree": layer["all_agree"],
            "none_agree": layer["none_agree"],
            "pairs": [(pair["cohen_kappa"], pair["weighted_kappa"]) for pair in layer["pairs"]],
            "topics": [(topic["alpha"], topic["fleiss_kappa"]) for topic in layer["topics"]],
        }
    # to 12 digits: the units come in the database's order, and PostgreSQL's and SQLite's orders sum differently
    # in the last bits (Fleiss' κ differed by 9e-16 on PostgreSQL)
    assert _close(seen, BEFORE), seen
    assert [pair["tau"] for pair in report["ranking_stability"]["pairs"]] == STABILITY


def _close(a, b) -> bool:
    """Equal, numbers to 12 significant digits, through dicts, lists and tuples."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return a == b


def test_the_dashboard_charts_each_pair_as_the_whole_confusion_matrix_folded():
    from annotation.reports.dashboard import MATRIX_LABELS, dashboard, matrix

    campaign, _, _ = judged_round()
    full = {layer["layer"]: layer for layer in campaign_report(campaign, per_topic=False)["layers"]}
    shown = dashboard(campaign)["agreement"]["layers"]
    assert [layer["layer"] for layer in shown] == list(full)
    for n, layer in enumerate(shown):
        for m, pair in enumerate(layer["pairs"]):
            confusion = full[layer["layer"]]["pairs"][m]["confusion"]
            expected = matrix(f"confusion-{n}-{m}", f"{pair['a']} (rows) × {pair['b']} (columns)",
                              [str(x) for x in confusion["labels"]], confusion["matrix"])
            assert pair["chart"] == expected
            assert len(pair["confusion"]["labels"]) <= MATRIX_LABELS


def dashboard_queries(client, campaign):
    cache.clear()  # a view after a change: nothing cached for it
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("annotation:dashboard", args=[campaign.name]))
    assert response.status_code == 200
    return len(queries)


def test_the_dashboard_sends_as_many_queries_for_three_times_the_judgements(client):
    organiser_client(client)
    small, _, _ = judged_round("small", topics=2, passages=6, assessors=3)
    large, _, _ = judged_round("large", topics=6, passages=12, assessors=3)
    assert Judgement.objects.in_campaign(large).count() > 3 * Judgement.objects.in_campaign(small).count()
    assert dashboard_queries(client, large) == dashboard_queries(client, small)


def test_a_view_reads_the_agreement_computed_for_the_same_judgements_and_a_new_change_replaces_it(client):
    organiser_client(client)
    campaign, topics, passages = judged_round("cached", topics=2, passages=6, assessors=3)
    url = reverse("annotation:dashboard", args=[campaign.name])
    first = dashboard_queries(client, campaign)
    with CaptureQueriesContext(connection) as again:
        page = client.get(url).content.decode()
    assert len(again) < first  # campaign_report's queries are not sent again

    def alpha(page):
        return page.split('id="agreement-layers"')[1]

    user = get_user_model().objects.get(username="cached-a0")
    before = alpha(page)
    for passage in passages[topics[0].pk]:  # the first assessor now removes every passage of the first topic
        record_judgement(campaign_id=campaign.pk, assessor=user, layer=Layer.REMOVAL, value=True, topic=topics[0],
                         passage=passage)
    with CaptureQueriesContext(connection) as after_change:
        page = client.get(url).content.decode()
    assert len(after_change) > len(again) and alpha(page) != before  # computed again, with the new labels
    Assignment.objects.filter(campaign=campaign, assessor=user, topic=topics[1]).delete()
    with CaptureQueriesContext(connection) as after_taking_back:
        client.get(url)
    assert len(after_taking_back) > len(again)


def test_a_view_writes_nothing_to_the_database(client):
    organiser_client(client)
    campaign, _, _ = judged_round("quiet", topics=2, passages=6, assessors=3)
    before = factories.db_snapshot()
    with CaptureQueriesContext(connection) as queries:
        client.get(reverse("annotation:dashboard", args=[campaign.name]))
        client.get(reverse("annotation:dashboard", args=[campaign.name]))
    assert factories.db_snapshot() == before
    assert not [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))]


def test_the_campaign_list_computes_a_campaigns_agreement_at_a_glance_once_per_change(client):
    organiser_client(client)
    campaign, topics, passages = judged_round("glance", topics=2, passages=6, assessors=3)
    Assignment.objects.filter(campaign=campaign).update(status=Assignment.Status.IN_PROGRESS)
    url = reverse("annotation:campaigns")

    def reads_of_labels(queries):  # the relevance matrix is read packed (assessments.agreement.judgements)
        return [q for q in queries if "group_concat" in q["sql"].lower() or "string_agg" in q["sql"].lower()]

    with CaptureQueriesContext(connection) as first:
        client.get(url)
    with CaptureQueriesContext(connection) as again:
        client.get(url)
    assert reads_of_labels(first) and not reads_of_labels(again)
    record_judgement(campaign_id=campaign.pk, assessor=get_user_model().objects.get(username="glance-a0"),
                     layer=Layer.REMOVAL, value=True, topic=topics[0], passage=passages[topics[0].pk][0])
    with CaptureQueriesContext(connection) as after_change:
        client.get(url)
    assert reads_of_labels(after_change)
