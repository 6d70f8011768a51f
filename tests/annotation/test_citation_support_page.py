"""The citation support page (issue 29, item 5, optional per campaign): `assign_campaign --stage citations` gives a
unit per answer that cites; the page shows each cited (sentence, passage) pair with full / partial / no support
keys; a label saves as a citation_support judgement keyed on the topic, the passage and '<answer id>:<sentence>'
through the save path; the run is never on the page; bad keys are 400s naming the field; the unit is done when
every pair is labelled."""

import json

import pytest

from annotation.models import Assignment
from annotation.services.assignment import assign_campaign
from assessments.models import Judgement, Layer
from assessments.services import nuggets
from retrieval.models import Passage
from tests import factories
from tests.annotation.nuggets_setup import DOCS, RUNS, SENTENCES, nuggets_world
from tests.annotation.test_nugget_support_page import save

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(client):
    user = factories.user("citer")
    client.force_login(user)
    found = nuggets_world(user)  # its nugget support units first
    assign_campaign(found["campaign"], ["citer"], stage="citations")
    found["citations"] = {run: Assignment.objects.get(campaign=found["campaign"], run__name=run,
                                                      kind=Assignment.Kind.CITATION_SUPPORT) for run in RUNS}
    found["docs"] = {p.external_id: p.pk for p in Passage.objects.all()}
    return found


def page_state(html):
    start = html.index('id="nugget-data"')
    start = html.index(">", start) + 1
    return json.loads(html[start:html.index("</script>", start)])


def test_stage_citations_adds_a_unit_per_answer_beside_its_nugget_support_unit(world):
    kinds = sorted(Assignment.objects.filter(campaign=world["campaign"]).values_list("kind", flat=True))
    assert kinds == ["citation_support"] * 2 + ["nugget_support"] * 2
    assign_campaign(world["campaign"], ["citer"])  # again, the stage stored: nothing new
    assert Assignment.objects.filter(campaign=world["campaign"]).count() == 4


def test_the_page_lists_each_cited_pair_and_never_the_run(client, world):
    unit, answer = world["citations"][RUNS[0]], world["answers"][RUNS[0]]
    html = client.get(f"/a/{unit.token}/").content.decode()
    for secret in RUNS:
        assert secret not in html
    for docid, title, text in DOCS[:2]:
        assert title in html and text in html
    state = page_state(html)
    assert not {"run", "run_id", "run_name", "answer"} & set(state)  # answer ids would group one run's units
    docs = world["docs"]
    # sentence 1 cites doc 0; sentence 2 cites doc 1 then doc 0
    assert [i["fields"] for i in state["items"]] == [
        {"passage": docs[DOCS[0][0]], "sentence": 0},
        {"passage": docs[DOCS[1][0]], "sentence": 1},
        {"passage": docs[DOCS[0][0]], "sentence": 1},
    ]
    assert html.count('class="nugget citation-pair"') == 3 == len(SENTENCES[RUNS[0]][1][1]) + 1
    for key, name in (("f", "Full support"), ("p", "Partial support"), ("n", "No support")):
        assert f"<kbd>{key}</kbd> {name}" in html
    assert "Citation support" in client.get("/").content.decode()


def test_the_citation_and_nugget_pages_are_drawn_on_one_base_each_with_its_own_parts(client, world):
    nugget_unit, citation_unit = world["units"][RUNS[0]], world["citations"][RUNS[0]]
    for unit, title, own, other in ((nugget_unit, "Nuggets", 'class="cite"', 'class="cite-ref"'),
                                    (citation_unit, "Citations", 'class="cite-ref"', 'class="cite"')):
        response = client.get(f"/a/{unit.token}/")
        html = response.content.decode()
        assert "annotation/_answer_support.html" in [t.name for t in response.templates]
        assert f"<title>{title} · " in html and html.count('<h2 id="answer-head">The answer</h2>') == 1
        assert own in html and other not in html
    citations = client.get(f"/a/{citation_unit.token}/").content.decode()
    assert 'class="outline-page nugget-page citation-page"' in citations and 'class="cited-passages"' not in citations
    assert "<dd>next / previous citation</dd>" in citations


