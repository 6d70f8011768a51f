"""One rule of disagreement, said twice in annotation/services/adjudication.py: in Python for the adjudication list
(_disagreeing reads every label once) and as the database filter of the data browser (disagreeing: a page reads a
page). On every case of the rule they list the same items, and the browser lists every label of each."""

import pytest

from annotation.models import Assignment
from annotation.roles import Role, ensure_groups
from annotation.services import browser
from annotation.services.adjudication import disagreements, set_final_label
from annotation.services.assignment import assign_campaign
from assessments.models import Judgement, JudgementChange, Layer, Qrel, QrelSet
from assessments.services import nuggets
from tests import factories
from tests.annotation.test_assignment import make_campaign
from tests.annotation.test_nugget_adjudication import world  # noqa: F401 (the fixture)

pytestmark = pytest.mark.django_db


def label(campaign, who, layer, topic, passage, value, passage2=None, **more):
    factories.judgement(who, topic, passage, passage2=passage2, layer=layer, value=value, campaign=campaign, **more)


def facets(topic, *given):
    """A facet label: (heading number, relevance) pairs."""
    return [{"facet": f"{topic.external_id}/H{h}", "relevance": r} for h, r in given]


def listed(campaign):
    """{(layer, topic, passage, passage2 or item)} adjudication lists, a relevance or facet item as its passage's."""
    items = set()
    for item in disagreements(campaign).items:
        layer = "outline" if item.layer in ("relevance", "facet") else item.layer
        items.add((layer, item.topic.pk, item.passage and item.passage.pk,
                   item.passage2.pk if item.passage2 else item.item or None))
    return items


def browsed(campaign):
    """The labels the browser's disagreement filter lists: {item as listed() names it: {(assessor, layer)}}."""
    rows = browser.labels(campaign, browser.Filters(disagreement=True), size=10_000).rows
    found = {}
    for j in rows:
        layer = "outline" if j.layer in (Layer.FACET, Layer.REMOVAL) else j.layer
        found.setdefault((layer, j.topic_id, j.passage_id, j.passage2_id or j.item or None), set()).add(
            (j.assessor.username, j.layer))
    return found


@pytest.fixture
def outline():
    """Campaign "dr": amy and ben judge topic dr-T0 (formal units), dr-T1 is their qualification topic; cat holds only a
    qualification unit of dr-T0 (her labels there are practice); dan holds no unit (his labels, imported, count)."""
    campaign, made, runs = make_campaign("dr", topics=2, runs=1, passages=10)
    (topic, ps), (practice, qs) = made
    gold = QrelSet.objects.create(name="dr-gold", collection=practice.collection)
    Qrel.objects.bulk_create(Qrel(qrel_set=gold, topic=practice, passage=p, grade=3) for p in qs)
    amy, ben, cat, dan = (factories.user(n) for n in ("amy", "ben", "cat", "dan"))
    assign_campaign(campaign, ["amy", "ben"], overlap=2, qualification_topics=[practice.external_id],
                    qualification_gold="dr-gold")
    factories.assignment(cat, topic, campaign=campaign, run=runs[0], kind=Assignment.Kind.OUTLINE, qualification=True,
                         token="cat-practice")
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(ensure_groups()[Role.ORGANISER])
    return campaign, topic, ps, practice, qs, (amy, ben, cat, dan), organiser


