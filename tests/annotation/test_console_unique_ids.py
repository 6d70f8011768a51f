"""Every id on a console page with several forms is its own: the field wrappers (`field-…`, from the bound field's
id), the inputs and their labels. A repeated id breaks label `for`, aria-describedby and `#field-…` links."""

from collections import Counter
from html.parser import HTMLParser

import pytest

from assessments.models import MachineLabel, MachineLabelSource, Pool, PoolCandidate
from tests.assessments.machine_setup import campaign  # noqa: F401 — four topics, two runs, two assessors

pytestmark = pytest.mark.django_db


class Ids(HTMLParser):
    """The value of every id attribute, in document order."""

    def __init__(self):
        super().__init__()
        self.ids = []

    def handle_starttag(self, tag, attrs):
        self.ids += [value for name, value in attrs if name == "id"]

    handle_startendtag = handle_starttag


def repeated_ids(html):
    parser = Ids()
    parser.feed(html)
    return sorted(i for i, n in Counter(parser.ids).items() if n > 1)


@pytest.fixture
def world(campaign):  # noqa: F811
    """The campaign with its pool and a trained annotator with a label: every form of the Machine page is shown."""
    pool = Pool.objects.get(name="aero-pool")
    campaign.pools.add(pool)
    source = MachineLabelSource.objects.create(name="annotator-x", kind="classifier", collection=pool.collection,
                                               campaign_id=campaign.pk, model="features", status="ready",
                                               grades=[0, 1])
    candidate = PoolCandidate.objects.filter(pool=pool).first()
    MachineLabel.objects.create(source=source, topic_id=candidate.topic_id, passage_id=candidate.passage_id, grade=1,
                                score=0.9)
    return campaign


def test_the_parser_finds_a_repeated_id():
    assert repeated_ids('<div id="a"><input id="b"><p id="a"></p></div>') == ["a"]


@pytest.mark.parametrize("page", ["machine", "", "people", "pools", "work"])
def test_no_id_repeats_on_a_console_page_with_several_forms(client, organiser, world, page):
    url = "/people/" if page == "people" else f"/campaigns/{world.name}/{page + '/' if page else ''}"
    response = client.get(url)
    assert response.status_code == 200, url
    html = response.content.decode()
    if page == "machine":  # every form is there, each with a field named like another form's
        assert all(f'id="{form}-form"' in html for form in ("train", "label", "zero-shot", "judge", "audit"))
    assert repeated_ids(html) == []
    if page == "machine":
        assert 'id="field-label-pools"' in html and 'id="field-judge-pools"' in html and 'id="audit-seed"' in html
