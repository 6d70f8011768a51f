"""Test data in one place: small builders with sensible defaults, and a snapshot of row counts."""

import itertools
from pathlib import Path

from django.apps import apps
from django.contrib.auth import get_user_model

from assessments.models import Facet, Pool, Run, RunEntry, Topic
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


def db_snapshot():
    """Row counts of every model of the project's apps: equal snapshots mean nothing was written."""
    counts = {}
    for label in ("retrieval", "assessments", "annotation"):
        for model in apps.get_app_config(label).get_models():
            counts[model._meta.label] = model.objects.count()
    return counts
