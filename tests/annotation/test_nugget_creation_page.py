"""The nugget creation page (issue 29, part 2): a nuggets campaign assigned at stage create gives a unit per topic;
the page shows the topic and the bank to edit (the topic's, until the assessor saves their own); each edit saves
the whole bank as the assessor's `nuggets` judgement through the save path, which then is the topic's bank; a bad
bank is a 400 naming the field."""

import json

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.models import Assignment
from annotation.services.assignment import AssignmentError, assign_campaign
from assessments.evaluation.nuggets import nugget_scores
from assessments.models import Judgement, Layer
from assessments.services import nuggets
from assessments.services.judging import record_judgement
from tests import factories
from tests.annotation.nuggets_setup import BANK, QUERY, nuggets_world
from tests.annotation.test_nugget_support_page import save

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(client):
    user = factories.user("writer")
    client.force_login(user)
    world = nuggets_world()
    assign_campaign(world["campaign"], ["writer"], stage="create")
    world["unit"] = Assignment.objects.get(campaign=world["campaign"], assessor=user)
    return world


def page_state(html):
    start = html.index('id="nugget-bank-data"')
    start = html.index(">", start) + 1
    return json.loads(html[start:html.index("</script>", start)])


def test_stage_create_makes_a_unit_per_topic_and_is_stored(world):
    unit = world["unit"]
    assert unit.kind == Assignment.Kind.NUGGET_CREATION and unit.run_id is None and unit.pool_id is None
    assert world["campaign"].__class__.objects.get(pk=world["campaign"].pk).settings["nugget_stage"] == "create"


def test_a_stage_is_for_nuggets_campaigns_and_one_of_two(world):
    with pytest.raises(AssignmentError) as exc:
        assign_campaign(world["campaign"], ["writer"], stage="write")
    assert exc.value.field == "stage"


def test_the_command_takes_the_stage(world):
    factories.user("second")
    call_command("assign_campaign", world["campaign"].name, "--assessors", "second", "--stage", "support",
                 "--no-progress")
    kinds = set(Assignment.objects.filter(campaign=world["campaign"]).values_list("kind", flat=True))
    assert kinds == {Assignment.Kind.NUGGET_CREATION, Assignment.Kind.NUGGET_SUPPORT}
    # another stage is other work: the topic's writer does not keep it, the one named gets the answers
    assert set(Assignment.objects.filter(campaign=world["campaign"], kind=Assignment.Kind.NUGGET_SUPPORT)
               .values_list("assessor__username", flat=True)) == {"second"}


