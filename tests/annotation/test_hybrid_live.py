"""The hybrid judging order live (issue 41): a campaign's order `hybrid` with a machine source and a budget, set on
the console, over the API and in the admin by one rule; the queue serves what the hybrid order picks from the
source's scores calibrated on the human labels so far, and nothing once the budget is spent; the dashboard shows the
budget spent and left; `export_qrels --source filled` writes the human labels and the calibrated fill, and
`--sources-out` which lines the machine made; the results page shows each run's MAP and nDCG@10 with a 95%
interval."""

import json
import uuid
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Assignment, Campaign, Track
from annotation.roles import Role, ensure_groups
from annotation.services import judging_order
from annotation.services.tokens import issue_token
from assessments.models import CandidateSource, MachineLabel, MachineLabelSource, Pool, PoolCandidate, Topic
from assessments.services import hybrid, hybrid_pool
from tests import factories

pytestmark = pytest.mark.django_db
TOPICS, DOCS, RUNS = 3, 12, 3


@pytest.fixture
def world():
    """An ad hoc campaign on 3 topics × 12 pooled documents brought by 3 runs at known ranks, an imported machine
    source with a probability for every candidate, one assessor with a unit a topic."""
    rng = np.random.default_rng(7)
    coll = factories.collection("hybrid-news", kind="documents")
    topics = [factories.topic(coll, str(401 + t), kind=Topic.Kind.ADHOC, title=f"topic {t}") for t in range(TOPICS)]
    docs = {t: [factories.passage(coll, f"D{t.external_id}-{i:02d}") for i in range(DOCS)] for t in topics}
    pool = Pool.objects.create(name="hybrid-pool", collection=coll, status=Pool.Status.READY, depth=DOCS)
    pool.topics.set(topics)
    runs = [factories.run(coll, f"run-{r}") for r in range(RUNS)]
    pool.runs.set(runs)
    source = MachineLabelSource.objects.create(name="outside-llm", kind="imported", collection=coll, grades=[0, 1],
                                               status="ready")
    for t in topics:
        candidates = [PoolCandidate.objects.create(pool=pool, topic=t, passage=d, rank=i)
                      for i, d in enumerate(docs[t], start=1)]
        for r, run in enumerate(runs):  # the first run brings every candidate, the others 8 of them
            for rank, i in enumerate(rng.permutation(DOCS)[:DOCS if r == 0 else 8], start=1):
                CandidateSource.objects.create(candidate=candidates[i], run=run, rank=rank)
        for d in docs[t]:
            p = float(rng.uniform(0.02, 0.98))
            MachineLabel.objects.create(source=source, topic=t, passage=d, score=round(p, 4), grade=int(p >= 0.5))
    campaign = factories.campaign("hybrid-campaign", Campaign.Task.ADHOC, pools=[pool], settings={})
    Track.objects.create(campaign=campaign, collection=coll).topics.set(topics)
    judge = factories.user("judge")
    units = {t.pk: factories.assignment(judge, t, pool=pool, campaign=campaign) for t in topics}
    return {"collection": coll, "topics": topics, "docs": docs, "pool": pool, "runs": runs, "source": source,
            "campaign": campaign, "units": units,
            "truth": {d.pk: int(i % 3 == 0) for ds in docs.values() for i, d in enumerate(ds)}}


def set_hybrid(world, budget=10, **more):
    world["campaign"].settings = {"judging_order": "hybrid", "machine_source": world["source"].pk,
                                  "hybrid_budget": budget, **more}
    world["campaign"].save()


def organiser_client(client):
    boss = factories.user("boss", is_staff=True)
    boss.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(boss)
    return client


def page(client, unit):
    """The document ids the unit's page holds and its served-order state."""
    client.force_login(unit.assessor)
    response = client.get(f"/a/{unit.token}/")
    assert response.status_code == 200, response.content
    html = response.content.decode()
    start = html.index(">", html.index('id="adhoc-data"')) + 1
    state = json.loads(html[start:html.index("</script>", start)])
    return [d["id"] for d in state["documents"]], state["ordered"]


