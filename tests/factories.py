"""Test data in one place: small builders with sensible defaults, and a snapshot of row counts."""

import itertools
from pathlib import Path

from django.apps import apps
from django.contrib.auth import get_user_model

from annotation.models import Assignment, Campaign
from assessments.models import Facet, Layer, Pool, Run, RunEntry, SpecialFacet, Topic
from assessments.services.judging import record_judgement
from retrieval.models import Collection, Passage

DATA = Path(__file__).resolve().parent.parent / "data"
_seq = itertools.count(1)


def user(username=None, **fields):
    username = username or f"user{next(_seq)}"
    return get_user_model().objects.create_user(username=username, password="pw-" + username, **fields)


def collection(name=None, **fields):
    return Collection.objects.create(name=name or f"coll{next(_seq)}", **fields)


def passage(coll=None, external_id=None, text="Some passage text.", **fields):
    return Passage.objects.create(
        collection=coll or collection(), external_id=external_id or f"p{next(_seq)}", text=text, **fields
    )


def topic(coll=None, external_id=None, kind=Topic.Kind.OUTLINE, facets=(), **fields):
    """A topic; `facets` is a list of (heading_id, heading)."""
    t = Topic.objects.create(
        collection=coll or collection(), external_id=external_id or f"t{next(_seq)}", kind=kind, **fields
    )
    for position, (heading_id, heading) in enumerate(facets, start=1):
        Facet.objects.create(topic=t, heading_id=heading_id, heading=heading, position=position)
    return t


def run(coll, name=None, ranking=None, **fields):
    """A run; `ranking` maps a topic to a list of passages in rank order."""
    r = Run.objects.create(collection=coll, name=name or f"run{next(_seq)}", **fields)
    for t, passages in (ranking or {}).items():
        RunEntry.objects.bulk_create(
            RunEntry(run=r, topic=t, passage=p, rank=i, score=1.0 / i) for i, p in enumerate(passages, start=1)
        )
    return r


def pool(coll, topics, runs, name=None, **fields):
    p = Pool.objects.create(collection=coll, name=name or f"pool{next(_seq)}", **fields)
    p.topics.set(topics)
    p.runs.set(runs)
    return p


def campaign(name=None, task=Campaign.Task.OUTLINE, *, pools=(), **fields):
    """A campaign (CAR outline judging unless `task` says otherwise); `pools` join it."""
    made = Campaign.objects.create(name=name or f"campaign{next(_seq)}", task=task, **fields)
    made.pools.add(*pools)
    return made


def assignment(assessor=None, topic=None, *, campaign=None, run=None, pool=None, **fields):
    """One assessor's unit of `topic`: `run`'s article (outline, nuggets), else `pool`'s candidates. Its kind, token and
    seed are Assignment.save's, from the campaign, unless `fields` name them."""
    return Assignment.objects.create(
        assessor=assessor or user(), topic=topic, campaign=campaign, run=run, pool=pool, **fields
    )


def assigned_campaign(topic, assessors, *, run=None, pool=None, **fields):
    """A campaign (`fields` as campaign's) in which each of `assessors` holds a unit of `topic` (`run`'s article, or
    `pool`'s candidates: the pool joins the campaign); returns the campaign and the units, in the assessors' order."""
    made = campaign(pools=[pool] if pool else (), **fields)
    return made, [assignment(a, topic, campaign=made, run=run, pool=pool) for a in assessors]


def judgement(assessor, topic, passage=None, *, layer=Layer.FACET, value=None, relevance=None, facet=None,
              campaign=None, **fields):
    """A label stored the one way labels are stored, through record_judgement (checked against its layer, its change
    kept in the history, the assessor's latest by their clock current), so a test's label is one a page could make;
    returns the Judgement. `relevance` makes a facet label's value: `passage` is `relevance` for `facet` (the topic's
    first heading, else general). `fields` are record_judgement's (passage2, item, client_time, source...)."""
    if relevance is not None:
        facet = facet or topic.facets.order_by("position").values_list("heading_id", flat=True).first()
        value = [{"facet": facet or SpecialFacet.GENERAL, "relevance": relevance}]
    return record_judgement(
        assessor=assessor, layer=layer, value=value, topic=topic, passage=passage,
        campaign_id=campaign.pk if campaign else None, **fields
    ).judgement


def db_snapshot():
    """Row counts of every model of the project's apps: equal snapshots mean nothing was written."""
    counts = {}
    for label in ("retrieval", "assessments", "annotation"):
        for model in apps.get_app_config(label).get_models():
            counts[model._meta.label] = model.objects.count()
    return counts
