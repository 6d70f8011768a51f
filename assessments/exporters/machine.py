"""Qrels from machine labels, and human qrels filled with them, each line with the source it came from.

- `machine`: one source's labels (MachineLabel rows with a grade) on the scope's topics, page level, sorted
  as the human qrels are (topic id, then docid, by their bytes). A label the source could not give
  (an unparseable LLM answer) has no grade and no line: it is never a 0.
- `filled`: the human qrels (any aggregation), and the source's label only where no human line exists
  for that (topic, docid). Both streams are sorted the same way, so they are merged as they are read.

Nothing here is used unless the caller asks for `machine` or `filled` (assessments.services.qrels).
"""

from contextlib import ExitStack

from assessments.exporters.common import ExportFailed, atomic_file, byte_order, raw_rows
from assessments.models import MachineLabel, MachineLabelSource
from assessments.models.machine import several_sources

CHUNK = 2000
HUMAN, MACHINE = "human", "machine"
SOURCES = ("human", "machine", "filled")
QRELS_KINDS = MachineLabelSource.PASSAGE_KINDS  # the model's one rule


def pick_source(scope, wanted=None, campaign_id=None) -> MachineLabelSource:
    """The machine source named by `wanted` (an id or a name: MachineLabelSource.objects.named), or the only one
    with labels on the scope's topics.

    With a campaign, sources made for another campaign are not offered. ExportFailed (field `machine_source`)
    when there is none, or several and none is named.
    """
    sources = MachineLabelSource.objects.filter(kind__in=QRELS_KINDS)
    if wanted not in (None, ""):
        text = str(wanted)
        found = sources.named(text)  # digits are an id (no source is named with digits only)
        if not found:
            raise ExportFailed(f"no machine label source {text[:100]!r}", "machine_source")
        if len(found) > 1:
            raise ExportFailed(several_sources(text, found), "machine_source")
        source = found[0]
        if source.collection_id != scope.collection.pk:
            raise ExportFailed(f"source #{source.pk} labels collection {source.collection.name!r}, "
                               f"not {scope.collection.name!r}", "machine_source")
        return source
    labelled = MachineLabel.objects.filter(topic__collection=scope.collection, passage__isnull=False)
    if scope.topic_ids is not None:
        labelled = labelled.filter(topic_id__in=scope.topic_ids)
    candidates = sources.filter(pk__in=labelled.values("source_id"))
    if campaign_id is not None:
        candidates = candidates.usable_by(campaign_id)
    found = list(candidates.order_by("pk")[:20])
    if not found:
        raise ExportFailed("there are no machine labels for these topics", "machine_source")
    if len(found) > 1:
        names = ", ".join(f"#{s.pk} {s.name}" for s in found)
        raise ExportFailed(f"several sources have labels here ({names}): name one", "machine_source")
    return found[0]


def machine_rows(scope, source):
    """(topic, docid, grade) of one source's graded labels on the scope's topics, sorted as the human qrels."""
    rows = MachineLabel.objects.filter(
        source=source, topic__collection=scope.collection, passage__isnull=False, grade__isnull=False,
    ).order_by()
    if scope.topic_ids is not None:
        rows = rows.filter(topic_id__in=scope.topic_ids)
    rows = rows.order_by(byte_order("topic__external_id"), byte_order("passage__external_id")).values_list(
        "topic__external_id", "passage__external_id", "grade",
    )
    return raw_rows(rows, CHUNK)


def with_source(rows, name):
    """(topic, docid, grade, name) for each row."""
    for topic, docid, grade in rows:
        yield topic, docid, grade, name


def filled(human, machine):
    """Merge two sorted (topic, docid, grade) streams: every human line, and a machine line where no human one is.

    Yields (topic, docid, grade, "human"|"machine"). Keys compare as the exporters sort them (by code points).
    """
    human, machine = iter(human), iter(machine)
    h, m = next(human, None), next(machine, None)
    while h is not None or m is not None:
        if m is None or (h is not None and (h[0], h[1]) <= (m[0], m[1])):
            if m is not None and (h[0], h[1]) == (m[0], m[1]):
                m = next(machine, None)  # a human judged it: the machine's label is not used
            yield h[0], h[1], h[2], HUMAN
            h = next(human, None)
        else:
            yield m[0], m[1], m[2], MACHINE
            m = next(machine, None)


def write_sourced(rows, out=None, sources_out=None, stream=None) -> int:
    """Write (topic, docid, grade, source) rows as TREC qrels lines, and each line's `topic docid source` to
    `sources_out` (the side file saying which line a machine made). Files are written atomically (both or neither
    replaced on an error); qrels go to `stream` (stdout) without `out`. Returns the line count."""
    with ExitStack() as stack:
        handle = stack.enter_context(atomic_file(out)) if out else stream
        side = stack.enter_context(atomic_file(sources_out)) if sources_out else None
        count = 0
        for topic, docid, grade, source in rows:
            handle.write(f"{topic} 0 {docid} {grade}\n")
            if side is not None:
                side.write(f"{topic} {docid} {source}\n")
            count += 1
    return count
