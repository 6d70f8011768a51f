"""Qrels from the judgements or a stored qrel set: the one service `manage.py export_qrels`, the API, the admin and
the organiser's pages call, with the same options and the same errors.

The rules of each line (grades, levels, aggregation over assessors) are in assessments.exporters.qrels; this
module checks the options together and picks the scope. `source` picks whose labels: `human` (the default: the
judgements, and nothing else), `machine` (one machine label source's grades) or `filled` (the human lines, and the
machine's where no human judged: assessments.exporters.machine; for a campaign whose judging order is `hybrid`, the
machine's lines are the hybrid's calibrated fill of its pools' candidates no person graded, relevant at the
campaign's judging_min_rel, else 0: assessments.services.hybrid_pool); qrels_sourced gives each line's source. `ties`
(higher, the default, or lower) is where majority, and adjudicated's unresolved lines, send a tie. Errors are
ExportFailed naming the option (`assessor`, `aggregate`, `ties`…): commands show it as a flag, the API as a field.
"""

import heapq
from dataclasses import dataclass, replace

from assessments.exporters import machine
from assessments.exporters import qrels as rules
from assessments.exporters.common import ExportFailed, resolve_scope

AGGREGATES = rules.AGGREGATES
LEVELS = rules.LEVELS
TIES = rules.TIES
SOURCES = machine.SOURCES


@dataclass(frozen=True)
class QrelsRequest:
    """Which qrels: the judgements (of one campaign, or every human label of the collection), or a stored set."""

    collection: str | None = None
    pool: str | None = None
    topics: tuple = ()
    assessor: str | None = None
    aggregate: str | None = None  # one, majority, mean, max, adjudicated, or assessor:NAME
    level: str | None = None  # page (default) or section
    qrel_set: str | None = None
    campaign_id: int | None = None
    source: str | None = None  # human (default), machine or filled
    machine_source: int | str | None = None  # the machine label source (id or name); needed when several label here
    ties: str | None = None  # where majority sends a tie: higher (default) or lower


def qrels_rows(request: QrelsRequest, stats=None):
    """The (topic, docid, grade) rows of the request, sorted as trec_eval expects; ExportFailed if impossible.

    `stats` (a dict) receives `unresolved` and `adjudicated` line counts for the adjudicated aggregation.
    """
    if request.source not in (None, "human"):
        return ((topic, docid, grade) for topic, docid, grade, _ in qrels_sourced(request, stats))
    return _human_rows(request, stats)


def qrels_sourced(request: QrelsRequest, stats=None):
    """The rows of qrels_rows with each line's source: (topic, docid, grade, "human"|"machine")."""
    source = request.source or "human"
    rules.check_ties(request.ties or TIES[0])
    if source not in SOURCES:
        raise ExportFailed(f"{source!r} is not one of {', '.join(SOURCES)}", "source")
    if source == "human":
        if request.machine_source not in (None, ""):
            raise ExportFailed("human qrels use no machine labels: leave machine_source out", "machine_source")
        return machine.with_source(_human_rows(request, stats), machine.HUMAN)
    if request.qrel_set:
        raise ExportFailed("a stored qrel set is exported as it is: no machine labels", "source")
    if (request.level or "page") != "page":
        raise ExportFailed("machine labels are page level", "level")
    if source == "machine" and (request.assessor or request.aggregate):
        raise ExportFailed("machine qrels have no assessors to choose or aggregate", "source")
    scope = _scope(request, request.assessor)
    machine_rows = _hybrid_fill(request, scope) if source == "filled" else None
    if machine_rows is None:
        picked = machine.pick_source(scope, request.machine_source, request.campaign_id)
        machine_rows = machine.machine_rows(scope, picked)
    if source == "machine":
        return machine.with_source(machine_rows, machine.MACHINE)
    human = _human_rows(replace(request, collection=scope.collection.name, machine_source=None), stats)
    return machine.filled(human, machine_rows)


def _hybrid_fill(request, scope):
    """The calibrated fill of a hybrid campaign's pools on the scope's topics, sorted as the human lines and without
    repeats (a candidate in two pools: the first pool's by name); None where the campaign's order is not hybrid."""
    from assessments.services import hybrid_pool

    try:
        settings = hybrid_pool.campaign_hybrid(request.campaign_id)
    except hybrid_pool.HybridSettingInvalid as exc:
        raise ExportFailed(f"the campaign's hybrid order cannot be used: {exc}", "campaign") from None
    if settings is None:
        return None
    if request.machine_source not in (None, ""):
        from assessments.models import MachineLabelSource

        if settings.source not in {s.pk for s in MachineLabelSource.objects.named(str(request.machine_source))}:
            raise ExportFailed(f"the campaign's hybrid order fills from machine label source {settings.source}: "
                               "leave machine_source out, or name that one", "machine_source")
    pools = [p for p in hybrid_pool.campaign_pools(request.campaign_id) if p.collection_id == scope.collection.pk]
    fills = [hybrid_pool.pool_plan(request.campaign_id, pool, settings).fill_rows(scope.topic_ids) for pool in pools]
    return _once(heapq.merge(*fills, key=lambda row: (row[0], row[1])))


def _once(rows):
    last = None
    for row in rows:
        if (row[0], row[1]) != last:
            last = (row[0], row[1])
            yield row


def _scope(request, assessor):
    collection = request.collection
    if not (collection or request.pool or request.topics) and request.machine_source not in (None, ""):
        text = str(request.machine_source)
        from assessments.models import MachineLabelSource

        found = MachineLabelSource.objects.named(text)  # pick_source then says which, or why none
        collection = found[0].collection.name if found else None
    return resolve_scope(
        collection=collection, topics=request.topics, pool=request.pool, assessor=assessor,
        campaign_id=request.campaign_id,
    )


def _human_rows(request: QrelsRequest, stats=None):
    aggregate, assessor = request.aggregate, request.assessor
    if aggregate and aggregate.startswith("assessor:"):
        named = aggregate.split(":", 1)[1]
        if assessor and assessor != named:
            raise ExportFailed("aggregate assessor:NAME and assessor name different assessors", "aggregate")
        aggregate, assessor = "one", named
    if aggregate:
        rules.check_aggregate(aggregate)
    if request.level:
        rules.check_level(request.level)
    ties = request.ties or TIES[0]
    rules.check_ties(ties)
    if request.qrel_set:
        if assessor or aggregate or request.level or request.campaign_id or request.ties:
            raise ExportFailed("a stored qrel set is exported as it is: no assessor, aggregate, level, ties or "
                               "campaign", "qrel_set")
        scope = None
        if request.collection or request.pool or request.topics:
            scope = resolve_scope(collection=request.collection, topics=request.topics, pool=request.pool)
        return rules.qrel_set_lines(request.qrel_set, scope and scope.topic_ids)
    scope = resolve_scope(
        collection=request.collection, topics=request.topics, pool=request.pool, assessor=assessor,
        campaign_id=request.campaign_id,
    )
    return rules.judgement_qrels(
        scope, aggregate=aggregate or ("one" if assessor else "majority"), level=request.level or "page", stats=stats,
        ties=ties,
    )


def qrels_text(request: QrelsRequest, stats=None):
    """The request's qrels as text lines (`topic 0 docid grade\\n`), checked before the first line is given: a
    problem raises ExportFailed here, never half-way through a download."""
    lines = rules.qrels_lines(qrels_rows(request, stats))
    first = next(lines, None)
    if first is None:
        return iter(())
    return _chain(first, lines)


def _chain(first, rest):
    yield first
    yield from rest
