"""The one link from the test collection (assessments) to campaigns (annotation), and the decision behind it.

Judgement.campaign_id, Answer.campaign_id and MachineLabelSource.campaign_id are plain integers, not foreign keys,
on purpose (issue 40 item 4):
- judgements outlive their campaign: delete_campaign exports a campaign, then deletes it and its assignments, but a
  judgement is never deleted, so it keeps the old id. No later campaign takes that id (PostgreSQL's sequences and
  Django's SQLite AUTOINCREMENT never reuse one), so the integer can never point at another campaign;
- assessments is the lower layer and imports nothing from annotation (tests/config/test_import_layers.py). A foreign
  key would make the test collection's tables depend on the annotation app's.

A foreign key with on_delete=SET_NULL would lose which campaign a kept judgement came from, and CASCADE would lose
the judgements. Where assessments needs a campaign (a command's --campaign NAME, an import into a campaign), it asks
here, and nothing else in assessments names annotation's models.
"""

from django.apps import apps


def campaign_named(name: str):
    """The campaign called `name`, or None."""
    return apps.get_model("annotation", "Campaign").objects.filter(name=name).first()


def campaign_id_named(name: str) -> int | None:
    """The id of the campaign called `name`, or None."""
    return apps.get_model("annotation", "Campaign").objects.filter(name=name).values_list("pk", flat=True).first()


def campaign_exists(name: str) -> bool:
    return apps.get_model("annotation", "Campaign").objects.filter(name=name).exists()


def track_of(campaign_id: int):
    """The campaign's track (its topics and collection), or None."""
    return apps.get_model("annotation", "Track").objects.filter(campaign_id=campaign_id).first()


def campaign_settings(campaign_id: int) -> dict:
    """The campaign's settings (its JSON), {} for none or no such campaign."""
    found = apps.get_model("annotation", "Campaign").objects.filter(pk=campaign_id).values_list("settings", flat=True)
    settings = found.first()
    return settings if isinstance(settings, dict) else {}


def campaign_pool_ids(campaign_id: int) -> list[int]:
    """The pools the campaign judges: those of its units (qualification units aside) and those it names, by id."""
    units = apps.get_model("annotation", "Assignment").objects.filter(
        campaign_id=campaign_id, qualification=False, pool__isnull=False).values_list("pool_id", flat=True)
    named = apps.get_model("annotation", "Campaign").pools.through.objects.filter(
        campaign_id=campaign_id).values_list("pool_id", flat=True)
    return sorted(set(units) | set(named))
