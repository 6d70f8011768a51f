"""TREC qrels (`topic 0 docid grade`) from judgements, aggregated over assessors, or from a stored qrel set.

Grades of one assessor for one (topic, passage):
- CAR outlines: MUST 3, SHOULD 2, CAN 1 (and the original tool's TOPIC/NONREL 0, TRASH -2; its
  DUPLICATE and UNSET give nothing); a removed passage is 0 whatever facets it still carries. A
  passage that is neither removed nor given a graded facet (only notes, or no facet chosen yet)
  has no line: the assessor has not said how relevant it is.
- Page level: the maximum over the passage's facets. Section level: one line per facet, its topic
  column the section path `topic/heading` (a facet's heading_id, e.g. tqa2:L_0257/T_1512, already
  is that path; a bare id such as the trial pages' H1 is prefixed with the topic); a removed
  passage is 0 for every heading of the topic. The special facets (OTHER RELEVANT FACET,
  GENERAL/INTRODUCTION) name no section, so they give no section-level line (they do count at
  page level).
- Plot, ad hoc and other topics: the candidate's grade (Layer.PLOT_GRADE, Layer.GRADE) as it is, at either level.

Aggregation over the assessors who graded the same line:
- `one`: a single assessor's grades (`--assessor`).
- `majority`: the most frequent grade; a tie (as many assessors for one grade as for another, e.g. two
  assessors grading 1 and 2) goes to the higher of the tied grades (`ties="higher"`, the default: as lenient as
  `max` when two assessors disagree), or to the lower (`ties="lower"`: as strict as `min` when two disagree).
- `mean`: the arithmetic mean rounded half up (toward the higher grade: 2.5 -> 3, -0.5 -> 0).
- `max`: the highest grade.
- `adjudicated`: the organiser's final label where adjudication set one (annotation.services.adjudication: a
  judgement flagged `adjudicated`; a removal adjudicated 0, else the adjudicated facet's grade or plot
  grade); else the assessors' grade when they all agree; else (an unresolved disagreement) the
  majority as above (with the same `ties`), and the line is counted in `stats["unresolved"]` (export_qrels
  prints the count).
  At section level the same per line: an adjudicated facet settles its own heading's line, an
  adjudicated removal every heading of the topic.

Adjudicated judgements are never an assessor's grade: every other aggregation leaves them out.

Lines come sorted by topic id, then docid, both by their bytes (code points); at section level the
lines of one topic are sorted by `topic/heading_id` then docid. One database query, sorted by the
database, is streamed (common.raw_rows: a server-side cursor where there is one); only one
passage's grades, and at section level one topic's lines, are held at a time, so memory does not
grow with the number of judgements.
"""

import json
import sys
from collections import Counter
from itertools import chain

from django.db.models import Case, F, IntegerField, Value, When

from assessments.exporters.common import ExportFailed, atomic_file, byte_order, raw_rows
from assessments.models import CANDIDATE_GRADES, Facet, Layer, Qrel, QrelSet, SpecialFacet
from assessments.models.judgements import RELEVANCE_GRADE

AGGREGATES = ("one", "majority", "mean", "max", "adjudicated")
TIES = ("higher", "lower")  # how majority (and adjudicated's unresolved lines) break a tie; the first is the default
LEVELS = ("page", "section")
CHUNK = 2000  # rows fetched per round trip
WRITE_BATCH = 4096  # lines written at once

_GRADE = {str(label.value): grade for label, grade in RELEVANCE_GRADE.items()}
_SPECIAL = frozenset(SpecialFacet.values)
_FACET, _REMOVAL = str(Layer.FACET.value), str(Layer.REMOVAL.value)
_CANDIDATE = tuple(str(layer.value) for layer in CANDIDATE_GRADES)  # plot_grade, grade: the grade as it is
FINAL = -1  # stands for the assessor of adjudicated rows (user ids are positive)


# --- aggregation -------------------------------------------------------------------------------------------


