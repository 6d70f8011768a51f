"""An assessor judges a whole real CAR article in Chromium with the keyboard only, reloads, and loses nothing offline.

The session's labels then go out as Y3 JSON and qrels, checked against what the keys said.
"""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Assignment
from assessments.models import Judgement, JudgementChange, Layer, Run
from tests import factories
from tests.browser.save_state import wait_for_save_state
from tests.factories import DATA

pytestmark = pytest.mark.django_db(transaction=True)

ARTICLE = DATA / "car-y3" / "runs" / "uog-heading-rh-sdm-tqa-effects-of-water-pollution.json"
RUN = "uog-heading-rh-sdm"
REMOVED = 4  # index of the passage that is removed (passage number 5)
NOTES = {0: "examples of <b>toxic</b> chemicals & sources", 7: "repeats passage 3", 14: "<script>no</script>"}
TRANSITIONS = ["same", "coherent", "switch"]  # keys 1, 2, 3 after t
GRADES = {"m": "must", "s": "should", "c": "can"}
WIRE_RELEVANCE = {"must": "MustLabel", "should": "ShouldLabel", "can": "CanLabel"}
WIRE_TRANSITION = {"same": "SameTransition", "coherent": "AppropriateTransition", "switch": "SwitchTransition"}
WIRE_FACET = {"other": ("NONE_OF_THESE", "OTHER RELEVANT FACET"), "general": ("GENERAL/INTRODUCTION", "GENERAL/INTRODUCTION")}
GRADE = {"must": 3, "should": 2, "can": 1}


@pytest.fixture
def assignment():
    call_command("import_car_run", str(ARTICLE), "--create-topics", "--no-progress", stdout=StringIO())
    run = Run.objects.get(name=RUN)
    topic = run.entries.first().topic
    return Assignment.objects.create(assessor=factories.user("judge"), topic=topic, run=run)


def plan(facet_ids):
    """The (key, facet id) choices the test cycles through: every heading, then other and general."""
    return [(str(k + 1), fid) for k, fid in enumerate(facet_ids)] + [("o", "other"), ("g", "general")]


def wait_saved(page):
    page.wait_for_selector('#savestate[data-state="saved"]')


def facet_grades(page, n):
    """{facet id: grade} shown on passage n."""
    return page.eval_on_selector_all(
        f"#passage-{n} button.facet",
        "bs => Object.fromEntries(bs.filter(b => b.dataset.grade).map(b => [b.dataset.facet, b.dataset.grade]))",
    )


def shown_transition(page, pid):
    """(pair, label) of the transition row above passage `pid`, or None when it is not asked."""
    slot = page.locator(f'.transition[data-before="{pid}"]')
    if slot.is_hidden():
        return None
    pressed = slot.locator('button[aria-pressed="true"]')
    return slot.get_attribute("data-pair"), (pressed.get_attribute("data-transition") if pressed.count() else None)


def current(kind, assessor, **key):
    return Judgement.objects.get(assessor=assessor, layer=kind, **key).value


