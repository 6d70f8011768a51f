"""TREC topic files and document files uploaded on the console's data page (issue 27, item 6): imported as a
background job by the importers of manage.py import_topics / import_documents, topics joining the campaign, the
problems of a bad file listed with file and line while nothing is stored; a document's preview, escaped."""

import gzip
import html
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import DataImport
from annotation.services.campaigns import create_campaign
from annotation.views.console.forms import DOCUMENT_FORMATS, TOPIC_FORMATS
from assessments.importers.topics import FORMATS as TOPIC_IMPORTER_FORMATS
from assessments.models import Topic
from retrieval.documents import FORMATS as DOCUMENT_IMPORTER_FORMATS
from retrieval.models import Collection, Passage
from tests import factories
from tests.browser.console_steps import organiser_account

pytestmark = pytest.mark.django_db(transaction=True)

TOPICS = b"""<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal
activity.

<narr> Narrative:
A relevant document must as a minimum identify the organization.
</top>

<top>
<num> Number: 302
<title> Poliomyelitis and Post-Polio

<desc> Description:
Is the disease of Poliomyelitis (polio) under control in the world?

<narr> Narrative:
Relevant documents should contain data or outbreaks of the polio disease.
</top>
"""

DOCUMENTS = b"""<DOC>
<DOCNO> FBIS3-1 </DOCNO>
<HT>  "cr00000011094001" </HT>
<HEADER>
<DATE1>  1 March 1994 </DATE1>
<H3> <TI>      Crime Ring Broken Up </TI></H3>
</HEADER>
<TEXT>
Police said on Tuesday that an international
ring was broken up.

A second paragraph, about the
organization.
</TEXT>
</DOC>
<DOC>
<DOCNO> FBIS3-2 </DOCNO>
<TEXT>
Polio is under control.
</TEXT>
</DOC>
"""


@pytest.fixture
def organiser(client):
    client.force_login(organiser_account())


@pytest.fixture
def campaign():
    robust = factories.collection("robust", kind=Collection.Kind.DOCUMENTS)
    factories.topic(robust, "300", kind=Topic.Kind.ADHOC, title="Older topic")
    return create_campaign(name="adhoc", task="adhoc", topics=["300"], collection="robust")


def post(client, url, kind, *files, **fields):
    uploads = [SimpleUploadedFile(name, content) for name, content in files]
    return client.post(url, {"kind": kind, "files": uploads, **fields})


def problems(response) -> list[tuple[str, int, str, str]]:
    """(file, line, field, message) of each row of the page's problems table."""
    body = response.content.decode()
    table = body[body.index('id="problems"'):]
    rows = re.findall(r"<tr>(.*?)</tr>", table[table.index("<tbody"):table.index("</tbody>")], re.DOTALL)
    cells = [[html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.DOTALL)]
             for r in rows]
    return [(source, int(line) if line else None, field, message) for source, line, field, message in cells]


def test_the_forms_formats_are_the_importers():
    assert [f for f, _ in TOPIC_FORMATS] == list(TOPIC_IMPORTER_FORMATS)
    assert [f for f, _ in DOCUMENT_FORMATS] == list(DOCUMENT_IMPORTER_FORMATS)


@pytest.mark.parametrize("name, content", [("topics.301-302.txt", TOPICS),
                                           ("topics.301-302.txt.gz", gzip.compress(TOPICS))])
