"""TREC CAR Y3 detailed assessments (seed 004 Appendix A): one JSON file per topic and assessor, out and back in.

The format. A file is one JSON object with five entries, each a list of `[key, value]` pairs (JSON
has no maps with compound keys):
- `notes_state`: key `{query_id, paragraph_id}`, value a LIST of wrapped values (text);
- `facet_state`: the same key, a LIST of wrapped values, one per chosen facet:
  `{"facet": {"heading", "heading_id"}, "relevance": "MustLabel"}`;
- `nonrelevant_state`: not used (always `[]`; the original tool's older removals, read on import);
- `nonrelevant_state2`: the same key, ONE wrapped value, true for removed (false: restored);
- `transition_label_state`: key `{query_id, paragraph_id1, paragraph_id2}`, ONE wrapped value.
A wrapped value is `{annotator_id, time_stamp, session_id, run_ids, value}`.

Names on the wire (here and nowhere else in the project):
- relevance MustLabel / ShouldLabel / CanLabel; the original tool also wrote TopicLabel, NonRelLabel,
  TrashLabel, DuplicateLabel and UnsetLabel, imported as the legacy Relevance members and exported
  under the same names;
- transitions SameTransition / AppropriateTransition (our COHERENT) / SwitchTransition; legacy
  CoherentTransition, OfftopicTransition, ToNonRelTransition, RedundantTransition, UnsetTransition;
- special facets: heading_id NONE_OF_THESE (heading OTHER RELEVANT FACET) and GENERAL/INTRODUCTION
  (the paper's id; the original tool itself wrote INTRODUCTION, which is read as well).

Export decisions:
- the current value of each label (Judgement), with the annotator (the assessor's username),
  time stamp (the assessor's clock, UTC, microseconds, `Z`) and session id of its latest change;
  run_ids are every run the key was judged under (Judgement.run_ids, sorted);
- labels without a value (cleared, or an empty facet list) are not written: the format has no
  way to carry them (an empty list has no wrapper, so no annotator or time);
- only outline topics, only the four CAR layers; entries sorted by paragraph id(s);
- file name `<topic>__<assessor>.json`, each part percent-encoded (UTF-8) except ASCII letters,
  digits, `-`, `.` (not leading) and single `_` inside the part, so `__` occurs only as the
  separator: `tqa2%3AL_0257__NIST.json`. An id's own escapes are kept (the trial's `enwiki:Salmon%20run` is
  `enwiki%3ASalmon%20run`, not `%2520`: ids are encoded once), so such an id and the same with the character
  itself would share a name (CAR's ids are always encoded). Names longer than 255 bytes are cut and given a hash;
- each file is written to a temporary name and renamed when complete; a failed export leaves the
  files finished before it and no partial one.

Import decisions:
- everything is read and checked first (every problem with file, entry index and field); only
  clean input is written, in one transaction, through record_judgement with source=import;
- topics and passages must exist in the collection; unknown annotator ids become users (without a
  usable password);
- a facet_state list becomes one change (the value is the list of facets), its time stamp the
  latest of the list and its run_ids their union; several notes for one key become one change each
  (the latest is current); nonrelevant_state entries are removals; an empty list is skipped;
- each change gets a deterministic change_id: uuid5 over the collection, annotator, layer, key,
  value, time stamp, session and runs, so importing a file again stores nothing new. A change
  equal to one already stored for that label (same value, time stamp and session, its runs among
  the label's) is not stored again either: our own export of web-made changes imports as a no-op.

Reading such files back (import_car_assessments) lives in assessments.importers.car.assessments; the wire names
and time stamps below are the one table both use.
"""

import json
import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from hashlib import sha1

from django.utils.dateparse import parse_datetime

from assessments.exporters.common import ExportFailed, atomic_file, prepare_directory, raw_rows
from assessments.models import Facet, Layer, Relevance, SpecialFacet, Topic, Transition

# --- wire names --------------------------------------------------------------------------------------------