def grade(client, unit, passage_id, value):
    client.force_login(unit.assessor)
    body = {"change_id": str(uuid.uuid4()), "client_time": "2026-01-05T10:00:00Z", "client_seq": 1,
            "session_id": "tab", "active_ms": 1000, "layer": "grade", "passage": passage_id, "value": value}
    response = client.post(f"/a/{unit.token}/save", json.dumps(body), content_type="application/json")
    assert response.status_code == 200, response.content


def truth(world, passage_id):
    """The "assessor": every third document of a topic (by its name, not its id) is relevant."""
    return world["truth"][passage_id]


def judge_what_is_served(client, world, most=100):
    """Grade whatever each unit serves, topic after topic, until nothing is served; the labels given, in order."""
    given = []
    for _ in range(most):
        served_any = False
        for unit in world["units"].values():
            ids, state = page(client, unit)
            if state["waiting"]:
                grade(client, unit, ids[-1], truth(world, ids[-1]))
                given.append((unit.topic_id, ids[-1]))
                served_any = True
        if not served_any:
            return given
    raise AssertionError("the queue never stopped serving")


def test_labels_replaced_in_the_same_source_are_read_again_not_kept_from_before(world):
    """Importing a file again under a source's name replaces its labels in the same source: a process that kept the
    pool's scores by the source's id alone went on with the old ones."""
    source, pool = world["source"], world["pool"]
    before = hybrid_pool.stored_pool(pool, source.pk).flat.machine.copy()
    MachineLabel.objects.filter(source=source).delete()
    for label in [MachineLabel(source=source, topic=t, passage=d, score=0.5, grade=1)
                  for t in world["topics"] for d in world["docs"][t]]:
        label.save()
    after = hybrid_pool.stored_pool(pool, source.pk).flat.machine
    assert not np.allclose(before, after) and np.allclose(after, after[0])


# --- the settings: one rule for the console, the API and the admin ----------------------------------------------


@pytest.mark.parametrize("raw, field", [
    ({"judging_order": "hybrid", "hybrid_budget": 0.1}, "machine_source"),
    ({"judging_order": "hybrid", "machine_source": 1}, "hybrid_budget"),
    ({"judging_order": "hybrid", "machine_source": 1, "hybrid_budget": 0}, "hybrid_budget"),
    ({"judging_order": "hybrid", "machine_source": 1, "hybrid_budget": 1.5}, "hybrid_budget"),
    ({"judging_order": "hybrid", "machine_source": 1, "hybrid_budget": "lots"}, "hybrid_budget"),
    ({"judging_order": "hybrid", "machine_source": 1, "hybrid_budget": True}, "hybrid_budget"),
    ({"judging_order": "depth", "hybrid_budget": -3}, "hybrid_budget"),
])
def test_bad_hybrid_settings_name_their_field(raw, field):
    with pytest.raises(judging_order.OrderSettingsInvalid) as caught:
        judging_order.check_settings(raw)
    assert caught.value.field == field


@pytest.mark.parametrize("given, stored", [("0.1", 0.1), ("10%", 0.1), ("500", 500), (0.25, 0.25), (40, 40)])
def test_a_budget_is_a_share_of_the_pool_or_a_count(given, stored):
    assert hybrid.parse_budget(given) == stored and type(hybrid.parse_budget(given)) is type(stored)
    assert hybrid.budget_count(200, stored) == (round(stored * 200) if isinstance(stored, float) else min(stored, 200))