def test_a_trec_topics_file_joins_the_campaign(client, organiser, campaign, name, content):
    page = client.get("/campaigns/adhoc/data/").content.decode()
    assert '<option value="topics" selected>' in page and 'value="documents"' in page
    response = post(client, "/campaigns/adhoc/data/", "topics", (name, content), topic_format="auto")
    assert response.status_code == 302, response.content.decode()[-3000:]
    done = DataImport.objects.get()
    assert done.status == DataImport.Status.DONE and done.kind == "topics" and done.collection == "robust"
    assert done.summary == "Imported 2 topics into robust. 2 topics added to campaign 'adhoc'."
    assert sorted(campaign.track.topics.values_list("external_id", flat=True)) == ["300", "301", "302"]
    topic = Topic.objects.get(external_id="301")
    assert topic.kind == Topic.Kind.ADHOC and topic.title == "International Organized Crime"
    assert topic.metadata["description"] == ("Identify organizations that participate in international criminal "
                                             "activity.")
    assert "Imported 2 topics" in client.get(response["Location"]).content.decode()

    again = post(client, "/campaigns/adhoc/data/", "topics", (name, content))
    assert again.status_code == 400
    # the importers' hint names the command's flag; the console names its own checkbox (the flag meant nothing here)
    assert (name, 2, "num", "topic '301' is already in robust (“Replace what the collection has” replaces it)") in (
        problems(again))
    assert "--update" not in client.get(f"/data/imports/{DataImport.objects.first().pk}/").content.decode()
    updated = post(client, "/campaigns/adhoc/data/", "topics", (name, content), update="on")
    assert updated.status_code == 302
    assert DataImport.objects.first().summary.startswith("Imported 0 topics, updated 2 into robust.")


def test_a_bad_topics_file_lists_its_problems_and_stores_nothing(client, organiser, campaign):
    bad = TOPICS.replace(b"</top>\n\n<top>", b"\n<top>", 1)  # the first <top> never closed
    before = factories.db_snapshot()
    response = post(client, "/campaigns/adhoc/data/", "topics", ("bad-topics.txt", bad))
    assert response.status_code == 400
    listed = problems(response)
    assert listed and all(source == "bad-topics.txt" and line for source, line, _, _ in listed), listed
    assert any(line == 1 and "<top>" in message for _, line, _, message in listed), listed
    assert {k: v for k, v in factories.db_snapshot().items() if not k.startswith("annotation.DataImport")} == {
        k: v for k, v in before.items() if not k.startswith("annotation.DataImport")}
    assert DataImport.objects.get().status == DataImport.Status.FAILED


def test_a_topics_file_on_the_site_data_page_needs_a_collection(client, organiser):
    response = post(client, "/data/", "topics", ("t.txt", TOPICS))
    assert response.status_code == 400 and "name the collection the file is about" in response.content.decode()
    response = post(client, "/data/", "topics", ("t.txt", TOPICS), collection="robust04")
    assert response.status_code == 302
    assert Topic.objects.filter(collection__name="robust04").count() == 2


def test_documents_upload_and_are_previewable(client, organiser, campaign):
    response = post(client, "/campaigns/adhoc/data/", "documents", ("fbis.gz", gzip.compress(DOCUMENTS)),
                    ("more.jsonl", b'{"id": "LA-1", "contents": "Text."}\n'), document_format="auto")
    assert response.status_code == 302, response.content.decode()[-3000:]
    assert DataImport.objects.get().summary == "Imported 3 documents into robust."
    page = client.get("/campaigns/adhoc/data/").content.decode()
    first = Passage.objects.get(external_id="FBIS3-1")
    assert f'href="/data/documents/?passage={first.pk}"' in page and 'id="document-lookup"' in page

    shown = client.get(f"/data/documents/?passage={first.pk}").content.decode()
    assert '<h2 id="document-title">Crime Ring Broken Up</h2>' in shown
    assert ("<p>Police said on Tuesday that an international ring was broken up.</p><p>A second paragraph, about "
            "the organization.</p>") in shown
    assert '<dt class="mono">date1</dt><dd>1 March 1994</dd>' in shown
    by_id = client.get("/data/documents/", {"collection": "robust", "id": "FBIS3-1"})
    assert by_id.status_code == 200 and "Crime Ring Broken Up" in by_id.content.decode()


def test_only_needed_documents_fill_in_what_runs_named(client, organiser, campaign):
    post(client, "/campaigns/adhoc/data/", "trec-run", ("r.run", b"300 Q0 FBIS3-2 1 1 r\n"), create_missing="on")
    response = post(client, "/campaigns/adhoc/data/", "documents", ("fbis", DOCUMENTS), only_needed="on")
    assert response.status_code == 302, response.content.decode()[-3000:]
    assert DataImport.objects.first().summary == ("Imported 0 documents into robust; filled in 1 that runs or qrels "
                                                  "had named; skipped 1 not needed, 0 needed ones not in the files.")
    assert list(Passage.objects.values_list("external_id", "text")) == [("FBIS3-2", "Polio is under control.")]