def test_labels_save_and_the_unit_is_done_when_every_pair_is_labelled(client, world):
    unit, answer = world["citations"][RUNS[0]], world["answers"][RUNS[0]]
    items = page_state(client.get(f"/a/{unit.token}/").content.decode())["items"]
    for seq, (entry, value) in enumerate(zip(items, ["full", "partial", "none"]), start=1):
        assert Assignment.objects.get(pk=unit.pk).status != Assignment.Status.DONE
        response = save(client, unit, seq=seq, layer="citation_support", value=value, **entry["fields"])
        assert response.status_code == 200, response.content
    assert response.json()["status"] == "done"
    rows = Judgement.objects.filter(layer=Layer.CITATION_SUPPORT).order_by("item", "passage_id")
    assert {(j.item, j.passage_id, j.value) for j in rows} == {
        (f"{answer.pk}:{e['fields']['sentence']}", e["fields"]["passage"], v)
        for e, v in zip(items, ["full", "partial", "none"])}
    assert all(nuggets.CITATION_ITEM.match(j.item) and j.campaign_id == world["campaign"].pk for j in rows)
    state = page_state(client.get(f"/a/{unit.token}/").content.decode())
    assert state["labels"] == {e["id"]: v for e, v in zip(items, ["full", "partial", "none"])}
    assert Assignment.objects.get(pk=world["units"][RUNS[0]].pk).status == Assignment.Status.TODO  # its support unit


@pytest.mark.parametrize("change, field", [
    (dict(layer="citation_support", value="supported"), "value"),
    (dict(layer="citation_support", value="full", item="999:0"), "item"),
    (dict(layer="citation_support", value="full", item=None), "item"),
    (dict(layer="citation_support", value="full", passage="x"), "passage"),
    (dict(layer="citation_support", value="full", passage=-1), "passage"),
    (dict(layer="citation_support", value="full", other_doc=True), "passage"),
    (dict(layer="nugget_support", value="support"), "layer"),
    (dict(layer="citation_support", value="full", item=None, sentence="0"), "sentence"),
    (dict(layer="citation_support", value="full", item=None, sentence=True), "sentence"),
    (dict(layer="citation_support", value="full", item=None, sentence=-1), "sentence"),
    (dict(layer="citation_support", value="full", item=None, sentence=7), "passage"),
])
def test_a_bad_change_is_a_400_naming_the_field(client, world, change, field):
    unit, answer = world["citations"][RUNS[0]], world["answers"][RUNS[0]]
    fields = {"item": f"{answer.pk}:0", "passage": world["docs"][DOCS[0][0]]}
    if change.pop("other_doc", False):
        fields["passage"] = world["docs"][DOCS[1][0]]  # cited by sentence 2, not by sentence 1
    response = save(client, unit, **{**fields, **change})
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field
    assert not Judgement.objects.filter(layer=Layer.CITATION_SUPPORT).exists()


def test_an_answer_that_cites_nothing_gets_no_citation_unit(db):
    factories.user("citer2")
    world = nuggets_world()
    world["answers"][RUNS[1]].sentences.all()[0].citations.all().delete()
    assign_campaign(world["campaign"], ["citer2"], stage="citations")
    assert list(Assignment.objects.filter(campaign=world["campaign"]).values_list("run__name", flat=True)) == [RUNS[0]]


def test_a_finished_citation_unit_is_reviewed_on_its_cited_pairs(client, world):
    from annotation.models import Review
    from annotation.roles import Role, ensure_groups
    from annotation.services import review as reviews

    reviewer = factories.user("citation-reviewer")
    reviewer.groups.add(ensure_groups()[Role.REVIEWER])
    unit = world["citations"][RUNS[0]]
    items = page_state(client.get(f"/a/{unit.token}/").content.decode())["items"]
    for seq, (entry, value) in enumerate(zip(items, ["full", "partial", "none"]), start=1):
        save(client, unit, seq=seq, layer="citation_support", value=value, **entry["fields"])
    review = Review.objects.get(assignment=unit)
    said = [entry["labels"] for entry in reviews.review_items(review)]
    assert said == [["the cited passage gives full support to sentence 1"],
                    ["the cited passage gives partial support to sentence 2"],
                    ["the cited passage gives no support to sentence 2"]]
    client.force_login(reviewer)
    html = client.get(f"/review/{review.pk}/").content.decode()
    assert "partial support to sentence 2" in html and DOCS[1][2] in html and "an answer" in html
    for run in RUNS:
        assert run not in html


def test_a_change_naming_the_pair_by_the_old_item_is_still_stored(client, world):
    """Pages before the sentence field named a pair by `item` "<answer id>:<sentence>"; an outbox may still hold one."""
    unit, answer = world["citations"][RUNS[0]], world["answers"][RUNS[0]]
    response = save(client, unit, layer="citation_support", value="full", item=f"{answer.pk}:0",
                    passage=world["docs"][DOCS[0][0]])
    assert response.status_code == 200, response.content
    assert Judgement.objects.get(layer=Layer.CITATION_SUPPORT).item == f"{answer.pk}:0"
