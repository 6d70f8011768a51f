"""The dashboard's machine section: each machine label source of a campaign against its assessors.

For every source with labels on the campaign's topics (made for this campaign, or for none): Cohen's κ and the
confusion matrix against the assessors' majority, per topic, the cross-validation figures beside the human–human
κ (an annotator), Kendall's τ and the largest rank change between the runs ranked with the human qrels and with
the machine and filled qrels (assessments.machine.compare), the anchoring effect when the campaign shows
pre-labels, and a sample of disagreements to review. Nothing here is mixed into the other figures.
"""

from annotation.models import Assignment
from annotation.services import prelabels
from assessments.evaluation import parse_measure
from assessments.machine import compare
from assessments.models import MachineLabel, MachineLabelSource, Topic

RANKING_MEASURE = {"outline": "nDCG@20"}
DEFAULT_MEASURE = "nDCG@10"
AUDIT = 20


def campaign_sources(campaign, topic_ids):
    """The machine label sources with labels on these topics, made for this campaign or for none."""
    labelled = MachineLabel.objects.filter(topic_id__in=topic_ids, passage__isnull=False).values("source_id")
    return MachineLabelSource.objects.usable_by(campaign.pk).filter(
        pk__in=labelled, kind__in=MachineLabelSource.PASSAGE_KINDS,
    ).order_by("pk")


def machine_section(campaign) -> dict:
    """What the dashboard shows of machine labels for `campaign` ({"sources": []} when there are none); the
    dashboard draws each source's confusion matrix (annotation.reports.dashboard._machine)."""
    try:
        shown = prelabels.prelabels(campaign)
        settings_note = None
    except prelabels.PrelabelsInvalid as exc:
        shown, settings_note = prelabels.OFF, str(exc)
    topic_ids = set(Assignment.objects.filter(campaign=campaign, qualification=False).values_list("topic_id", flat=True))
    section = {"prelabels": shown, "settings_note": settings_note, "sources": [], "notes": compare.NOTES}
    sources = list(campaign_sources(campaign, topic_ids)) if topic_ids else []
    if not sources:
        return section
    collection = Topic.objects.get(pk=next(iter(topic_ids))).collection
    human = compare.campaign_human(campaign.pk, collection, topic_ids)
    run_ids = compare.pool_run_ids(campaign.pools.values_list("pk", flat=True)) | set(
        Assignment.objects.filter(campaign=campaign, run__isnull=False).values_list("run_id", flat=True))
    run_ids.discard(None)
    runs = compare.stored_runs(run_ids, topic_ids)
    measure = parse_measure(RANKING_MEASURE.get(campaign.task, DEFAULT_MEASURE))
    for source in sources:
        report = compare.source_report(source, human, runs, measure, topic_ids=topic_ids, campaign_id=campaign.pk,
                                       audit=AUDIT)
        report["shown_on_pages"] = shown.on and shown.source_id == source.pk
        section["sources"].append(report)
    return section
