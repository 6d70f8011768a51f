"""The audit trail: export_audit gives every change with old and new value; deleting a campaign keeps an export."""

import json
from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Assignment, Campaign
from assessments.models import Judgement, JudgementChange
from tests import factories


@pytest.fixture
def history(db):
    """Two assessors on topic t1 (campaign c1), one on t2 (campaign c2); judge's notes changed three times,
    the second change arriving last (out of order)."""
    coll = factories.collection("car")
    t1, t2 = factories.topic(coll, "t1", title="One"), factories.topic(coll, "t2", title="Two")
    p1, p2 = factories.passage(coll, "p1"), factories.passage(coll, "p2")
    run = factories.run(coll, "r1", {t1: [p1, p2], t2: [p1]})
    judge, other = factories.user("judge"), factories.user("other")
    c1, _ = factories.assigned_campaign(t1, (judge, other), run=run, name="c1")
    c2, _ = factories.assigned_campaign(t2, (judge,), run=run, name="c2")

    def note(user, topic, text, second, session="s1"):
        return factories.judgement(
            user, topic, p1, layer="notes", value=text, campaign=c1 if topic == t1 else c2, session_id=session,
            client_time=datetime(2024, 5, 1, 12, 0, second, tzinfo=UTC), run_ids=["r1"],
        )

    note(judge, t1, "first", 1)
    note(judge, t1, "third", 3, session="s2")
    note(judge, t1, "second", 2)  # arrives last, earlier by the assessor's clock
    note(other, t1, "theirs", 5)
    note(judge, t2, "elsewhere", 4)
    return {"c1": c1, "c2": c2, "judge": judge, "other": other}


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_export_audit_gives_each_change_with_its_old_and_new_value_in_clock_order(history, tmp_path):
    out = tmp_path / "audit.jsonl"
    call_command("export_audit", "--campaign", "c1", "--assessor", "judge", "--out", str(out))
    rows = lines(out)
    assert [(r["old_value"], r["new_value"], r["current"]) for r in rows] == [
        (None, "first", False), ("first", "second", False), ("second", "third", True),
    ]
    assert [r["session_id"] for r in rows] == ["s1", "s1", "s2"]
    first = rows[0]
    assert first["assessor"] == "judge" and first["topic"] == "t1" and first["passage"] == "p1"
    assert first["client_time"] == "2024-05-01T12:00:01Z" and first["received_at"].endswith("Z")
    assert first["layer"] == "notes" and first["source"] == "web" and first["run_ids"] == ["r1"]


def test_export_audit_scopes(history, tmp_path):
    out = tmp_path / "audit.jsonl"
    call_command("export_audit", "--out", str(out))
    assert len(lines(out)) == JudgementChange.objects.count() == 5
    call_command("export_audit", "--campaign", "c1", "--out", str(out))
    assert sorted({(r["assessor"], r["topic"]) for r in lines(out)}) == [("judge", "t1"), ("other", "t1")]
    call_command("export_audit", "--campaign", "c2", "--out", str(out))
    assert [r["new_value"] for r in lines(out)] == ["elsewhere"]
    with pytest.raises(CommandError, match="--campaign: no campaign named 'nope'"):
        call_command("export_audit", "--campaign", "nope", "--out", str(out))


def test_delete_campaign_needs_the_name_twice_and_keeps_an_export(history, tmp_path, settings, capsys):
    settings.EXPORT_DIR = tmp_path / "exports"
    with pytest.raises(CommandError, match="--confirm 'c2' does not match 'c1': nothing was deleted"):
        call_command("delete_campaign", "c1", "--confirm", "c2")
    assert Campaign.objects.filter(name="c1").exists()

    judgements = Judgement.objects.count()
    call_command("delete_campaign", "c1", "--confirm", "c1")
    assert not Campaign.objects.filter(name="c1").exists()
    assert not Assignment.objects.filter(campaign__name="c1").exists()
    assert Judgement.objects.count() == judgements  # the assessors' judgements stay
    [export] = (tmp_path / "exports").iterdir()
    assert str(export) in capsys.readouterr().out
    rows = lines(export)
    assert rows[0]["type"] == "campaign" and rows[0]["name"] == "c1"
    kinds = [r["type"] for r in rows]
    assert kinds.count("assignment") == 2 and kinds.count("judgement") == 2 and kinds.count("change") == 4


