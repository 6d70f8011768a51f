"""Handing a campaign's work units to assessors with overlap: k assessors per unit, balanced, blind, idempotent.

Work units: for outline campaigns a (topic, run) article of the campaign's pools (a run's passages
for the topic); for plot (and ad hoc) campaigns a (topic, pool) batch of the pool's candidates.

The rule that keeps overlap right: **assessors are chosen per topic, and the chosen assessors get
every unit of that topic.** Judgements are keyed on (topic, passage), so a passage judged in one
run's article is already judged in another's; if two articles of a topic went to different
assessor sets, the number of assessors behind a passage would vary and the agreement figures
would be wrong. So a topic's assessors are:

1. those who already have a unit of the topic in this campaign, or have judged any passage of the
   topic (they keep the topic: they get its missing units);
2. then, up to the topic's overlap k, the named assessors with the least work in the campaign
   (units already held), ties broken by an order drawn from the seed.

k is the campaign's overlap, or the topic's own (CampaignTopic.overlap; 0 means every named
assessor, e.g. one topic judged by everyone as in seed 004 §5). Assignment is deterministic given
the seed, the assessors and what exists; running it again only adds what is missing (lowering the
overlap never takes work away). Assessors see only their own assignments (blind).

Qualification topics (CampaignTopic.qualification) are not shared out: every named assessor gets all
their units, flagged `qualification`, ahead of formal work (annotation.services.qualification scores them).
"""

import random
import secrets
from collections import defaultdict
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Max, Q

from annotation.models import Assignment, Campaign, CampaignTopic
from annotation.roles import can_be_assigned
from annotation.services import triage
from annotation.services.campaigns import add_topics
from annotation.services.errors import AssignmentError, ServiceError
from annotation.services.status import kind_for
from annotation.units import tasks
from annotation.units.tasks import NUGGET_STAGES, Unit, nugget_stage  # noqa: F401 (callers: the command, the console)
from assessments.models import Judgement, PoolCandidate, Qrel, QrelSet, Topic
from config.ids import parse_id


@dataclass
class Assigned:
    """What assign_campaign did."""

    created: int = 0
    qualification_created: int = 0
    topics: int = 0
    units: int = 0
    load: dict = field(default_factory=dict)  # username -> formal units held in the campaign
    extra_created: int = 0  # of them, likely-relevant candidates for extra assessors (triage)

    def summary(self):
        loads = ", ".join(f"{name} {count}" for name, count in sorted(self.load.items()))
        extra = f", {self.extra_created:,} of likely-relevant candidates for extra assessors" if self.extra_created else ""
        return (
            f"{self.created:,} assignments new ({self.qualification_created:,} of them qualification{extra}) over "
            f"{self.topics:,} topics and {self.units:,} units; units per assessor: {loads or 'none'}."
        )


def campaign_units(campaign) -> dict[int, list[Unit]]:
    """The campaign's work units grouped by topic id, each topic's units in a stable order, as its task makes them
    (annotation.units.tasks). Triage pools (annotation.services.triage: likely-relevant candidates for extra
    assessors) are not among them."""
    pools = [p for p in campaign.pools.all() if not triage.is_triage_pool(p)]
    return tasks.of(campaign).units(campaign, pools)