def test_the_browser_lists_the_labels_of_exactly_the_items_adjudication_lists(outline):
    campaign, topic, p, practice, q, (amy, ben, cat, dan), organiser = outline
    f, r, t = Layer.FACET, Layer.REMOVAL, Layer.TRANSITION
    listed_items = set()

    def item(layer, passage, second=None):
        return (layer, topic.pk, passage.pk, second.pk if second else None)

    # p0: MUST against CAN (relevance)
    label(campaign, amy, f, topic, p[0], facets(topic, (1, "must")))
    label(campaign, ben, f, topic, p[0], facets(topic, (1, "can")))
    listed_items.add(item("outline", p[0]))
    # p1: the same facets given in another order agree; cat's practice CAN is no voice
    label(campaign, amy, f, topic, p[1], facets(topic, (1, "must"), (2, "can")))
    label(campaign, ben, f, topic, p[1], facets(topic, (2, "can"), (1, "must")))
    label(campaign, cat, f, topic, p[1], facets(topic, (1, "can")))
    # p2: one MUST each, of other facets (facets)
    label(campaign, amy, f, topic, p[2], facets(topic, (1, "must")))
    label(campaign, ben, f, topic, p[2], facets(topic, (2, "must")))
    listed_items.add(item("outline", p[2]))
    # p3: both removed it (amy's facets before her removal no longer count)
    label(campaign, amy, f, topic, p[3], facets(topic, (1, "must")))
    label(campaign, amy, r, topic, p[3], True)
    label(campaign, ben, r, topic, p[3], True)
    # p4: amy's removal undone: MUST against MUST
    label(campaign, amy, f, topic, p[4], facets(topic, (1, "must")))
    label(campaign, amy, r, topic, p[4], False)
    label(campaign, ben, f, topic, p[4], facets(topic, (1, "must")))
    # p5: removed (0) against MUST
    label(campaign, amy, f, topic, p[5], facets(topic, (1, "must")))
    label(campaign, amy, r, topic, p[5], True)
    label(campaign, ben, f, topic, p[5], facets(topic, (1, "must")))
    listed_items.add(item("outline", p[5]))
    # p6: the assessors agree; an organiser's different final label is no voice
    label(campaign, amy, f, topic, p[6], facets(topic, (1, "must")))
    label(campaign, ben, f, topic, p[6], facets(topic, (1, "must")))
    set_final_label(campaign, organiser, layer="relevance", topic=topic, passage=p[6], facet=f"{topic.external_id}/H1",
                    relevance="can")
    # p7: dan, with no unit, is a voice (labels imported into the campaign)
    label(campaign, amy, f, topic, p[7], facets(topic, (1, "must")))
    label(campaign, dan, f, topic, p[7], facets(topic, (1, "can")))
    listed_items.add(item("outline", p[7]))
    # p8: a legacy DUPLICATE has no grade: no relevance to differ on, and the same facet
    label(campaign, amy, f, topic, p[8], facets(topic, (1, "duplicate")), source=JudgementChange.Source.IMPORT)
    label(campaign, ben, f, topic, p[8], facets(topic, (1, "must")))
    # p9: a cleared label is none: amy's MUST cleared, ben's CAN alone
    label(campaign, amy, f, topic, p[9], facets(topic, (1, "must")))
    label(campaign, amy, f, topic, p[9], None)
    label(campaign, ben, f, topic, p[9], facets(topic, (1, "can")))
    # transitions of the article p0 … p9: p0 → p1 differ; p1 → p2 agree; p4 → p5 differ, but amy removed p5, so
    # hers is stale (the page then shows p4 → p6)
    for who, first, second, third in ((amy, "same", "same", "same"), (ben, "switch", "same", "switch")):
        label(campaign, who, t, topic, p[0], first, passage2=p[1])
        label(campaign, who, t, topic, p[1], second, passage2=p[2])
        label(campaign, who, t, topic, p[4], third, passage2=p[5])
    listed_items.add(item("transition", p[0], p[1]))
    # grades of a candidate (plot, ad hoc) in the same campaign: 2 against 1 differ, 1 and 1 agree
    for who, plot_grade in ((amy, 2), (ben, 1)):
        label(campaign, who, Layer.PLOT_GRADE, topic, p[0], plot_grade)
        label(campaign, who, Layer.GRADE, topic, p[1], 1)
    listed_items.add(item(Layer.PLOT_GRADE, p[0]))
    # the practice topic: amy and ben hold only qualification units of it
    label(campaign, amy, f, practice, q[0], facets(practice, (1, "must")))
    label(campaign, ben, f, practice, q[0], facets(practice, (1, "can")))

    assert listed(campaign) == listed_items
    found = browsed(campaign)
    assert set(found) == listed_items
    assert found[item("outline", p[5])] == {("amy", f), ("amy", r), ("ben", f)}
    assert found[item("outline", p[7])] == {("amy", f), ("dan", f)}
    assert found[item("transition", p[0], p[1])] == {("amy", t), ("ben", t)}
    set_final_label(campaign, organiser, layer="relevance", topic=topic, passage=p[0],
                    facet=f"{topic.external_id}/H1", relevance="should")
    assert browsed(campaign)[item("outline", p[0])] == {("amy", f), ("ben", f), ("org", f)}  # the final label too


def test_a_nugget_taken_out_of_the_bank_is_listed_by_neither(world):  # noqa: F811
    """amy and ben differ on the bank's first nugget; once the topic's bank no longer holds it, neither the
    adjudication list nor the browser lists their labels of it."""
    campaign, answer = world["campaign"], world["answer"]
    assert set(browsed(campaign)) == listed(campaign) == {
        ("nugget_support", answer.topic_id, None, world["item"])}
    bank = nuggets.topic_banks(campaign.pk)[answer.topic_id]
    factories.judgement(bank.assessor, answer.topic, layer=Layer.NUGGETS, value=bank.value[1:], campaign=campaign,
                        source=JudgementChange.Source.IMPORT)
    assert listed(campaign) == set() and browsed(campaign) == {}
    assert Judgement.objects.filter(layer=Layer.NUGGET_SUPPORT, item=world["item"]).count() == 2
