"""manage.py import_documents: TREC SGML, JSON lines and TSV, plain or packed, streamed and written in one transaction."""

import bz2
import gzip
import io
import json
import lzma

import pytest
from django.core.management import CommandError, call_command

from assessments.models import RunEntry, Topic
from retrieval import ingest
from retrieval.models import Collection, Passage
from tests import factories

pytestmark = pytest.mark.django_db

FBIS = """<DOC>
<DOCNO> FBIS3-1 </DOCNO>
<HT>  "cr00000011094001" </HT>


<HEADER>
<H2>  March Reports </H2>
<DATE1>  1 March 1994 </DATE1>
Article Type:FBIS
Document Type:FOREIGN MEDIA SUMMARY REPORT
<H3> <TI>     FORMER YUGOSLAVIA: MARCH REPORTS </TI></H3>
</HEADER>

<TEXT>
Language: <F P=105> English </F>
Article Type:CSO

[Editorial Report] Croatian radio reported that talks
between the two sides resumed in Zagreb.

  Serbian television said the
ceasefire held overnight.
</TEXT>

</DOC>
"""

LATIMES = """<DOC>
<DOCNO> LA010189-0001 </DOCNO>
<DOCID> 1 </DOCID>
<DATE>
<P>
January 1, 1989, Sunday, Home Edition
</P>
</DATE>
<SECTION>
<P>
Book Review; Page 1; Book Review Desk
</P>
</SECTION>
<LENGTH>
<P>
1206 words
</P>
</LENGTH>
<HEADLINE>
<P>
AN ENGLISH POETIC LIFE
</P>
</HEADLINE>
<BYLINE>
<P>
By Richard Eder
</P>
</BYLINE>
<TEXT>
<P>
This is the first paragraph of the review,
wrapped over two lines.
</P>
<P>
And a second paragraph.
</P>
</TEXT>
<!-- PJG the typesetting comment -->
</DOC>
"""


