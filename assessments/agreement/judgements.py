"""Units × assessors matrices from Judgement rows, one per label layer; adjudicated rows are never read.

A unit is a judgement key: (topic, passage) for per-passage layers, (topic, passage, passage2) for
transitions, (topic, item) for forced choice and nugget support, (topic, passage, item) for citation support,
(topic, passage, passage2, item) for pair ratings.
Every unit belongs to its topic (unit_groups holds the topic id; 0 for a rating without a topic).

Layers (name: level, label):
- relevance (ordinal): the passage's page-level grade, as qrels derive it (exporters.qrels): the
  highest graded facet (MUST 3, SHOULD 2, CAN 1; the original tool's TOPIC/NONREL 0, TRASH -2), and
  0 when the assessor removed the passage, whatever facets it still carries. A passage with neither a
  graded facet nor a removal is not labelled. Scale: 0…3 (and -2 when present).
- facet (nominal): the set of facets the assessor chose for a kept passage, as one label (the facet
  ids sorted and joined by "+"), so choosing {A, B} agrees with {A, B} only. Facets of a passage the
  assessor removed are not read (they no longer claim anything).
- removal (nominal): "removed" or "kept", for every passage the assessor removed, restored or gave a
  facet to.
- transition (nominal): SAME / COHERENT / SWITCH (and legacy labels) of a pair of passages.
- plot_grade (ordinal): the plot grade; scale from the lowest (at most 0) to the highest grade seen.
- grade (ordinal): an ad hoc document's grade, the same way.
- plot_spans: not categories; span_marks gives them to agreement.spans (character-level Jaccard).
- evidence: an ad hoc document's evidence spans (character offsets in its text), the same way as plot_spans.
- choice (nominal): the chosen candidate of a forced-choice item.
- rating (ordinal, and again as interval): the 1-10 similarity rating of a pair.
- nugget_support (ordinal): whether an answer supports a nugget (item "<answer id>:<nugget id>"), on the scale
  not_support < partial_support < support (assessments.services.nuggets).
- citation_support (ordinal): whether a cited passage supports the answer's sentence that cites it (unit (topic,
  passage, item "<answer id>:<sentence>")), on the scale none < partial < full.
"""

from itertools import chain

import numpy as np
from django.db import connections

from assessments.agreement.ratings import Ratings, ratings_from_arrays, ratings_from_triples
from assessments.exporters.common import raw_rows
from assessments.models import Layer
from assessments.services import nuggets
from assessments.services.judging import RATING_MAX, RATING_MIN

LAYERS = ("relevance", "facet", "removal", "transition", "plot_grade", "grade", "plot_spans", "evidence", "choice",
          "rating", "nugget_support", "citation_support")
LEVELS = {
    "relevance": ("ordinal",), "facet": ("nominal",), "removal": ("nominal",), "transition": ("nominal",),
    "plot_grade": ("ordinal",), "grade": ("ordinal",), "plot_spans": ("spans",), "evidence": ("spans",), "choice": ("nominal",), "rating": ("ordinal", "interval"),
    "nugget_support": ("ordinal",), "citation_support": ("ordinal",),
}
SUPPORT_SCALE = tuple(sorted(nuggets.SUPPORT_ORDER, key=nuggets.SUPPORT_ORDER.get))  # not_support < partial < support
CITATION_SCALE = tuple(sorted(nuggets.CITATION_ORDER, key=nuggets.CITATION_ORDER.get))  # none < partial < full
SCALED = {  # ordinal layers of worded labels: the stored layer, its scale (low to high), the unit's columns
    "nugget_support": (Layer.NUGGET_SUPPORT, SUPPORT_SCALE, ("topic_id", "item")),
    "citation_support": (Layer.CITATION_SUPPORT, CITATION_SCALE, ("topic_id", "passage_id", "item")),
}
RELEVANCE_SCALE = (0, 1, 2, 3)
CHUNK = 10_000
_SHIFT = 32  # unit id of a (topic, passage) key: topic id << 32 | passage id
_PACK = {"sqlite": "group_concat({})", "postgresql": "string_agg({}::text, ',')"}  # one column as "1,2,3"


def layer_ratings(judgements, layer, usernames) -> list[Ratings]:
    """The Ratings of one layer (one per level; none when nobody labelled anything in it).

    judgements: a Judgement queryset (already limited to the campaign, topic…); usernames: {user id: name}.
    """
    if layer in ("relevance", "plot_grade", "grade"):
        ratings = _graded(judgements, layer, usernames)
        return [ratings] if ratings is not None else []
    if layer == "rating":
        return _ratings(judgements, usernames)
    if layer in SCALED:
        rows = _scaled_triples(judgements, layer, usernames)
        scale = SCALED[layer][1]
        return [ratings_from_triples(rows, "ordinal", scale=scale, group_of=lambda unit: unit[0] or 0)] if rows else []
    rows = {"facet": _facet_triples, "removal": _removal_triples, "transition": _transition_triples,
            "choice": _choice_triples}[layer](judgements, usernames)
    if not rows:
        return []
    return [ratings_from_triples(rows, LEVELS[layer][0], group_of=lambda unit: unit[0] or 0)]


