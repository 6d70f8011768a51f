"""One key convention on every judging page (issue 39 item 11): a label keeps the page on its item and the page's
"next" key moves on; every page says so (the support pages moved on after a label, the ad hoc page did not)."""

import re
from pathlib import Path

import pytest
from django.template.loader import get_template

from annotation.views.assessor import PAGES

STATIC = Path(__file__).resolve().parents[2] / "annotation" / "static" / "annotation"


def chain(name):
    """The template's source and those of the templates it extends, itself first."""
    sources = []
    while name:
        source = Path(get_template(name).origin.name).read_text(encoding="utf-8")
        sources.append(source)
        found = re.search(r'{%\s*extends\s+"([^"]+)"\s*%}', source)
        name = found.group(1) if found else None
    return sources


@pytest.mark.parametrize("kind", sorted(PAGES))
def test_every_judging_page_says_a_label_keeps_you_on_its_item(kind):
    template, script, _ = PAGES[kind]
    sources = chain(template)
    assert any("annotation/_label_stays.html" in s for s in sources), template
    assert not any(re.search(r"{%\s*block label_stays\s*%}\s*{%\s*endblock", s) for s in sources), template
    # ... and its script does as the page says: no label handler moves to the next item
    code = (STATIC / Path(script).name).read_text(encoding="utf-8")
    assert not re.search(r"if \(value !== null[^)]*\)\s*setCurrent\(current \+ 1\)", code), script


@pytest.mark.django_db
def test_the_ad_hoc_and_study_pages_name_their_own_next_key(client):
    from tests import factories
    from tests.annotation.adhoc_setup import adhoc_world

    judge = factories.user("judge")
    world = adhoc_world(judge)
    client.force_login(judge)
    html = client.get(f"/a/{world['unit'].token}/").content.decode()
    assert 'id="label-stays"' in html and "<kbd>j</kbd> moves on" in html
    assert "<kbd>n</kbd> moves on" in get_template("annotation/_label_stays.html").render({"next_key": "n"})
