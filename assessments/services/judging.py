"""Recording judgements: every change kept, each change stored once, the latest by the assessor's clock wins."""

import functools
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone

from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from assessments.labels import ADHOC_GRADE_MAX
from assessments.models import Judgement, JudgementChange, Layer, Relevance, SpecialFacet, Topic, Transition
from assessments.models.judgements import RELEVANCE_GRADE
from assessments.services import nuggets

RATING_MIN, RATING_MAX = 1, 10
MAX_EVIDENCE_SPANS = 200

# THE window of an assessor's clock (client_time), for every path that stores a change (pages, API, imports): not
# before 2000, not more than CLIENT_CLOCK_SKEW past the server's clock. Outside it a change is refused; a page's or
# the API's clock ahead of the server's within the skew is taken as the server's now.
EARLIEST_CLIENT_TIME = datetime(2000, 1, 1, tzinfo=dt_timezone.utc)
CLIENT_CLOCK_SKEW = timedelta(days=1)


class JudgementInvalid(ValueError):
    """A judgement whose value or key does not fit its layer; the message says which field and why."""


@dataclass(frozen=True)
class Recorded:
    """What record_judgement did: the judgement, the change, whether the change was new and became current."""

    judgement: Judgement
    change: JudgementChange
    duplicate: bool
    current: bool


def validate_value(layer, value, *, topic=None, passage=None, passage2=None, item="", allow_legacy=False):
    """Check a value and key against the layer's shape; return the numeric grade it implies (or None).

    Legacy labels of the original CAR tool (Relevance and Transition members not offered on the
    page) pass only with allow_legacy, which record_judgement sets for imports.
    """
    if layer not in Layer.values:
        raise JudgementInvalid(f"layer: unknown layer {layer!r}; expected one of {', '.join(Layer.values)}")
    needs_pair = layer in (Layer.TRANSITION, Layer.RATING)
    if needs_pair and passage2 is None:
        raise JudgementInvalid(f"passage2: a {layer} judgement is about two passages")
    if not needs_pair and passage2 is not None:
        raise JudgementInvalid(f"passage2: a {layer} judgement is about one passage")
    if needs_pair and passage is not None and passage2 is not None and passage.pk == passage2.pk:
        raise JudgementInvalid("passage2: the two passages of a pair must differ")
    if layer == Layer.CHOICE:
        if topic is None or not item:
            raise JudgementInvalid("item: a forced choice is keyed on a topic and a study item")
    elif layer in (Layer.NUGGETS, Layer.NUGGET_SUPPORT, Layer.CITATION_SUPPORT):
        _nugget_key(layer, passage, item)
    elif passage is None:
        raise JudgementInvalid(f"passage: a {layer} judgement needs a passage")
    if layer != Layer.RATING and topic is None:
        raise JudgementInvalid(f"topic: a {layer} judgement needs a topic")
    if value is None:
        return None
    if layer == Layer.FACET:
        return _facet(value, topic, allow_legacy)
    if layer == Layer.TRANSITION:
        return _transition(value, allow_legacy)
    if layer == Layer.EVIDENCE:
        return _evidence(value, topic, passage)
    return _VALIDATORS[layer](value, topic)


def _nugget_key(layer, passage, item):
    """The keys of the nugget layers (assessments.services.nuggets): a bank is the topic's alone, a nugget's support
    names the answer and the nugget, a citation's support the answer, the sentence and the cited passage."""
    if layer == Layer.NUGGETS:
        if passage is not None or item:
            raise JudgementInvalid("item: a nugget bank is keyed on its topic alone")
    elif layer == Layer.NUGGET_SUPPORT:
        if passage is not None or not nuggets.SUPPORT_ITEM.match(item or ""):
            raise JudgementInvalid("item: a nugget's support is keyed on the topic and '<answer id>:<nugget id>'")
    elif passage is None or not nuggets.CITATION_ITEM.match(item or ""):
        raise JudgementInvalid(
            "item: a citation's support is keyed on the topic, the cited passage and '<answer id>:<sentence>'"
        )