def test_an_assessor_judges_a_real_article_with_the_keyboard_only(new_page, assignment, shot, tmp_path):
    entries = list(assignment.run.entries.filter(topic=assignment.topic).order_by("rank").select_related("passage"))
    pids = [e.passage_id for e in entries]
    count = len(pids)
    facet_ids = list(assignment.topic.facets.order_by("position").values_list("heading_id", flat=True))
    choices = plan(facet_ids)
    assessor = assignment.assessor

    page = new_page()
    kb = page.keyboard

    # Sign in through the login page, then open the next assignment from the queue with one key.
    page.goto("/")
    page.wait_for_selector("input[name=username]:focus")
    kb.type("judge")
    kb.press("Tab")
    kb.type("pw-judge")
    kb.press("Enter")
    page.wait_for_selector("body[data-ready=home]")
    kb.press("N")
    page.wait_for_selector("body[data-ready=outline]")
    assert page.locator(".passage").count() == count

    # Judge the whole article top to bottom.
    expected_facets, expected_transitions, history_only = {}, {}, {}
    for i in range(count):
        key, fid = choices[i % len(choices)]
        grade_key = "msc"[i % 3]
        kb.press(key)
        kb.press(grade_key)
        expected_facets[i] = [{"facet": fid, "relevance": GRADES[grade_key]}]
        if i == 0:  # a second facet, with its own grade
            kb.press("2")
            kb.press("c")
            expected_facets[0].append({"facet": facet_ids[1], "relevance": "can"})
        if i in NOTES:
            kb.press("n")
            kb.type(NOTES[i])
            kb.press("Escape")
        if i == REMOVED:
            # Remove this passage, then fix the transition around it: the pair above now joins the next passage.
            kb.press("x")
            kb.press("k")
            kb.press("t")
            kb.press("2")
            expected_transitions[(REMOVED - 1, REMOVED + 1)] = "coherent"
            history_only[(REMOVED - 1, REMOVED)] = expected_transitions.pop((REMOVED - 1, REMOVED))
            kb.press("j")
        elif i < count - 1:
            kb.press("t")
            kb.press(str(i % 3 + 1))
            expected_transitions[(i, i + 1)] = TRANSITIONS[i % 3]
        if i < count - 1:
            kb.press("j")

    wait_saved(page)
    assert page.text_content("#passages-left") == "0"
    assert page.text_content("#transitions-left") == "0"
    assert page.is_visible("#done-banner")
    shot(page, "outline-judged-1400")

    def check_page(removed=True):
        for i, pid in enumerate(pids):
            if i == REMOVED and removed:
                assert "is-removed" in page.get_attribute(f"#passage-{i + 1}", "class")
                assert page.is_hidden(f"#passage-{i + 1} .p-body")
                assert shown_transition(page, pid) is None
                continue
            assert facet_grades(page, i + 1) == {e["facet"]: e["relevance"] for e in expected_facets[i]}, i
            assert page.input_value(f"#passage-{i + 1} textarea") == NOTES.get(i, "")
        for (a, b), label in expected_transitions.items():
            assert shown_transition(page, pids[b]) == (f"{pids[a]}-{pids[b]}", label)
        assert page.locator("#article b", has_text="toxic").count() == 0  # notes are text, not markup

    def check_database(removed=True):
        for i, pid in enumerate(pids):
            assert current(Layer.FACET, assessor, passage_id=pid) == expected_facets[i]
            if i in NOTES:
                assert current(Layer.NOTES, assessor, passage_id=pid) == NOTES[i]
        assert current(Layer.REMOVAL, assessor, passage_id=pids[REMOVED]) is removed
        for (a, b), label in {**expected_transitions, **history_only}.items():
            assert current(Layer.TRANSITION, assessor, passage_id=pids[a], passage2_id=pids[b]) == label
        assert all(j.run_ids == [RUN] for j in Judgement.objects.filter(assessor=assessor))

    check_page()
    check_database()
    changes = JudgementChange.objects.filter(assessor=assessor)
    facet_changes = count + 1
    transition_changes = (count - 2) + 1  # every pair below a kept passage, and the fixed one
    assert changes.exclude(layer=Layer.NOTES).count() == facet_changes + 1 + transition_changes
    assert changes.filter(layer=Layer.NOTES).count() >= len(NOTES)  # typing may pause longer than the autosave delay
    assert changes.values("session_id").distinct().count() == 1
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.DONE

    # Reload: everything is there.
    page.reload()
    page.wait_for_selector("body[data-ready=outline]")
    wait_saved(page)
    check_page()

    # Cut the network while judging. First the server gets the change but the browser never hears back...
    before = changes.count()
    problems = []

    def lose_answer(route):
        try:
            route.fetch()
        except Exception as exc:  # the server was not reached: the page tries again, as after any lost answer
            problems.append(repr(exc))
        finally:
            route.abort()

    page.route("**/save", lose_answer)
    assert "is-current" in page.get_attribute(f"#passage-{count}", "class")  # a reload comes back to the same place
    kb.press("Home")
    kb.press("s")  # passage 1, first facet: MUST -> SHOULD
    expected_facets[0][0]["relevance"] = "should"
    wait_for_save_state(page, "pending", problems=problems)
    # ...then nothing gets through at all.
    # The newest route answers first: the network goes down before the lost answer's route goes, so no retry of
    # the page's finds it up in between.
    page.route("**/save", lambda route: route.abort())
    page.unroute("**/save", lose_answer)
    kb.press("j")
    kb.press("o")
    kb.press("m")  # passage 2 gets a second facet
    expected_facets[1].append({"facet": "other", "relevance": "must"})
    kb.press("n")
    kb.type("written offline")
    kb.press("Escape")
    NOTES[1] = "written offline"
    kb.press("t")
    kb.press("3")  # transition 2 -> 3 becomes a topic switch
    expected_transitions[(1, 2)] = "switch"
    for _ in range(REMOVED - 1):
        kb.press("j")
    kb.press("x")  # restore passage 5: its old transition label above comes back, the one below is new
    expected_transitions.pop((REMOVED - 1, REMOVED + 1))
    expected_transitions[(REMOVED - 1, REMOVED)] = history_only.pop((REMOVED - 1, REMOVED))
    history_only[(REMOVED - 1, REMOVED + 1)] = "coherent"
    kb.press("t")
    kb.press("1")
    expected_transitions[(REMOVED, REMOVED + 1)] = "same"

    page.wait_for_function("() => window.pooljudge.outbox().length >= 6")  # 6 changes (notes: one, or more if typing paused)
    page.wait_for_selector('#savestate[data-state="pending"]')
    assert "not yet saved" in page.text_content("#savestate")
    outbox_ids = page.evaluate("window.pooljudge.outbox().map(it => it.id)")
    offline_changes = len(set(outbox_ids))
    assert offline_changes == len(outbox_ids)
    page.wait_for_timeout(1200)  # a retry or two fail

    # Reloading while still cut off shows the waiting changes and keeps them.
    page.reload()
    page.wait_for_selector("body[data-ready=outline]")
    page.wait_for_selector('#savestate[data-state="pending"]')
    assert page.evaluate("window.pooljudge.outbox().length") == offline_changes
    shot(page, "outline-offline-1400")
    assert JudgementChange.objects.filter(assessor=assessor).count() == before + 1  # only the one that got through

    page.unroute("**/save")  # the network is back: the page sends what waits, by itself
    wait_saved(page)
    assert page.evaluate("window.pooljudge.outbox().length") == 0

    check_page(removed=False)
    check_database(removed=False)
    assert JudgementChange.objects.filter(assessor=assessor).count() == before + offline_changes
    assert JudgementChange.objects.filter(change_id__in=outbox_ids).count() == offline_changes
    page.reload()
    page.wait_for_selector("body[data-ready=outline]")
    check_page(removed=False)
    assert page.text_content("#passages-left") == "0" and page.text_content("#transitions-left") == "0"

    # What leaves the system says the same: Y3 JSON (seed 004 Appendix A) and qrels on the CAR scale.
    topic, ext = assignment.topic, {e.passage_id: e.passage.external_id for e in entries}
    headings = dict(topic.facets.values_list("heading_id", "heading"))
    # Only the transitions the page shows now: the one over the restored passage stays in the history (issue 32).
    assert set(history_only) == {(REMOVED - 1, REMOVED + 1)}
    check_y3_export(tmp_path, topic, pids, ext, headings, expected_facets, NOTES, expected_transitions)
    out = StringIO()
    call_command("export_qrels", "--topic", topic.external_id, "--assessor", "judge", stdout=out)
    expected_qrels = sorted(
        f"{topic.external_id} 0 {ext[pid]} {max(GRADE[e['relevance']] for e in expected_facets[i])}"
        for i, pid in enumerate(pids)
    )
    assert sorted(out.getvalue().splitlines()) == expected_qrels


