"""What review reads of a unit, shared by the kinds: the assessor's current labels of the batch's items in the unit's
campaign (not transitions), {(passage id, item key): {layer: value}} (annotation.services.review opens a review with
them)."""

from assessments.models import Judgement, Layer, PoolCandidate, StudyItem

PASSAGE_LAYERS = (Layer.NOTES, Layer.FACET, Layer.REMOVAL, Layer.PLOT_GRADE, Layer.PLOT_SPANS, Layer.GRADE,
                  Layer.EVIDENCE)
ITEM_LAYERS = (Layer.CHOICE, Layer.RATING, Layer.NUGGET_SUPPORT)


def own_labels(assignment):
    """The assessor's current labels of the unit's topic in its campaign (none cleared, none adjudicated)."""
    return Judgement.objects.in_campaign(assignment.campaign_id).filter(
        assessor_id=assignment.assessor_id, topic_id=assignment.topic_id, adjudicated=False,
    ).exclude(value=None)


def candidate_units(assignment) -> list[tuple[int, str]]:
    """A pooled unit's items: its pool's candidates of the topic, by rank."""
    rows = PoolCandidate.objects.filter(pool_id=assignment.pool_id, topic_id=assignment.topic_id).order_by("rank")
    return [(pid, "") for pid in rows.values_list("passage_id", flat=True)]


def passage_labels(assignment, units) -> dict:
    """The labels of items that are passages (an article's, a pool's candidates)."""
    labels = {unit: {} for unit in units}
    passages = [pid for pid, _ in units if pid is not None]
    if passages:
        for pid, layer, value in own_labels(assignment).filter(passage_id__in=passages, layer__in=PASSAGE_LAYERS) \
                .values_list("passage_id", "layer", "value"):
            labels[pid, ""][layer] = value
    return labels


def item_labels(assignment, units) -> dict:
    """The labels of items named by a key (a study item, a nugget of an answer)."""
    labels = {unit: {} for unit in units}
    items = [key for _, key in units if key]
    if items:
        for key, layer, value in own_labels(assignment).filter(item__in=items, layer__in=ITEM_LAYERS) \
                .values_list("item", "layer", "value"):
            labels[None, key][layer] = value
    return labels


def study_units(assignment) -> list[tuple[None, str]]:
    """A study unit's items: its pool's study items of the topic of its own kind, by key."""
    rows = StudyItem.objects.filter(pool_id=assignment.pool_id, topic_id=assignment.topic_id, kind=assignment.kind)
    return [(None, key) for key in rows.order_by("key").values_list("key", flat=True)]
