"""Campaigns that take runs: making one with its track (collection and topics), and pooling its runs.

A campaign's track is the collection and the topics uploaded runs rank. By default a new
campaign takes every topic of its task's kind; all of its topics must be of one collection (a
plot campaign is about one book, since each book is its own collection).
"""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q

from annotation.models import Assignment, Campaign, Track
from annotation.units import tasks
from assessments.importers.trec import ids_by_external_id
from assessments.models import Pool, Run, Topic
from config.ids import batched
from retrieval.models import Collection

TOPIC_KIND = {task.task: task.topic_kind for task in tasks.TASKS.values()}  # a task's topics (annotation.units.tasks)
SHOWN = 10  # ids named in a message


class CampaignError(ValueError):
    """A campaign or pool that cannot be made as asked; the message says why."""


def _checked(instance, exclude=()):
    """full_clean() with its ValidationError turned into a CampaignError naming each field."""
    try:
        instance.full_clean(exclude=list(exclude), validate_unique=False)
    except ValidationError as exc:
        raise CampaignError("; ".join(f"{field}: {' '.join(errors)}" for field, errors in exc.message_dict.items()))


def _named(ids):
    ids = list(ids)
    more = f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else ""
    return ", ".join(repr(i) for i in ids[:SHOWN]) + more


def campaign_topics(campaign):
    """Every topic of the campaign: its track's (the topics runs rank, of one collection) and those its units are
    about (a plot campaign's units may span books, each its own collection). A QuerySet, for counts and lists."""
    return Topic.objects.filter(
        Q(pk__in=Track.topics.through.objects.filter(track__campaign=campaign).values("topic_id"))
        | Q(pk__in=Assignment.objects.filter(campaign=campaign).values("topic_id")))


def campaign_collections(campaign) -> list:
    """The collections of the campaign's topics (campaign_topics), by name: one book each for a plot campaign."""
    return list(Collection.objects.filter(pk__in=campaign_topics(campaign).values("collection_id")).order_by("name"))


def add_topics(campaign, topic_ids) -> int:
    """THE way topics join a campaign: those of `topic_ids` (Topic pks) of the campaign's task kind join its track,
    which is made on the first topic's collection when the campaign has none (one whose units came from a pool);
    topics of another collection stay out, since a track is of one collection. How many were new to the campaign.
    Called when units are made (assign_campaign: the console, the command, the demo) and when an import or upload
    brings topics (data_imports)."""
    ids, kind = sorted(set(topic_ids)), TOPIC_KIND[campaign.task]
    track = Track.objects.filter(campaign=campaign).first()
    if track is None:
        first = next((c for chunk in batched(ids) for c in Topic.objects.filter(pk__in=chunk, kind=kind)
                      .order_by("pk").values_list("collection_id", flat=True)[:1]), None)
        if first is None:
            return 0
        track, _ = Track.objects.get_or_create(campaign=campaign, defaults={"collection_id": first})
    new = set()
    for chunk in batched(ids):  # 70,000 topics in one IN (...) were past PostgreSQL's parameter limit
        new.update(Topic.objects.filter(pk__in=chunk, kind=kind, collection_id=track.collection_id)
                   .values_list("pk", flat=True))
    new -= set(track.topics.values_list("pk", flat=True))
    through = Track.topics.through  # as track.topics.add(*new) writes it, without its lookup of every new id
    through.objects.bulk_create([through(track_id=track.pk, topic_id=pk) for pk in sorted(new)], batch_size=1000,
                                ignore_conflicts=True)  # as add() does: a row another import added meanwhile
    return len(new)


