"""import_car_run: Y3 submissions (JSON lines) and the older single-page files become runs, checked whole."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from assessments.models import Facet, Run, RunEntry, Topic
from retrieval.models import Passage
from tests import factories
from tests.factories import db_snapshot

pytestmark = pytest.mark.django_db

CAST = "car-y3/tqa-heading-cast-and-more-6.json"
TRIAL = "car-y3/runs/guir-tqa-water-distribution.json"  # source of real para ids and texts for Y3 pages


def run_import(*paths_and_args):
    out = StringIO()
    call_command("import_car_run", *[str(a) for a in paths_and_args], "--no-progress", stdout=out)
    return out.getvalue()


def rejected(*paths_and_args):
    """Call the command expecting a rejection that writes nothing; returns the error message."""
    before = db_snapshot()
    with pytest.raises(CommandError) as excinfo:
        run_import(*paths_and_args)
    assert db_snapshot() == before
    message = str(excinfo.value)
    assert message.startswith("nothing was imported")
    return message


def body_text(paragraph):
    return "".join(element["text"] for element in paragraph["para_body"])


@pytest.fixture
def outlines(data_dir):
    call_command("import_car_outlines", str(data_dir / CAST), "--no-progress", stdout=StringIO())


@pytest.fixture
def trial_paragraphs(data_dir):
    """Distinct paragraphs (para_id, para_body) of a real trial run, in article order."""
    seen, found = set(), []
    for paragraph in json.loads((data_dir / TRIAL).read_text())["paragraphs"]:
        if paragraph["para_id"] not in seen:
            seen.add(paragraph["para_id"])
            found.append(paragraph)
    return found


@pytest.fixture
def y3_page(trial_paragraphs):
    """A Y3 page for the real test topic tqa2:L_0002 with real paragraphs: y3_page(run_id=..., n=...)."""

    def make(run_id="team-bert", squid="tqa2:L_0002", n=3, origins=True, **changes):
        paragraphs = [dict(p) for p in trial_paragraphs[:n]]
        page = {
            "title": "Earth Science and its branches",
            "squid": squid,
            "run_id": run_id,
            "query_facets": [
                {"heading": "Geology", "heading_id": f"{squid}/T_0016"},
                {"heading": "Oceanography", "heading_id": f"{squid}/T_0017"},
            ],
            "paragraphs": paragraphs,
        }
        if origins:
            page["paragraph_origins"] = [
                {"para_id": p["para_id"], "section_path": f"{squid}/T_0016", "rank_score": 10.0 - rank, "rank": rank}
                for rank, p in enumerate(paragraphs, start=1)
            ]
        page.update(changes)
        return page

    return make


@pytest.fixture
def write(tmp_path):
    def write(pages, name="run.jsonl"):
        """JSON lines of `pages`, or the given text/bytes as they are."""
        path = tmp_path / name
        if isinstance(pages, bytes):
            path.write_bytes(pages)
        elif isinstance(pages, str):
            path.write_text(pages, encoding="utf-8")
        else:
            path.write_text("".join(json.dumps(page) + "\n" for page in pages), encoding="utf-8")
        return path

    return write


def ranking(run_name, squid):
    return list(
        RunEntry.objects.filter(run__name=run_name, topic__external_id=squid)
        .order_by("rank")
        .values_list("rank", "passage__external_id", "score")
    )


# --- valid Y3 submissions -----------------------------------------------------------------------------------


def test_it_imports_a_y3_page_as_run_entries_in_article_order(outlines, y3_page, write, trial_paragraphs):
    page = y3_page(n=4)
    path = write([page])

    output = run_import(path)

    assert output.startswith("1 articles from 1 files imported into collection 'car-y3': 4 run entries in 1 runs")
    run = Run.objects.get(name="team-bert")
    assert run.source == Run.Source.IMPORTED
    assert run.source_file == str(path)
    assert run.collection.name == "car-y3"
    ids = [p["para_id"] for p in page["paragraphs"]]
    assert ranking("team-bert", "tqa2:L_0002") == [
        (1, ids[0], 9.0), (2, ids[1], 8.0), (3, ids[2], 7.0), (4, ids[3], 6.0)
    ]
    entry = RunEntry.objects.get(run=run, rank=2)
    assert entry.origin == page["paragraph_origins"][1]
    assert entry.topic == Topic.objects.get(external_id="tqa2:L_0002")
    for paragraph in trial_paragraphs[:4]:
        assert Passage.objects.get(collection__name="car-y3", external_id=paragraph["para_id"]).text == body_text(
            paragraph
        )


def test_a_page_without_paragraph_origins_has_no_scores(outlines, y3_page, write):
    run_import(write([y3_page(origins=False)]))
    assert [score for _, _, score in ranking("team-bert", "tqa2:L_0002")] == [None, None, None]
    assert all(entry.origin == {} for entry in RunEntry.objects.all())


def test_several_pages_and_files_are_imported_together(outlines, y3_page, write):
    first = write([y3_page(n=2), y3_page(squid="tqa2:L_0003", n=3)], "a.jsonl")
    second = write([y3_page(run_id="other.run_1", n=5)], "b.jsonl")

    output = run_import(first, second)

    assert output.startswith(
        "3 articles from 2 files imported into collection 'car-y3': 10 run entries in 2 runs (2 new)"
    )
    assert len(ranking("team-bert", "tqa2:L_0003")) == 3
    assert len(ranking("other.run_1", "tqa2:L_0002")) == 5
    assert Passage.objects.count() == 5


def test_the_passage_text_is_the_concatenation_of_the_body_elements(outlines, y3_page, write, data_dir):
    trial = json.loads((data_dir / "car-y3/runs/water-distribution.json").read_text())
    linked = trial["paragraphs"][0]
    assert any("entity" in element for element in linked["para_body"])  # some elements carry a link

    run_import(write([y3_page(paragraphs=[linked], origins=False)]))

    passage = Passage.objects.get(external_id=linked["para_id"])
    assert passage.text == "".join(element["text"] for element in linked["para_body"])
    assert passage.text.startswith("Underwater refers to the region below the surface of")


def test_a_paragraph_without_body_refers_to_an_existing_passage(outlines, y3_page, write):
    run_import(write([y3_page(n=3)], "a.jsonl"))
    page = y3_page(run_id="bodiless", n=3)
    for paragraph in page["paragraphs"]:
        del paragraph["para_body"]

    run_import(write([page], "b.jsonl"))

    assert Passage.objects.count() == 3
    assert [pid for _, pid, _ in ranking("bodiless", "tqa2:L_0002")] == [p["para_id"] for p in page["paragraphs"]]


def test_a_paragraph_without_body_may_take_its_text_from_another_page_of_the_same_import(outlines, y3_page, write):
    bare = y3_page(run_id="bodiless", n=2)
    for paragraph in bare["paragraphs"]:
        del paragraph["para_body"]

    run_import(write([bare], "a.jsonl"), write([y3_page(n=2)], "b.jsonl"))

    assert Passage.objects.count() == 2


def test_an_existing_passage_with_the_same_text_is_reused(outlines, y3_page, write, trial_paragraphs):
    coll = Topic.objects.get(external_id="tqa2:L_0002").collection
    existing = factories.passage(coll, trial_paragraphs[0]["para_id"], text=body_text(trial_paragraphs[0]))

    output = run_import(write([y3_page(n=2)]))

    assert "1 new passages" in output
    assert RunEntry.objects.get(rank=1).passage == existing


def test_create_topics_creates_the_topic_with_facets_from_query_facets(y3_page, write):
    page = y3_page(squid="tqa2:L_9999", title="invented topic")

    output = run_import(write([page]), "--create-topics")

    assert "1 new topics" in output
    topic = Topic.objects.get(external_id="tqa2:L_9999")
    assert (topic.title, topic.kind, topic.collection.name) == ("invented topic", Topic.Kind.OUTLINE, "car-y3")
    assert list(topic.facets.order_by("position").values_list("position", "heading_id", "heading")) == [
        (1, "tqa2:L_9999/T_0016", "Geology"),
        (2, "tqa2:L_9999/T_0017", "Oceanography"),
    ]


# --- the older trial files ----------------------------------------------------------------------------------


def trial_expectations(paths):
    """Counts computed from the files themselves: pages, runs, topics, distinct paragraphs per page."""
    pages = [json.loads(path.read_text()) for path in paths]
    entries = {}
    for page in pages:
        entries[(page["run_id"], page["squid"])] = list(dict.fromkeys(p["para_id"] for p in page["paragraphs"]))
    texts = {p["para_id"]: body_text(p) for page in pages for p in page["paragraphs"]}
    return pages, entries, texts


def test_it_imports_all_trial_files_in_one_call_with_create_topics(data_dir):
    paths = sorted((data_dir / "car-y3/runs").glob("*.json"))
    pages, entries, texts = trial_expectations(paths)
    assert len(paths) == 14

    output = run_import(*paths, "--create-topics")

    assert output.startswith(f"14 articles from 14 files imported into collection 'car-y3': "
                             f"{sum(len(v) for v in entries.values())} run entries")
    assert set(Run.objects.values_list("name", flat=True)) == {p["run_id"] for p in pages}
    assert set(Topic.objects.values_list("external_id", flat=True)) == {p["squid"] for p in pages}
    assert Topic.objects.count() == 4
    assert RunEntry.objects.count() == sum(len(ids) for ids in entries.values())
    for (run_id, squid), ids in entries.items():
        assert [pid for _, pid, _ in ranking(run_id, squid)] == ids  # first places, ranks 1..n
        assert [rank for rank, _, _ in ranking(run_id, squid)] == list(range(1, len(ids) + 1))
    assert dict(Passage.objects.values_list("external_id", "text")) == texts
    # lenient rules: a 19-character run id and 48-paragraph pages are taken as they are
    assert Run.objects.filter(name="uog-linear-ltr-hier").exists()
    assert max(len(p["paragraphs"]) for p in pages) == 48


def test_it_imports_the_trial_files_one_by_one_to_the_same_result(data_dir):
    paths = sorted((data_dir / "car-y3/runs").glob("*.json"))
    _, entries, texts = trial_expectations(paths)

    for path in paths:
        assert run_import(path, "--create-topics").startswith("1 articles from 1 files")

    assert RunEntry.objects.count() == sum(len(ids) for ids in entries.values())
    assert Passage.objects.count() == len(texts)
    assert Run.objects.count() == len({run_id for run_id, _ in entries})
    for (run_id, squid), ids in entries.items():
        assert [pid for _, pid, _ in ranking(run_id, squid)] == ids


def test_a_created_trial_topic_takes_its_facets_from_the_first_page(data_dir):
    path = data_dir / "car-y3/runs/water-distribution.json"
    page = json.loads(path.read_text())

    run_import(path, "--create-topics")

    topic = Topic.objects.get(external_id="tqa:water%20distribution")
    assert topic.title == "Water Distribution"
    assert list(Facet.objects.filter(topic=topic).order_by("position").values_list("heading_id", "heading")) == [
        (f["heading_id"], f["heading"]) for f in page["query_facets"]
    ]


# --- rejections ---------------------------------------------------------------------------------------------


def test_it_rejects_a_truncated_file_and_writes_nothing(outlines, y3_page, write):
    text = json.dumps(y3_page(n=2)) + "\n" + json.dumps(y3_page(squid="tqa2:L_0003"))[:150] + "\n"
    path = write(text)
    assert f"{path}:2: invalid JSON: a string that is never closed starts at column 146\n" in rejected(path) + "\n"


def test_it_rejects_a_truncated_single_page_file(data_dir, write):
    text = (data_dir / "car-y3/runs/water-distribution.json").read_text()
    path = write(text[:900], "water.json")
    line = text[:900].count("\n") + 1
    assert f"{path}:{line}: invalid JSON:" in rejected(path, "--create-topics")


def test_it_rejects_wrong_types_naming_each_field(outlines, y3_page, write):
    page = y3_page()
    page["paragraphs"][1]["para_body"] = "plain text"
    page["paragraph_origins"][0]["rank_score"] = "high"
    page["query_facets"] = {"heading": "Geology"}
    path = write([y3_page(run_id="team-bert", squid="tqa2:L_0003"), page])

    message = rejected(path)

    assert f"{path}:2: paragraphs[1].para_body: expected a list, got a string" in message
    assert f"{path}:2: paragraph_origins[0].rank_score: expected a finite number, got 'high'" in message
    assert f"{path}:2: query_facets: expected a list, got an object" in message


def test_it_rejects_a_page_that_is_not_an_object(outlines, write):
    path = write("[1, 2]\n")
    assert f"{path}:1: expected a JSON object (one page) or JSON lines, got a list" in rejected(path)


def test_it_rejects_an_unknown_topic_and_suggests_create_topics(outlines, y3_page, write):
    path = write([y3_page(), y3_page(squid="tqa2:L_9999")])
    message = rejected(path)
    assert f"{path}:2: squid: unknown topic 'tqa2:L_9999' in collection 'car-y3'" in message
    assert "--create-topics" in message


def test_it_rejects_an_unknown_trial_topic_without_create_topics(data_dir):
    path = data_dir / "car-y3/runs/jordan.json"
    assert f"{path}:1: squid: unknown topic 'tqa:protecting%20the%20water%20supply'" in rejected(path)


def test_it_rejects_the_same_para_id_twice_in_a_y3_page(outlines, y3_page, write):
    page = y3_page(n=3, origins=False)
    page["paragraphs"].append(dict(page["paragraphs"][0]))
    path = write([page])
    message = rejected(path)
    assert f"{path}:1: paragraphs[3].para_id: '{page['paragraphs'][0]['para_id']}' is also paragraphs[0]" in message


def test_it_keeps_a_repeated_paragraph_of_a_trial_page_once_at_its_first_place(data_dir):
    path = data_dir / "car-y3/runs/guir-tqa-water-distribution.json"
    page = json.loads(path.read_text())
    ids = [p["para_id"] for p in page["paragraphs"]]
    assert len(set(ids)) < len(ids)

    output = run_import(path, "--create-topics")

    assert f"{len(ids) - len(set(ids))} repeated paragraphs of trial pages kept once" in output
    assert [pid for _, pid, _ in ranking("guir", page["squid"])] == list(dict.fromkeys(ids))


def test_it_rejects_a_bad_para_id(outlines, y3_page, write):
    page = y3_page()
    page["paragraphs"][2]["para_id"] = "abc"
    path = write([page])
    assert f"{path}:1: paragraphs[2].para_id: 'abc' is not 40 hexadecimal characters" in rejected(path)


def test_it_rejects_more_than_20_paragraphs_on_a_y3_page(outlines, y3_page, write):
    path = write([y3_page(n=21)])
    assert f"{path}:1: paragraphs: 21 paragraphs: a Y3 article has at most 20" in rejected(path)


@pytest.mark.parametrize("run_id", ["uog-linear-ltr-hier", "bad run", "", "tab\there"])
def test_it_rejects_a_bad_run_id_on_a_y3_page(outlines, y3_page, write, run_id):
    path = write([y3_page(run_id=run_id)])
    assert f"{path}:1: run_id: " in rejected(path)


def test_it_rejects_a_y3_heading_id_of_the_wrong_form(outlines, y3_page, write):
    page = y3_page()
    page["query_facets"][1]["heading_id"] = "H2"
    page["query_facets"].append({"heading": "Lava", "heading_id": "tqa2:L_0003/T_0020"})
    path = write([page])
    message = rejected(path)
    assert f"{path}:1: query_facets[1].heading_id: 'H2' is not of the form tqa2:L_xxxx/T_yyyy" in message
    assert f"{path}:1: query_facets[2].heading_id: 'tqa2:L_0003/T_0020' is a section of another page" in message


def test_it_rejects_binary_garbage(outlines, write):
    path = write(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "run.png")
    assert f"{path}:3: not a text file: NUL byte at offset 8" in rejected(path)


def test_it_rejects_bytes_that_are_not_utf8(outlines, write):
    path = write(b'{"title": "caf\xe9"}\n')
    assert f"{path}:1: not UTF-8 text" in rejected(path)


def test_it_rejects_an_empty_file(outlines, write):
    path = write("\n\n")
    assert f"{path}: the file is empty" in rejected(path)


def test_it_rejects_two_run_ids_in_one_file(outlines, y3_page, write):
    path = write([y3_page(run_id="one"), y3_page(run_id="two", squid="tqa2:L_0003")])
    assert f"{path}:2: run_id: run_id 'two' differs from 'one' (line 1): a file holds one run" in rejected(path)


def test_it_rejects_a_run_that_already_has_an_article_for_the_topic(outlines, y3_page, write):
    path = write([y3_page()])
    run_import(path)
    assert f"{path}:1: run_id: run 'team-bert' already has an article for topic 'tqa2:L_0002'" in rejected(path)


def test_it_rejects_two_articles_of_one_run_for_one_topic_in_the_same_import(outlines, y3_page, write):
    first, second = write([y3_page()], "a.jsonl"), write([y3_page(n=2)], "b.jsonl")
    message = rejected(first, second)
    expected = f"run 'team-bert' has a second article for topic 'tqa2:L_0002' (first at {first}:1)"
    assert f"{second}:1: squid: {expected}" in message


def test_it_rejects_an_existing_passage_with_a_different_text(outlines, y3_page, write, trial_paragraphs):
    coll = Topic.objects.get(external_id="tqa2:L_0002").collection
    factories.passage(coll, trial_paragraphs[1]["para_id"], text="Not the same text.")
    path = write([y3_page()])
    message = rejected(path)
    assert f"{path}:1: paragraphs[1].para_body: passage '{trial_paragraphs[1]['para_id']}' already exists" in message


def test_it_rejects_a_paragraph_without_body_that_names_no_known_passage(outlines, y3_page, write):
    page = y3_page()
    del page["paragraphs"][0]["para_body"]
    path = write([page])
    message = rejected(path)
    assert f"{path}:1: paragraphs[0].para_id: unknown document '{page['paragraphs'][0]['para_id']}'" in message


def test_a_bad_file_among_several_stops_the_whole_import(outlines, y3_page, write):
    good = write([y3_page()], "good.jsonl")
    bad = write([y3_page(run_id="other", n=21)], "bad.jsonl")

    message = rejected(good, bad)

    assert str(good) not in message
    assert f"{bad}:1: paragraphs: 21 paragraphs" in message
    assert not Run.objects.exists()


def test_it_reports_every_problem_of_a_file_at_once(outlines, y3_page, write):
    bad_id = y3_page()
    bad_id["paragraphs"][0]["para_id"] = "XYZ"
    path = write([bad_id, y3_page(run_id="team-bert", squid="tqa2:L_9999"), "not an object"])

    message = rejected(path)

    assert f"{path}:1: paragraphs[0].para_id" in message
    assert f"{path}:2: squid: unknown topic 'tqa2:L_9999'" in message
    assert f"{path}:3: expected a JSON object, got a string" in message


@pytest.mark.parametrize("pretty", [False, True], ids=["json-lines", "one-object"])
def test_it_rejects_a_number_of_more_digits_than_python_converts(outlines, y3_page, write, pretty):
    text = json.dumps(y3_page(title="BIG"), indent=2 if pretty else None).replace('"BIG"', "1" * 5000)
    path = write(text + "\n")
    assert f"{path}:{2 if pretty else 1}: invalid JSON: a number of 5,000 digits (at most 4,300 are taken)" in \
        rejected(path)
