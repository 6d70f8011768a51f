"""What the pooled kinds share: plot labels and ad hoc units grade their pool's candidates of the topic, forced-choice
and pair units (study_kind) answer their pool's study items. Their progress is read together for the queue: one read
of the candidates, one of the items and one of the assessor's labels, whatever the number and kinds of the units."""

from collections import defaultdict

from annotation.services import plot
from annotation.services.progress import Progress
from annotation.units import reviewing
from annotation.units.registry import UnitKind, of
from assessments.models import CANDIDATE_GRADES, Judgement, Layer, PoolCandidate, StudyItem


def progress_of_units(user, assignments) -> dict:
    """{unit pk: progress} of the user's pooled units: the kind of each (annotation.units) says its layer and noun;
    a unit whose layer grades a candidate counts its pool's candidates, any other its study items."""
    if not assignments:
        return {}
    pools = {a.pool_id for a in assignments}
    topics = {a.topic_id for a in assignments}
    cands = defaultdict(set)
    for pool_id, topic_id, pid in PoolCandidate.objects.filter(pool_id__in=pools, topic_id__in=topics).values_list(
        "pool_id", "topic_id", "passage_id"
    ):
        cands[pool_id, topic_id].add(pid)
    items = defaultdict(set)
    for pool_id, topic_id, kind, key in StudyItem.objects.filter(pool_id__in=pools, topic_id__in=topics).values_list(
        "pool_id", "topic_id", "kind", "key"
    ):
        items[pool_id, topic_id, kind].add(key)
    graded, answered = defaultdict(set), defaultdict(set)
    rows = Judgement.objects.filter(
        assessor=user, topic_id__in=topics, value__isnull=False, adjudicated=False,
        layer__in=[*CANDIDATE_GRADES, Layer.CHOICE, Layer.RATING],
    ).values_list("campaign_id", "layer", "topic_id", "passage_id", "item")
    for campaign_id, layer, topic_id, pid, item in rows:
        if layer in CANDIDATE_GRADES:
            graded[campaign_id, topic_id].add(pid)
        else:
            answered[campaign_id, topic_id, layer].add(item)
    out = {}
    for a in assignments:
        unit = of(a)
        if unit.layers[0] in CANDIDATE_GRADES:
            total = cands[a.pool_id, a.topic_id]
            done = total & graded[a.campaign_id, a.topic_id]
        else:  # a study unit: its items are of its own kind
            total = items[a.pool_id, a.topic_id, a.kind]
            done = total & answered[a.campaign_id, a.topic_id, unit.layers[0]]
        out[a.pk] = Progress(total=len(total), done=len(done), noun=unit.noun, size=len(total))
    return out


def study_kind(kind, *, title, template) -> UnitKind:
    """A human study's kind of unit (forced choice, pair rating): its items are its pool's study items of the topic
    of the same kind, each answered on one layer (annotation.services.plot's study pages). An item's key may name the
    run that made it: its page and its review show only a handle."""
    return UnitKind(
        kind=kind, title=title, noun=plot.STUDY_NOUNS[kind], layers=(plot.STUDY_LAYERS[kind],),
        template=template, script="annotation/study.js", data_id="study-data",
        page=plot.study_page, change_key=plot.study_change_key, progress=plot.study_progress,
        progress_of_units=progress_of_units, review_units=reviewing.study_units,
        review_labels=reviewing.item_labels, queue_row="annotation/queue/_pooled.html", blind_items=True,
    )
