"""Adjudication of citation support (issue 29, items 5 and 8): two assessors disagree on whether a cited passage
supports a sentence; the adjudication page lists the pair with the sentence and the passage (escaped), never the run
unless the campaign shows run names; the final label, an adjudicated judgement, leaves agreement as it was and is the
one the run's citation scores use; a bad final label is a 400 naming the field."""

import math

import pytest
from django.urls import reverse

from annotation.reports.agreement import campaign_report
from annotation.roles import Role, ensure_groups
from annotation.services.adjudication import AdjudicationInvalid, disagreements, set_final_label
from annotation.services.assignment import assign_campaign
from assessments.evaluation.nuggets import nugget_scores
from assessments.models import Judgement, JudgementChange, Layer
from assessments.services import nuggets
from assessments.services.judging import record_judgement
from retrieval.models import Passage
from tests import factories
from tests.annotation.nuggets_setup import DOCS, RUNS, SENTENCES, nuggets_world
from tests.annotation.test_data_browser import disagreement_keys

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"


def citation_world():
    """nuggets_world with amy and ben assigned its citations, disagreeing on one pair (whose passage carries a
    script), agreeing on the others."""
    found = nuggets_world()
    campaign = found["campaign"]
    amy, ben = factories.user("amy"), factories.user("ben")
    assign_campaign(campaign, ["amy", "ben"], overlap=2, stage="citations")
    doc = {p.external_id: p for p in Passage.objects.all()}
    doc[DOCS[1][0]].text += " " + SCRIPT
    doc[DOCS[1][0]].save()
    answer = found["answers"][RUNS[0]]
    # RUNS[0]: sentence 0 cites doc 0, sentence 1 docs 1 and 0; amy and ben differ on (sentence 1, doc 1) only
    for who, second in ((amy, "full"), (ben, "none")):
        for position, docid, value in ((0, DOCS[0][0], "full"), (1, DOCS[1][0], second), (1, DOCS[0][0], "partial")):
            record_judgement(campaign_id=campaign.pk, assessor=who, layer=Layer.CITATION_SUPPORT, value=value,
                             topic=answer.topic, passage=doc[docid], item=nuggets.citation_item(answer.pk, position))
    found.update(amy=amy, ben=ben, answer=answer, passage=doc[DOCS[1][0]], item=nuggets.citation_item(answer.pk, 1))
    return found


@pytest.fixture
def world():
    found = citation_world()
    found["organiser"] = factories.user("org", is_staff=True)
    found["organiser"].groups.add(ensure_groups()[Role.ORGANISER])
    return found


def precision(campaign):
    return nugget_scores(campaign.pk)["runs"][RUNS[0]]["citation_precision"]


def alpha(campaign):
    (entry,) = [e for e in campaign_report(campaign)["layers"] if e["layer"] == "citation_support"]
    return entry["alpha"]