def assign_campaign(
    campaign, assessors, *, pools=(), overlap=None, topic_overlap=None, qualification_topics=(), qualification_gold=None,
    seed=0, progress=None, likely=None, stage=None,
) -> Assigned:
    """Give the campaign's units to `assessors` (usernames) with overlap; returns what was done.

    `overlap` (k, stored on the campaign), `topic_overlap` ({topic external id: k, 0 for everyone}, stored
    as CampaignTopic rows), `qualification_topics` (external ids) and `qualification_gold` (a QrelSet name)
    change the campaign's settings first and `pools` are added to it; left out, the stored settings apply. `progress(done, total)` is
    called after each topic. `likely` (triage.LikelyRelevant) gives the candidates a machine label source scores at
    least its threshold to `extra` more assessors each (annotation.services.triage). `stage` (a nuggets campaign:
    "create", a unit per topic to write its bank, "support", a unit per answer, or "citations", a unit per answer
    with citations, whose cited passages are judged; stored) says which units a nuggets campaign gets. Raises AssignmentError (or TriageInvalid) naming the option at fault; nothing is written
    then.
    """
    if stage is not None and stage not in tasks.of(campaign).stages:
        raise AssignmentError("stage", f"expected one of {', '.join(NUGGET_STAGES)}, for a nuggets campaign")
    if likely is not None:
        triage.check_likely(campaign, likely)
    users = _users(assessors)
    given = campaign
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        campaign.pools.add(*pools)
        if stage is not None:
            campaign.settings = {**(campaign.settings if isinstance(campaign.settings, dict) else {}),
                                 "nugget_stage": stage}
            campaign.save(update_fields=["settings"])
        units = campaign_units(campaign)
        if not units:
            raise AssignmentError(*tasks.of(campaign).no_units(campaign))
        topic_ids = _topic_ids(units)
        _store_settings(campaign, len(users), overlap, topic_overlap or {}, qualification_topics,
                        qualification_gold, topic_ids)
        settings = {ct.topic_id: ct for ct in CampaignTopic.objects.filter(campaign=campaign)}
        qualifying = {tid for tid, ct in settings.items() if ct.qualification}
        if qualifying and campaign.qualification_gold_id is None:
            raise AssignmentError("qualification_gold", "qualification topics need a qrel set of known answers")
        graded = set(Qrel.objects.filter(qrel_set_id=campaign.qualification_gold_id, topic_id__in=qualifying)
                     .values_list("topic_id", flat=True))
        if qualifying - graded:
            missing = sorted(topic_ids[t] for t in qualifying - graded)
            raise AssignmentError(
                "qualification_gold", f"qrel set {campaign.qualification_gold.name!r} has no grades for qualification "
                f"topics {', '.join(map(repr, missing))}"
            )

        triage_pools = triage.triage_pools(campaign, likely) if likely is not None else []
        triage_ids = set(campaign.pools.filter(params__has_key=triage.TRIAGE_KEY).values_list("pk", flat=True))
        existing = defaultdict(set)  # topic -> assessor ids with a unit of it in the campaign
        extra_only = defaultdict(set)  # topic -> assessor ids holding only triage units of it
        held = set()  # (assessor id, unit)
        load = defaultdict(int)
        # a nuggets campaign's stages are different work: a topic's keepers are those holding units of this stage
        making = {kind_for(campaign, run=u.run_id, pool=u.pool_id) for us in units.values() for u in us[:1]}
        staged = bool(tasks.of(campaign).stages)
        for a in Assignment.objects.filter(campaign=campaign).values(
                "assessor_id", "topic_id", "run_id", "pool_id", "qualification", "kind"):
            unit = Unit(a["topic_id"], run_id=a["run_id"], pool_id=a["pool_id"])
            held.add((a["assessor_id"], unit, a["kind"]))  # an answer is two units: nugget and citation support
            if not a["qualification"]:
                if not staged or a["kind"] in making:
                    (extra_only if a["pool_id"] in triage_ids else existing)[a["topic_id"]].add(a["assessor_id"])
                load[a["assessor_id"]] += 1
        judged = defaultdict(set)
        named = {u.pk for u in users}
        for topic_id, assessor_id in (
            Judgement.objects.filter(topic_id__in=units, assessor_id__in=named, adjudicated=False)
            .filter(Q(campaign_id=campaign.pk) | Q(campaign_id__isnull=True))  # not another campaign's labels
            .values_list("topic_id", "assessor_id").distinct()
        ):
            judged[topic_id].add(assessor_id)

        rng = random.Random(seed)
        tiebreak = {u.pk: i for i, u in enumerate(rng.sample(users, len(users)))}
        next_position = dict(
            Assignment.objects.filter(assessor__in=users).values("assessor_id").annotate(last=Max("position"))
            .values_list("assessor_id", "last")
        )
        new = []

        def give(assessor_id, unit, qualification):
            kind = kind_for(campaign, run=unit.run_id, pool=unit.pool_id)
            if (assessor_id, unit, kind) in held:
                return
            held.add((assessor_id, unit, kind))
            position = next_position.get(assessor_id, -1) + 1
            next_position[assessor_id] = position
            new.append(Assignment(
                campaign=campaign, assessor_id=assessor_id, topic_id=unit.topic_id, run_id=unit.run_id, kind=kind,
                pool_id=unit.pool_id, qualification=qualification, position=position,
                token=secrets.token_hex(16), seed=rng.getrandbits(62) or 1,
            ))

        result = Assigned(topics=len(units), units=sum(len(u) for u in units.values()))
        order = sorted(units, key=lambda tid: (tid not in qualifying, topic_ids[tid]))
        topic_people = defaultdict(set)  # topic -> the assessors who judge all of its units
        for done, topic_id in enumerate(order, start=1):
            topic_units = units[topic_id]
            if topic_id in qualifying:
                for user in users:
                    for unit in topic_units:
                        give(user.pk, unit, True)
            else:
                k = _overlap_of(campaign, settings.get(topic_id), len(users))
                # an assessor asked only about the likely-relevant candidates of a topic is not its keeper
                keepers = existing[topic_id] | (judged[topic_id] - (extra_only[topic_id] - existing[topic_id]))
                chosen = sorted(keepers)
                candidates = sorted((u.pk for u in users if u.pk not in keepers), key=lambda pk: (load[pk], tiebreak[pk]))
                chosen += candidates[: max(0, k - len(keepers))]
                for assessor_id in chosen:
                    before = len(new)
                    for unit in topic_units:
                        give(assessor_id, unit, False)
                    load[assessor_id] += len(new) - before
                topic_people[topic_id] = set(chosen)
            if progress:
                progress(done, len(order))
        for pool in triage_pools:  # likely-relevant candidates: `extra` assessors beyond the topic's own
            for topic_id in sorted(set(PoolCandidate.objects.filter(pool=pool).values_list("topic_id", flat=True))):
                unit = Unit(topic_id, pool_id=pool.pk)
                holders = {a for a, u, _ in held if u == unit}
                others = sorted((u.pk for u in users if u.pk not in topic_people[topic_id] | existing[topic_id]
                                 and u.pk not in holders), key=lambda pk: (load[pk], tiebreak[pk]))
                for assessor_id in others[: max(0, likely.extra - len(holders))]:
                    give(assessor_id, unit, False)
                    load[assessor_id] += 1
                    result.extra_created += 1
        Assignment.objects.bulk_create(new, batch_size=1000)
        add_topics(campaign, units)  # the topics of its units are the campaign's (its home lists them)
        result.created = len(new)
        result.qualification_created = sum(1 for a in new if a.qualification)
        names = dict(get_user_model().objects.filter(pk__in=load.keys() | named).values_list("pk", "username"))
        result.load = {names[pk]: load.get(pk, 0) for pk in names}
    given.refresh_from_db()  # the caller's campaign shows the stored settings
    return result