def _majority_to(pick):
    """The majority aggregation whose ties go to `pick` (max: the higher grade, min: the lower) of the tied grades."""

    def majority(grades):
        count = len(grades)
        if count <= 2:
            return pick(grades)  # one grade, or two: agreeing, or a tie
        if count == 3:
            first, second, third = grades
            if first == second or first == third:
                return first
            return second if second == third else pick(grades)
        counts = Counter(grades)
        top = max(counts.values())
        return pick(grade for grade, count in counts.items() if count == top)

    return majority


MAJORITY = {"higher": _majority_to(max), "lower": _majority_to(min)}
_majority = MAJORITY["higher"]


def _mean(grades):
    # floor(sum / n + 1/2) in integers: rounds half up, for negative grades too.
    return (2 * sum(grades) + len(grades)) // (2 * len(grades))


AGGREGATORS = {"one": max, "majority": _majority, "mean": _mean, "max": max, "adjudicated": _majority}


def aggregator(how, ties="higher"):
    """The function giving one grade from the assessors' grades of a line (`ties`: majority's and adjudicated's)."""
    if how in ("majority", "adjudicated"):
        return MAJORITY[ties]
    return AGGREGATORS[how]


def aggregate_grades(grades, how, ties="higher"):
    """One grade from the assessors' grades of a line (see the module docstring for each rule)."""
    return aggregator(how, ties)(grades)


def check_ties(ties):
    """ExportFailed unless `ties` is one of TIES."""
    if ties not in TIES:
        raise ExportFailed(f"{ties!r} is not one of {', '.join(TIES)}", "ties")


def check_level(level):
    """ExportFailed unless `level` is one of LEVELS."""
    if level not in LEVELS:
        raise ExportFailed(f"{level!r} is not one of {', '.join(LEVELS)}", "level")


def check_aggregate(how, scope=None):
    """ExportFailed unless `how` is an aggregate and (given a scope) can be computed for it. The one home of these
    rules: services.qrels checks a request with them before it looks anything up."""
    if how not in AGGREGATORS:
        raise ExportFailed(f"{how!r} is not one of {', '.join(AGGREGATES)} or assessor:NAME", "aggregate")
    if scope is None:
        return
    if how == "one" and scope.assessor is None:
        raise ExportFailed("one: name the assessor", "aggregate")
    if how != "one" and scope.assessor is not None:
        raise ExportFailed(f"qrels of one assessor are aggregate one, not {how}", "assessor")


# --- qrels from judgements ---------------------------------------------------------------------------------


def judgement_qrels(scope, *, aggregate="majority", level="page", stats=None, ties="higher"):
    """Yield (topic column, docid, grade) for the judgements in `scope`, sorted (see the module docstring).

    With aggregate="adjudicated", `stats` (a dict, if given) gets "adjudicated" and "unresolved" line counts.
    `ties` (TIES) is where majority, and adjudicated's unresolved lines, send a tie.
    """
    check_aggregate(aggregate, scope)
    check_ties(ties)
    check_level(level)
    combine = aggregator(aggregate, ties)
    final = None
    if aggregate == "adjudicated":
        final = stats if stats is not None else {}
        final.update(adjudicated=0, unresolved=0)
    if level == "page":
        return _page_level(scope, combine, final)
    return _section_level(scope, combine, final)


def _settled(grades, final_grade, stats, majority):
    """The adjudicated aggregate of one line: the final grade, else the agreeing grade, else the majority (counted)."""
    if final_grade is not None:
        stats["adjudicated"] += 1
        return final_grade
    if len(set(grades)) > 1:
        stats["unresolved"] += 1
        return majority(grades)
    return grades[0]


def _judgement_rows(scope, final):
    """The scope's rows for qrels: assessors' rows only, or (adjudicated) with adjudicated rows under FINAL."""
    rows = scope.judgements().filter(layer__in=(_FACET, _REMOVAL, *_CANDIDATE))
    if final is None:
        return rows.filter(adjudicated=False), "assessor_id"
    who = Case(When(adjudicated=True, then=Value(FINAL)), default=F("assessor_id"), output_field=IntegerField())
    return rows.without_superseded_finals().annotate(who=who), "who"