def _nugget_bank(value, topic):
    """A topic's nuggets: [{id, text, importance, origin[, suggested]}, …], ids and texts each given once; a nugget
    taken from an LLM's suggestion (origin machine) may keep the suggestion as it came, {text, importance}."""
    if not isinstance(value, list) or len(value) > nuggets.MAX_NUGGETS:
        raise JudgementInvalid(f"value: a nugget bank is a list of at most {nuggets.MAX_NUGGETS} nuggets")
    ids, texts = set(), set()
    for i, nugget in enumerate(value):
        if not isinstance(nugget, dict) or set(nugget) - {"suggested"} != {"id", "text", "importance", "origin"}:
            raise JudgementInvalid(f"value[{i}]: expected {{id, text, importance, origin}} (and suggested)")
        if not isinstance(nugget["id"], str) or not nuggets.NUGGET_ID.match(nugget["id"]):
            raise JudgementInvalid(f"value[{i}].id: letters, digits, '-' and '_', at most 40")
        text = nugget["text"]
        if not isinstance(text, str) or not text.strip() or len(text) > nuggets.MAX_NUGGET_TEXT:
            raise JudgementInvalid(f"value[{i}].text: text of 1 to {nuggets.MAX_NUGGET_TEXT} characters")
        if nugget["importance"] not in nuggets.IMPORTANCE:
            raise JudgementInvalid(f"value[{i}].importance: {nugget['importance']!r} is not one of {list(nuggets.IMPORTANCE)}")
        if nugget["origin"] not in nuggets.ORIGINS:
            raise JudgementInvalid(f"value[{i}].origin: {nugget['origin']!r} is not one of {list(nuggets.ORIGINS)}")
        if "suggested" in nugget:
            _suggested(nugget, i)
        if nugget["id"] in ids or nuggets.same_text(text) in texts:
            raise JudgementInvalid(f"value[{i}]: its id or its text is given twice")
        ids.add(nugget["id"])
        texts.add(nuggets.same_text(text))
    return None


def _suggested(nugget, i):
    """A nugget's `suggested`: the LLM suggestion it was taken from, {text, importance}, on a machine nugget only."""
    if nugget["origin"] != "machine":
        raise JudgementInvalid(f"value[{i}].suggested: only a nugget of origin machine keeps a suggestion")
    found = nugget["suggested"]
    if not isinstance(found, dict) or set(found) != {"text", "importance"}:
        raise JudgementInvalid(f"value[{i}].suggested: expected {{text, importance}}")
    if not isinstance(found["text"], str) or not found["text"].strip() or len(found["text"]) > nuggets.MAX_NUGGET_TEXT:
        raise JudgementInvalid(f"value[{i}].suggested.text: text of 1 to {nuggets.MAX_NUGGET_TEXT} characters")
    if found["importance"] not in nuggets.IMPORTANCE:
        raise JudgementInvalid(f"value[{i}].suggested.importance: {found['importance']!r} is not one of "
                               f"{list(nuggets.IMPORTANCE)}")


def _one_of(choices, what):
    def check(value, topic):
        if value not in choices:
            raise JudgementInvalid(f"value: {what} is one of {list(choices)}")
        return None

    return check


def _notes(value, topic):
    if not isinstance(value, str):
        raise JudgementInvalid("value: notes must be text")
    return None


def _facet(value, topic, allow_legacy=False):
    if not isinstance(value, list):
        raise JudgementInvalid("value: a facet judgement is a list of {facet, relevance}")
    known = topic_facet_ids(topic) | set(SpecialFacet.values)
    seen = set()
    for i, entry in enumerate(value):
        if not isinstance(entry, dict) or set(entry) != {"facet", "relevance"}:
            raise JudgementInvalid(f"value[{i}]: expected {{facet, relevance}}")
        if not isinstance(entry["facet"], str) or not isinstance(entry["relevance"], str):
            raise JudgementInvalid(f"value[{i}]: facet and relevance are text")
        if entry["facet"] not in known:  # not in the cached set: read the topic's facets again before refusing
            known = topic_facet_ids(topic, fresh=True) | set(SpecialFacet.values)
        if entry["facet"] not in known:
            raise JudgementInvalid(f"value[{i}].facet: {entry['facet']!r} is not a facet of topic {topic.external_id}")
        _check_label(entry["relevance"], Relevance, allow_legacy, f"value[{i}].relevance")
        if entry["facet"] in seen:
            raise JudgementInvalid(f"value[{i}].facet: {entry['facet']!r} is given twice")
        seen.add(entry["facet"])
    grades = (RELEVANCE_GRADE.get(Relevance(e["relevance"])) for e in value)
    return max((g for g in grades if g is not None), default=None)


