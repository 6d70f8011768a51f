"""The pooled candidates a unit judges, shared by the plot labelling and ad hoc pages: the campaign's settings they
read, the candidates in this assessor's order (never a retriever's), the judging order's served candidates, the
machine labels shown, the check that a change names a candidate, and character spans.

Plain functions: they take models and values, return values, and raise ChangeInvalid (naming the field) or
SettingsInvalid (naming the setting), never HTTP errors.
"""

import random

from annotation.services.errors import ChangeInvalid
from assessments.models import PoolCandidate


class SettingsInvalid(ValueError):
    """A campaign setting the plot or ad hoc pages cannot use; the message names the setting."""


def settings(assignment) -> dict:
    """The settings of the unit's campaign ({} when it has none)."""
    campaign = assignment.campaign if assignment.campaign_id else None
    return campaign.settings if campaign and isinstance(campaign.settings, dict) else {}


def shuffled(things, seed, salt="", avoid=None):
    """`things` (sorted by pk first, so the rows' order never leaks) in an order fixed by the seed.

    `avoid` is a key of each thing giving the retriever's order: a shuffle that happens to give that order
    is turned by one place, so the shown order is never the retriever's.
    """
    things = sorted(things, key=lambda t: t.pk)
    random.Random(f"{seed}:{salt}").shuffle(things)
    if avoid is not None and len(things) > 1 and things == sorted(things, key=avoid):
        things = things[1:] + things[:1]
    return things


def candidates(assignment) -> list:
    """The assignment's pooled candidates (PoolCandidate with its passage) in this assessor's order."""
    rows = PoolCandidate.objects.filter(pool_id=assignment.pool_id, topic_id=assignment.topic_id).select_related("passage")
    return shuffled(rows, assignment.seed, avoid=lambda c: c.rank)


def served_order(assignment):
    """(passage ids the page shows, the topic's state) where the campaign serves a judging order, else None."""
    from annotation.services import judging_order

    try:
        return judging_order.served_candidates(assignment)
    except judging_order.OrderSettingsInvalid as exc:
        raise SettingsInvalid(str(exc)) from exc
    except judging_order.ordering.OrderError as exc:
        raise SettingsInvalid(f"judging_order: {exc}") from exc


def served_state(topic, assignment, passages) -> dict:
    """What the page knows of the served order: the candidates in all, whether one is left to serve, and whether the
    topic is stopped. Not the order's name, nor anything of a machine: the machine order's scores stay on the server."""
    graded = topic.graded_by.get(assignment.assessor_id, set())
    waiting = bool(passages) and passages[-1].pk not in graded
    return {"total": len(topic.pool), "waiting": waiting,
            "stopped": topic.stopped and not waiting, "reason": topic.why if topic.stopped else ""}


def shown_machine_labels(assignment, passage_ids) -> dict:
    """The machine labels this assignment's page shows ({} unless its campaign turns pre-labels on)."""
    from annotation.services import prelabels

    try:
        return prelabels.of_assignment(assignment).shown(assignment.topic_id, passage_ids)
    except prelabels.PrelabelsInvalid as exc:
        raise SettingsInvalid(str(exc)) from exc


def candidate_passage(assignment, raw, refusal):
    """The passage a change names (`raw`: its id) when it is a candidate of the unit's pool and topic; else
    ChangeInvalid naming `passage` with `refusal` (the plot and ad hoc pages' one check of it)."""
    candidate = None
    if isinstance(raw, int) and not isinstance(raw, bool) and 0 < raw < 2**63:  # a row id the database holds
        candidate = PoolCandidate.objects.filter(
            pool_id=assignment.pool_id, topic_id=assignment.topic_id, passage_id=raw
        ).select_related("passage").first()
    if candidate is None:
        raise ChangeInvalid("passage", refusal)
    return candidate.passage


def is_span(span) -> bool:
    return isinstance(span, list) and len(span) == 2 and all(
        isinstance(x, int) and not isinstance(x, bool) for x in span
    ) and span[0] < span[1]


def merged(spans) -> list:
    """Spans sorted, with overlapping or touching ones joined: [[0, 4], [3, 9], [12, 15]] -> [[0, 9], [12, 15]]."""
    out = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out