def _ordered(rows):
    # Within one collection a topic's and a passage's external ids are unique: they are the grouping keys.
    return rows.order_by(byte_order("topic__external_id"), byte_order("passage__external_id"))


def page_level_rows(scope, final=None):
    """The rows page-level qrels read: (topic, docid, assessor id, layer, grade), sorted by topic and docid.

    Judgement.grade already holds what a row says: the highest graded facet, 0 for removed, the plot grade;
    rows without a grade (restored, only ungraded facets) say nothing at page level and are left out.
    Adjudicated rows are left out, or with `final` (a stats dict) read with the assessor id FINAL.
    """
    rows, who = _judgement_rows(scope, final)
    return _ordered(rows.filter(grade__isnull=False)).values_list(
        "topic__external_id", "passage__external_id", who, "layer", "grade"
    )


def _page_level(scope, combine, final=None):
    current_topic = current_doc = None
    removed, graded = set(), {}  # assessors who removed the passage; assessor -> highest grade
    for topic, docid, assessor, layer, grade in raw_rows(page_level_rows(scope, final), CHUNK):
        if docid != current_doc or topic != current_topic:
            if final is not None and (graded or removed):
                yield current_topic, current_doc, _settled_page(removed, graded, final, combine)
                removed, graded = set(), {}
            elif graded or removed:
                if removed:
                    grades = [0] * len(removed) + [g for a, g in graded.items() if a not in removed]
                else:
                    grades = list(graded.values())
                yield current_topic, current_doc, grades[0] if len(grades) == 1 else combine(grades)
                removed, graded = set(), {}
            current_topic, current_doc = topic, docid
        if layer == _REMOVAL:
            removed.add(assessor)  # grade 0; a restored passage (no grade) is not read at all
        elif assessor not in graded or grade > graded[assessor]:
            graded[assessor] = grade
    if final is not None and (graded or removed):
        yield current_topic, current_doc, _settled_page(removed, graded, final, combine)
    elif graded or removed:
        grades = [0] * len(removed) + [g for a, g in graded.items() if a not in removed]
        yield current_topic, current_doc, combine(grades)


def _settled_page(removed, graded, stats, majority):
    final_grade = 0 if FINAL in removed else graded.get(FINAL)
    removed.discard(FINAL)
    graded.pop(FINAL, None)
    grades = [0] * len(removed) + [g for a, g in graded.items() if a not in removed]
    return _settled(grades, final_grade, stats, majority)


def _section_level(scope, combine, final=None):
    headings = {}
    facets = Facet.objects.filter(topic__in=scope.topics()).order_by("topic_id", "position")
    for topic_id, heading_id in facets.values_list("topic_id", "heading_id").iterator(CHUNK):
        headings.setdefault(topic_id, []).append(heading_id)

    topic_lines, current_topic, current_doc = [], None, None
    marks = {}  # assessor -> [removed, {heading id: grade}, plot grade]
    for topic_id, topic, docid, assessor, layer, grade, value in raw_rows(section_level_rows(scope, final), CHUNK):
        if docid != current_doc or topic != current_topic:
            if marks:
                topic_lines += _section_lines(current_topic, current_doc, marks, topic_headings, combine, final)
                marks = {}
            if topic != current_topic:
                yield from sorted(topic_lines)  # one topic's lines at a time
                topic_lines, topic_headings = [], headings.get(topic_id, ())
            current_topic, current_doc = topic, docid
        mark = marks.get(assessor)
        if mark is None:
            mark = marks[assessor] = [False, {}, None]
        if layer == _REMOVAL:
            mark[0] = mark[0] or grade == 0
        elif layer in _CANDIDATE:
            mark[2] = grade
        elif value and value != "[]":
            for entry in json.loads(value):
                entry_grade = _GRADE.get(entry["relevance"])
                if entry_grade is not None and entry["facet"] not in _SPECIAL:
                    mark[1][entry["facet"]] = entry_grade
    if marks:
        topic_lines += _section_lines(current_topic, current_doc, marks, topic_headings, combine, final)
    yield from sorted(topic_lines)