def topic_facet_ids(topic, *, fresh=False) -> set:
    """The heading ids of the topic's facets, kept in this process under the topic's facets_version (a facet's save
    or delete raises it: forget_topic_facets), so a save that reads its topic reads no facets; `fresh` reads them
    from the database. The key carries the topic's creation time too, so a recreated database never takes
    another's."""
    key = (topic.pk, str(getattr(topic, "created_at", "")), getattr(topic, "facets_version", None))
    if not fresh and key[2] is not None:
        ids = _FACET_IDS.get(key)
        if ids is not None:
            return set(ids)
    ids = list(topic.facets.order_by().values_list("heading_id", flat=True))
    if len(_FACET_IDS) >= _FACET_IDS_MAX:
        _FACET_IDS.clear()
    _FACET_IDS[key] = ids
    return set(ids)


_FACET_IDS = {}  # (topic id, created, facets_version) -> heading ids: this process's
_FACET_IDS_MAX = 20_000  # topics; emptied when full


def forget_topic_facets(topic_id):
    """A facet of the topic changed: raise its facets_version, so every process reads its facets again (Facet's
    post_save and post_delete signals call it, and the outline import after creating facets in bulk)."""
    Topic.objects.filter(pk=topic_id).update(facets_version=F("facets_version") + 1)


def _removal(value, topic):
    if not isinstance(value, bool):
        raise JudgementInvalid("value: removal is true or false")
    return 0 if value else None


def _transition(value, allow_legacy=False):
    _check_label(value, Transition, allow_legacy, "value")
    return None


def _check_label(value, choices, allow_legacy, place):
    offered = [str(c) for c in choices.offered()]
    if allow_legacy and value in choices.values or value in offered:
        return
    if value in choices.values:
        raise JudgementInvalid(
            f"{place}: {value!r} is a legacy label of the original CAR tool, accepted only from imports"
        )
    raise JudgementInvalid(f"{place}: {value!r} is not one of {offered}")


def _plot_grade(value, topic):
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise JudgementInvalid("value: a plot grade is a whole number, 0 or more")
    return value


def _plot_spans(value, topic):
    if not isinstance(value, list):
        raise JudgementInvalid("value: spans are a list of [start, end] character offsets")
    length = len(topic.text)
    for i, span in enumerate(value):
        ok = (
            isinstance(span, list)
            and len(span) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) for x in span)
            and 0 <= span[0] < span[1] <= length
        )
        if not ok:
            raise JudgementInvalid(f"value[{i}]: expected [start, end] with 0 <= start < end <= {length}")
    return None