def _users(usernames):
    names = list(dict.fromkeys(usernames))
    if not names:
        raise AssignmentError("assessors", "name at least one assessor")
    users = list(get_user_model().objects.filter(username__in=names))
    missing = [n for n in names if n not in {u.username for u in users}]
    if missing:
        raise AssignmentError("assessors", f"no users named {', '.join(map(repr, missing))}")
    barred = [u.username for u in users if not can_be_assigned(u)]
    if barred:
        raise AssignmentError("assessors", f"{', '.join(map(repr, barred))} may not be given work: an inactive account "
                                           "or a participant team (it would judge its own runs)")
    return sorted(users, key=lambda u: u.username)


def _topic_ids(units):
    """{topic id: external id} of the campaign's topics."""
    return dict(Topic.objects.filter(pk__in=units).values_list("pk", "external_id"))


def _by_external_id(topic_ids, wanted, option):
    ids = {ext: pk for pk, ext in topic_ids.items()}
    missing = [t for t in wanted if t not in ids]
    if missing:
        raise AssignmentError(option, f"{', '.join(map(repr, missing))} not topics of the campaign's pools")
    return ids


def _store_settings(campaign, assessor_count, overlap, topic_overlap, qualification_topics, gold, topic_ids):
    if overlap is not None:
        if overlap < 1:
            raise AssignmentError("overlap", f"{overlap} must be 1 or more")
        campaign.overlap = overlap
    if campaign.overlap > assessor_count:
        raise AssignmentError(
            "overlap", f"{campaign.overlap} assessors per unit, but only {assessor_count} assessors are named"
        )
    if gold is not None:
        qrel_set = QrelSet.objects.filter(name=gold).first()
        if qrel_set is None:
            raise AssignmentError("qualification_gold", f"no qrel set named {gold!r}")
        campaign.qualification_gold = qrel_set
    campaign.save(update_fields=["overlap", "qualification_gold"])
    ids = _by_external_id(topic_ids, list(topic_overlap) + list(qualification_topics), "topic_overlap")
    for external_id, k in topic_overlap.items():
        if k < 0 or k > assessor_count:
            raise AssignmentError(
                "topic_overlap", f"{external_id}={k}: expected 0 (everyone) to {assessor_count} (the assessors named)"
            )
        CampaignTopic.objects.update_or_create(campaign=campaign, topic_id=ids[external_id], defaults={"overlap": k})
    for external_id in qualification_topics:
        CampaignTopic.objects.update_or_create(
            campaign=campaign, topic_id=ids[external_id], defaults={"qualification": True}
        )