def test_a_campaign_whose_export_fails_is_not_deleted(history, tmp_path, settings):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    settings.EXPORT_DIR = blocker / "exports"
    with pytest.raises(CommandError, match="the campaign was not deleted"):
        call_command("delete_campaign", "c1", "--confirm", "c1")
    assert Campaign.objects.filter(name="c1").exists()


def test_the_admin_delete_asks_first_then_writes_the_export_and_says_where(history, tmp_path, settings, client):
    settings.EXPORT_DIR = tmp_path / "exports"
    client.force_login(factories.user("boss", is_staff=True, is_superuser=True))
    url = reverse("admin:annotation_campaign_delete", args=[history["c1"].pk])
    page = client.get(url)
    assert page.status_code == 200 and b"Are you sure" in page.content
    assert Campaign.objects.filter(name="c1").exists()
    response = client.post(url, {"post": "yes"}, follow=True)
    assert response.status_code == 200
    assert not Campaign.objects.filter(name="c1").exists()
    [export] = (tmp_path / "exports").iterdir()
    assert f"was written to {export} before deleting it" in response.content.decode()
    assert lines(export)[0]["name"] == "c1"


def test_the_admin_bulk_delete_keeps_an_export_of_each(history, tmp_path, settings, client):
    settings.EXPORT_DIR = tmp_path / "exports"
    client.force_login(factories.user("boss", is_staff=True, is_superuser=True))
    ids = [history["c1"].pk, history["c2"].pk]
    client.post(reverse("admin:annotation_campaign_changelist"),
                {"action": "delete_selected", "_selected_action": ids, "post": "yes"})
    assert not Campaign.objects.filter(pk__in=ids).exists()
    assert len(list((tmp_path / "exports").iterdir())) == 2


def test_the_export_name_comes_from_the_id_and_a_cleaned_name(history, tmp_path, settings):
    from annotation.services.audit import export_path

    settings.EXPORT_DIR = tmp_path
    campaign = Campaign(pk=7, name="../../etc/passwd")
    path = export_path(campaign)
    assert path.parent == tmp_path.resolve()
    assert path.name.startswith("campaign-7-etc-passwd-")


def test_a_deleted_campaigns_judgements_keep_its_id_and_no_new_campaign_takes_it(history, tmp_path, settings):
    """The decision of assessments.campaign_link: judgements hold their campaign as a plain integer and outlive it.
    That is sound only if no later campaign takes a deleted one's id: delete the newest campaign, make another, and
    the kept judgements still point at no live campaign (SQLite's AUTOINCREMENT, PostgreSQL's sequence)."""
    settings.EXPORT_DIR = tmp_path / "exports"
    newest = Campaign.objects.order_by("-pk").first()
    kept = set(Judgement.objects.filter(campaign_id=newest.pk).values_list("pk", flat=True))
    assert kept
    call_command("delete_campaign", newest.name, "--confirm", newest.name)
    again = factories.campaign("after")
    assert again.pk != newest.pk
    assert set(Judgement.objects.filter(campaign_id=newest.pk).values_list("pk", flat=True)) == kept


def test_only_the_campaign_link_names_annotations_models_in_assessments():
    """assessments reaches campaigns through assessments.campaign_link alone (issue 40 item 4: five places did)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "assessments"
    naming = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                    if 'get_model("annotation", "Campaign")' in p.read_text() or
                    'get_model("annotation", "Track")' in p.read_text())
    assert naming == ["campaign_link.py"]
