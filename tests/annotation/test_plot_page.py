"""The plot pages at a/<token>/: the right page for the assignment's kind, only for its assessor, escaped, in a seeded order."""

import json

import pytest
from django.urls import reverse

from annotation.services import plot
from assessments.models import Layer
from assessments.services.judging import record_judgement
from tests import factories
from tests.annotation import plot_setup as ps

pytestmark = pytest.mark.django_db

EVIL = '<script>alert("x")</script>'


@pytest.fixture
def topic(tmp_path):
    return ps.load_query(tmp_path, text=f"The dog {EVIL} learns who holds the club.", lines=ps.EXCERPT)


@pytest.fixture
def pooled(topic):
    return ps.plot_pool(topic, size=6)


@pytest.fixture
def assignment(topic, pooled):
    pool, _ = pooled
    return ps.assign(factories.user("judge"), topic, pool, ps.campaign(context_sentences=2))


def url(assignment):
    return reverse("annotation:unit", args=[assignment.token])


def state_of(response, name="plot-data"):
    html = response.content.decode()
    marker = f'<script id="{name}" type="application/json">'
    start = html.index(marker) + len(marker)
    return json.loads(html[start : html.index("</script>", start)])


def test_a_plot_assignment_opens_the_labelling_page_with_every_candidate_and_its_context(client, assignment, pooled):
    _, picked = pooled
    client.force_login(assignment.assessor)
    response = client.get(url(assignment))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'body class="outline-page plot-page' in html
    state = state_of(response)
    assert sorted(c["id"] for c in state["candidates"]) == sorted(p.pk for p in picked)
    assert state["scale"] == [[2, "Describes it", "2"], [1, "Partly", "1"], [0, "Does not", "0"]]
    assert html.count('<mark class="chunk">') == len(picked)
    assignment.refresh_from_db()
    assert assignment.status == assignment.Status.TODO  # opening the page changes nothing


def test_the_context_window_is_the_campaigns_setting(assignment, pooled):
    _, picked = pooled
    middle = next(p for p in picked if p.first_sentence > 10)
    (paragraphs,) = plot.with_context([middle], 2)
    segments = [s for para in paragraphs for s in para]
    chunk_at = next(i for i, s in enumerate(segments) if s["chunk"])
    assert segments[chunk_at]["text"] == middle.text
    sentences = list(middle.book.sentences.filter(index__gte=middle.first_sentence - 2, index__lt=middle.first_sentence)
                     .order_by("index").values_list("text", flat=True))
    assert " ".join(s["text"] for s in segments[:chunk_at]) == " ".join(sentences)
    (alone,) = plot.with_context([middle], 0)
    assert alone == [[{"text": middle.text, "chunk": True}]]


def test_candidates_come_in_a_seeded_order_of_their_own_never_the_pools(client, topic, pooled):
    pool, picked = pooled
    camp = ps.campaign()
    orders = []
    for i in range(4):
        a = ps.assign(factories.user(f"judge{i}"), topic, pool, camp)
        order = [c.passage_id for c in plot.candidates(a)]
        assert order == [c.passage_id for c in plot.candidates(a)]  # the same every time for one assessor
        orders.append(order)
    rank_order = [p.pk for p in picked]
    assert sorted(orders[0]) == sorted(rank_order)
    assert any(o != rank_order for o in orders)
    assert len({tuple(o) for o in orders}) > 1


def test_another_assessors_assignment_is_404_and_its_labels_are_not_shown(client, assignment, pooled):
    _, picked = pooled
    record_judgement(assessor=assignment.assessor, layer=Layer.PLOT_GRADE, value=2, topic=assignment.topic, passage=picked[0])
    other = factories.user("other")
    client.force_login(other)
    assert client.get(url(assignment)).status_code == 404
    mine = ps.assign(other, assignment.topic, assignment.pool, assignment.campaign)
    assert state_of(client.get(url(mine)))["labels"] == {"grades": {}, "spans": {}}


def test_untrusted_query_and_passages_are_escaped(client, assignment, pooled):
    _, picked = pooled
    picked[0].text = f"Chunk {EVIL}"
    picked[0].save()
    client.force_login(assignment.assessor)
    html = client.get(url(assignment)).content.decode()
    assert EVIL not in html
    assert html.count("<script") == 3  # the page's data, autosave.js and plot.js
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert state_of(client.get(url(assignment)))["query"] == assignment.topic.text


