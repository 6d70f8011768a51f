"""An ad hoc campaign's data page in Chromium: a TREC topics file uploaded joins the campaign, a documents file
follows (only its own options shown), and a document opens in the preview with its paragraphs, markup as text."""

import pytest

from annotation.services.campaigns import create_campaign
from assessments.models import Topic
from retrieval.models import Collection
from tests import factories
from tests.browser.console_steps import organiser_account, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

TOPICS = b"""<top>
<num> Number: 301
<title> International Organized Crime
<desc> Description:
Identify organizations that participate in international criminal activity.
</top>
"""
DOCUMENTS = b"""<DOC>
<DOCNO> FBIS3-1 </DOCNO>
<TI> Crime Ring Broken Up </TI>
<TEXT>
Police said &lt;script&gt; that a ring
was broken up.
<P>A second paragraph.</P>
</TEXT>
</DOC>
"""


def test_topics_and_documents_uploaded_on_the_data_page(new_page, shot, tmp_path):
    organiser_account()
    robust = factories.collection("robust", kind=Collection.Kind.DOCUMENTS)
    factories.topic(robust, "300", kind=Topic.Kind.ADHOC, title="Older topic")
    create_campaign(name="adhoc", task="adhoc", topics=["300"], collection="robust")
    (tmp_path / "topics.301.txt").write_bytes(TOPICS)
    (tmp_path / "fbis.sgml").write_bytes(DOCUMENTS)
    page = new_page()
    sign_in(page, "boss", "pw-boss")
    page.goto("/campaigns/adhoc/data/")
    page.wait_for_selector("body[data-ready=console]")
    assert page.input_value("#id_kind") == "topics"
    assert page.is_visible("#id_topic_format") and page.is_hidden("#id_only_needed")
    page.set_input_files("#id_files", str(tmp_path / "topics.301.txt"))
    page.click("#upload")
    page.wait_for_selector(".messages:has-text('Imported 1 topics into robust. 1 topics added to campaign')")
    assert "2 topics in the campaign" in page.text_content("main")

    page.select_option("#id_kind", "documents")
    assert page.is_visible("#id_only_needed") and page.is_hidden("#id_topic_format")
    page.set_input_files("#id_files", str(tmp_path / "fbis.sgml"))
    page.click("#upload")
    page.wait_for_selector(".messages:has-text('Imported 1 documents into robust')")
    page.click("#document-list a:has-text('FBIS3-1')")
    page.wait_for_selector("#document-title:has-text('Crime Ring Broken Up')")
    shot(page, "console-document-preview")
    # The SGML's character references are decoded on import (ab5571a): the text says <script>, shown as text, never
    # run as markup.
    assert page.eval_on_selector_all("#document-text p", "ps => ps.map(p => p.textContent)") == [
        "Police said <script> that a ring was broken up.", "A second paragraph."]
    assert page.eval_on_selector_all("#document-text script", "s => s.length") == 0

    page.fill("#doc-id", "no-such-doc")  # the preview's own form, another document of the collection
    with page.expect_navigation() as answer:
        page.click("#document-preview")
    assert answer.value.status == 404