def test_the_page_starts_from_the_topics_bank_and_saves_the_assessors_own(client, world):
    unit = world["unit"]
    response = client.get(f"/a/{unit.token}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert QUERY in html and "Shift D" in html and "secretrun" not in html
    state = page_state(html)
    assert [n["text"] for n in state["nuggets"]] == [t for t, _ in BANK]
    edited = [dict(n) for n in state["nuggets"]][::-1]  # reordered
    edited[0]["importance"] = "vital"
    edited[1]["text"] = "Supervision helps a lot"
    edited = edited[:3] + [{"id": "n5", "text": "Peer support helps", "importance": "okay", "origin": "assessor"}]
    now = timezone.now().isoformat()  # after the import's bank: this one is changed last
    response = save(client, unit, layer="nuggets", value=edited, client_time=now)
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "in_progress"  # done only when marked (test_the_unit_is_done_when_marked)
    mine = Judgement.objects.get(layer=Layer.NUGGETS, assessor__username="writer")
    assert mine.value == edited and mine.campaign_id == world["campaign"].pk
    topic_bank = nuggets.topic_banks(world["campaign"].pk)[unit.topic_id]
    assert topic_bank.pk == mine.pk  # the one changed last is the topic's bank
    again = page_state(client.get(f"/a/{unit.token}/").content.decode())
    assert [n["text"] for n in again["nuggets"]] == [n["text"] for n in edited]
    home = client.get("/").content.decode()
    assert "Nugget creation" in home


@pytest.mark.parametrize("value, field", [
    ([{"id": "n1", "text": "x", "importance": "crucial", "origin": "assessor"}], "value[0].importance"),
    ([{"id": "n1", "text": " ", "importance": "okay", "origin": "assessor"}], "value[0].text"),
    ([{"id": "n1", "text": "a", "importance": "okay", "origin": "assessor"},
      {"id": "n1", "text": "b", "importance": "okay", "origin": "assessor"}], "value[1]"),
    ("a bank", "value"),
    (None, "value"),
])
def test_a_bad_bank_is_a_400_naming_the_field(client, world, value, field):
    response = save(client, world["unit"], layer="nuggets", value=value)
    assert response.status_code == 400, response.content
    assert response.json()["field"].startswith(field)
    assert not Judgement.objects.filter(layer=Layer.NUGGETS, assessor__username="writer").exists()


def test_the_wrong_layer_is_a_400(client, world):
    response = save(client, world["unit"], layer="nugget_support", value="support", nugget="n1")
    assert response.status_code == 400 and response.json()["field"] == "layer"


def mark(client, unit, **body):
    return client.post(f"/a/{unit.token}/mark", json.dumps({"done": True, **body}), content_type="application/json")


def test_the_unit_is_done_when_marked_and_needs_a_vital_nugget(client, world):
    unit = world["unit"]
    okay = [{"id": "n1", "text": "Peer support helps", "importance": "okay", "origin": "assessor"}]
    vital = okay + [{"id": "n2", "text": "Burnout is a risk", "importance": "vital", "origin": "assessor"}]
    assert mark(client, unit).json()["field"] == "reason"  # nothing of theirs saved yet (the topic's bank is shown)
    for seq, bank in enumerate((okay, vital), start=1):
        answer = save(client, unit, seq=seq, layer="nuggets", value=bank).json()
        assert answer["status"] == "in_progress"  # no save makes it done, a vital nugget neither
    assert answer["progress"]["complete"] is True
    save(client, unit, seq=3, layer="nuggets", value=okay)
    refused = mark(client, unit)
    assert refused.status_code == 400 and refused.json()["field"] == "reason"
    assert "no vital nugget" in refused.json()["message"]
    assert Assignment.objects.get(pk=unit.pk).status == Assignment.Status.IN_PROGRESS
    save(client, unit, seq=4, layer="nuggets", value=vital)
    done = mark(client, unit)
    assert done.status_code == 200 and done.json()["status"] == "done"
    assert Assignment.objects.get(pk=unit.pk).incomplete_reason == ""
    assert save(client, unit, seq=5, layer="nuggets", value=vital[::-1]).json()["status"] == "done"  # still editable
    assert client.post(f"/a/{unit.token}/reopen").json()["status"] == "in_progress"
    assert save(client, unit, seq=6, layer="nuggets", value=vital).json()["status"] == "in_progress"


def test_a_bank_without_a_vital_nugget_is_done_only_submitted_incomplete(client, world):
    unit = world["unit"]
    save(client, unit, layer="nuggets", value=[{"id": "n1", "text": "x", "importance": "okay", "origin": "assessor"}])
    answer = mark(client, unit, reason="no fact here is vital")
    assert answer.json()["status"] == "done"
    assert Assignment.objects.get(pk=unit.pk).incomplete_reason == "no fact here is vital"


def test_a_new_nugget_never_takes_the_id_of_one_taken_out_whose_labels_stay(client, world):
    """Support labels name a nugget by id. A bank saved without "It affects therapists" (n4), which an answer's label
    names, and then with a new text: the page picked the new id among its bank's only (n4 again), and the save path
    took it, so n4's label, made for the old text, counted for the new one in the scores and on the support pages.
    The page now learns the ids in use, and the save path refuses a new text under a labelled id it did not hold."""
    unit, campaign = world["unit"], world["campaign"]
    alpha = world["answers"]["secretrun-alpha"]
    record_judgement(assessor=factories.user("judge"), layer=Layer.NUGGET_SUPPORT, value=nuggets.SUPPORT,
                     topic=unit.topic, item=nuggets.support_item(alpha.pk, "n4"), campaign_id=campaign.pk)
    kept = [dict(n) for n in world["bank"][:3]]
    assert save(client, unit, layer="nuggets", value=kept, client_time=timezone.now().isoformat()).status_code == 200
    assert "n4" in page_state(client.get(f"/a/{unit.token}/").content.decode())["ids_in_use"]

    new = {"id": "n4", "text": "Burnout is a different thing", "importance": "okay", "origin": "assessor"}
    response = save(client, unit, seq=2, layer="nuggets", value=kept + [new], client_time=timezone.now().isoformat())
    assert response.status_code == 400, response.content
    assert response.json()["field"] == "value[3].id" and "'n4'" in response.json()["message"]
    assert nuggets.topic_banks(campaign.pk)[unit.topic_id].value == kept
    assert all(t["assessed"] == 0 for run in nugget_scores(campaign.pk)["runs"].values()
               for t in run["topics"].values())  # the label on n4 counts for no text in the bank

    taken_back = kept + [dict(world["bank"][3])]  # the nugget taken out, its text as the imported bank holds it
    response = save(client, unit, seq=3, layer="nuggets", value=taken_back, client_time=timezone.now().isoformat())
    assert response.status_code == 200, response.content  # the same nugget: its label counts again
    edited = [*kept, {**world["bank"][3], "text": "It affects therapists most"}]
    response = save(client, unit, seq=4, layer="nuggets", value=edited, client_time=timezone.now().isoformat())
    assert response.status_code == 200, response.content  # an edit keeps the id (and its labels), as it always did


def test_a_save_from_a_page_that_missed_the_banks_latest_version_is_a_409_and_drops_nothing(client, world):
    """Issue 38 item 9: two tabs (or devices) on one bank: the last writer silently won and dropped the other's
    nugget. Each save says which version of the bank it is based on; one based on an older version is refused."""
    import uuid

    unit = world["unit"]
    state = page_state(client.get(f"/a/{unit.token}/").content.decode())
    assert state["version"] is None  # nothing of the writer's own yet
    bank = [{"id": "n5", "text": "Peer support helps", "importance": "vital", "origin": "assessor"}]
    first = str(uuid.uuid4())
    assert save(client, unit, 1, layer="nuggets", base=None, value=bank, change_id=first).status_code == 200
    # a second tab loaded now: it sees that version and saves on it
    assert page_state(client.get(f"/a/{unit.token}/").content.decode())["version"] == first
    second = bank + [{"id": "n6", "text": "Supervision helps", "importance": "okay", "origin": "assessor"}]
    second_id = str(uuid.uuid4())
    assert save(client, unit, 2, layer="nuggets", base=first, value=second, change_id=second_id).status_code == 200
    # the first tab, still on its version, saves its own edit: refused, the second tab's nugget stays
    stale = bank + [{"id": "n7", "text": "Hobbies help", "importance": "okay", "origin": "assessor"}]
    refused = save(client, unit, 3, layer="nuggets", base=first, value=stale)
    assert refused.status_code == 409 and refused.json()["field"] == "base"
    assert "changed elsewhere" in refused.json()["message"]
    mine = Judgement.objects.get(layer=Layer.NUGGETS, assessor__username="writer")
    assert [n["id"] for n in mine.value] == ["n5", "n6"]
    # the second tab's change sent again (its answer was lost): stored once, not refused
    again = save(client, unit, 2, layer="nuggets", base=first, value=second, change_id=second_id)
    assert again.status_code == 200 and mine.changes.count() == 2
    # a page on the latest version goes on; a body with no base (the API, an older page) is not checked
    assert save(client, unit, 4, layer="nuggets", base=second_id, value=stale).status_code == 200
    assert save(client, unit, 5, layer="nuggets", value=second).status_code == 200
    assert save(client, unit, 6, layer="nuggets", base=7, value=second).status_code == 400


def test_the_writers_page_shows_the_cited_passages_and_the_topics_top_pooled_documents(client, world):
    """Writers read only the answers (issue 39 item 6): TREC assessors write nuggets from the sources. The page lists
    each passage the answers cite once, numbered, the answers' sentences pointing at them, and the topic's top pooled
    documents the answers do not cite; passage text is escaped; no run name reaches the page."""
    from assessments.models import Pool, PoolCandidate
    from tests.annotation.nuggets_setup import DOCS, RUNS

    coll = world["unit"].topic.collection
    extra = factories.passage(coll, "msmarco_v2.1_doc_03_130#3_230", title="Burnout <b>apart</b>",
                              text="Compassion fatigue differs. <script>alert(1)</script>")
    pool = Pool.objects.create(name="rag-pool", collection=coll, status=Pool.Status.READY)
    pool.topics.set([world["unit"].topic])
    cited = coll.passages.get(external_id=DOCS[0][0])
    PoolCandidate.objects.bulk_create([PoolCandidate(pool=pool, topic=world["unit"].topic, passage=cited, rank=1),
                                       PoolCandidate(pool=pool, topic=world["unit"].topic, passage=extra, rank=2)])
    world["campaign"].pools.add(pool)

    html = client.get(f"/a/{world['unit'].token}/").content.decode()
    sources = html[html.index('id="writer-sources"'):html.index('id="writer-pooled"')]
    assert [sources.count(docid) for docid, _, _ in DOCS] == [1, 1, 1]  # each cited passage once
    assert sources.index(DOCS[0][0]) < sources.index(DOCS[1][0]) < sources.index(DOCS[2][0])  # in order first cited
    answers = html[html.index('id="writer-answers"'):html.index('id="writer-sources"')]
    assert 'Supervision and self-care help people cope with it. <a class="cited-refs" href="#source-2">[S2]</a> ' \
           '<a class="cited-refs" href="#source-1">[S1]</a>' in answers
    pooled = html[html.index('id="writer-pooled"'):]
    assert "msmarco_v2.1_doc_03_130#3_230" in pooled and DOCS[0][0] not in pooled  # a cited one is not listed twice
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pooled and "<script>alert" not in html
    assert "Burnout &lt;b&gt;apart&lt;/b&gt;" in pooled
    assert not any(run in html for run in RUNS)


def test_a_hard_wrapped_source_reads_as_paragraphs_not_a_column_of_lines(client, world):
    """Cranfield's abstracts are wrapped at ~70 characters, and the writer's source boxes showed each line end as a
    break (stop 44 leftover): the lines of a paragraph are joined, a blank line still starts a new one, text escaped."""
    from assessments.models import Pool, PoolCandidate

    coll = world["unit"].topic.collection
    wrapped = factories.passage(coll, "cran-77", title="similarity laws",
                                text="the similarity laws for aerothermoelastic\ntesting are presented\r\nin the range "
                                     "< 3 .\n\n  a second paragraph\nof the abstract .")
    pool = Pool.objects.create(name="wrapped-pool", collection=coll, status=Pool.Status.READY)
    pool.topics.set([world["unit"].topic])
    PoolCandidate.objects.create(pool=pool, topic=world["unit"].topic, passage=wrapped, rank=1)
    world["campaign"].pools.add(pool)

    pooled = client.get(f"/a/{world['unit'].token}/").content.decode().split('id="writer-pooled"', 1)[1]
    assert ('<div class="source-text"><p>the similarity laws for aerothermoelastic testing are presented in the range '
            '&lt; 3 .</p><p>a second paragraph of the abstract .</p></div>') in pooled
    assert "<br>" not in pooled