def test_the_page_lists_the_pair_and_the_final_label_decides_the_score_not_agreement(client, world):
    campaign, answer, passage = world["campaign"], world["answer"], world["passage"]
    found = disagreements(campaign, layer="citation_support")
    assert found.total == 1 and found.per_layer == {"citation_support": 1}
    (item,) = found.items
    assert item.item == world["item"] and item.passage == passage and item.sentence == SENTENCES[RUNS[0]][1][0]
    assert item.labels == [("amy", "full support"), ("ben", "no support")] and item.final is None and item.run == ""
    keys = set(Judgement.objects.filter(layer=Layer.CITATION_SUPPORT, item=world["item"], passage=passage)
               .values_list("key", flat=True))
    assert disagreement_keys(campaign) == sorted(keys)  # the data browser's "disagreement" filter
    assert precision(campaign) == pytest.approx((1 + 0 + 0.5) / 3)  # a tie takes the lower label: none
    before = alpha(campaign)

    url = reverse("annotation:adjudication", args=[campaign.name])
    client.force_login(world["organiser"])
    page = client.get(url, {"layer": "citation_support"}).content.decode()
    assert SENTENCES[RUNS[0]][1][0] in page and DOCS[1][2] in page
    assert SCRIPT not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'aria-label="final citation support"' in page and 'value="partial"' in page
    assert f'name="item" value="{world["item"]}"' in page and f'name="passage" value="{passage.pk}"' in page
    assert RUNS[0] not in page and RUNS[1] not in page

    response = client.post(url, {"layer": "citation_support", "topic": answer.topic.pk, "passage": passage.pk,
                                 "item": world["item"], "label": "full"})
    assert response.status_code == 302
    final = Judgement.objects.get(assessor=world["organiser"], layer=Layer.CITATION_SUPPORT, item=world["item"])
    assert final.adjudicated and final.value == "full" and final.passage == passage
    assert final.changes.get().source == JudgementChange.Source.ADJUDICATION
    assert precision(campaign) == pytest.approx((1 + 1 + 0.5) / 3)  # the adjudicated label decides
    assert math.isclose(alpha(campaign), before, abs_tol=1e-12)  # and is no assessor's label
    assert disagreements(campaign, layer="citation_support").items[0].final == "full support"

    client.post(url, {"layer": "citation_support", "topic": answer.topic.pk, "passage": passage.pk,
                      "item": world["item"], "label": "partial"})  # counted as a vote, a three-way tie: none
    assert precision(campaign) == pytest.approx((1 + 0.5 + 0.5) / 3)


def test_the_run_shows_only_where_the_campaign_shows_run_names(client, world):
    campaign = world["campaign"]
    campaign.show_run_names = True
    campaign.save()
    (item,) = disagreements(campaign, layer="citation_support").items
    assert item.run == RUNS[0]
    client.force_login(world["organiser"])
    page = client.get(reverse("annotation:adjudication", args=[campaign.name]), {"layer": "citation_support"})
    assert RUNS[0] in page.content.decode()


def test_bad_citation_final_labels_name_the_field(client, world):
    campaign, answer, organiser, passage = world["campaign"], world["answer"], world["organiser"], world["passage"]
    topic, other = answer.topic, Passage.objects.get(external_id=DOCS[2][0])
    for kwargs, field in (
        (dict(passage=passage, item=world["item"], label="support"), "label"),
        (dict(passage=passage, item=world["item"], label=None), "label"),
        (dict(passage=passage, item=f"{answer.pk}:n1", label="full"), "item"),
        (dict(passage=passage, item="999999:1", label="full"), "item"),
        (dict(passage=passage, item=nuggets.citation_item(world["answers"][RUNS[1]].pk, 0), label="full"), "passage"),
        (dict(passage=other, item=world["item"], label="full"), "passage"),
        (dict(passage=None, item=world["item"], label="full"), "passage"),
    ):
        with pytest.raises(AdjudicationInvalid) as raised:
            set_final_label(campaign, organiser, layer="citation_support", topic=topic, **kwargs)
        assert raised.value.field == field, kwargs
    with pytest.raises(AdjudicationInvalid) as raised:
        set_final_label(campaign, world["amy"], layer="citation_support", topic=topic, passage=passage,
                        item=world["item"], label="full")
    assert raised.value.field == "assessor"

    client.force_login(organiser)
    url = reverse("annotation:adjudication", args=[campaign.name])
    good = {"layer": "citation_support", "topic": topic.pk, "passage": passage.pk, "item": world["item"],
            "label": "full"}
    for change, field in (({"label": "maybe"}, "label"), ({"passage": "x"}, "passage"), ({"passage": ""}, "passage"),
                          ({"passage": other.pk}, "passage"), ({"item": "1:2:3"}, "item"), ({"topic": "0"}, "topic"),
                          ({"passage": 10**30}, "passage")):
        response = client.post(url, {**good, **change})
        assert response.status_code == 400 and f'data-field="{field}"' in response.content.decode(), change
    assert not Judgement.objects.filter(assessor=organiser).exists()