RELEVANCE_TO_WIRE = {
    Relevance.MUST: "MustLabel",
    Relevance.SHOULD: "ShouldLabel",
    Relevance.CAN: "CanLabel",
    Relevance.TOPIC: "TopicLabel",
    Relevance.NONREL: "NonRelLabel",
    Relevance.TRASH: "TrashLabel",
    Relevance.DUPLICATE: "DuplicateLabel",
    Relevance.UNSET: "UnsetLabel",
}
TRANSITION_TO_WIRE = {
    Transition.SAME: "SameTransition",
    Transition.COHERENT: "AppropriateTransition",
    Transition.SWITCH: "SwitchTransition",
    Transition.LEGACY_COHERENT: "CoherentTransition",
    Transition.OFFTOPIC: "OfftopicTransition",
    Transition.TO_NONREL: "ToNonRelTransition",
    Transition.REDUNDANT: "RedundantTransition",
    Transition.UNSET: "UnsetTransition",
}
SPECIAL_FACET_TO_WIRE = {  # our id -> (heading_id, heading)
    SpecialFacet.OTHER: ("NONE_OF_THESE", "OTHER RELEVANT FACET"),
    SpecialFacet.GENERAL: ("GENERAL/INTRODUCTION", "GENERAL/INTRODUCTION"),
}
WIRE_TO_RELEVANCE = {wire: str(label.value) for label, wire in RELEVANCE_TO_WIRE.items()}
WIRE_TO_TRANSITION = {wire: str(label.value) for label, wire in TRANSITION_TO_WIRE.items()}
WIRE_TO_SPECIAL_FACET = {wire: str(facet.value) for facet, (wire, _) in SPECIAL_FACET_TO_WIRE.items()}
WIRE_TO_SPECIAL_FACET["INTRODUCTION"] = str(SpecialFacet.GENERAL.value)  # what the original tool wrote

NOTES, FACETS, OLD_REMOVALS, REMOVALS, TRANSITIONS = (
    "notes_state", "facet_state", "nonrelevant_state", "nonrelevant_state2", "transition_label_state",
)
STATES = (NOTES, FACETS, OLD_REMOVALS, REMOVALS, TRANSITIONS)
IGNORED_KEYS = ("assessor_data",)  # the original tool's record of who opened what
WRAPPER_FIELDS = ("annotator_id", "time_stamp", "session_id", "run_ids", "value")
PAIR_KEY = ("query_id", "paragraph_id")
TRANSITION_KEY = ("query_id", "paragraph_id1", "paragraph_id2")
CAR_LAYERS = (Layer.NOTES, Layer.FACET, Layer.REMOVAL, Layer.TRANSITION)
CHUNK = 2000
MAX_FILE_NAME = 255  # bytes, on common file systems
CHANGE_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "pooljudge:car-y3-assessments")

_RELEVANCE_WIRE = {str(k.value): v for k, v in RELEVANCE_TO_WIRE.items()}
_TRANSITION_WIRE = {str(k.value): v for k, v in TRANSITION_TO_WIRE.items()}
_SPECIAL_WIRE = {str(k.value): v for k, v in SPECIAL_FACET_TO_WIRE.items()}


# --- time stamps and file names ----------------------------------------------------------------------------


def format_time(moment: datetime) -> str:
    """ISO 8601 in UTC with microseconds and Z, e.g. 2019-10-11T21:02:58.354696Z."""
    if moment.tzinfo is not UTC:
        moment = moment.astimezone(UTC)
    return moment.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


TIME_STAMP = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:([Zz])|([+-])(\d\d):?(\d\d))\Z"
)


def parse_time(text: str) -> datetime:
    """An aware datetime from an ISO 8601 time stamp with a zone; fractions past microseconds are cut off.

    The original tool wrote nanoseconds (…58.354696907Z). ValueError if the text is not such a stamp.
    """
    match = TIME_STAMP.match(text)
    if not match:
        raise ValueError("expected an ISO 8601 time with a zone, like 2019-10-11T21:02:58.354696907Z")
    year, month, day, hour, minute, second, fraction, zulu, sign, zone_h, zone_m = match.groups()
    micro = int((fraction or "0")[:6].ljust(6, "0"))
    moment = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micro, tzinfo=UTC)
    if not zulu:
        offset = (int(zone_h) * 60 + int(zone_m)) * (1 if sign == "+" else -1)
        moment -= timedelta(minutes=offset)
    return moment


