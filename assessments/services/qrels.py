"""Qrels from the judgements or a stored qrel set: the one service `manage.py export_qrels`, the API, the admin and
the organiser's pages call, with the same options and the same errors.

The rules of each line (grades, levels, aggregation over assessors) are in assessments.exporters.qrels; this
module checks the options together and picks the scope. Errors are ExportFailed naming the option (`assessor`,
`aggregate`…): commands show it as a flag, the API as a field.
"""

from dataclasses import dataclass

from assessments.exporters import qrels as rules
from assessments.exporters.common import ExportFailed, resolve_scope

AGGREGATES = rules.AGGREGATES
LEVELS = rules.LEVELS


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


def qrels_rows(request: QrelsRequest, stats=None):
    """The (topic, docid, grade) rows of the request, sorted as trec_eval expects; ExportFailed if impossible.

    `stats` (a dict) receives `unresolved` and `adjudicated` line counts for the adjudicated aggregation.
    """
    aggregate, assessor = request.aggregate, request.assessor
    if aggregate and aggregate.startswith("assessor:"):
        named = aggregate.split(":", 1)[1]
        if assessor and assessor != named:
            raise ExportFailed("aggregate assessor:NAME and assessor name different assessors", "aggregate")
        aggregate, assessor = "one", named
    if aggregate and aggregate not in AGGREGATES:
        raise ExportFailed(f"{aggregate!r} is not one of {', '.join(AGGREGATES)} or assessor:NAME", "aggregate")
    if request.level and request.level not in LEVELS:
        raise ExportFailed(f"{request.level!r} is not one of {', '.join(LEVELS)}", "level")
    if request.qrel_set:
        if assessor or aggregate or request.level or request.campaign_id:
            raise ExportFailed("a stored qrel set is exported as it is: no assessor, aggregate, level or campaign",
                               "qrel_set")
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