def check_y3_export(tmp_path, topic, pids, ext, headings, facets, notes, transitions):
    call_command("export_car_assessments", "--out", str(tmp_path), "--topic", topic.external_id, stdout=StringIO())
    (path,) = tmp_path.glob("*.json")
    data = json.loads(path.read_text())
    assert set(data) == {"notes_state", "facet_state", "nonrelevant_state", "nonrelevant_state2",
                         "transition_label_state"}

    def wrapped(value):
        assert set(value) == {"annotator_id", "time_stamp", "session_id", "run_ids", "value"}
        assert value["annotator_id"] == "judge" and value["run_ids"] == [RUN] and value["session_id"]
        assert value["time_stamp"].endswith("Z")
        return value["value"]

    def wire_facet(entry):
        heading_id, heading = WIRE_FACET.get(entry["facet"], (entry["facet"], headings.get(entry["facet"])))
        return {"facet": {"heading": heading, "heading_id": heading_id}, "relevance": WIRE_RELEVANCE[entry["relevance"]]}

    def facet_lists(lists):
        return {paragraph: sorted(lst, key=json.dumps) for paragraph, lst in lists.items()}

    assert {k["query_id"] for k, _ in data["facet_state"]} == {topic.external_id}
    assert facet_lists({k["paragraph_id"]: [wrapped(v) for v in values] for k, values in data["facet_state"]}) == \
        facet_lists({ext[pid]: [wire_facet(e) for e in facets[i]] for i, pid in enumerate(pids)})
    assert {k["paragraph_id"]: [wrapped(v) for v in values] for k, values in data["notes_state"]} == {
        ext[pids[i]]: [text] for i, text in notes.items()}
    assert [(k["paragraph_id"], wrapped(v)) for k, v in data["nonrelevant_state2"]] == [(ext[pids[REMOVED]], False)]
    assert {(k["paragraph_id1"], k["paragraph_id2"]): wrapped(v) for k, v in data["transition_label_state"]} == {
        (ext[pids[a]], ext[pids[b]]): WIRE_TRANSITION[label] for (a, b), label in transitions.items()}