def _name_part(text: str) -> str:
    out = []
    last = len(text) - 1
    for i, ch in enumerate(text):
        escaped = ch == "%" and re.fullmatch(r"[0-9A-Fa-f]{2}", text[i + 1:i + 3])  # already encoded: kept
        plain = escaped or ch.isascii() and (ch.isalnum() or ch == "-" or (ch == "." and i > 0))
        lone_underscore = ch == "_" and 0 < i < last and text[i - 1] != "_" and text[i + 1] != "_"
        out.append(ch if plain or lone_underscore else "".join(f"%{b:02X}" for b in ch.encode()))
    return "".join(out)


def file_name(topic: str, assessor: str) -> str:
    """`<topic>__<assessor>.json`, both parts made safe (see the module docstring); distinct pairs, distinct names."""
    name = f"{_name_part(topic)}__{_name_part(assessor)}"
    if len(name.encode()) + 5 > MAX_FILE_NAME:
        digest = sha1(f"{topic}\n{assessor}".encode()).hexdigest()[:16]
        name = f"{name.encode()[:200].decode(errors='ignore')}~{digest}"
    return name + ".json"


# --- export ------------------------------------------------------------------------------------------------


@dataclass
class Y3Export:
    """What an export wrote."""

    directory: str
    files: int = 0
    labels: int = 0

    def summary(self):
        return f"{self.labels:,} labels written to {self.files:,} CAR Y3 assessment files in {self.directory}."


def export_rows(scope):
    """The rows the Y3 export reads, grouped by (assessor, topic) (one file each), as a values_list queryset.

    Adjudicated labels (an organiser's final labels, not an assessor's assessments) are left out.
    """
    rows = scope.judgements().filter(layer__in=CAR_LAYERS, topic__kind=Topic.Kind.OUTLINE, adjudicated=False)
    rows = rows.without_stale_transitions()  # a transition no article shows now is not an assessment
    return rows.order_by("assessor_id", "topic_id").values_list(
        "assessor_id", "topic_id", "assessor__username", "topic__external_id", "layer",
        "passage__external_id", "passage2__external_id", "value", "client_time", "latest_change__session_id",
        "run_ids",
    )


def zipped(scope):
    """The Y3 files of `scope` zipped into a temporary file, rewound for reading (a download streams it from disk:
    memory stays flat whatever the number of labels). The caller closes it; closing removes it."""
    import tempfile
    import zipfile
    from pathlib import Path

    out = tempfile.TemporaryFile(prefix="pooljudge-y3-")
    try:
        with tempfile.TemporaryDirectory(prefix="pooljudge-y3-") as directory:
            export_car_assessments(scope, Path(directory) / "files")
            with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
                for path in sorted((Path(directory) / "files").iterdir()):
                    archive.write(path, path.name)
    except BaseException:
        out.close()
        raise
    out.seek(0)
    return out


