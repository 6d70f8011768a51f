"""manage.py llm_nuggets assign|suggest (issue 29, items 3 and 7: the AutoNuggetizer's steps) against the loopback
OpenAI-compatible server of the llm_judge tests: good answers stored as a machine source of their own; malformed
answers (not a list, an unknown label, too few labels, a bad suggestion) stored as errors of their whole request,
never as labels, the job saying why; the people's scores never count machine labels unless a source is named; and
Kendall's τ and α between the people's and the machine's assignments, checked against scipy and the krippendorff
package."""

import hashlib
import json
import re
from io import StringIO

import krippendorff
import numpy as np
import pytest
from django.core.management import CommandError, call_command
from scipy.stats import kendalltau

from assessments.models import MachineJob, MachineLabel, MachineLabelSource
from tests import factories
from tests.annotation.nuggets_setup import QUERY, RUNS, SENTENCES, TOPIC, nuggets_world
from tests.annotation.test_nugget_scores_results import EXPECTED, LABELS, MEASURES
from tests.annotation.test_nugget_support_page import save
from tests.assessments.test_llm_judge import judge_settings, server  # noqa: F401 — the loopback LLM and its settings

pytestmark = pytest.mark.django_db


def answer_text(run):
    return " ".join(text for text, _ in SENTENCES[run])


def labeller(labels_by_run):
    """The LLM: for an assign prompt, the labels of `labels_by_run` (run → {nugget text: label, or a whole answer})
    for the nuggets it lists."""
    def answer(prompt):
        passage = re.search(r"^Passage: (.*)$", prompt, re.M).group(1)
        asked = json.loads(re.search(r"^Nugget List: (.*)$", prompt, re.M).group(1))
        run = next(r for r in RUNS if answer_text(r) == passage)
        given = labels_by_run[run]
        if isinstance(given, str):
            return given
        return json.dumps([given[text] for text in asked])
    return answer


def by_text(world, labels):
    """{run: {nugget text: label}} from {run: [label of each nugget in bank order]}."""
    return {run: {n["text"]: v for n, v in zip(world["bank"], values)} for run, values in labels.items()}


