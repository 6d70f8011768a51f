"""The study pages judge blind too: a forced-choice item's key names the run its negatives came from (and a pair
item made before pairs were blind names the two runs), so the page, its data, a save's answer, the queue and the
reviewer's pages name an item by an opaque handle of its own, never by its key nor by the run or the pool; the
save maps the handle back and the judgement keeps the item's real key (exports and organisers' pages unchanged)."""

import json
import uuid

import pytest
from django.urls import reverse

from annotation.models import Assignment, Campaign, Review
from annotation.roles import Role, ensure_groups
from annotation.services import plot
from assessments import studies
from assessments.models import Judgement, Layer, StudyItem
from tests import factories
from tests.annotation import plot_setup as ps

pytestmark = pytest.mark.django_db

SECRETS = ("secretrun-alpha", "secretrun-beta", "secretpool-delta")


@pytest.fixture
def world(tmp_path):
    """A plot query, a pool named like a secret, two runs named like secrets ranking its chunks, and a reviewer."""
    groups = ensure_groups()
    factories.user("rita").groups.add(groups[Role.REVIEWER])
    topic = ps.load_query(tmp_path, lines=ps.EXCERPT)
    pool, picked = ps.plot_pool(topic, size=6, name="secretpool-delta")
    alpha = factories.run(topic.collection, "secretrun-alpha", {topic: picked})
    beta = factories.run(topic.collection, "secretrun-beta", {topic: [picked[0], *reversed(picked[1:])]})
    return topic, pool, picked, alpha, beta


def unit_for(world, mode, **fields):
    topic, pool, *_ = world
    campaign = ps.campaign(f"blind-{mode}", mode=mode, **fields)
    campaign.pools.add(pool)
    return ps.assign(factories.user("judge"), topic, pool, campaign)


def state_of(response):
    html = response.content.decode()
    start = html.index('<script id="study-data" type="application/json">') + len(
        '<script id="study-data" type="application/json">')
    return json.loads(html[start:html.index("</script>", start)])


def save(client, unit, **fields):
    body = {"change_id": str(uuid.uuid4()), "client_time": "2024-05-01T12:00:00.000Z", "client_seq": 1,
            "session_id": "tab-1", **fields}
    return client.post(reverse("annotation:save", args=[unit.token]), json.dumps(body), content_type="application/json")


def everything_received(client, unit, layer, value_of):
    """Judge every item of the unit as the page would, mark it done, then review it: every text a browser got."""
    client.force_login(unit.assessor)
    page = client.get(reverse("annotation:unit", args=[unit.token]))
    assert page.status_code == 200
    state = state_of(page)
    texts = [page.content.decode()]
    for item in state["items"]:
        answer = save(client, unit, layer=layer, item=item["key"], value=value_of(item))
        assert answer.status_code == 200, answer.content
        texts.append(answer.content.decode())
    texts.append(client.post(reverse("annotation:mark", args=[unit.token]), json.dumps({"done": True}),
                             content_type="application/json").content.decode())
    texts.append(client.get(reverse("annotation:unit", args=[unit.token])).content.decode())  # with its labels
    texts.append(client.get(reverse("annotation:home")).content.decode())
    for results in (reverse("annotation:study_index"), reverse("annotation:study_results", args=[unit.pool.name])):
        assert client.get(results).status_code == 404  # the study results are the organisers'
    review = Review.objects.get(assignment=unit)
    client.force_login(review.reviewer)
    texts.append(client.get(reverse("annotation:review_queue")).content.decode())
    texts.append(client.get(reverse("annotation:review", args=[review.pk])).content.decode())
    assert client.get(reverse("annotation:study_results", args=[unit.pool.name])).status_code == 404
    return state, texts


def assert_blind(texts):
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, f"{secret!r} reached the browser: …{text[max(0, text.find(secret) - 200):][:400]}…"


def test_a_forced_choice_unit_never_names_its_run_nor_its_pool(client, world):
    topic, pool, picked, alpha, _ = world
    (item,) = studies.make_forced_choice_items(pool, alpha, n=3)
    assert "secretrun-alpha" in item.key  # the stored key names the run; the assessor must not see it
    unit = unit_for(world, "choice")
    state, texts = everything_received(client, unit, "choice", lambda it: it["options"][1])
    assert_blind(texts)
    assert [it["key"] for it in state["items"]] == [plot.item_handle(unit, item.key)]
    judgement = Judgement.objects.get(layer=Layer.CHOICE, assessor=unit.assessor)
    assert (judgement.item, judgement.value) == (item.key, state["items"][0]["options"][1])  # the real key, stored


def test_pair_units_never_name_the_runs_even_for_keys_made_before_pairs_were_blind(client, world):
    topic, pool, picked, alpha, beta = world
    ranked = studies.make_ranked_pair_items(pool, alpha, beta, depth=3)
    old = ps.pair_item(pool, topic, picked[1], picked[4], key="pair:ranked:secretrun-alpha:secretrun-beta:2")
    unit = unit_for(world, "pair")
    values = {}

    def rate(it):
        values[it["key"]] = 3 + len(values)
        return values[it["key"]]

    state, texts = everything_received(client, unit, "rating", rate)
    assert_blind(texts)
    keys = {plot.item_handle(unit, i.key): i.key for i in [*ranked, old]}
    assert sorted(it["key"] for it in state["items"]) == sorted(keys)
    stored = dict(Judgement.objects.filter(layer=Layer.RATING, assessor=unit.assessor).values_list("item", "value"))
    assert stored == {keys[handle]: value for handle, value in values.items()}  # each save on its own item


def test_a_stored_key_is_no_handle_and_another_units_handle_is_refused(client, world):
    topic, pool, picked, alpha, _ = world
    (item,) = studies.make_forced_choice_items(pool, alpha, n=3)
    unit = unit_for(world, "choice")
    other = ps.assign(factories.user("other"), topic, pool, unit.campaign)
    client.force_login(unit.assessor)
    value = item.answer.external_id
    for raw in (item.key, plot.item_handle(other, item.key), "", None, 7):
        answer = save(client, unit, layer="choice", item=raw, value=value)
        assert answer.status_code == 400 and answer.json()["field"] == "item", raw
    assert save(client, unit, layer="choice", item=plot.item_handle(unit, item.key), value=value).status_code == 200
    assert Judgement.objects.get(layer=Layer.CHOICE).item == item.key


def test_a_campaign_that_shows_run_names_names_the_pool_in_the_queue(client, world):
    topic, pool, picked, alpha, _ = world
    studies.make_forced_choice_items(pool, alpha, n=3)
    unit = unit_for(world, "choice")
    Campaign.objects.filter(pk=unit.campaign_id).update(show_run_names=True)
    client.force_login(unit.assessor)
    assert "secretpool-delta" in client.get(reverse("annotation:home")).content.decode()
    assert StudyItem.objects.filter(pool=pool).count() == 1 and Assignment.objects.count() == 1
