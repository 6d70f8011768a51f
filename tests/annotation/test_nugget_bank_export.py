"""Nugget banks exported with who made each nugget (issue 39 item 5): `made_by` on every nugget of export_nuggets'
file and of the results page's download (one function: assessments.services.nuggets.made_by), read from the banks'
history: a person who wrote its text, the file it was imported in, or the LLM suggestion it was taken from as it
came (source, model, prompt, and who took it); a suggestion changed since is the person's, `suggested_by` the
machine."""

import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.management.commands.export_nuggets import Command as ExportNuggets
from annotation.roles import Role, ensure_groups
from annotation.services.adjudication import set_final_bank
from annotation.services.nuggets import export_banks
from assessments.models import JudgementChange, MachineLabel, MachineLabelSource
from tests import factories
from tests.annotation.nuggets_setup import BANK
from tests.annotation.test_nugget_creation_page import world  # noqa: F401 — the creation unit of writer
from tests.annotation.test_nugget_support_page import save
from tests.browser.console_steps import organiser_account

pytestmark = pytest.mark.django_db

PROMPT = "List the atomic nuggets of {query} from {context}"
SUGGESTED = [{"text": "Vicarious trauma is secondhand trauma", "importance": "vital"},
             {"text": "Nurses are exposed too", "importance": "okay"}]
MACHINE = {"kind": "machine", "source": "nugget-suggest:gpt-x", "model": "gpt-x", "model_version": "gpt-x-0613",
           "prompt": PROMPT}


def made_by(campaign):
    """{text: made_by} of the campaign's exported banks."""
    return {n["text"]: n["made_by"] for line in export_banks(campaign).splitlines()
            for n in json.loads(line)["nuggets"]}


def suggest(world, model="gpt-x", prompt=PROMPT):  # noqa: F811
    source = MachineLabelSource.objects.create(
        name=f"nugget-suggest:{model}", kind=MachineLabelSource.Kind.NUGGET_SUGGEST, model=model,
        model_version=f"{model}-0613", settings={"prompt": prompt, "temperature": 0.0},
        collection=world["unit"].topic.collection, campaign_id=world["campaign"].pk)
    return MachineLabel.objects.create(source=source, topic=world["unit"].topic, grade=1, score=1.0, value=SUGGESTED,
                                       raw_answer="[...]")


def saved(client, world, bank, seq=1):  # noqa: F811
    """The writer's bank saved on the creation page, changed after the import's: the topic's bank."""
    response = save(client, world["unit"], seq=seq, layer="nuggets", value=bank, client_time=timezone.now().isoformat())
    assert response.status_code == 200, response.content


def taken(nid, suggestion, **changed):
    return {"id": nid, "text": suggestion["text"], "importance": suggestion["importance"], "origin": "machine",
            "suggested": suggestion, **changed}


def test_a_nugget_written_on_the_creation_page_is_its_writers_an_imported_one_the_files(client, world):  # noqa: F811
    bank = [dict(n) for n in world["bank"]]
    bank[1]["text"] = "Coping includes self-care and supervision"  # an imported nugget the writer rewrote
    bank.append({"id": "n5", "text": "Burnout is a different thing", "importance": "okay", "origin": "assessor"})
    saved(client, world, bank)

    made = made_by(world["campaign"])

    assert made["Burnout is a different thing"] == {"kind": "person", "user": "writer"}
    assert made["Coping includes self-care and supervision"] == {"kind": "person", "user": "writer"}
    imported = made[BANK[0][0]]  # kept as the file gave it, though the writer's bank now holds it
    assert (imported["kind"], imported["user"], imported["file"][-6:]) == ("import", "imported-nuggets", ".jsonl")
    assert set(imported) == {"kind", "user", "file"}


def test_a_suggestion_taken_as_it_came_is_the_machines_and_one_edited_the_persons(client, world):  # noqa: F811
    suggest(world)
    bank = [taken("n5", SUGGESTED[0]), taken("n6", SUGGESTED[1])]
    saved(client, world, bank)
    bank[1] = taken("n6", SUGGESTED[1], text="Nurses and therapists are exposed")  # edited after it was taken
    saved(client, world, bank, seq=2)

    made = made_by(world["campaign"])

    assert made[SUGGESTED[0]["text"]] == {**MACHINE, "taken_by": {"kind": "person", "user": "writer"}}
    assert made["Nurses and therapists are exposed"] == {"kind": "person", "user": "writer", "suggested_by": MACHINE}


def test_the_machine_is_the_suggestion_made_before_it_was_taken_not_a_later_one(client, world):  # noqa: F811
    suggest(world)
    saved(client, world, [taken("n5", SUGGESTED[0])])
    took = JudgementChange.objects.get(assessor__username="writer").received_at
    later = suggest(world, model="other-llm", prompt="Another prompt: {query} {context}")
    MachineLabel.objects.filter(pk=later.pk).update(created_at=took + timedelta(days=1))

    assert made_by(world["campaign"])[SUGGESTED[0]["text"]] == {**MACHINE, "taken_by": {"kind": "person",
                                                                                        "user": "writer"}}


def test_an_adjudicated_bank_keeps_its_writers_and_names_who_changed_a_suggestion(client, world):  # noqa: F811
    suggest(world)
    bank = [taken("n5", SUGGESTED[0]),
            {"id": "n6", "text": "Burnout is a different thing", "importance": "okay", "origin": "assessor"}]
    saved(client, world, bank)
    organiser = factories.user("org", is_staff=True)
    organiser.groups.add(ensure_groups()[Role.ORGANISER])

    set_final_bank(world["campaign"], organiser, world["unit"].topic, keep=["writer/n5", "writer/n6"],
                   importance={"writer/n5": "okay", "writer/n6": "vital"})

    made = made_by(world["campaign"])
    assert made["Burnout is a different thing"] == {"kind": "person", "user": "writer"}  # its text is the writer's
    assert made[SUGGESTED[0]["text"]] == {"kind": "person", "user": "org", "suggested_by": MACHINE}


def test_the_command_and_the_results_pages_download_write_the_same_file(client, world, tmp_path):  # noqa: F811
    suggest(world)
    saved(client, world, [taken("n5", SUGGESTED[0])])
    out = tmp_path / "banks.jsonl"
    call_command("export_nuggets", campaign=world["campaign"].name, out=str(out))
    client.force_login(organiser_account())
    name = world["campaign"].name

    assert 'id="download-nugget-banks"' in client.get(f"/campaigns/{name}/results/").content.decode()
    response = client.get(f"/campaigns/{name}/results/nugget-banks/")

    assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    assert response.content.decode() == out.read_text() == export_banks(world["campaign"])
    (line,) = out.read_text().splitlines()
    assert json.loads(line)["nuggets"][0]["made_by"]["kind"] == "machine"
    assert "made_by" in ExportNuggets.help