def llm_nuggets(server, *args):
    out = StringIO()
    call_command("llm_nuggets", *args, "--campaign", "rag-judging", "--endpoint", server.url, "--model", "nugget-7b",
                 "--no-progress", "--format", "json", stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


def scores(*args):
    out = StringIO()
    call_command("export_nugget_scores", "--campaign", "rag-judging", *args, stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture
def world(db):
    return nuggets_world(factories.user("nuggeteer"))


def people_label(client, world, labels):
    client.force_login(world["units"][RUNS[0]].assessor)
    seq = 0
    for run, values in labels.items():
        for nugget, value in zip(world["bank"], values):
            seq += 1
            assert save(client, world["units"][run], seq=seq, layer="nugget_support", nugget=nugget["id"],
                        value=value).status_code == 200


def test_the_llm_labels_every_answers_nuggets_as_a_source_of_its_own(server, world):
    labels = by_text(world, LABELS)
    plain = labeller(labels)
    server.answer = lambda prompt: "<think>The answer says [a lot].</think>\n```json\n" + plain(prompt) + "\n```"

    summary = llm_nuggets(server, "assign")

    source = MachineLabelSource.objects.get()
    assert source.kind == "nugget_assign" and source.campaign_id == world["campaign"].pk
    assert summary["grades"] == {"not_support": 3, "partial_support": 2, "support": 3} and summary["unreadable"] == 0
    stored = {(l.item, l.value["label"]) for l in MachineLabel.objects.all()}
    assert stored == {(f"{world['answers'][run].pk}:{n['id']}", v)
                      for run, values in LABELS.items() for n, v in zip(world["bank"], values)}
    assert len(server.requests) == 2  # one request per answer (4 nuggets: one batch)
    assert "Search Query: what is vicarious trauma" in server.requests[0]["prompt"]

    machine = scores("--source", source.name)
    assert machine["source"] == {"id": source.pk, "name": source.name}
    for run in RUNS:
        assert {m: machine["runs"][run][m] for m in MEASURES} == pytest.approx(EXPECTED[run])

    again = llm_nuggets(server, "assign")  # everything has an answer: nothing is asked twice
    assert again["asked_now"] == 0 and len(server.requests) == 2


def test_machine_labels_never_enter_the_peoples_scores_unless_named(client, server, world):
    people_label(client, world, LABELS)
    before = scores()
    machine_view = {RUNS[0]: ["not_support"] * 4, RUNS[1]: ["support"] * 4}
    server.answer = labeller(by_text(world, machine_view))
    llm_nuggets(server, "assign")

    after = scores()
    assert after["runs"] == before["runs"]
    for run in RUNS:
        assert {m: after["runs"][run][m] for m in MEASURES} == pytest.approx(EXPECTED[run])
    machine = scores("--source", str(MachineLabelSource.objects.get().pk))
    assert machine["runs"][RUNS[0]]["all"] == 0.0 and machine["runs"][RUNS[1]]["all"] == 1.0
    tsv = StringIO()
    call_command("export_nugget_scores", "--campaign", "rag-judging", "--format", "tsv", stdout=tsv)
    assert f"{RUNS[0]}\tall\t{EXPECTED[RUNS[0]]['all']:.4f}" in tsv.getvalue()


def test_tau_and_alpha_set_the_machine_beside_the_people(client, server, world):
    people_label(client, world, LABELS)
    machine_view = {RUNS[0]: ["support", "support", "support", "not_support"],
                    RUNS[1]: ["not_support", "partial_support", "partial_support", "support"]}
    server.answer = labeller(by_text(world, machine_view))
    llm_nuggets(server, "assign")

    found = scores()["compared_with_machine"]
    assert len(found) == 1
    compared = found[0]
    machine = scores("--source", compared["name"])
    assert machine["compared_with_people"] == compared
    people = scores()
    for m in MEASURES:
        tau, _ = kendalltau([people["runs"][r][m] for r in RUNS], [machine["runs"][r][m] for r in RUNS])
        assert compared["tau"][m] == pytest.approx(tau)
    assert compared["runs"] == 2 and compared["labels"] == 8
    order = {"not_support": 0, "partial_support": 1, "support": 2}
    matrix = np.array([[order[v] for run in RUNS for v in LABELS[run]],
                       [order[v] for run in RUNS for v in machine_view[run]]], dtype=float)
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
    assert compared["alpha"] == pytest.approx(expected)
    same = sum(a == b for run in RUNS for a, b in zip(LABELS[run], machine_view[run]))
    assert compared["agreement"] == pytest.approx(same / 8)


@pytest.mark.parametrize("bad, error", [
    ("Support, partial support, and no support.", "no list of labels"),
    ('["support", "maybe", "support", "support"]', "label 2: 'maybe' is not one of"),
    ('["support", "support", "support"]', "3 labels for 4 nuggets"),
    ("[support, support", "no list of labels"),
    ('["support", {"x": 1}, "support", "support"]', "label 2"),
    ("[" * 100_000 + "]" * 100_000, "neither JSON nor a Python list"),
    ('<think>n1 is [maybe] supported</think> ["support", "support"]', "2 labels for 4 nuggets"),
])
def test_a_malformed_answer_stores_no_label_of_its_request_and_the_job_says_why(server, world, bad, error):
    good = by_text(world, LABELS)
    server.answer = labeller({RUNS[0]: bad, RUNS[1]: good[RUNS[1]]})

    summary = llm_nuggets(server, "assign")

    job = MachineJob.objects.get()
    assert job.status == "done" and job.errors == 4 and error in job.message
    first = world["answers"][RUNS[0]].pk
    rows = MachineLabel.objects.filter(item__startswith=f"{first}:")
    assert rows.count() == 4 and not rows.filter(grade__isnull=False).exists()
    assert all(error in r.error and r.raw_answer == bad for r in rows)
    assert MachineLabel.objects.filter(grade__isnull=False).count() == 4  # the other answer's, whole
    assert summary["unreadable"] == 4 and error in summary["unreadable_examples"][0]["error"]
    machine = scores("--source", job.source.name)
    assert machine["runs"][RUNS[0]]["topics"][TOPIC]["assessed"] == 0

    server.answer = labeller(good)  # asked again only when told
    assert llm_nuggets(server, "assign")["asked_now"] == 0
    assert llm_nuggets(server, "assign", "--retry-errors")["asked_now"] == 4
    assert not MachineLabel.objects.filter(grade__isnull=True).exists()


def test_a_response_that_is_no_json_is_an_unreadable_answer_not_a_failed_job(server, world):
    server.answer = lambda prompt: b"[" * 100_000 + b"]" * 100_000  # nested past Python's recursion limit

    summary = llm_nuggets(server, "assign")

    job = MachineJob.objects.get()
    assert job.status == "done" and job.errors == 8 and "the answer is not JSON" in job.message
    assert summary["unreadable"] == 8 and not MachineLabel.objects.filter(grade__isnull=False).exists()


def test_a_refused_model_fails_the_job_with_its_reason(server, world):
    server.answer = lambda prompt: 404
    with pytest.raises(CommandError, match="the LLM stopped: HTTP 404"):
        llm_nuggets(server, "assign")
    job = MachineJob.objects.get()
    assert job.status == "failed" and "HTTP 404" in job.error
    assert not MachineLabel.objects.exists()


def test_an_edited_nugget_is_asked_again_and_its_old_label_no_longer_counts(client, server, world):
    server.answer = labeller(by_text(world, {run: ["support"] * 4 for run in RUNS}))
    llm_nuggets(server, "assign")
    edited = [dict(n) for n in world["bank"]]
    edited[0]["text"] = "Vicarious trauma comes from hearing about others' trauma"
    from annotation.services.nuggets import importing_user
    from assessments.services.judging import record_judgement

    record_judgement(assessor=importing_user("imported-nuggets"), topic=world["answers"][RUNS[0]].topic,
                     layer="nuggets", value=edited, campaign_id=world["campaign"].pk, source="import")
    source = MachineLabelSource.objects.get()
    assert scores("--source", source.name)["runs"][RUNS[0]]["topics"][TOPIC]["assessed"] == 3

    server.answer = labeller({run: {n["text"]: "not_support" for n in edited} for run in RUNS})
    assert llm_nuggets(server, "assign")["asked_now"] == 2  # the edited nugget, in both answers
    assert scores("--source", source.name)["runs"][RUNS[0]]["topics"][TOPIC]["assessed"] == 4


def test_nothing_is_sent_without_an_endpoint_or_to_another_task(world, server):
    with pytest.raises(CommandError, match="nothing was sent: --endpoint: no LLM endpoint"):
        call_command("llm_nuggets", "assign", "--campaign", "rag-judging", "--no-progress", stdout=StringIO())
    with pytest.raises(CommandError, match="--campaign: no campaign named"):
        call_command("llm_nuggets", "assign", "--campaign", "nope", "--endpoint", server.url, "--model", "m",
                     stdout=StringIO())
    with pytest.raises(CommandError, match="--source: 'nope' is not a nugget assignment source"):
        scores("--source", "nope")
    assert not MachineLabelSource.objects.exists() and not server.requests


SUGGESTED = [{"text": "Vicarious trauma is secondary exposure", "importance": "vital"},
             {"text": "Supervision helps helpers cope", "importance": "okay"}]


def test_suggestions_are_a_topics_nuggets_read_from_its_answers_and_cited_passages(server, world):
    server.answer = lambda prompt: "```json\n" + json.dumps(SUGGESTED + [SUGGESTED[0]]) + "\n```"

    summary = llm_nuggets(server, "suggest")

    assert summary["topics"] == 1 and summary["unreadable"] == 0
    prompt = server.requests[0]["prompt"]
    assert answer_text(RUNS[0]) in prompt and "Supervision and peer support help helpers cope." in prompt
    label = MachineLabel.objects.get()
    assert label.source.kind == "nugget_suggest" and label.value == SUGGESTED  # a repeated nugget once
    from assessments.machine.nuggets import topic_suggestions

    found = topic_suggestions(world["campaign"].pk, label.topic_id)
    assert found["nuggets"] == SUGGESTED and found["source"] == label.source_id


@pytest.mark.parametrize("bad, error", [
    ("Here are the nuggets: vicarious trauma.", "no list of nuggets"),
    ("[]", "no nuggets in the list"),
    ('[{"text": "A", "importance": "high"}]', "importance 'high' is not one of vital, okay"),
    ('[{"text": "", "importance": "vital"}]', "nugget 1: text of 1 to"),
    ('["just a string"]', "nugget 1: not an object"),
])
def test_a_malformed_suggestion_is_an_error_never_a_bank(server, world, bad, error):
    server.answer = lambda prompt: bad
    summary = llm_nuggets(server, "suggest")
    label = MachineLabel.objects.get()
    assert label.grade is None and label.value is None and error in label.error
    assert summary["unreadable"] == 1 and error in MachineJob.objects.get().message
    from assessments.machine.nuggets import topic_suggestions

    assert topic_suggestions(world["campaign"].pk, label.topic_id) is None


@pytest.fixture
def organiser(client, world):
    from tests.browser.console_steps import organiser_account

    client.force_login(organiser_account())
    return client


def test_an_organiser_starts_the_llm_through_the_api_and_reads_the_scores_by_source(
        organiser, server, world, judge_settings, django_capture_on_commit_callbacks):  # noqa: F811
    judge_settings.LLM_JUDGE_BASE_URL, judge_settings.LLM_JUDGE_MODEL = server.url, "nugget-7b"
    server.answer = labeller(by_text(world, LABELS))
    url = "/api/campaigns/rag-judging/machine/nuggets/"

    with django_capture_on_commit_callbacks(execute=True):
        started = organiser.post(url, {"step": "assign"}, content_type="application/json")

    assert started.status_code == 202, started.content
    job = started.json()
    assert job["kind"] == "nugget_assign" and job["total"] == 8
    done = organiser.get(f"/api/campaigns/rag-judging/machine/jobs/{job['id']}/").json()
    assert done["status"] == "done" and done["done"] == 8 and done["errors"] == 0
    overview = organiser.get("/api/campaigns/rag-judging/machine/").json()
    shown = {s["id"]: s for s in overview["sources"]}[job["source"]]
    assert shown["kind"] == "nugget_assign" and shown["labels"] == 8  # its spend is shown as the judge's is
    assert (shown["requests"], shown["tokens"]) == (2, 100)
    people = organiser.get("/api/campaigns/rag-judging/nugget-scores/").json()
    assert people["runs"][RUNS[0]]["all"] == 0.0  # no person labelled: the machine's labels do not count
    assert people["compared_with_machine"][0]["labels"] == 0
    machine = organiser.get(f"/api/campaigns/rag-judging/nugget-scores/?source={job['source']}").json()
    for run in RUNS:
        assert {m: machine["runs"][run][m] for m in MEASURES} == pytest.approx(EXPECTED[run])
    assert machine["compared_with_people"]["reasons"]["alpha"].startswith("no (answer, nugget) pair")
    for name in ("nope", "%00", "9" * 30, "x" * 5000, "-1"):
        bad = organiser.get(f"/api/campaigns/rag-judging/nugget-scores/?source={name}")
        assert bad.status_code == 400 and bad.json()["field"] == "source"


@pytest.mark.parametrize("body, field", [
    ({"step": "nuggets"}, "step"), ({"step": "assign", "limit": 0}, "limit"),
    ({"step": "assign", "topics": ["nope"]}, "topics"), ({"step": "assign"}, "endpoint"),
])
def test_a_bad_api_request_is_a_400_naming_its_field_and_sends_nothing(organiser, server, judge_settings,  # noqa: F811
                                                                       body, field):
    if field != "endpoint":
        judge_settings.LLM_JUDGE_BASE_URL, judge_settings.LLM_JUDGE_MODEL = server.url, "nugget-7b"
    response = organiser.post("/api/campaigns/rag-judging/machine/nuggets/", body, content_type="application/json")
    assert response.status_code == 400
    found = response.json()
    assert found.get("field") == field or field in found
    assert not MachineJob.objects.exists() and not server.requests


def test_the_console_starts_nugget_suggestions_and_a_malformed_answer_shows_on_the_job(
        organiser, server, world, judge_settings, django_capture_on_commit_callbacks):  # noqa: F811
    page = organiser.get("/campaigns/rag-judging/machine/").content.decode()
    assert 'id="nuggets-form"' in page and 'id="start-nuggets" disabled' in page  # no endpoint configured
    judge_settings.LLM_JUDGE_BASE_URL, judge_settings.LLM_JUDGE_MODEL = server.url, "nugget-7b"
    server.answer = lambda prompt: "Nuggets: trauma, coping."

    with django_capture_on_commit_callbacks(execute=True):
        response = organiser.post("/campaigns/rag-judging/machine/", {"action": "nuggets", "step": "suggest"})

    assert response.status_code == 302
    job = MachineJob.objects.get()
    assert job.kind == "nugget_suggest" and job.errors == 1 and "no list of nuggets" in job.message
    page = organiser.get("/campaigns/rag-judging/machine/").content.decode()
    assert "no list of nuggets" in page
    bad = organiser.post("/campaigns/rag-judging/machine/", {"action": "nuggets", "step": "all", "limit": "x"})
    assert bad.status_code == 400 and MachineJob.objects.count() == 1


def test_the_results_page_sets_the_llm_beside_the_people_and_scores_by_it_only_when_chosen(client, server, world):
    people_label(client, world, LABELS)
    machine_view = {RUNS[0]: ["not_support"] * 4, RUNS[1]: ["support"] * 4}
    server.answer = labeller(by_text(world, machine_view))
    llm_nuggets(server, "assign")
    source = MachineLabelSource.objects.get()
    from tests.browser.console_steps import organiser_account

    client.force_login(organiser_account())

    html = client.get("/campaigns/rag-judging/results/").content.decode()

    people_table = html[html.index('id="nugget-scores-table"'):]
    people_table = people_table[:people_table.index("</table>")]
    assert f"{EXPECTED[RUNS[0]]['all']:.4f}" in people_table  # the people's, untouched
    row = html[html.index(f'id="nugget-machine-{source.pk}"'):]
    row = row[:row.index("</tr>")]
    assert "<td class=\"num\">-1.000</td>" in row  # τ: the machine ranks the two runs the other way round
    assert 'id="nugget-machine-scores"' not in html
    chosen = client.get(f"/campaigns/rag-judging/results/?source={source.pk}").content.decode()
    machine_table = chosen[chosen.index('id="nugget-machine-scores"'):]
    machine_table = machine_table[:machine_table.index("</table>")]
    assert machine_table.index(RUNS[1]) < machine_table.index(RUNS[0]) and "1.0000" in machine_table
    assert f"{EXPECTED[RUNS[0]]['all']:.4f}" in chosen[chosen.index('id="nugget-scores-table"'):]
    bad = client.get("/campaigns/rag-judging/results/?source=nope")
    assert bad.status_code == 400 and "source: " in bad.content.decode()
    download = json.loads(b"".join(client.get("/campaigns/rag-judging/results/nugget-scores/")).decode())
    assert download["compared_with_machine"][0]["tau"]["all"] == -1.0
    assert client.get("/campaigns/rag-judging/results/nugget-scores/?source=nope").status_code == 400


def test_a_topic_without_answers_is_not_asked_for_suggestions(server, world):
    from annotation.services.campaigns import add_topics
    from assessments.models import Topic

    bare = factories.topic(world["answers"][RUNS[0]].topic.collection, "2024-000001", kind=Topic.Kind.ADHOC,
                           title="a topic nobody answered")
    add_topics(world["campaign"], [bare.pk])
    server.answer = lambda prompt: json.dumps([{"text": "A fact", "importance": "vital"}])

    summary = llm_nuggets(server, "suggest")

    assert summary["asked_now"] == 1 and len(server.requests) == 1
    assert "a topic nobody answered" not in server.requests[0]["prompt"]
    assert not MachineLabel.objects.filter(topic=bare).exists()


def test_the_console_asks_about_the_topics_it_is_given_and_refuses_an_unknown_one_on_its_field(
        organiser, server, world, judge_settings, django_capture_on_commit_callbacks):  # noqa: F811
    from annotation.services.campaigns import add_topics
    from assessments.models import Topic

    other = factories.topic(world["answers"][RUNS[0]].topic.collection, "2024-000002", kind=Topic.Kind.ADHOC,
                            title="another topic")
    add_topics(world["campaign"], [other.pk])
    judge_settings.LLM_JUDGE_BASE_URL, judge_settings.LLM_JUDGE_MODEL = server.url, "nugget-7b"
    page = organiser.get("/campaigns/rag-judging/machine/").content.decode()
    form = page[page.index('id="nuggets-form"'):]
    assert 'name="topics"' in form[:form.index("</form>")] and 'id="nuggets-topics"' in form

    bad = organiser.post("/campaigns/rag-judging/machine/",
                         {"action": "nuggets", "step": "assign", "topics": f"{TOPIC}, nope"})

    assert bad.status_code == 400 and not MachineJob.objects.exists() and not server.requests
    form = bad.content.decode()[bad.content.decode().index('id="nuggets-form"'):]
    field = form[form.index('id="field-nuggets-topics"'):]
    field = field[:field.index('id="field-', 10)]  # the topics field, up to the next one
    assert "has-error" in form[:form.index('id="field-nuggets-topics"')].rsplit("<div", 1)[1]
    assert "&#x27;nope&#x27; is not a topic of this campaign" in field
    server.answer = labeller(by_text(world, LABELS))

    with django_capture_on_commit_callbacks(execute=True):
        started = organiser.post("/campaigns/rag-judging/machine/",
                                 {"action": "nuggets", "step": "assign", "topics": f" {TOPIC} "})

    assert started.status_code == 302
    job = MachineJob.objects.get()
    assert job.params["topics"] == [world["answers"][RUNS[0]].topic_id] and MachineLabel.objects.count() == 8


OWN_ASSIGN = ("Be strict, campaign rules.\nQuestion: {query}\nPassage: {answer}\nNugget List: {nuggets}\n"
              "Give {count} labels.")
PAGE = "/campaigns/rag-judging/machine/"


def test_the_campaigns_nugget_prompts_are_saved_on_the_page_reach_the_llm_and_are_kept_by_the_source(
        organiser, server, world, judge_settings, django_capture_on_commit_callbacks):  # noqa: F811
    page = organiser.get(PAGE).content.decode()
    assert 'id="prompt-llm_nugget_assign_prompt"' in page and 'id="prompt-llm_nugget_suggest_prompt"' in page
    assert "Nugget List: {nuggets}" in page  # the nuggetizer's, to edit
    saved = organiser.post(PAGE, {"action": "prompt", "which": "llm_nugget_assign_prompt", "prompt": OWN_ASSIGN})
    assert saved.status_code == 302
    world["campaign"].refresh_from_db()
    assert world["campaign"].settings["llm_nugget_assign_prompt"] == OWN_ASSIGN
    judge_settings.LLM_JUDGE_BASE_URL, judge_settings.LLM_JUDGE_MODEL = server.url, "nugget-7b"
    server.answer = labeller(by_text(world, LABELS))

    with django_capture_on_commit_callbacks(execute=True):  # the console
        assert organiser.post(PAGE, {"action": "nuggets", "step": "assign",
                                     "topics": TOPIC}).status_code == 302

    asked = server.requests[0]["prompt"]
    assert asked.startswith(f"Be strict, campaign rules.\nQuestion: {QUERY}\nPassage: ")
    assert asked.endswith("Give 4 labels.") and "NuggetizeAssignerLLM" not in asked
    source = MachineLabelSource.objects.get()
    assert source.settings["prompt"] == OWN_ASSIGN and MachineLabel.objects.filter(grade__isnull=False).count() == 8
    shown = organiser.get("/api/campaigns/rag-judging/machine/").json()["sources"]
    assert shown[0]["settings"]["prompt_sha256"] == hashlib.sha256(OWN_ASSIGN.encode()).hexdigest()  # its prompt

    organiser.post(PAGE, {"action": "prompt", "which": "llm_nugget_assign_prompt", "prompt": "", "reset": "1"})
    world["campaign"].refresh_from_db()
    assert "llm_nugget_assign_prompt" not in world["campaign"].settings
    llm_nuggets(server, "assign")  # the command, with the default again: another source, asked again
    default = MachineLabelSource.objects.exclude(pk=source.pk).get()
    assert default.settings["prompt"].startswith("You are NuggetizeAssignerLLM")
    assert len(server.requests) == 4 and "NuggetizeAssignerLLM" in server.requests[-1]["prompt"]


def test_the_command_and_the_api_ask_with_the_campaigns_suggestion_prompt(
        organiser, server, world, judge_settings, django_capture_on_commit_callbacks):  # noqa: F811
    own = "Topic: {query}\nRead:\n{context}\nAt most {most} nuggets as JSON."
    assert organiser.post(PAGE, {"action": "prompt", "which": "llm_nugget_suggest_prompt",
                                 "prompt": own}).status_code == 302
    server.answer = lambda prompt: json.dumps(SUGGESTED)

    llm_nuggets(server, "suggest", "--model", "other-7b")

    assert server.requests[0]["prompt"].startswith(f"Topic: {QUERY}\nRead:\n[1] ")
    assert server.requests[0]["prompt"].endswith("At most 30 nuggets as JSON.")
    world["campaign"].settings = {**world["campaign"].settings, "llm_nugget_suggest_prompt": own.replace("Topic", "T")}
    world["campaign"].save(update_fields=["settings"])
    judge_settings.LLM_JUDGE_BASE_URL, judge_settings.LLM_JUDGE_MODEL = server.url, "nugget-7b"
    with django_capture_on_commit_callbacks(execute=True):
        started = organiser.post("/api/campaigns/rag-judging/machine/nuggets/", {"step": "suggest"},
                                 content_type="application/json")
    assert started.status_code == 202, started.content
    assert server.requests[-1]["prompt"].startswith(f"T: {QUERY}\n")
    assert {s.settings["prompt"] for s in MachineLabelSource.objects.all()} == {own, own.replace("Topic", "T")}


@pytest.mark.parametrize("which, prompt, error", [
    ("llm_nugget_assign_prompt", "Question: {query}\nPassage: {answer}", "has no {nuggets}"),
    ("llm_nugget_assign_prompt", "{query} {answer} {nuggets} in {language}", "has {language}, which nothing fills"),
    ("llm_nugget_suggest_prompt", "Topic: {query}", "has no {context}"),
    ("llm_nugget_suggest_prompt", "{query} {context} {answer}", "has {answer}, which nothing fills"),
    ("llm_nugget_suggest_prompt", "   ", "write the prompt"),
])
def test_a_bad_nugget_prompt_is_refused_on_its_field_and_nothing_is_saved(organiser, world, which, prompt, error):
    response = organiser.post(PAGE, {"action": "prompt", "which": which, "prompt": prompt})

    assert response.status_code == 400
    entry = next(p for p in response.context["prompts"] if p["key"] == which)
    assert error in " ".join(entry["form"].errors["prompt"])
    html = response.content.decode()
    assert error.replace("{", "").split()[-1] in html[html.index(f'id="prompt-{which}"'):]
    world["campaign"].refresh_from_db()
    assert which not in (world["campaign"].settings or {})


def test_a_stored_prompt_that_no_longer_passes_is_a_400_naming_its_key_and_sends_nothing(
        organiser, server, world, judge_settings):  # noqa: F811
    judge_settings.LLM_JUDGE_BASE_URL, judge_settings.LLM_JUDGE_MODEL = server.url, "nugget-7b"
    world["campaign"].settings = {**world["campaign"].settings, "llm_nugget_assign_prompt": "Label {nuggets}."}
    world["campaign"].save(update_fields=["settings"])

    response = organiser.post("/api/campaigns/rag-judging/machine/nuggets/", {"step": "assign"},
                              content_type="application/json")

    assert response.status_code == 400 and response.json()["field"] == "llm_nugget_assign_prompt"
    with pytest.raises(CommandError, match="settings llm_nugget_assign_prompt: the campaign's prompt has no"):
        llm_nuggets(server, "assign")
    page = organiser.post(PAGE, {"action": "nuggets", "step": "assign"})
    assert page.status_code == 400 and "has no {query}" in page.content.decode()
    assert not MachineJob.objects.exists() and not server.requests