def _grade(value, topic):
    """A document's relevance grade (ad hoc): a whole number 0 or more; the campaign's scale is checked by the page."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= ADHOC_GRADE_MAX:
        raise JudgementInvalid(f"value: a grade is a whole number from 0 to {ADHOC_GRADE_MAX}")
    return value


def _evidence(value, topic, passage=None):
    """The parts of a document that make it relevant: [[start, end), ...] character offsets (code points) into its
    text, each inside it, sorted and apart."""
    if not isinstance(value, list) or len(value) > MAX_EVIDENCE_SPANS:
        raise JudgementInvalid(f"value: evidence is a list of at most {MAX_EVIDENCE_SPANS} [start, end] offsets")
    size = len(passage.text) if passage is not None else None
    last = -1
    for i, span in enumerate(value):
        ok = (isinstance(span, list) and len(span) == 2
              and all(isinstance(x, int) and not isinstance(x, bool) for x in span) and 0 <= span[0] < span[1])
        if not ok:
            raise JudgementInvalid(f"value[{i}]: expected [start, end] with 0 <= start < end")
        if size is not None and span[1] > size:
            raise JudgementInvalid(f"value[{i}]: ends at {span[1]}, past the document's {size} characters")
        if span[0] <= last:
            raise JudgementInvalid(f"value[{i}]: spans must be sorted and apart")
        last = span[1]
    return None


def _choice(value, topic):
    if not isinstance(value, str) or not value:
        raise JudgementInvalid("value: a forced choice names the chosen passage's external id")
    return None


def _rating(value, topic):
    if not isinstance(value, int) or isinstance(value, bool) or not RATING_MIN <= value <= RATING_MAX:
        raise JudgementInvalid(f"value: a rating is a whole number from {RATING_MIN} to {RATING_MAX}")
    return value


_VALIDATORS = {
    Layer.NOTES: _notes,
    Layer.REMOVAL: _removal,
    Layer.PLOT_GRADE: _plot_grade,
    Layer.GRADE: _grade,
    Layer.PLOT_SPANS: _plot_spans,
    Layer.CHOICE: _choice,
    Layer.RATING: _rating,
    Layer.NUGGETS: _nugget_bank,
    Layer.NUGGET_SUPPORT: _one_of(nuggets.SUPPORT_VALUES, "a nugget's support"),
    Layer.CITATION_SUPPORT: _one_of(nuggets.CITATION_VALUES, "a citation's support"),
}


def record_judgement(
    *,
    assessor,
    layer: str,
    value,
    topic: Topic | None = None,
    passage=None,
    passage2=None,
    item: str = "",
    client_time: datetime | None = None,
    client_seq: int = 0,
    session_id: str = "",
    run_ids=(),
    change_id: uuid.UUID | str | None = None,
    source: str = JudgementChange.Source.WEB,
    active_ms: int | None = None,
    campaign_id: int | None = None,
    machine_shown: bool | None = None,
) -> Recorded:
    """Store one change of a label and make it current if it is the assessor's latest.

    A change whose change_id is already stored is not stored again (the stored one is
    returned with duplicate=True). The current value is that of the change latest by
    (client_time, client_seq), whatever order changes arrive in. The original CAR tool's legacy
    labels are accepted only with source=IMPORT. A change with source=ADJUDICATION is an organiser's
    final label: its judgement is flagged `adjudicated`. `active_ms` is the assessor's active time on
    the change (idle time not counted). `campaign_id` is the campaign the label is made in: each campaign
    keeps its own labels. `machine_shown` says whether the page showed a machine label for the item (None: the campaign
    shows none). Raises JudgementInvalid.
    """
    grade = validate_value(
        layer, value, topic=topic, passage=passage, passage2=passage2, item=item,
        allow_legacy=source == JudgementChange.Source.IMPORT,
    )
    change_id = uuid.UUID(str(change_id)) if change_id else uuid.uuid4()
    now = timezone.now()
    client_time = checked_client_time(client_time or now, source=source, now=now)
    run_ids = sorted({str(r) for r in run_ids})
    key = Judgement.make_key(layer, topic and topic.pk, passage and passage.pk, passage2 and passage2.pk, item, campaign_id)
    row = dict(
        assessor_id=assessor.pk, layer=layer, topic_id=topic and topic.pk, passage_id=passage and passage.pk,
        passage2_id=passage2 and passage2.pk, item=item, campaign_id=campaign_id, key=key, value=value, grade=grade,
        run_ids=run_ids, adjudicated=source == JudgementChange.Source.ADJUDICATION, latest_change_id=None,
        client_time=client_time, client_seq=client_seq, updated_at=now,
    )
    change_row = dict(
        change_id=change_id, assessor_id=assessor.pk, layer=layer, value=value, client_time=client_time,
        client_seq=client_seq, received_at=now, session_id=session_id, run_ids=run_ids, source=source,
        active_ms=active_ms, machine_shown=machine_shown,
    )
    recorded = _store(row, change_row)
    return recorded or _existing_change(change_id, assessor)


def checked_client_time(client_time: datetime, *, source: str, now: datetime | None = None) -> datetime:
    """The assessor's clock as stored, or JudgementInvalid naming `client_time` when it is outside the window
    (EARLIEST_CLIENT_TIME to the server's clock plus CLIENT_CLOCK_SKEW). A time far outside it (year 1, with a
    zone) would be stored as a date PostgreSQL keeps but no export can read back."""
    now = now or timezone.now()
    if client_time < EARLIEST_CLIENT_TIME:
        raise JudgementInvalid(f"client_time: {_shown(client_time)} is before {EARLIEST_CLIENT_TIME:%Y-%m-%d}: "
                               "check the clock of the device the change came from")
    if client_time > now + CLIENT_CLOCK_SKEW:
        raise JudgementInvalid(f"client_time: {_shown(client_time)} is more than a day after the server's clock "
                               f"({now:%Y-%m-%dT%H:%MZ}): check the clock of the device the change came from")
    if source in (JudgementChange.Source.WEB, JudgementChange.Source.API):
        # The assessor's clock never runs ahead of the server's: a clock in the future would otherwise make every
        # later change non-current. (A late clock only orders that device's changes among themselves.)
        client_time = min(client_time, now)
    return client_time


def _shown(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")


def _store(row, change_row) -> Recorded | None:
    """Store a change and bring its judgement up to date; None for a change stored already.

    The storing rule, one home (each vendor's SQL below writes it, and tests/assessments/test_store_vendors.py
    holds each to a plain Python writing of the rule):
    - the change is stored once (its change_id is unique); a change stored already changes nothing;
    - the judgement takes the change's value, grade, clock and id when the change is the assessor's latest by
      (client_time, client_seq), ties going to the change arriving last;
    - its runs become the sorted union of its runs and the change's, whether or not the change is the latest.

    PostgreSQL: one statement (_store_in_one_statement). SQLite, which has no INSERT in a WITH: two, in one
    transaction (_store_in_two_statements).
    """
    if connection.vendor == "postgresql":
        return _store_in_one_statement(row, change_row)
    return _store_in_two_statements(row, change_row)


def _store_in_one_statement(row, change_row) -> Recorded | None:
    """PostgreSQL: the judgement's upsert and the change's insert in one statement (_one_statement_sql), its own
    transaction when the caller has none (no BEGIN or COMMIT sent), or a part of the caller's.

    Unless a row it names (assessor, topic, passage) is deleted meanwhile, the statement fails only when the
    change_id was stored by a transaction that committed after the statement began (the same change sent twice at
    once). Outside a transaction that reads as a duplicate. Inside the caller's, the IntegrityError is the caller's
    (its transaction cannot go on: an import is refused, whole)."""
    sql = _one_statement_sql(tuple(k for k in row if k != "latest_change_id"), tuple(change_row), connection.vendor)
    params = [*_params(Judgement, {k: v for k, v in row.items() if k != "latest_change_id"}),
              change_row["change_id"], *_params(JudgementChange, change_row)]
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            found = cursor.fetchone()
    except IntegrityError:
        outside = connection.get_autocommit() and not connection.in_atomic_block
        if outside and JudgementChange.objects.filter(change_id=change_row["change_id"]).exists():
            return None  # stored meanwhile by the same change sent at once: the caller reads it
        raise
    if found is None:  # the change is stored already: nothing was written
        return None
    *values, change_id = found
    return _recorded(row, change_row, values, change_id)


def _store_in_two_statements(row, change_row) -> Recorded | None:
    """SQLite: two writes in one transaction (the caller's, when it has one: no savepoint), the same rule as the
    PostgreSQL statement and in the same order:

    1. INSERT the judgement, where the change_id is not stored yet, naming as its latest change the id the change
       will take (the table's next AUTOINCREMENT id), ON CONFLICT (assessor, key) DO UPDATE to its final state
       (the runs' sorted union; the value, grade, clock and latest change where the change is the latest),
       RETURNING that state. No row: the change is stored already, and nothing was written.
    2. INSERT the change with that id. The transaction holds SQLite's one write lock from statement 1 on, so no
       other insert takes the id meanwhile; the judgement's foreign key to it is checked at COMMIT (Django's
       SQLite foreign keys are deferred).

    A save is then BEGIN, two statements and COMMIT (it was three statements, an upsert that only locked the row,
    the change's insert and the judgement's update)."""
    upsert, insert = _two_statements_sql(tuple(k for k in row if k != "latest_change_id"), tuple(change_row))
    judgement_params = _params(Judgement, {k: v for k, v in row.items() if k != "latest_change_id"})
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        cursor.execute(upsert, [*judgement_params, *_params(JudgementChange, {"change_id": change_row["change_id"]})])
        values = cursor.fetchone()
        if values is None:  # the change is stored already: nothing was written
            return None
        cursor.execute(insert, [values[0], *_params(JudgementChange, change_row)])
        change_id = cursor.fetchone()[0]
    return _recorded(row, change_row, values, change_id)


def _recorded(row, change_row, values, change_id) -> Recorded:
    """The Recorded of a new change, from the judgement's state as the store returned it and the change's id."""
    current = _current(values)
    judgement = Judgement(**{**row, **current})
    change = JudgementChange(pk=change_id, **dict(change_row, judgement_id=current["id"]))
    return Recorded(judgement=judgement, change=change, duplicate=False, current=current["latest_change_id"] == change_id)


_RETURNED = ("id", "value", "grade", "client_time", "client_seq", "run_ids", "adjudicated", "latest_change_id")


def _current(values) -> dict:
    """The judgement's state as the store returned it, converted as the ORM would."""
    current = dict(zip(_RETURNED, values, strict=True))
    for name in ("value", "run_ids"):
        current[name] = Judgement._meta.get_field(name).from_db_value(current[name], None, connection)
    current["client_time"] = _datetime(current["client_time"])
    current["adjudicated"] = bool(current["adjudicated"])
    return current


def _params(model, row):
    """The row's values as each field prepares them for the database (as the ORM's INSERT and UPDATE do)."""
    fields = _fields(model, tuple(row))
    return [field.get_db_prep_save(value, connection) for field, value in zip(fields, row.values(), strict=True)]


@functools.lru_cache(maxsize=32)
def _fields(model, names):
    return [model._meta.get_field(name) for name in names]


# What the judgement takes from a change that is the assessor's latest (both writings of _store use it).
_LATEST_RULE_FIELDS = ("value", "grade", "client_time", "client_seq", "latest_change_id")


@functools.lru_cache(maxsize=16)
def _two_statements_sql(judgement_names, change_names):
    """The storing rule (_store) as SQLite's two statements (_store_in_two_statements): the judgement's upsert, its
    parameters the judgement's row (without latest_change_id) and the change_id, RETURNING the judgement's state;
    and the change's insert, its parameters the judgement's id and the change's row, RETURNING the change's id.

    The change's id is AUTOINCREMENT's next: one more than the larger of the table's sequence and its largest id.
    The runs' union is config/sqlite's json_sorted_union (Python's sort, and the text JSONField writes)."""
    quote = connection.ops.quote_name
    table = quote(Judgement._meta.db_table)
    changes = quote(JudgementChange._meta.db_table)
    next_id = (f"(SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = "
               f"'{JudgementChange._meta.db_table}'), 0), COALESCE((SELECT MAX({quote('id')}) FROM {changes}), 0)) + 1)")
    columns = [quote(field.column) for field in _fields(Judgement, judgement_names)]
    latest = (f"(excluded.{quote('client_time')}, excluded.{quote('client_seq')}) "
              f">= ({table}.{quote('client_time')}, {table}.{quote('client_seq')})")
    run_ids = quote("run_ids")
    runs = f"json_sorted_union({table}.{run_ids}, excluded.{run_ids})"  # config/sqlite: as the ORM writes a list
    assignments = [f"{run_ids} = {runs}", f"{quote('updated_at')} = excluded.{quote('updated_at')}"]
    for name in _LATEST_RULE_FIELDS:
        column = quote(Judgement._meta.get_field(name).column)
        assignments.append(f"{column} = CASE WHEN {latest} THEN excluded.{column} ELSE {table}.{column} END")
    upsert = (f"INSERT INTO {table} ({', '.join(columns)}, {quote('latest_change_id')}) "
              f"SELECT {', '.join(['%s'] * len(columns))}, {next_id} "
              f"WHERE NOT EXISTS (SELECT 1 FROM {changes} WHERE {quote('change_id')} = %s) "
              f"ON CONFLICT ({quote('assessor_id')}, {quote('key')}) DO UPDATE SET {', '.join(assignments)} "
              f"RETURNING {', '.join(quote(c) for c in _RETURNED)}")
    change_columns = [quote(field.column) for field in _fields(JudgementChange, change_names)]
    insert = (f"INSERT INTO {changes} ({quote('id')}, {quote('judgement_id')}, {', '.join(change_columns)}) "
              f"VALUES ({next_id}, %s, {', '.join(['%s'] * len(change_columns))}) RETURNING {quote('id')}")
    return upsert, insert


@functools.lru_cache(maxsize=16)
def _one_statement_sql(judgement_names, change_names, vendor):
    """The storing rule (_store) as one PostgreSQL statement, its parameters the judgement's row (without
    latest_change_id), the change_id, and the change's row:

    - n: the new change's id, taken from its sequence first, so the judgement can name it;
    - j: INSERT the judgement, where the change_id is not stored yet (a change stored already, whichever key or
      assessor it is of, writes nothing and j returns no row), ON CONFLICT (assessor, key) DO UPDATE: the runs'
      sorted union (text compared as "C", by code point, as Python sorts), and the value, grade, clock and latest
      change where the change is the latest. A new key's judgement has the change as its latest;
    - c: INSERT the change for the row j returned. A plain INSERT: a change_id that a concurrent transaction
      stored after the statement began fails the whole statement, so nothing is half-written.

    Returns the judgement's state after it and the change's id; no row when the change was stored already.
    Both INSERTs take a SELECT's values, each parameter cast to its column's type (text for a character column:
    its length is then still checked, where a cast to varchar(n) would cut)."""
    quote = connection.ops.quote_name
    table = quote(Judgement._meta.db_table)
    changes = quote(JudgementChange._meta.db_table)
    columns = [quote(field.column) for field in _fields(Judgement, judgement_names)]
    latest = (f"(EXCLUDED.{quote('client_time')}, EXCLUDED.{quote('client_seq')}) "
              f">= ({table}.{quote('client_time')}, {table}.{quote('client_seq')})")
    run_ids = quote("run_ids")
    runs = (f"(SELECT COALESCE(jsonb_agg(DISTINCT r.value COLLATE \"C\" ORDER BY r.value COLLATE \"C\"), '[]'::jsonb) "
            f"FROM jsonb_array_elements_text(CASE jsonb_typeof({table}.{run_ids}) WHEN 'array' THEN {table}.{run_ids} "
            f"ELSE '[]'::jsonb END || EXCLUDED.{run_ids}) AS r)")
    assignments = [f"{run_ids} = {runs}", f"{quote('updated_at')} = EXCLUDED.{quote('updated_at')}"]
    for name in _LATEST_RULE_FIELDS:
        column = quote(Judgement._meta.get_field(name).column)
        assignments.append(f"{column} = CASE WHEN {latest} THEN EXCLUDED.{column} ELSE {table}.{column} END")
    judgement_casts = [f"CAST(%s AS {_cast_type(field)})" for field in _fields(Judgement, judgement_names)]
    upsert = (f"INSERT INTO {table} ({', '.join(columns)}, {quote('latest_change_id')}) "
              f"SELECT {', '.join(judgement_casts)}, n.id FROM n "
              f"WHERE NOT EXISTS (SELECT 1 FROM {changes} WHERE {quote('change_id')} = %s) "
              f"ON CONFLICT ({quote('assessor_id')}, {quote('key')}) DO UPDATE SET {', '.join(assignments)} "
              f"RETURNING {', '.join(quote(c) for c in _RETURNED)}")
    change_fields = _fields(JudgementChange, change_names)
    change_columns = [quote(field.column) for field in change_fields]
    casts = [f"CAST(%s AS {_cast_type(field)})" for field in change_fields]
    insert = (f"INSERT INTO {changes} ({quote('id')}, {quote('judgement_id')}, {', '.join(change_columns)}) "
              f"SELECT n.id, j.{quote('id')}, {', '.join(casts)} FROM n, j")
    sequence = f"pg_get_serial_sequence('{JudgementChange._meta.db_table}', 'id')"
    returned = ", ".join(f"j.{quote(c)}" for c in _RETURNED)
    return (f"WITH n AS MATERIALIZED (SELECT nextval({sequence}) AS id), j AS ({upsert}), c AS ({insert}) "
            f"SELECT {returned}, n.id FROM j, n")


def _cast_type(field):
    """The type a SELECT's parameter is cast to for `field`'s column: its own, or text for a character column."""
    db_type = field.db_type(connection)
    return "text" if db_type.startswith("varchar") else db_type


def _datetime(value):
    """A datetime column's value as the ORM gives it (SQLite returns text in UTC)."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if value is not None and timezone.is_naive(value):
        value = timezone.make_aware(value, dt_timezone.utc)
    return value


def _existing_change(change_id, assessor) -> Recorded | None:
    # change_id is unique: no ordering (the default one joins the judgement's topic and passage tables).
    change = JudgementChange.objects.select_related("judgement").filter(change_id=change_id).order_by("pk").first()
    if change is None:
        return None
    if change.assessor_id != assessor.pk:
        raise JudgementInvalid("change_id: this id belongs to another assessor's change")
    return Recorded(
        judgement=change.judgement, change=change, duplicate=True, current=change.judgement.latest_change_id == change.pk
    )
