"""Ids that only look like numbers: "²" and every other Unicode digit pass str.isdigit() but not int(), which gave
500s (issue 31, finding 5). Each place that reads an id from a request or a person's text uses config.ids.parse_id,
and answers 404, or 400 naming what is wrong."""

from io import StringIO
from types import SimpleNamespace
from urllib.parse import quote

import pytest
from django.core.management import CommandError, call_command

from annotation.services.assignment import AssignmentError, parse_topic_overlap
from assessments.exporters.common import ExportFailed
from assessments.exporters.machine import pick_source
from assessments.services.qrels import QrelsRequest, qrels_rows

# Superscript, circled, Arabic-Indic, full-width, mathematical and fraction digits, and mixes with ASCII ones.
LOOK_ALIKES = ["²", "①", "٣", "３", "𝟕", "½", "1²", "²1"]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_a_runs_evaluation_with_a_look_alike_id_is_a_404(client_for, world, text):
    response = client_for("participant").get(f"/api/runs/{quote(text)}/evaluation/")
    assert response.status_code == 404


@pytest.mark.parametrize("method", ["get", "delete"])
def test_a_run_named_by_its_id_in_other_digits_is_a_404(client_for, world, method):
    """int() reads "٣" (Arabic-Indic) as 3, and so did the ORM: DELETE /api/runs/<id in other digits>/ deleted it."""
    arabic_indic = str(world["run"]).translate({ord(d): 0x660 + int(d) for d in "0123456789"})
    response = getattr(client_for("participant"), method)(f"/api/runs/{quote(arabic_indic)}/")
    assert response.status_code == 404
    assert client_for("participant").get(f"/api/runs/{world['run']}/").status_code == 200


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_a_machine_job_with_a_look_alike_id_is_a_404(client_for, world, text):
    response = client_for("organiser").get(f"/api/campaigns/{world['campaign']}/machine/jobs/{quote(text)}/")
    assert response.status_code == 404


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_the_people_pages_actions_refuse_a_look_alike_id(client_for, world, text):
    organiser = client_for("organiser")
    roles = organiser.post("/people/", {"action": "roles", "user": text, "roles": ["assessor"]})
    assert roles.status_code == 400 and "Choose a person" in roles.content.decode()
    revoke = organiser.post("/people/", {"action": "revoke", "token": text}, follow=True)
    assert revoke.status_code == 200 and "revoked." not in revoke.content.decode()


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_taking_back_work_with_a_look_alike_id_is_a_400(client_for, world, people, text):
    response = client_for("organiser").post(f"/campaigns/{world['outline']}/work/", {
        "action": "take_back", "work": [f"{text}:{world['topic'].pk}", f"{people['assessor'].pk}:{text}"],
    })
    assert response.status_code == 400  # no unit named: WorkInvalid, not a 500


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_study_items_with_a_look_alike_run_or_count_are_a_400(client_for, world, text):
    organiser = client_for("organiser")
    for fields in ({"run": text, "n": "5"}, {"run": str(world["run"]), "n": text}):
        response = organiser.post(f"/campaigns/{world['campaign']}/pools/",
                                  {"action": "study_items", "pool": world["pool"], **fields})
        assert response.status_code == 400
        assert "choose the run and the number of candidates" in response.content.decode()


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_a_plot_scale_line_starting_with_a_look_alike_digit_is_a_400_naming_the_scale(client_for, world, text):
    response = client_for("organiser").post("/campaigns/new/", {
        "name": "plots", "task": "plot", "topics_from": "pick", "overlap": 1, "plot_scale": f"{text} Yes\n0 No",
        "qualification_threshold": 90, "qualification_attempts": 2, "review_sample_size": 10,
        "review_threshold": 95, "mode": "label", "context_sentences": 5, "choice_candidates": 20,
    })
    assert response.status_code == 400
    assert "line 1: expected a whole number and a label" in " ".join(response.context["form"].errors["plot_scale"])


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_a_topic_overlap_of_a_look_alike_number_names_the_option(text):
    with pytest.raises(AssignmentError, match="K must be a whole number"):
        parse_topic_overlap([f"301={text}"])


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_a_machine_source_named_by_a_look_alike_id_is_looked_up_by_name(world, text):
    with pytest.raises(ExportFailed):
        list(qrels_rows(QrelsRequest(source="machine", machine_source=text)))
    with pytest.raises(ExportFailed, match="no machine label source"):
        pick_source(SimpleNamespace(collection=None), text)
    with pytest.raises(CommandError, match="--source: no machine label source"):
        call_command("machine_report", "--source", text, "--campaign", world["campaign"], stdout=StringIO())