def export_car_assessments(scope, out_dir, *, indent=None) -> Y3Export:
    """Write one Y3 JSON file per (topic, assessor) with labels in `scope` into `out_dir`; ExportFailed on failure.

    The files' JSON is assembled as text from the database's own JSON text (values, run ids) and
    strings escaped by the json module's encoder: decoding every value only to encode it again costs
    more than reading the rows. Facet values are decoded (their labels and headings are translated).
    """
    directory = prepare_directory(out_dir)
    headings = dict(
        ((topic_id, heading_id), heading)
        for topic_id, heading_id, heading in Facet.objects.filter(topic__in=scope.topics())
        .order_by()
        .values_list("topic_id", "heading_id", "heading")
        .iterator(CHUNK)
    )
    facet_text = _FacetText(headings)
    result = Y3Export(str(directory))
    group_assessor = group_topic = states = None
    for row in raw_rows(export_rows(scope), CHUNK):
        assessor_id, topic_id, annotator, topic, layer, passage, passage2, value, moment, session, run_ids = row
        if assessor_id != group_assessor or topic_id != group_topic:  # the rows of the next file begin
            if states is not None:
                _write_file(directory, names, states, indent, result)
            group_assessor, group_topic, names = assessor_id, topic_id, (topic, annotator)
            states = ([], [], [], [])  # notes, facets, removals, transitions: (sort key, sort key, text)
            topic_text, annotator_text = _string(topic), _string(annotator)
        if value is None or value == "[]" or value == "null":
            continue
        wrapper = (
            f'{{"annotator_id":{annotator_text},"time_stamp":"{_stamp(moment)}",'
            f'"session_id":{_string(session or "")},"run_ids":{run_ids or "[]"},"value":'
        )
        if layer == "transition":
            key = f'{{"query_id":{topic_text},"paragraph_id1":{_string(passage)},"paragraph_id2":{_string(passage2)}}}'
            states[3].append((passage, passage2, f"[{key},{wrapper}{_transition_text(value)}}}]"))
        else:
            key = f'{{"query_id":{topic_text},"paragraph_id":{_string(passage)}}}'
            if layer == "facet":
                facets = ",".join(wrapper + facet_text(topic_id, entry) + "}" for entry in json.loads(value))
                states[1].append((passage, "", f"[{key},[{facets}]]"))
            elif layer == "notes":
                states[0].append((passage, "", f"[{key},[{wrapper}{value}}}]]"))
            else:
                states[2].append((passage, "", f"[{key},{wrapper}{value}}}]"))
        result.labels += 1
    if states is not None:
        _write_file(directory, names, states, indent, result)
    return result


_string = json.encoder.encode_basestring  # a str as JSON text (quoted, escaped), as json.dumps(ensure_ascii=False)
_TRANSITION_TEXT = {json.dumps(ours): json.dumps(wire) for ours, wire in _TRANSITION_WIRE.items()}


def _transition_text(value):
    text = _TRANSITION_TEXT.get(value)
    return text if text is not None else json.dumps(_TRANSITION_WIRE[json.loads(value)])


def _stamp(moment):
    """The wire time stamp of a client_time as the driver returns it (see raw_rows).

    psycopg gives an aware datetime; Python's sqlite3 a naive one in UTC (Django stores UTC there),
    or the stored text where no converter applies.
    """
    if isinstance(moment, str):
        parsed = parse_datetime(moment)
        if parsed is None:
            raise ExportFailed(f"unreadable time stamp {moment!r} in the database")
        moment = parsed
    if moment.tzinfo is None:
        return moment.isoformat(timespec="microseconds") + "Z"
    return format_time(moment)


class _FacetText:
    """The wire JSON of one facet value entry, {"facet": {heading, heading_id}, "relevance"}, cached."""

    def __init__(self, headings):
        self.headings = headings
        self.cache = {}

    def __call__(self, topic_id, entry):
        facet, relevance = entry["facet"], entry["relevance"]
        text = self.cache.get((topic_id, facet, relevance))
        if text is None:
            special = _SPECIAL_WIRE.get(facet)
            heading_id, heading = special or (facet, self.headings.get((topic_id, facet), ""))
            text = json.dumps(
                {"facet": {"heading": heading, "heading_id": heading_id}, "relevance": _RELEVANCE_WIRE[relevance]},
                ensure_ascii=False, separators=(",", ":"),
            )
            self.cache[(topic_id, facet, relevance)] = text
        return text


def _write_file(directory, names, states, indent, result):
    if not any(states):
        return
    notes, facets, removals, transitions = (",".join(item[2] for item in sorted(state)) for state in states)
    text = (
        f'{{"{NOTES}":[{notes}],"{FACETS}":[{facets}],"{OLD_REMOVALS}":[],"{REMOVALS}":[{removals}],'
        f'"{TRANSITIONS}":[{transitions}]}}'
    )
    if indent is not None:
        text = json.dumps(json.loads(text), ensure_ascii=False, indent=indent)
    with atomic_file(directory / file_name(*names), fsync=False) as handle:
        handle.write(text)
        handle.write("\n")
    result.files += 1