def test_the_source_must_be_one_the_campaign_may_use_on_its_collection(world):
    campaign = world["campaign"]
    other = factories.collection("elsewhere")
    theirs = MachineLabelSource.objects.create(name="elsewhere-llm", kind="imported", collection=other, status="ready")
    rivals = MachineLabelSource.objects.create(name="rival", kind="imported", collection=world["collection"],
                                               campaign_id=factories.campaign("rival", "adhoc").pk)
    names = [world["collection"].name]
    for source, words in ((theirs, "labels collection 'elsewhere'"), (rivals, "another campaign's"),
                          (9999, "no machine label source 9999")):
        with pytest.raises(judging_order.OrderSettingsInvalid) as caught:
            judging_order.order_settings(order="hybrid", machine_source=getattr(source, "pk", source),
                                         hybrid_budget="0.1", campaign_id=campaign.pk, collections=names)
        assert caught.value.field == "machine_source" and words in caught.value.message
    stored = judging_order.order_settings(order="hybrid", machine_source=world["source"].pk, hybrid_budget="10%",
                                          campaign_id=campaign.pk, collections=names)
    assert stored["hybrid_budget"] == 0.1 and stored["machine_source"] == world["source"].pk


def test_the_console_form_sets_the_hybrid_order_and_names_a_bad_field(client, world):
    campaign = world["campaign"]
    client = organiser_client(client)
    url = reverse("annotation:console_judging_order", args=[campaign.name])
    bad = client.post(url, {"judging_order": "hybrid", "machine_source": world["source"].pk, "hybrid_budget": "2.5"})
    assert bad.status_code == 400 and bad.context["order_form"].errors["hybrid_budget"]
    missing = client.post(url, {"judging_order": "hybrid", "hybrid_budget": "0.1"})
    assert missing.status_code == 400 and missing.context["order_form"].errors["machine_source"]
    done = client.post(url, {"judging_order": "hybrid", "machine_source": world["source"].pk, "hybrid_budget": "12"})
    assert done.status_code == 302
    campaign.refresh_from_db()
    assert (campaign.settings["judging_order"], campaign.settings["hybrid_budget"]) == ("hybrid", 12)
    home = client.get(reverse("annotation:campaign_home", args=[campaign.name])).content.decode()
    assert "budget 12 of the pool" in home and 'name="hybrid_budget"' in home


def test_the_api_sets_the_hybrid_order_through_the_settings_rule(world):
    campaign = world["campaign"]
    factories.user("boss").groups.add(ensure_groups()[Role.ORGANISER])
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(username='boss', role='organiser')[1]}")
    url = f"/api/campaigns/{campaign.name}/settings/"
    for settings, field in (({"judging_order": "hybrid", "machine_source": world["source"].pk,
                              "hybrid_budget": "plenty"}, "hybrid_budget"),
                            ({"judging_order": "hybrid", "hybrid_budget": 0.1}, "machine_source")):
        refused = api.post(url, {"settings": settings}, format="json")
        assert refused.status_code == 400 and refused.json()["field"] == field, refused.content
    body = {"settings": {"judging_order": "hybrid", "machine_source": world["source"].pk, "hybrid_budget": 0.2}}
    preview = api.post(url, body, format="json")
    assert preview.status_code == 200 and not preview.json()["applied"], preview.content
    assert any("shuffled → hybrid (budget 20% of each pool" in e for e in preview.json()["effects"])
    campaign.refresh_from_db()
    assert "judging_order" not in campaign.settings  # a preview writes nothing
    done = api.post(url, {**body, "confirm": preview.json()["confirm"]}, format="json")
    assert done.status_code == 200 and done.json()["applied"], done.content
    campaign.refresh_from_db()
    assert (campaign.settings["judging_order"], campaign.settings["hybrid_budget"]) == ("hybrid", 0.2)


# --- the live queue --------------------------------------------------------------------------------------------