def test_the_campaigns_scale_and_a_bad_setting(client, assignment):
    assignment.campaign.settings = {"plot_scale": [[1, "Yes"], [0, "No"]]}
    assignment.campaign.save()
    client.force_login(assignment.assessor)
    assert state_of(client.get(url(assignment)))["scale"] == [[1, "Yes", "1"], [0, "No", "0"]]
    assignment.campaign.settings = {"plot_scale": [[1, "Yes"]]}
    assignment.campaign.save()
    response = client.get(url(assignment))
    assert response.status_code == 409 and b"plot_scale" in response.content  # the campaign's fault, not a crash


def test_organisers_see_the_page_read_only(client, assignment):
    organiser = factories.user("boss", is_staff=True)
    client.force_login(organiser)
    response = client.get(url(assignment))
    assert response.status_code == 200 and state_of(response)["readonly"] is True
    assignment.refresh_from_db()
    assert assignment.status == assignment.Status.TODO


def test_the_choice_mode_shows_the_items_candidates_shuffled(client, topic, pooled):
    pool, picked = pooled
    ps.choice_item(pool, topic, picked[:4], answer=picked[1])
    a = ps.assign(factories.user("judge"), topic, pool, ps.campaign(mode="choice"))
    client.force_login(a.assessor)
    response = client.get(url(a))
    assert b"choice-page" in response.content
    state = state_of(response, "study-data")
    (item,) = state["items"]
    assert sorted(item["options"]) == sorted(p.external_id for p in picked[:4])
    assert item["key"] == ps.handle(a, "choice-1") and "choice-1" not in response.content.decode()  # the key stays home


def test_the_pair_mode_shows_both_passages_and_ten_grades(client, topic, pooled):
    pool, picked = pooled
    ps.pair_item(pool, topic, picked[0], picked[1])
    a = ps.assign(factories.user("judge"), topic, pool, ps.campaign(mode="pair"))
    client.force_login(a.assessor)
    html = client.get(url(a)).content.decode()
    assert "pair-page" in html and html.count('class="rate"') == 10
    assert picked[0].external_id in html and picked[1].external_id in html


def test_the_queue_lists_plot_and_study_assignments_with_their_progress(client, topic, pooled):
    pool, picked = pooled
    judge = factories.user("judge")
    labelling = ps.assign(judge, topic, pool, ps.campaign())
    ps.choice_item(pool, topic, picked[:3], answer=picked[0])
    choosing = ps.assign(judge, topic, pool, ps.campaign("choices", mode="choice"))
    record_judgement(assessor=judge, layer=Layer.PLOT_GRADE, value=1, topic=topic, passage=picked[2],
                     campaign_id=labelling.campaign_id)
    client.force_login(judge)
    html = client.get(reverse("annotation:home")).content.decode()
    assert "Plot labelling" in html and "Forced choice" in html
    assert "5 candidates left" in html and "1 item left" in html
    assert reverse("annotation:unit", args=[labelling.token]) in html
    assert reverse("annotation:unit", args=[choosing.token]) in html


def test_next_goes_from_a_plot_assignment_to_the_next_open_one_in_the_queue(client, topic, pooled):
    pool, picked = pooled
    judge = factories.user("judge")
    first = ps.assign(judge, topic, pool, ps.campaign())
    ps.choice_item(pool, topic, picked[:3], answer=picked[0])
    second = ps.assign(judge, topic, pool, ps.campaign("choices", mode="choice"))
    second.position = 1
    second.save()
    client.force_login(judge)
    response = client.get(reverse("annotation:next") + "?after=" + first.token)
    assert response.status_code == 302 and response["Location"] == url(second)
    assert client.get(reverse("annotation:next")).headers["Location"] == url(first)


def test_a_shuffle_that_gives_the_retrievers_order_is_turned(topic, pooled):
    pool, picked = pooled
    judge = factories.user("judge")
    for seed in range(1, 2000):  # find seeds whose plain shuffle of two candidates keeps the rank order
        two = list(pool.candidates.order_by("rank")[:2])
        if plot.shuffled(two, seed) == sorted(two, key=lambda c: c.pk) == two:
            break
    assert plot.shuffled(two, seed, avoid=lambda c: c.rank) == [two[1], two[0]]
    pool.candidates.exclude(pk__in=[c.pk for c in two]).delete()
    a = ps.assign(judge, topic, pool, ps.campaign())
    a.seed = seed
    a.save()
    assert [c.pk for c in plot.candidates(a)] == [two[1].pk, two[0].pk]
