"""The data browser of an ad hoc campaign offers its own labels to filter by: the grades of its scale by their names
and the evidence, not a plot campaign's ("2: Describes it", query spans, forced choice, pair rating)."""

import pytest

from annotation.services.browser import label_choices, labels, read_filters
from assessments.models import Layer
from assessments.services.judging import record_judgement
from tests import factories
from tests.annotation.adhoc_setup import adhoc_world

pytestmark = pytest.mark.django_db


def test_an_ad_hoc_campaign_filters_by_its_scales_grades_and_evidence():
    ann = factories.user("ann")
    world = adhoc_world(ann, settings={"grade_scale": "robust"})
    choices = label_choices(world["campaign"])
    assert choices == [("grade:2", "2: Highly relevant"), ("grade:1", "1: Relevant"), ("grade:0", "0: Not relevant"),
                       (Layer.EVIDENCE.value, Layer.EVIDENCE.label)]
    first, second = world["documents"][:2]
    for doc, grade in ((first, 2), (second, 0)):
        record_judgement(assessor=ann, layer=Layer.GRADE, value=grade, topic=world["topic"], passage=doc,
                         campaign_id=world["campaign"].pk)
    found = labels(world["campaign"], read_filters({"label": "grade:2"})).rows  # each offered value filters
    assert [row.passage_id for row in found] == [first.pk]


def test_evidence_shows_as_the_words_it_marks_in_the_list_and_the_item():
    """Evidence is stored as offsets into the document; the browser shows the marked words (from the whole text, not
    the list's snippet), escaped as any text, and a cleared mark as such."""
    from annotation.services.browser import item, shown

    ann = factories.user("ann")
    world = adhoc_world(ann)
    doc = world["documents"][0]
    doc.text = "Intro. " * 200 + "The <b>steam engine</b> drove the mills."
    doc.save()
    start = doc.text.index("The <b>")
    record_judgement(assessor=ann, layer=Layer.EVIDENCE, value=[[start, start + 23]], topic=world["topic"],
                     passage=doc, campaign_id=world["campaign"].pk)
    (row,) = labels(world["campaign"], read_filters({"label": Layer.EVIDENCE.value})).rows
    assert row.shown == "evidence: “The <b>steam engine</b>”"
    found = item(world["campaign"], row.pk)
    assert [j.shown for j in found.labels] == ["evidence: “The <b>steam engine</b>”"]
    assert found.history[0].new_shown == "evidence: “The <b>steam engine</b>”"
    assert shown(Layer.EVIDENCE, [[0, 5]]) == "evidence at 0–5" and shown(Layer.EVIDENCE, []) == "no evidence"
    assert shown(Layer.EVIDENCE, None) == "cleared"