def test_the_queue_serves_the_random_sample_first_then_the_orders_picks_and_stops_at_the_budget(client, world):
    set_hybrid(world, budget=10)
    pool, campaign = world["pool"], world["campaign"]
    settings = judging_order.settings_of(campaign).hybrid
    first = hybrid_pool.pool_plan(campaign.pk, pool, settings)
    sample = {first.stored.flat.keys[i] for i in np.flatnonzero(first.plan.sample)}
    assert len(sample) == 1 and first.plan.budget == 10
    served_first = {(t, page(client, u)[0][-1]) for t, u in world["units"].items() if page(client, u)[1]["waiting"]}
    assert sample <= served_first  # the sample's topic serves its sampled candidate first
    given = judge_what_is_served(client, world)
    assert len(given) == 10 and len(set(given)) == 10  # exactly the budget, each candidate once
    assert next(iter(sample)) in given[:TOPICS]
    for unit in world["units"].values():
        ids, state = page(client, unit)
        assert not state["waiting"] and state["stopped"] and "budget of 10 judgements" in state["reason"]
        assert "machine" not in json.dumps(state) and "hybrid" not in json.dumps(state)


def test_each_pick_is_the_hybrid_plan_of_the_labels_so_far_recalibrated_on_every_label(client, world):
    set_hybrid(world, budget=9)
    pool, campaign = world["pool"], world["campaign"]
    settings = judging_order.settings_of(campaign).hybrid
    stored = hybrid_pool.stored_pool(pool, settings.source)
    given, before = {}, None
    for _ in range(6):
        plan = hybrid.plan(stored.flat, given, 9, min_rel=1, seed=hybrid_pool.SEED)  # by hand, from the labels
        wanted = {stored.flat.keys[i][0]: stored.flat.keys[i][1] for i in reversed(plan.batch)}
        for topic_id, unit in world["units"].items():
            ids, state = page(client, unit)
            assert (ids[-1] if state["waiting"] else None) == wanted.get(topic_id)
        if before is not None:
            assert not np.allclose(before, plan.judged.probabilities)  # the calibration moved with the last label
        before = plan.judged.probabilities
        i = plan.batch[0]
        topic_id, passage_id = stored.flat.keys[i]
        grade(client, world["units"][topic_id], passage_id, truth(world, passage_id))
        given[i] = truth(world, passage_id)


def test_opening_a_hybrid_page_or_the_dashboard_writes_nothing(client, world):
    set_hybrid(world)
    unit = next(iter(world["units"].values()))
    ids, _ = page(client, unit)
    grade(client, unit, ids[-1], 1)
    before = factories.db_snapshot()
    page(client, unit)
    assert client.get("/").status_code == 200 and client.get("/next/").status_code == 302  # the queue asks the order
    organiser_client(client).get(reverse("annotation:dashboard", args=[world["campaign"].name]))
    assert factories.db_snapshot() == before


def test_a_bad_stored_budget_is_a_409_naming_the_setting_not_a_500(client, world):
    set_hybrid(world, budget="everything")
    unit = next(iter(world["units"].values()))
    client.force_login(unit.assessor)
    response = client.get(f"/a/{unit.token}/")
    assert response.status_code == 409 and b"hybrid_budget" in response.content


# --- the dashboard, the filled qrels, the results page -----------------------------------------------------------


def test_the_dashboard_draws_the_budget_spent_and_left(client, world):
    set_hybrid(world, budget=0.25)  # 36 candidates: 9 judgements
    for unit in list(world["units"].values())[:2]:
        ids, _ = page(client, unit)
        grade(client, unit, ids[-1], 0)
    response = organiser_client(client).get(reverse("annotation:dashboard", args=[world["campaign"].name]))
    chart = response.context["stopping"]["budget"]
    (spent,) = chart["pools"]
    assert (spent["budget"], spent["spent"], spent["left"]) == (9, 2, 7)
    assert chart["table"]["rows"] == [["hybrid-pool", spent["sample_judged"], 2 - spent["sample_judged"], 7, 9]]
    html = response.content.decode()
    assert 'id="chart-hybrid-budget"' in html and '<b data-role="left">7</b>' in html


def export(*args):
    out = StringIO()
    call_command("export_qrels", *args, stdout=out)
    return out.getvalue()