def test_a_bad_documents_file_lists_its_problems_and_stores_nothing(client, organiser, campaign):
    twice = DOCUMENTS + b"<DOC>\n<DOCNO> FBIS3-1 </DOCNO>\n<TEXT>Again.</TEXT>\n</DOC>\n"
    before = factories.db_snapshot()
    response = post(client, "/campaigns/adhoc/data/", "documents", ("fbis.txt", twice))
    assert response.status_code == 400
    listed = problems(response)
    assert len(listed) == 1 and listed[0][:3] == ("fbis.txt", 22, "id") and "FBIS3-1" in listed[0][3], listed
    assert "first on line 1" in listed[0][3]
    assert not Passage.objects.exists()
    assert {k: v for k, v in factories.db_snapshot().items() if not k.startswith("annotation.DataImport")} == {
        k: v for k, v in before.items() if not k.startswith("annotation.DataImport")}


def test_the_preview_shows_uploaded_markup_as_text(client, organiser):
    coll = factories.collection("web", kind=Collection.Kind.DOCUMENTS)
    doc = factories.passage(coll, "x<1>", title="<b>Bold</b>", text="Hi <script>alert(1)</script>\n\nSecond & last",
                            metadata={"url": "javascript:alert(2)", "tags": ["<i>a</i>", "b"], "n": {"k": 1}})
    body = client.get(f"/data/documents/?passage={doc.pk}").content.decode()
    assert "<script>alert" not in body and "<b>Bold" not in body and "<i>a" not in body
    assert "<p>Hi &lt;script&gt;alert(1)&lt;/script&gt;</p><p>Second &amp; last</p>" in body
    assert "&lt;b&gt;Bold&lt;/b&gt;" in body and "x&lt;1&gt;" in body
    assert "<dd>&lt;i&gt;a&lt;/i&gt;<br>b</dd>" in body and "<dd>{&quot;k&quot;: 1}</dd>" in body
    assert 'href="javascript' not in body


@pytest.mark.parametrize("query, status, words", [
    ("passage=abc", 400, "passage: not a passage id"),
    ("passage=%C2%B2", 400, "passage: not a passage id"),
    ("passage=99999999999999999999999", 400, "passage: not a passage id"),
    ("passage=424242", 404, None),
    ("", 400, "collection: name the document&#x27;s collection"),
    ("collection=web", 400, "id: give the document&#x27;s id"),
    ("collection=web&id=" + "x" * 201, 400, "id: longer than any document id"),
    ("collection=web&id=nope", 404, None),
    ("collection=nope&id=d1", 404, None),
])
def test_a_bad_or_unknown_document_is_a_400_naming_the_field_or_a_404(client, organiser, query, status, words):
    factories.passage(factories.collection("web"), "d1")
    response = client.get(f"/data/documents/?{query}")
    assert response.status_code == status
    if words:
        assert words in response.content.decode()


def test_the_preview_is_for_organisers_only(client):
    doc = factories.passage(factories.collection("web"), "d1")
    client.force_login(factories.user("someone"))
    assert client.get(f"/data/documents/?passage={doc.pk}").status_code == 404


def test_a_runs_problems_name_the_forms_options_not_the_commands_flags(client, organiser, campaign):
    run = b"300 Q0 D-1 1 2.0 bm25\n999 Q0 D-2 2 1.0 bm25\n"
    factories.passage(Collection.objects.get(name="robust"), "D-1")
    assert post(client, "/campaigns/adhoc/data/", "trec-run", ("run.txt", b"300 Q0 D-1 1 2.0 bm25\n")).status_code == 302
    listed = problems(post(client, "/campaigns/adhoc/data/", "trec-run", ("run2.txt", run)))
    # the run is submitted to the campaign by its uploader (issue 39 item 3): its name is checked among theirs there
    assert ("run2.txt", None, "name", "you already have a run named 'bm25' in campaign 'adhoc'") in listed, listed
    assert ("run2.txt", 2, "qid", "unknown topic '999' in collection 'robust' (“Create missing topics and documents” "
            "creates it)") in listed, listed
    assert not any("--" in message for *_, message in listed), listed