def _overlap_of(campaign, topic_settings, assessor_count):
    k = campaign.overlap if topic_settings is None or topic_settings.overlap is None else topic_settings.overlap
    return assessor_count if k == 0 else min(k, assessor_count)


def parse_topic_overlap(items) -> dict:
    """{"T": k} from command-line items "T=k" (k a whole number, or "all"); AssignmentError names a bad one."""
    parsed = {}
    for item in items:
        topic, sep, raw = item.rpartition("=")
        if not sep or not topic:
            raise AssignmentError("topic_overlap", f"{item!r} is not TOPIC=K")
        if raw == "all":
            parsed[topic] = 0
        elif (k := parse_id(raw, minimum=0)) is not None:
            parsed[topic] = k
        else:
            raise AssignmentError("topic_overlap", f"{item!r}: K must be a whole number or 'all'")
    return parsed


def check_unit(*, campaign, assessor, topic, run=None, pool=None, instance=None) -> str:
    """Check one hand-made unit of work (the admin's form) as assign_campaign makes them; returns its kind.

    The unit must be real (the run has an article for the topic, or the pool has candidates or study items for
    it, all in the topic's collection), belong to the campaign's pools, and not be given to the assessor twice.
    Raises ServiceError naming the field.
    """
    from annotation.services.errors import ServiceError
    from annotation.services.status import kind_for
    from assessments.models import PoolCandidate, RunEntry, StudyItem

    if topic is None:
        raise ServiceError("topic", "choose the topic to judge")
    if (run is None) == (pool is None):
        raise ServiceError("run", "give a run (an outline article) or a pool (plot candidates), not both or neither")
    if run is not None:
        if run.collection_id != topic.collection_id:
            raise ServiceError("run", f"run {run.name!r} ranks another collection than topic {topic.external_id!r}")
        if not RunEntry.objects.filter(run=run, topic=topic).exists():
            raise ServiceError("run", f"run {run.name!r} has no article for topic {topic.external_id!r}")
    else:
        if pool.collection_id != topic.collection_id:
            raise ServiceError("pool", f"pool {pool.name!r} is of another collection than topic {topic.external_id!r}")
        if not (PoolCandidate.objects.filter(pool=pool, topic=topic).exists()
                or StudyItem.objects.filter(pool=pool, topic=topic).exists()):
            raise ServiceError("pool", f"pool {pool.name!r} has nothing to judge for topic {topic.external_id!r}")
        if campaign is not None and not campaign.pools.filter(pk=pool.pk).exists():
            raise ServiceError("pool", f"pool {pool.name!r} is not one of campaign {campaign.name!r}'s pools")
    kind = kind_for(campaign, run=run, pool=pool)
    twins = Assignment.objects.filter(assessor=assessor, topic=topic, campaign=campaign, run=run, pool=pool)
    if instance is not None and instance.pk:
        twins = twins.exclude(pk=instance.pk)
    if assessor is not None and twins.exists():
        what = f"run {run.name!r}" if run is not None else f"pool {pool.name!r}"
        raise ServiceError(None, f"{assessor} already has topic {topic.external_id!r} of {what} in this campaign")
    return kind