def test_filled_qrels_are_the_human_labels_and_the_calibrated_fill_and_say_which_is_which(client, world, tmp_path):
    set_hybrid(world, budget=8, judging_min_rel=1)
    given = judge_what_is_served(client, world)
    campaign = world["campaign"]
    human = export("--campaign", campaign.name).splitlines()
    assert len(human) == len(given) == 8  # machine labels never in the human qrels
    out, sides = tmp_path / "filled.qrels", tmp_path / "sources.txt"
    export("--campaign", campaign.name, "--source", "filled", "--out", out, "--sources-out", sides)
    lines = out.read_text().splitlines()
    sources = [line.split() for line in sides.read_text().splitlines()]
    assert len(lines) == TOPICS * DOCS == len(sources)  # every pooled candidate, once
    assert [line.split()[0::2] for line in lines] == [s[:2] for s in sources]
    by_source = {"human": [], "machine": []}
    for line, (_, _, source) in zip(lines, sources):
        by_source[source].append(line)
    assert sorted(by_source["human"]) == sorted(human)
    state = hybrid_pool.pool_plan(campaign.pk, world["pool"], judging_order.settings_of(campaign).hybrid)
    fill = hybrid.fill(state.stored.flat, state.plan.judged)
    expected = {f"{t} 0 {d} {int(fill[i])}" for i, (t, d) in enumerate(state.stored.names)
                if not state.plan.judged.judged[i]}
    assert set(by_source["machine"]) == expected and {line.split()[3] for line in by_source["machine"]} <= {"0", "1"}
    # the fill differs from the source's own labels: it is the calibrated one, not MachineLabel.grade
    own = {(t, d): g for t, d, g in MachineLabel.objects.values_list("topic__external_id", "passage__external_id",
                                                                      "grade")}
    assert any(int(line.split()[3]) != own[line.split()[0], line.split()[2]] for line in by_source["machine"])


def test_filled_qrels_refuse_another_machine_source_than_the_hybrids(client, world):
    set_hybrid(world)
    other = MachineLabelSource.objects.create(name="other-llm", kind="imported", collection=world["collection"],
                                              status="ready")
    with pytest.raises(Exception) as caught:
        export("--campaign", world["campaign"].name, "--source", "filled", "--machine-source", str(other.pk))
    assert "--machine-source" in str(caught.value) and f"source {world['source'].pk}" in str(caught.value)


def test_the_results_page_shows_each_runs_map_and_ndcg_with_a_95_percent_interval(client, world):
    set_hybrid(world, budget=0.3)
    judge_what_is_served(client, world)
    response = organiser_client(client).get(reverse("annotation:console_results", args=[world["campaign"].name]))
    (pool,) = response.context["evaluation"]["hybrid"]
    assert pool["spent"] == pool["budget"] == 11
    assert sorted(row[0] for row in pool["rows"]) == [f"run-{r}" for r in range(RUNS)]
    for _, ap, ap_low, ap_high, ndcg, ndcg_low, ndcg_high in pool["rows"]:
        assert ap_low <= ap <= ap_high and ndcg_low <= ndcg <= ndcg_high and ap_high > ap_low
    html = response.content.decode()
    assert 'id="hybrid-intervals"' in html and 'data-run="run-0"' in html


def test_another_order_has_no_budget_chart_and_no_interval(client, world):
    world["campaign"].settings = {"judging_order": "depth"}
    world["campaign"].save()
    client = organiser_client(client)
    dashboard = client.get(reverse("annotation:dashboard", args=[world["campaign"].name]))
    assert dashboard.context["stopping"]["budget"] is None and "chart-hybrid-budget" not in dashboard.content.decode()
    results = client.get(reverse("annotation:console_results", args=[world["campaign"].name]))
    assert results.context["evaluation"].get("hybrid") is None
    assert 'id="hybrid-intervals"' not in results.content.decode()


def test_the_api_gives_the_same_filled_qrels_as_the_command(client, world):
    set_hybrid(world, budget=6)
    judge_what_is_served(client, world)
    factories.user("boss").groups.add(ensure_groups()[Role.ORGANISER])
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(username='boss', role='organiser')[1]}")
    response = api.get(f"/api/qrels/?campaign={world['campaign'].name}&source=filled")
    assert response.status_code == 200
    lines = b"".join(response.streaming_content).decode()
    assert lines == export("--campaign", world["campaign"].name, "--source", "filled")
    assert len(lines.splitlines()) == TOPICS * DOCS