def create_campaign(
    *, name, task, topics=(), collection=None, title="", max_runs=None, max_per_topic=None
) -> Campaign:
    """Make a campaign that takes runs: its track is `topics` (external ids; default: every topic of the task's
    kind) of `collection` (default: the only collection holding such topics)."""
    if task not in Campaign.Task.values:
        raise CampaignError(f"task {task!r} is not one of {', '.join(Campaign.Task.values)}")
    kind = TOPIC_KIND[task]
    with transaction.atomic():
        if Campaign.objects.filter(name=name).exists():
            raise CampaignError(f"a campaign named {name!r} already exists")
        candidates = Topic.objects.filter(kind=kind)
        if collection:
            coll = Collection.objects.filter(name=collection).first()
            if coll is None:
                raise CampaignError(f"no collection named {collection!r}")
        else:
            wanted = candidates.filter(external_id__in=topics) if topics else candidates
            names = sorted(set(wanted.values_list("collection__name", flat=True)))
            if not names:
                which = f"topics {_named(topics)}" if topics else f"{kind} topics"
                raise CampaignError(f"there are no {which}: import them first")
            if len(names) > 1:
                raise CampaignError(f"the {kind} topics are in several collections ({_named(names)}): name one")
            coll = Collection.objects.get(name=names[0])
        candidates = candidates.filter(collection=coll)
        if topics:
            found = ids_by_external_id(Topic.objects.filter(collection=coll), dict.fromkeys(topics))
            missing = [t for t in dict.fromkeys(topics) if t not in found]
            if missing:
                raise CampaignError(f"collection {coll.name!r} has no topics {_named(missing)}")
            wrong = list(
                Topic.objects.filter(pk__in=found.values()).exclude(kind=kind).values_list("external_id", flat=True)
            )
            if wrong:
                raise CampaignError(f"topics {_named(wrong)} are not {kind} topics")
            topic_ids = list(found.values())
        else:
            topic_ids = list(candidates.values_list("pk", flat=True))
            if not topic_ids:
                raise CampaignError(f"collection {coll.name!r} has no {kind} topics")
        campaign = Campaign(name=name, task=task, title=title)
        _checked(campaign)
        track = Track(campaign=campaign, collection=coll, max_runs=max_runs, max_per_topic=max_per_topic)
        _checked(track, exclude=["campaign"])  # the limits within the column's range, before anything is saved
        campaign.save()
        track.campaign = campaign
        track.save()
        track.topics.set(topic_ids)
    return campaign


def create_pool(
    *, campaign, name, runs, topics=(), strategy=Pool.Strategy.UNION, depth=20, per_topic=None, fusion="rrf",
    normalisation="minmax", created_by=None,
) -> Pool:
    """Make a pool of the campaign's runs over its topics (or some of them) and queue its build.

    `runs` are Run ids of the campaign's collection; the strategy is union (TREC depth-k) or rrf (fusion of
    the runs' top k with `fusion` and `normalisation`, see assessments.services.pooling). Pools from our
    own retrievers need models, so they are made on the command line (manage.py build_pool), never here.
    The build runs after the commit (a Celery task); one that fails leaves the pool FAILED with the reason.
    """
    from assessments.services.pooling import PoolError, define_pool
    from assessments.tasks import queue_build

    if strategy not in (Pool.Strategy.UNION, Pool.Strategy.RRF):
        raise CampaignError(f"strategy {strategy!r} needs retrievers: make such pools with manage.py build_pool")
    with transaction.atomic():
        track = Track.objects.select_related("collection").filter(campaign=campaign).first()
        if track is None:
            raise CampaignError(f"campaign {campaign.name!r} has no topics to pool (it takes no runs)")
        if Pool.objects.filter(name=name).exists():
            raise CampaignError(f"a pool named {name!r} already exists")
        _checked(Pool(name=name, strategy=strategy, depth=depth, per_topic=per_topic), exclude=["collection"])
        run_ids = list(dict.fromkeys(runs))
        if not run_ids:
            raise CampaignError("no runs selected")
        # A campaign's pool takes the runs submitted to it and the organisers' own (imported, retrievers: no
        # track); never a run submitted to another campaign, which would reach across campaigns.
        usable = Run.objects.filter(pk__in=run_ids, collection=track.collection).filter(track__in=["", campaign.name])
        found = set(usable.values_list("pk", flat=True))
        missing = [r for r in run_ids if r not in found]
        if missing:
            raise CampaignError(
                f"campaign {campaign.name!r} has no runs with ids {_named(missing)} (runs of its collection, submitted "
                "to it or imported by organisers)"
            )
        own = dict(track.topics.values_list("external_id", "pk"))
        if topics:
            outside = [t for t in dict.fromkeys(topics) if t not in own]
            if outside:
                raise CampaignError(f"topics {_named(outside)} are not topics of campaign {campaign.name!r}")
            topic_ids = [own[t] for t in dict.fromkeys(topics)]
        else:
            topic_ids = list(own.values())
        try:
            pool = define_pool(
                name=name, collection=track.collection, topics=topic_ids, runs=run_ids, strategy=strategy,
                depth=depth, per_topic=per_topic, fusion_method=fusion, normalisation=normalisation,
                created_by=created_by,
            )
        except PoolError as exc:
            raise CampaignError(str(exc)) from exc
        campaign.pools.add(pool)
        queue_build(pool.pk)
    return pool