def layer_present(judgements, layers=LAYERS) -> set:
    """Those of `layers` that have judgements in the queryset (one EXISTS query per stored layer they read)."""
    stored = {
        "relevance": (Layer.FACET, Layer.REMOVAL), "facet": (Layer.FACET,), "removal": (Layer.FACET, Layer.REMOVAL),
    }
    wanted = {stored_layer for layer in layers for stored_layer in stored.get(layer, (layer,))}
    found = {layer for layer in wanted if judgements.filter(layer=layer).exists()}
    return {layer for layer in layers if found & set(stored.get(layer, (layer,)))}


SPAN_LAYERS = {"plot_spans": Layer.PLOT_SPANS, "evidence": Layer.EVIDENCE}  # the layers of level "spans"


def span_marks(judgements, usernames, layer="plot_spans") -> dict:
    """{(topic id, passage id): {assessor name: [[start, end], …]}} of a span layer (SPAN_LAYERS)."""
    marks = {}
    rows = judgements.filter(layer=SPAN_LAYERS[layer], value__isnull=False).order_by()
    columns = ("topic_id", "passage_id", "assessor_id", "value")
    for topic, passage, assessor, value in rows.values_list(*columns).iterator(CHUNK):
        marks.setdefault((topic, passage), {})[usernames.get(assessor, str(assessor))] = value
    return marks


# --- graded layers: numpy all the way ---------------------------------------------------------------------


def _int_rows(queryset, columns) -> np.ndarray:
    """rows × columns of integer fields (none of them null), straight from the database into numpy.

    On SQLite and PostgreSQL the database packs each column into one comma-separated text (group_concat,
    string_agg: one aggregate per column over the same scan, so the columns stay aligned row by row) that
    numpy parses; no Python object per value. Other backends: the driver's rows (raw_rows).
    """
    rows = queryset.order_by().values_list(*columns)
    connection = connections[rows.db]
    if connection.vendor not in _PACK:
        values = chain.from_iterable(raw_rows(rows, CHUNK))
        return np.fromiter(values, dtype=np.int64).reshape(-1, len(columns))
    sql, params = rows.query.sql_with_params()
    packed = ", ".join(_PACK[connection.vendor].format(f"packed.{connection.ops.quote_name(c)}") for c in columns)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*), {packed} FROM ({sql}) packed", params)
        count, *texts = cursor.fetchone()
    if not count:
        return np.empty((0, len(columns)), dtype=np.int64)
    parsed = [np.fromstring(text, dtype=np.int64, sep=",") for text in texts]
    if any(len(column) != count for column in parsed):
        raise ValueError(f"packed integer columns {columns} did not parse to {count} values each")
    return np.stack(parsed, axis=1)


def _graded(judgements, layer, usernames):
    columns = ("topic_id", "passage_id", "assessor_id", "grade")
    if layer == "relevance":
        graded = _int_rows(judgements.filter(layer=Layer.FACET, grade__isnull=False), columns)
        removed = _int_rows(judgements.filter(layer=Layer.REMOVAL, grade=0), columns)
        rows = np.concatenate([graded, removed])  # removal last: it replaces the facet's grade
    else:
        rows = _int_rows(judgements.filter(layer=Layer(layer), grade__isnull=False), columns)
    if not len(rows):
        return None
    grades = rows[:, 3]
    if layer == "relevance":
        scale = sorted(set(RELEVANCE_SCALE) | set(np.unique(grades).tolist()))
    else:
        scale = list(range(min(0, int(grades.min())), int(grades.max()) + 1))
    unit_ids = (rows[:, 0] << _SHIFT) | rows[:, 1]
    return ratings_from_arrays(unit_ids, rows[:, 2], grades, "ordinal", scale=scale, assessor_names=usernames,
                               unit_groups=lambda keys: keys >> _SHIFT)


def _ratings(judgements, usernames):
    rows = judgements.filter(layer=Layer.RATING, grade__isnull=False).order_by()
    triples = [
        ((topic, passage, passage2, item), usernames.get(assessor, str(assessor)), grade)
        for topic, passage, passage2, item, assessor, grade in raw_rows(
            rows.values_list("topic_id", "passage_id", "passage2_id", "item", "assessor_id", "grade"), CHUNK)
    ]
    if not triples:
        return []
    scale = list(range(RATING_MIN, RATING_MAX + 1))
    return [ratings_from_triples(triples, level, scale=scale, group_of=lambda unit: unit[0] or 0)
            for level in LEVELS["rating"]]