def test_the_command_sets_the_hybrid_order_through_the_settings_rule(world):
    from django.core.management import CommandError

    campaign, source = world["campaign"], world["source"]
    name = campaign.name
    for extra, flag in ((["--machine-source", source.pk, "--hybrid-budget", "1.5"], "--hybrid-budget"),
                        (["--hybrid-budget", "0.1"], "--machine-source"),
                        (["--machine-source", 9999, "--hybrid-budget", "0.1"], "--machine-source")):
        with pytest.raises(CommandError) as caught:
            call_command("set_judging_order", name, "--order", "hybrid", *map(str, extra), stdout=StringIO())
        assert str(caught.value).startswith(f"nothing was changed: {flag}: "), caught.value
    out = StringIO()
    call_command("set_judging_order", name, "--order", "hybrid", "--machine-source", str(source.pk),
                 "--hybrid-budget", "10%", "--dry-run", stdout=out)
    campaign.refresh_from_db()
    assert "shuffled → hybrid (budget 10% of each pool" in out.getvalue() and "judging_order" not in campaign.settings
    call_command("set_judging_order", name, "--order", "hybrid", "--machine-source", str(source.pk),
                 "--hybrid-budget", "10%", stdout=StringIO())
    campaign.refresh_from_db()
    assert judging_order.settings_of(campaign).hybrid == hybrid_pool.HybridSettings(source.pk, 0.1, 1)


def test_the_new_campaign_form_takes_the_hybrid_order_and_refuses_a_source_of_another_collection(client, world):
    client = organiser_client(client)
    form = {"name": "hybrid-new", "task": "adhoc", "collection": world["collection"].name, "topics_from": "all",
            "overlap": 1, "qualification_threshold": 90, "qualification_attempts": 2, "review_sample_size": 10,
            "review_threshold": 95, "mode": "label", "context_sentences": 5, "choice_candidates": 20,
            "plot_scale": "1 Yes\n0 No", "grade_scale": "binary", "adhoc_view": "one", "judging_order": "hybrid",
            "hybrid_budget": "0.05"}
    elsewhere = MachineLabelSource.objects.create(name="elsewhere", kind="imported",
                                                  collection=factories.collection("elsewhere"), status="ready")
    refused = client.post("/campaigns/new/", {**form, "machine_source": elsewhere.pk})
    assert refused.status_code == 400 and "labels collection 'elsewhere'" in " ".join(
        refused.context["form"].errors["machine_source"])
    assert not Campaign.objects.filter(name="hybrid-new").exists()
    made = client.post("/campaigns/new/", {**form, "machine_source": world["source"].pk})
    assert made.status_code == 302, made.content.decode()[:2000]
    settings = Campaign.objects.get(name="hybrid-new").settings
    assert (settings["judging_order"], settings["hybrid_budget"], settings["machine_source"]) == (
        "hybrid", 0.05, world["source"].pk)


# --- the queue's next unit and the budget's accounting (issue 41's gaps) ----------------------------------------


def queue_of(unit):
    from annotation.services import queue

    items = queue.queue(unit.assessor)
    return items, queue.next_assignment(unit.assessor, items=items)