def write(tmp_path, text, name="docs.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def run(*paths, collection="robust04", args=()):
    out = io.StringIO()
    call_command("import_documents", *map(str, paths), "--collection", collection, *args, "--no-progress", stdout=out)
    return out.getvalue()


def failure(*paths, collection="robust04", args=(), count=0):
    with pytest.raises(CommandError) as caught:
        run(*paths, collection=collection, args=args)
    assert Passage.objects.count() == count
    return str(caught.value)


def test_trec_sgml_title_text_paragraphs_and_other_fields(tmp_path):
    out = run(write(tmp_path, FBIS + LATIMES))
    assert "Imported 2 documents into robust04 (created the collection)" in out
    assert Collection.objects.get(name="robust04").kind == Collection.Kind.DOCUMENTS
    fbis = Passage.objects.get(external_id="FBIS3-1")
    assert fbis.title == "FORMER YUGOSLAVIA: MARCH REPORTS"
    assert fbis.text == (
        "Language: English Article Type:CSO\n\n[Editorial Report] Croatian radio reported that talks between the two "
        "sides resumed in Zagreb.\n\nSerbian television said the ceasefire held overnight.")
    assert fbis.metadata == {"ht": '"cr00000011094001"', "h2": "March Reports", "date1": "1 March 1994", "f": "English"}
    la = Passage.objects.get(external_id="LA010189-0001")
    assert la.title == "AN ENGLISH POETIC LIFE"
    assert la.text == "This is the first paragraph of the review, wrapped over two lines.\n\nAnd a second paragraph."
    assert la.metadata == {"docid": "1", "date": "January 1, 1989, Sunday, Home Edition",
                           "section": "Book Review; Page 1; Book Review Desk", "length": "1206 words",
                           "byline": "By Richard Eder"}


@pytest.mark.parametrize("pack,suffix", [(gzip.compress, ".gz"), (bz2.compress, ".bz2"), (lzma.compress, ".xz")])
def test_packed_files(tmp_path, pack, suffix):
    run(write(tmp_path, pack((FBIS + LATIMES).encode()), "la" + suffix))
    assert Passage.objects.count() == 2


def test_json_lines_pyserini_and_beir(tmp_path):
    pyserini = '{"id": "doc1", "contents": "The first document."}\n{"id": "doc2", "contents": "Second."}\n'
    beir = ('{"_id": "4983", "title": "Microstructural development", "text": "Alterations of the architecture.", '
            '"metadata": {"url": "https://example.org"}}\n')
    run(write(tmp_path, pyserini, "a.jsonl"), write(tmp_path, beir, "corpus.jsonl"), collection="mixed")
    assert Passage.objects.get(external_id="doc1").text == "The first document."
    beir_doc = Passage.objects.get(external_id="4983")
    assert (beir_doc.title, beir_doc.text) == ("Microstructural development", "Alterations of the architecture.")
    assert beir_doc.metadata == {"url": "https://example.org"}


def test_tsv_two_three_and_four_columns(tmp_path):
    run(write(tmp_path, "0\tThe presence of communication amid scientific minds.\n1\tThe Manhattan Project.\n",
              "collection.tsv"), collection="msmarco")
    assert Passage.objects.get(external_id="1").text == "The Manhattan Project."
    run(write(tmp_path, "d1\tA title\tSome text\n", "t3.tsv"), collection="three")
    assert Passage.objects.get(external_id="d1").title == "A title"
    run(write(tmp_path, "D1\thttp://x.org/\tTitle\tBody text\n", "docs.tsv"), collection="four")
    assert Passage.objects.get(external_id="D1").metadata == {"url": "http://x.org/"}


def test_placeholders_are_filled_and_only_needed_takes_what_runs_name(tmp_path):
    collection = factories.collection("robust04")
    topic = factories.topic(collection, "301", kind=Topic.Kind.ADHOC)
    placeholder = factories.passage(collection, "LA010189-0001", text="")
    other = factories.passage(collection, "unnamed", text="")
    RunEntry.objects.create(run=factories.run(collection, "r1"), topic=topic, passage=placeholder, rank=1, score=1.0)
    out = run(write(tmp_path, FBIS + LATIMES), args=["--only-needed"])
    assert "filled in 1 that runs or qrels had named" in out and "skipped 1 not needed" in out
    placeholder.refresh_from_db()
    assert placeholder.title == "AN ENGLISH POETIC LIFE"
    assert not Passage.objects.filter(external_id="FBIS3-1").exists()
    other.refresh_from_db()
    assert other.text == ""


def test_a_document_already_there_is_an_error_unless_update(tmp_path):
    path = write(tmp_path, FBIS)
    run(path)
    with pytest.raises(CommandError, match=r"docs.txt:1: id: document 'FBIS3-1' is already in robust04 \(--update"):
        run(path)
    out = run(write(tmp_path, FBIS.replace("MARCH REPORTS", "APRIL"), "new.txt"), args=["--update"])
    assert "updated 1" in out
    assert Passage.objects.get().title == "FORMER YUGOSLAVIA: APRIL"


def test_a_duplicate_docno_stores_nothing_and_says_both_lines(tmp_path):
    message = failure(write(tmp_path, FBIS + LATIMES + FBIS))
    assert "docs.txt:65: id: document 'FBIS3-1' is in the files twice (first on line 1)" in message
    assert not Collection.objects.filter(name="robust04").exists()


def test_a_duplicate_across_files_and_in_a_collection_with_passages(tmp_path):
    factories.passage(factories.collection("robust04"), "X1", text="kept")
    message = failure(write(tmp_path, FBIS, "a.txt"), write(tmp_path, LATIMES + FBIS, "b.txt"), count=1)
    assert "b.txt:40: id: document 'FBIS3-1' is in the files twice (first on line 1 of a.txt)" in message
    message = failure(write(tmp_path, "d1\tone\nd2\ttwo\nd1\tagain\n", "c.tsv"), count=1)
    assert "c.tsv:3: id: document 'd1' is in the file twice (first on line 1)" in message


@pytest.mark.parametrize("text,expected", [
    (FBIS.replace("</DOC>", ""), "docs.txt:1: DOC: <DOC> is never closed: the file ends before </DOC>"),
    (FBIS.replace("</DOC>", "") + LATIMES, "docs.txt:1: DOC: <DOC> is never closed: </DOC> is missing before the next"),
    (FBIS.replace("<DOCNO> FBIS3-1 </DOCNO>", ""), "docs.txt:1: DOCNO: the document has no <DOCNO>"),
    (FBIS + "stray words\n", "docs.txt:26: text outside <DOC> … </DOC>"),
    ('{"id": "a", "contents": "x"}\n{"contents": "no id"}\n', "docs.txt:2: id: the record has no id"),
    ('{"id": "a", "contents": "x"}\n{"id": "b", "contents": 5}\n', "docs.txt:2: contents: expected a string"),
    ('{"id": "a b", "contents": "x"}\n', "docs.txt:1: id: 'a b' is not a document id"),
    ("d1\tone\nd2\ttwo\tthree\n", "docs.txt:2: 3 columns, where the file's first line has 2 (id, text)"),
])
def test_bad_files_name_line_and_field_and_store_nothing(tmp_path, text, expected):
    assert expected in failure(write(tmp_path, text))


def test_binary_garbage_a_long_line_and_unknown_compression(tmp_path, monkeypatch):
    assert "docs.bin:1: not a text file: NUL byte" in failure(write(tmp_path, bytes(range(256)) * 4, "docs.bin"))
    assert "not UTF-8 text: byte 0xff" in failure(write(tmp_path, b"d1\tok\nd2\t\xff\xfe\n", "latin.tsv"))
    assert "compressed with zstd" in failure(write(tmp_path, b"\x28\xb5\x2f\xfd" + bytes(64), "docs.zst"))
    assert "compressed with zip" in failure(write(tmp_path, b"PK\x03\x04" + bytes(64), "docs.zip"))
    monkeypatch.setattr(ingest, "MAX_LINE_BYTES", 1024 * 1024)  # 16 MiB in use; 1 MiB here
    long = "d1\tshort\nd2\t" + "x" * (3 * 1024 * 1024) + "\nd3\tafter\n"
    assert "long.tsv:2: a line longer than 1,048,576 bytes" in failure(write(tmp_path, gzip.compress(long.encode()),
                                                                            "long.tsv"))
    huge = "<DOC>\n<DOCNO> D1 </DOCNO>\n<TEXT>\n" + ("words " * 1000 + "\n") * 200 + "</TEXT>\n</DOC>\n"
    assert "big.sgml:1: DOC: a document longer than 1,048,576 characters" in failure(write(tmp_path, huge, "big.sgml"))


def test_a_bad_record_late_in_a_big_file_rolls_back_what_was_written(tmp_path):
    lines = [json.dumps({"id": f"d{n}", "contents": f"text {n}"}) for n in range(30_000)]
    lines.append('{"contents": "no id"}')
    message = failure(write(tmp_path, "\n".join(lines) + "\n", "big.jsonl"))
    assert "big.jsonl:30001: id: the record has no id" in message


def test_many_documents_stream_in_one_copy(tmp_path):
    text = "".join(f"doc{n}\tTitle {n}\tSome text with a backslash \\ and tab-free words {n}\n" for n in range(60_000))
    run(write(tmp_path, gzip.compress(text.encode()), "many.tsv.gz"), collection="big")
    assert Passage.objects.filter(collection__name="big").count() == 60_000
    assert Passage.objects.get(external_id="doc59999").text.endswith("backslash \\ and tab-free words 59999")