# --- nominal layers ------------------------------------------------------------------------------------------


def _removed(judgements) -> set:
    rows = judgements.filter(layer=Layer.REMOVAL, grade=0).order_by()
    return set(raw_rows(rows.values_list("topic_id", "passage_id", "assessor_id"), CHUNK))


def _facet_rows(judgements):
    rows = judgements.filter(layer=Layer.FACET, value__isnull=False).order_by()
    return rows.values_list("topic_id", "passage_id", "assessor_id", "value").iterator(CHUNK)


def _facet_triples(judgements, usernames):
    removed = _removed(judgements)
    triples = []
    for topic, passage, assessor, value in _facet_rows(judgements):
        if value and (topic, passage, assessor) not in removed:
            label = "+".join(sorted(entry["facet"] for entry in value))
            triples.append(((topic, passage), usernames.get(assessor, str(assessor)), label))
    return triples


def _removal_triples(judgements, usernames):
    labels = {}
    for topic, passage, assessor, value in _facet_rows(judgements):
        if value:
            labels[topic, passage, assessor] = "kept"
    rows = judgements.filter(layer=Layer.REMOVAL, value__isnull=False).order_by()
    columns = ("topic_id", "passage_id", "assessor_id", "value")
    for topic, passage, assessor, value in rows.values_list(*columns).iterator(CHUNK):
        if value is True:
            labels[topic, passage, assessor] = "removed"
        else:
            labels.setdefault((topic, passage, assessor), "kept")
    return [((t, p), usernames.get(a, str(a)), label) for (t, p, a), label in labels.items()]


def _transition_triples(judgements, usernames):
    rows = judgements.filter(layer=Layer.TRANSITION, value__isnull=False).without_stale_transitions().order_by()
    return [
        ((topic, passage, passage2), usernames.get(assessor, str(assessor)), value)
        for topic, passage, passage2, assessor, value in rows.values_list(
            "topic_id", "passage_id", "passage2_id", "assessor_id", "value").iterator(CHUNK)
    ]


def _choice_triples(judgements, usernames):
    rows = judgements.filter(layer=Layer.CHOICE, value__isnull=False).order_by()
    return [
        ((topic, item), usernames.get(assessor, str(assessor)), value)
        for topic, item, assessor, value in rows.values_list("topic_id", "item", "assessor_id", "value").iterator(CHUNK)
    ]


def _scaled_triples(judgements, layer, usernames):
    """(unit, assessor, label) of a SCALED layer: the unit its key's columns, labels outside the scale left out, and
    nugget_support labels of a nugget no longer in its topic's bank too (as adjudication and the scores leave them)."""
    stored, scale, unit = SCALED[layer]
    rows = judgements.filter(layer=stored, value__isnull=False).order_by()
    banked = _in_bank() if stored == Layer.NUGGET_SUPPORT else None
    return [
        (row[:-3], usernames.get(row[-3], str(row[-3])), row[-2])
        for row in rows.values_list(*unit, "assessor_id", "value", "campaign_id").iterator(CHUNK)
        if row[-2] in scale and (banked is None or banked(row[-1], row[0], row[-4]))
    ]


def _in_bank():
    """in_bank(campaign id, topic id, item): whether a nugget_support item names a nugget of its topic's bank now
    (nuggets.topic_banks, read once per campaign)."""
    banks = {}

    def in_bank(campaign_id, topic_id, item):
        if campaign_id not in banks:
            banks[campaign_id] = {topic: {n.get("id") for n in bank.value if isinstance(n, dict)}
                                  for topic, bank in nuggets.topic_banks(campaign_id).items()
                                  if isinstance(bank.value, list)}
        found = nuggets.SUPPORT_ITEM.match(item or "")
        return found is not None and found.group(2) in banks[campaign_id].get(topic_id, ())

    return in_bank


def graded_qrels(ratings: Ratings) -> dict:
    """{assessor: {topic id: {passage id: grade}}} of a relevance or plot-grade Ratings (its labels are grades)."""
    topics, passages = ratings.unit_keys >> _SHIFT, ratings.unit_keys & ((1 << _SHIFT) - 1)
    labels = np.asarray(ratings.labels)
    qrels = {}
    for a, name in enumerate(ratings.assessors):
        rated = np.flatnonzero(~np.isnan(ratings.codes[a]))
        grades = labels[ratings.codes[a, rated].astype(np.int64)]
        mine = qrels.setdefault(name, {})
        for topic, passage, grade in zip(topics[rated].tolist(), passages[rated].tolist(), grades.tolist()):
            mine.setdefault(topic, {})[passage] = grade
    return qrels