def test_the_queue_never_offers_a_hybrid_unit_with_nothing_to_judge_and_says_why(client, world):
    set_hybrid(world, budget=10)
    serving = {t: page(client, u)[1]["waiting"] for t, u in world["units"].items()}
    assert any(serving.values()) and not all(serving.values())  # at the start some topics wait for others
    for position, topic_id in enumerate(sorted(serving, key=lambda t: (serving[t], t))):  # the waiting ones first
        Assignment.objects.filter(pk=world["units"][topic_id].pk).update(position=position)
    items, following = queue_of(next(iter(world["units"].values())))
    assert serving[following.topic_id]  # the next unit has a candidate to judge, though a waiting one comes first
    for a, _ in items:
        assert bool(a.paused) == (not serving[a.topic_id])
        assert a.paused is None or a.paused.startswith("other topics come first for now")
    judge_what_is_served(client, world)  # the budget spent
    items, following = queue_of(next(iter(world["units"].values())))
    assert following is None and all("budget of 10 judgements" in a.paused for a, _ in items)
    from annotation.services import queue

    assert queue.counts(items).paused == TOPICS and queue.counts(items).waiting == 0
    client.force_login(next(iter(world["units"].values())).assessor)
    home = client.get("/").content.decode()
    assert 'id="nothing-served"' in home and "3 have nothing to judge for now" in home
    assert client.get("/next/").url.endswith("/?queue")  # N goes home, not to a page with nothing to judge


def test_a_topic_stopped_under_another_order_is_not_the_next_unit_either(client, world):
    world["campaign"].settings = {"judging_order": "depth", "topic_stops": {"401": "stop"}}
    world["campaign"].save()
    first = world["units"][world["topics"][0].pk]
    items, following = queue_of(first)
    assert following is not None and following.topic.external_id != "401"
    assert {a.topic.external_id: a.paused for a, _ in items} == {"401": "stopped by the organiser", "402": None,
                                                                   "403": None}
    world["campaign"].settings = {"judging_order": "depth"}  # the organiser lets it go on: next again
    world["campaign"].save()
    assert queue_of(first)[1].pk == first.pk


def test_a_shuffled_campaigns_queue_asks_no_order(world):
    items, following = queue_of(next(iter(world["units"].values())))
    assert following is not None and all(a.paused is None for a, _ in items)


def test_a_label_made_once_the_budget_is_spent_is_stored_and_counted_outside_it_not_spent(client, world):
    set_hybrid(world, budget=6)
    # an assessor's page opened before the budget's last judgement went: a candidate nobody else judges
    given = judge_what_is_served(client, world)
    assert len(given) == 6
    late_topic = world["topics"][0]
    late = next(d.pk for d in world["docs"][late_topic] if (late_topic.pk, d.pk) not in given)
    grade(client, world["units"][late_topic.pk], late, 1)  # taken: a person's label is never lost
    campaign = world["campaign"]
    assert (late_topic.pk, late) in hybrid_pool.campaign_grades(campaign.pk)[0]
    assert len(export("--campaign", campaign.name).splitlines()) == 7  # in the human qrels
    filled = export("--campaign", campaign.name, "--source", "filled").splitlines()
    late_name = next(d.external_id for d in world["docs"][late_topic] if d.pk == late)
    assert f"{late_topic.external_id} 0 {late_name} 1" in filled  # the person's label, not the machine's fill
    (budget,) = judging_order.hybrid_budgets(campaign)
    assert (budget["budget"], budget["spent"], budget["left"], budget["outside"]) == (6, 6, 0, 1)
    response = organiser_client(client).get(reverse("annotation:dashboard", args=[campaign.name]))
    html = response.content.decode()
    assert '<b data-role="spent">6</b> of 6 spent' in html and '<b data-role="outside">1</b>' in html
    results = client.get(reverse("annotation:console_results", args=[campaign.name]))
    assert [(p["spent"], p["budget"]) for p in results.context["evaluation"]["hybrid"]] == [(6, 6)]
    for unit in world["units"].values():  # and the order serves nothing more
        assert not page(client, unit)[1]["waiting"]


def test_within_the_budget_every_label_counts_once_whoever_made_it(client, world):
    set_hybrid(world, budget=6)
    unit = next(iter(world["units"].values()))
    ids, _ = page(client, unit)
    grade(client, unit, ids[-1], 1)
    grade(client, unit, ids[-1], 0)  # a change of mind is no new judgement
    (budget,) = judging_order.hybrid_budgets(world["campaign"])
    assert (budget["spent"], budget["left"], budget["outside"]) == (1, 5, 0)