def section_level_rows(scope, final=None):
    """The rows section-level qrels read: page_level_rows' with the topic's id first and the value (JSON) last."""
    rows, who = _judgement_rows(scope, final)
    return _ordered(rows).values_list(
        "topic_id", "topic__external_id", "passage__external_id", who, "layer", "grade", "value"
    )


def section_id(topic, heading_id):
    """The topic column of a section-level line: the heading's section path `topic/heading`.

    Facet ids are usually that path already (tqa2:L_0257/T_1512); a bare id (the trial pages' H1) is prefixed.
    """
    return heading_id if heading_id.startswith(f"{topic}/") else f"{topic}/{heading_id}"


def _section_lines(topic, docid, marks, topic_headings, combine, final=None):
    """The section-level lines of one passage from each assessor's marks (and, adjudicated, the final marks)."""
    settled = marks.pop(FINAL, None) if final is not None else None
    by_line = _line_grades(topic, marks.values(), topic_headings)
    if final is None:
        return [(line, docid, combine(grades)) for line, grades in by_line.items()]
    finals = _line_grades(topic, [settled] if settled else [], topic_headings)
    return [
        (line, docid, _settled(by_line.get(line, []), finals[line][0] if line in finals else None, final, combine))
        for line in by_line.keys() | finals.keys()
    ]


def _line_grades(topic, marks, topic_headings):
    by_line = {}
    for removed, facets, plot in marks:
        for heading, grade in (dict.fromkeys(topic_headings, 0) if removed else facets).items():
            by_line.setdefault(section_id(topic, heading), []).append(grade)
        if plot is not None:
            by_line.setdefault(topic, []).append(plot)
    return by_line


# --- a stored qrel set -------------------------------------------------------------------------------------


def qrel_set_lines(name, topic_ids=None):
    """(topic, column 2, docid, grade) of the stored qrel set `name`, sorted, as an iterator.

    Column 2 is the subtopic, or 0 for none: the form import_qrels reads back. ExportFailed at once
    if there is no such set.
    """
    qrel_set = QrelSet.objects.filter(name=name).first()
    if qrel_set is None:
        raise ExportFailed(f"no qrel set named {name!r}", "qrel_set")
    return _qrel_rows(qrel_set, topic_ids)


def _qrel_rows(qrel_set, topic_ids):
    rows = Qrel.objects.filter(qrel_set=qrel_set).order_by()
    if topic_ids is not None:
        rows = rows.filter(topic_id__in=topic_ids)
    rows = rows.order_by(
        byte_order("topic__external_id"), "topic_id", byte_order("subtopic"),
        byte_order("passage__external_id"), "passage_id",
    ).values_list("topic__external_id", "subtopic", "passage__external_id", "grade")
    for topic, subtopic, docid, grade in raw_rows(rows, CHUNK):
        yield topic, subtopic or "0", docid, grade


# --- writing -----------------------------------------------------------------------------------------------


def write_qrels(qrels, out=None, stream=None) -> int:
    """Write (topic, docid, grade) triples, or (topic, column 2, docid, grade) quadruples, as TREC qrels lines.

    To the file `out` atomically (all of it or nothing), else to `stream` (stdout); returns the line count.
    """
    if out is None:
        return _write(qrels, stream or sys.stdout)
    with atomic_file(out) as handle:
        return _write(qrels, handle)


def qrels_lines(qrels):
    """TREC qrels lines ("topic 0 docid grade\\n") from triples or quadruples, e.g. for a streaming HTTP response."""
    qrels = iter(qrels)
    first = next(qrels, None)
    if first is None:
        return
    if len(first) == 3:
        yield from (f"{topic} 0 {docid} {grade}\n" for topic, docid, grade in chain((first,), qrels))
    else:
        yield from (f"{topic} {column2} {docid} {grade}\n" for topic, column2, docid, grade in chain((first,), qrels))


def _write(qrels, handle):
    count, batch = 0, []
    for line in qrels_lines(qrels):
        batch.append(line)
        if len(batch) >= WRITE_BATCH:
            handle.write("".join(batch))
            count += len(batch)
            batch = []
    if batch:
        handle.write("".join(batch))
    return count + len(batch)
