"""A documents file uploaded on the console with an unclosed <TEXT>: imported, and the import's page says where it
was repaired (a warning naming the file, the line and the document), one line a warning, escaped."""

import gzip

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import DataImport
from annotation.services.campaigns import create_campaign
from assessments.models import Topic
from retrieval.models import Collection, Passage
from tests import factories
from tests.browser.console_steps import organiser_account

pytestmark = pytest.mark.django_db(transaction=True)

UNCLOSED = b"""<DOC>
<DOCNO> FBIS3-1 </DOCNO>
<TEXT>
Police said an international <ring> was broken up.
</DOC>
<DOC>
<DOCNO> FBIS3-2 </DOCNO>
<TEXT>
Polio is under control.
</TEXT>
</DOC>
"""


def test_an_unclosed_text_is_a_warning_on_the_import_page(client):
    client.force_login(organiser_account())
    robust = factories.collection("robust", kind=Collection.Kind.DOCUMENTS)
    factories.topic(robust, "300", kind=Topic.Kind.ADHOC, title="Older topic")
    create_campaign(name="adhoc", task="adhoc", topics=["300"], collection="robust")
    response = client.post("/campaigns/adhoc/data/", {"kind": "documents", "document_format": "auto",
                                                      "files": [SimpleUploadedFile("fbis.gz", gzip.compress(UNCLOSED))]})
    assert response.status_code == 302, response.content.decode()[-3000:]
    done = DataImport.objects.get()
    assert done.status == DataImport.Status.DONE and not done.problems
    assert done.summary == (
        "Imported 2 documents into robust. 1 warning:\n"
        "warning: fbis.gz:3: TEXT: document 'FBIS3-1': <TEXT> is never closed; its text was taken up to </DOC>")
    assert Passage.objects.get(external_id="FBIS3-1").text == "Police said an international was broken up."
    page = client.get(f"/data/imports/{done.pk}/").content.decode()
    assert ("robust. 1 warning:<br>warning: fbis.gz:3: TEXT: document &#x27;FBIS3-1&#x27;: "
            "&lt;TEXT&gt; is never closed; its text was taken up to &lt;/DOC&gt;") in page


LATIN = "<DOC>\n<DOCNO> LA-1 </DOCNO>\n<TEXT>\nCaf\u00e9 society.\n</TEXT>\n</DOC>\n".encode("latin-1")


@pytest.mark.parametrize("fields, stored, problem", [
    ({}, None, ("latin.sgml", 4, "not UTF-8 text: byte 0xe9 at offset 38")),
    ({"encoding": "latin-1"}, "Caf\u00e9 society.", None),
    ({"bad_bytes": "on"}, "Caf\ufffd society.", None),
])
def test_an_8_bit_documents_file_is_read_with_the_encoding_the_form_names(client, fields, stored, problem):
    """The console's documents upload takes the import's encoding and bad-bytes choices: by default a latin-1 byte
    refuses the file, naming its place; with its encoding it is read; with replacement it is kept, and said."""
    client.force_login(organiser_account())
    robust = factories.collection("robust", kind=Collection.Kind.DOCUMENTS)
    factories.topic(robust, "300", kind=Topic.Kind.ADHOC, title="Older topic")
    create_campaign(name="adhoc", task="adhoc", topics=["300"], collection="robust")
    client.post("/campaigns/adhoc/data/", {"kind": "documents", "document_format": "auto", **fields,
                                           "files": [SimpleUploadedFile("latin.sgml", LATIN)]})
    done = DataImport.objects.get()
    if problem:
        assert done.status == DataImport.Status.FAILED and not Passage.objects.exists()
        assert [tuple(p[k] for k in ("source", "line", "message")) for p in done.problems] == [problem]
        return
    assert done.status == DataImport.Status.DONE, done.problems
    assert Passage.objects.get(external_id="LA-1").text == stored
    if "bad_bytes" in fields:
        assert "warning: latin.sgml:4: not UTF-8 text: byte 0xe9" in done.summary
