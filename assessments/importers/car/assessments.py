"""TREC CAR Y3 assessment files (seed 004 Appendix A) read back into judgements: ours, and the original CAR
assessment tool's. Every file is checked whole first; only clean input is written, and a re-import stores nothing
twice. The wire names and time stamps are the exporter's (assessments.exporters.car_y3), so both read one table.
"""

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from assessments.exporters.car_y3 import (  # noqa: F401 (the wire table is shared)
    CHANGE_NAMESPACE, FACETS, IGNORED_KEYS, NOTES, OLD_REMOVALS, PAIR_KEY, REMOVALS, STATES, TRANSITION_KEY,
    TRANSITIONS, WIRE_TO_RELEVANCE, WIRE_TO_SPECIAL_FACET, WIRE_TO_TRANSITION, WRAPPER_FIELDS, format_time, parse_time,
)
from assessments.importers.car.common import DEFAULT_COLLECTION, merge_failure, short
from assessments.importers.trec import no_progress, raise_if_any, refused
from assessments.models import Judgement, JudgementChange, Layer, Topic
from assessments.services.judging import JudgementInvalid, checked_client_time, record_judgement, validate_value
from assessments.importers.sniff import but_looks_like
from retrieval.ingest import ImportFailed, InvalidJSON, Problem, Problems, json_type, load_json, read_text
from retrieval.models import Collection, Passage


# --- import: reading and checking files --------------------------------------------------------------------


@dataclass
class Entry:
    """One change read from a file, in our terms."""

    source: str
    place: str  # e.g. facet_state[3]
    layer: str
    topic: str
    passage: str
    passage2: str | None
    annotator: str
    time: datetime
    session: str
    run_ids: list
    value: object
    seq: int = 0

    def change_id(self, collection):
        content = [collection, self.annotator, self.layer, self.topic, self.passage, self.passage2, self.value,
                   format_time(self.time), self.session, sorted(set(self.run_ids))]
        return uuid.uuid5(CHANGE_NAMESPACE, json.dumps(content, sort_keys=True, ensure_ascii=False))


@dataclass
class Y3Import:
    """What an import read and stored."""

    collection: str
    files: int
    changes: int
    recorded: int = 0
    present: int = 0
    new_users: list = field(default_factory=list)

    def summary(self):
        users = f"; new users: {', '.join(self.new_users)}" if self.new_users else ""
        return (
            f"{self.changes:,} changes read from {self.files:,} CAR Y3 assessment files into collection "
            f"{self.collection!r}: {self.recorded:,} recorded, {self.present:,} already there{users}."
        )


Y3 = "TREC CAR Y3 assessments"  # as assessments.importers.sniff names them


def read_assessment_file(path, problems) -> list[Entry]:
    """The changes in one Y3 assessment file; problems go to `problems` (file, entry index, field)."""
    try:
        text = read_text(path)
    except ImportFailed as exc:
        merge_failure(exc, problems)
        return []
    try:
        doc = load_json(text)
    except InvalidJSON as exc:
        problems.add(exc.message + but_looks_like(text, Y3), line=exc.line)
        return []
    prefix = ""
    if isinstance(doc, dict) and isinstance(doc.get("saved_data"), dict):  # the original tool's save files
        doc, prefix = doc["saved_data"], "saved_data."
    if not isinstance(doc, dict):
        problems.add(f"expected a JSON object with {', '.join(STATES)}, got {json_type(doc)}{but_looks_like(text, Y3)}")
        return []
    if not any(state in doc for state in STATES) and but_looks_like(text, Y3):
        problems.add(f"not a CAR Y3 assessment file{but_looks_like(text, Y3)}")
        return []
    for key in doc:
        if key not in STATES and key not in IGNORED_KEYS:
            problems.add(
                f"unknown entry {short(key)} (a Y3 assessment file has {', '.join(STATES)})", field=prefix + key
            )
    if not any(state in doc for state in STATES):
        problems.add(f"not a CAR Y3 assessment file: none of {', '.join(STATES)}")
        return []
    reader = _Reader(str(path), problems, prefix)
    for state in STATES:
        reader.state(state, doc.get(state))
    return reader.entries


class _Reader:
    """Reads the states of one file into Entry objects, reporting each problem at its place."""

    def __init__(self, source, problems, prefix):
        self.source, self.problems, self.prefix = source, problems, prefix
        self.entries = []

    def add(self, message, place):
        self.problems.add(message, field=self.prefix + place)

    def state(self, state, pairs):
        if pairs is None:
            return
        if not isinstance(pairs, list):
            self.add(f"expected a list of [key, value] pairs, got {json_type(pairs)}", state)
            return
        transition = state == TRANSITIONS
        seen = {}
        for index, pair in enumerate(pairs):
            place = f"{state}[{index}]"
            if not isinstance(pair, list) or len(pair) != 2:
                self.add(f"expected a pair [key, value], got {short(pair, 120)}", place)
                continue
            key = self.key(pair[0], f"{place}[0]", TRANSITION_KEY if transition else PAIR_KEY)
            if key is None:
                continue
            if key in seen:
                self.add(f"the key is also {state}[{seen[key]}]", f"{place}[0]")
                continue
            seen[key] = index
            if state in (NOTES, FACETS):
                self.listed(state, key, pair[1], f"{place}[1]")
            else:
                self.single(state, key, pair[1], f"{place}[1]")

    def key(self, key, place, fields):
        if not isinstance(key, dict):
            self.add(f"expected an object with {', '.join(fields)}, got {json_type(key)}", place)
            return None
        ok = True
        for name in fields:
            if name not in key:
                self.add(f"missing {name}", place)
                ok = False
            elif not isinstance(key[name], str) or not key[name].strip():
                self.add(f"expected a non-empty string, got {short(key[name])}", f"{place}.{name}")
                ok = False
        for name in key:
            if name not in fields:
                self.add(f"unknown field {short(name)} (a key has {', '.join(fields)})", place)
                ok = False
        return tuple(key[name] for name in fields) if ok else None

    def wrapper(self, wrapped, place):
        """(annotator, time, session, run_ids, raw value) of a wrapped value, or None (problems added)."""
        if not isinstance(wrapped, dict):
            self.add(f"expected a wrapped value {{{', '.join(WRAPPER_FIELDS)}}}, got {json_type(wrapped)}", place)
            return None
        ok = True
        for name in WRAPPER_FIELDS:
            if name not in wrapped:
                self.add(f"missing {name}", place)
                ok = False
        for name in wrapped:
            if name not in WRAPPER_FIELDS:
                self.add(f"unknown field {short(name)} (a wrapped value has {', '.join(WRAPPER_FIELDS)})", place)
                ok = False
        if not ok:
            return None
        annotator, stamp, session, run_ids = (wrapped[n] for n in WRAPPER_FIELDS[:4])
        if not isinstance(annotator, str) or not annotator.strip():
            self.add(f"expected a non-empty string, got {short(annotator)}", f"{place}.annotator_id")
            ok = False
        moment = None
        if not isinstance(stamp, str):
            self.add(f"expected a time stamp string, got {json_type(stamp)}", f"{place}.time_stamp")
        else:
            try:
                moment = checked_client_time(parse_time(stamp), source=JudgementChange.Source.IMPORT)
            except JudgementInvalid as exc:
                moment = None
                self.add(f"{short(stamp)}: {str(exc).partition(': ')[2]}", f"{place}.time_stamp")
            except (ValueError, OverflowError) as exc:
                self.add(f"{short(stamp)}: {exc}", f"{place}.time_stamp")
        if not isinstance(session, str):
            self.add(f"expected a string, got {json_type(session)}", f"{place}.session_id")
            ok = False
        if not isinstance(run_ids, list) or not all(isinstance(r, str) for r in run_ids):
            self.add(f"expected a list of run ids (strings), got {short(run_ids)}", f"{place}.run_ids")
            ok = False
        if not ok or moment is None:
            return None
        return annotator, moment, session, run_ids, wrapped["value"]

    def entry(self, place, layer, key, wrapped, value, seq=0):
        annotator, moment, session, run_ids, _ = wrapped
        topic, passage, passage2 = (key + (None,))[:3]
        self.entries.append(
            Entry(self.source, self.prefix + place, layer, topic, passage, passage2, annotator, moment, session,
                  sorted(set(run_ids)), value, seq)
        )

    def listed(self, state, key, values, place):
        if not isinstance(values, list):
            self.add(f"expected a list of wrapped values, got {json_type(values)}", place)
            return
        wrappers = [self.wrapper(w, f"{place}[{i}]") for i, w in enumerate(values)]
        if state == NOTES:
            for i, wrapped in enumerate(wrappers):
                if wrapped is None:
                    continue
                if not isinstance(wrapped[4], str):
                    self.add(f"expected the notes as a string, got {json_type(wrapped[4])}", f"{place}[{i}].value")
                    continue
                self.entry(f"{place}[{i}]", Layer.NOTES, key, wrapped, wrapped[4], seq=i)
            return
        facets = [self.facet(w[4], f"{place}[{i}].value") if w else None for i, w in enumerate(wrappers)]
        if not wrappers or None in wrappers or None in facets:
            return  # an empty list says nothing (no annotator, no time); a broken one has its problems
        annotators = {w[0] for w in wrappers}
        if len(annotators) > 1:
            self.add(f"one facet list from several annotators ({', '.join(sorted(annotators))})", place)
            return
        latest = max(wrappers, key=lambda w: w[1])
        runs = sorted({r for w in wrappers for r in w[3]})
        self.entry(place, Layer.FACET, key, (latest[0], latest[1], latest[2], runs, None), facets)

    def facet(self, value, place):
        if not isinstance(value, dict) or set(value) != {"facet", "relevance"}:
            self.add(f"expected {{\"facet\": {{heading, heading_id}}, \"relevance\": ...}}, got {short(value, 120)}",
                     place)
            return None
        facet, relevance = value["facet"], value["relevance"]
        heading_id = facet.get("heading_id") if isinstance(facet, dict) else None
        if not isinstance(heading_id, str) or not heading_id.strip():
            self.add(f"expected {{heading, heading_id}} with a heading_id string, got {short(facet, 120)}",
                     f"{place}.facet")
            return None
        if relevance not in WIRE_TO_RELEVANCE:
            self.add(f"{short(relevance)} is not one of {', '.join(WIRE_TO_RELEVANCE)}", f"{place}.relevance")
            return None
        return {"facet": WIRE_TO_SPECIAL_FACET.get(heading_id, heading_id), "relevance": WIRE_TO_RELEVANCE[relevance]}

    def single(self, state, key, wrapped, place):
        wrapped = self.wrapper(wrapped, place)
        if wrapped is None:
            return
        raw = wrapped[4]
        if state == OLD_REMOVALS:
            self.entry(place, Layer.REMOVAL, key, wrapped, True)
        elif state == REMOVALS:
            if not isinstance(raw, bool):
                self.add(f"expected true or false, got {short(raw)}", f"{place}.value")
                return
            self.entry(place, Layer.REMOVAL, key, wrapped, raw)
        else:
            if raw not in WIRE_TO_TRANSITION:
                self.add(f"{short(raw)} is not one of {', '.join(WIRE_TO_TRANSITION)}", f"{place}.value")
                return
            self.entry(place, Layer.TRANSITION, key, wrapped, WIRE_TO_TRANSITION[raw])


# --- import: checking against the database and writing -----------------------------------------------------


def import_car_assessments(paths, collection_name=DEFAULT_COLLECTION, *, progress=no_progress) -> Y3Import:
    """Import CAR Y3 assessment files (ours or the original tool's) together; ImportFailed if anything is wrong."""
    collectors, entries = {}, []
    for path in paths:
        problems = collectors[str(path)] = Problems(str(path))
        entries.extend(read_assessment_file(path, problems))
    general = Problems(f"--collection {collection_name}")
    collection = Collection.objects.filter(name=collection_name).first()
    if collection is None:
        general.add(f"no collection named {collection_name!r}")
    raise_if_any(general, *collectors.values())

    topics = {t.external_id: t for t in Topic.objects.filter(
        collection=collection, external_id__in=list({e.topic for e in entries}))}
    by_external = Passage.objects.by_external_ids(
        collection, {p for e in entries for p in (e.passage, e.passage2) if p is not None}
    )
    _check_entries(entries, collectors, collection_name, topics, by_external)
    raise_if_any(*collectors.values())

    result = Y3Import(collection_name, files=len(collectors), changes=len(entries))
    entries.sort(key=lambda e: (e.annotator, e.layer, e.topic, e.passage, e.passage2 or "", e.time, e.seq))
    try:
        with transaction.atomic():
            users = _users(sorted({e.annotator for e in entries}), result)
            for entry in progress(entries, desc="changes", unit="change"):
                _store(entry, collection_name, users[entry.annotator], topics[entry.topic],
                       by_external[entry.passage], by_external.get(entry.passage2), result, collectors[entry.source])
    except IntegrityError as exc:
        raise refused(", ".join(str(p) for p in paths), exc) from exc
    return result


def _check_entries(entries, collectors, collection_name, topics, passages):
    User = get_user_model()
    username_field = User._meta.get_field(User.USERNAME_FIELD)
    reported = set()
    for entry in entries:
        problems = collectors[entry.source]

        def once(what, message, place):
            if (entry.source, what) not in reported:
                reported.add((entry.source, what))
                problems.add(message, field=place)

        key_place = f"{entry.place.split(']')[0]}][0]"
        topic = topics.get(entry.topic)
        if topic is None:
            once(("topic", entry.topic), f"unknown topic {entry.topic!r} in collection {collection_name!r}",
                 f"{key_place}.query_id")
        names = ("paragraph_id",) if entry.passage2 is None else ("paragraph_id1", "paragraph_id2")
        for name, pid in zip(names, (entry.passage, entry.passage2), strict=False):
            if pid not in passages:
                once(("passage", pid), f"unknown paragraph {pid!r} in collection {collection_name!r}",
                     f"{key_place}.{name}")
        try:
            username_field.clean(entry.annotator, None)
        except ValidationError as exc:
            once(("user", entry.annotator), f"{entry.annotator!r} cannot be a user name: {' '.join(exc.messages)}",
                 f"{entry.place}.annotator_id")
        if topic is None or entry.passage not in passages or (entry.passage2 and entry.passage2 not in passages):
            continue
        try:
            validate_value(entry.layer, entry.value, topic=topic, passage=passages[entry.passage],
                           passage2=passages.get(entry.passage2), allow_legacy=True)
        except JudgementInvalid as exc:
            problems.add(str(exc), field=entry.place)


def _users(names, result):
    User = get_user_model()
    users = {u.get_username(): u for u in User.objects.filter(**{f"{User.USERNAME_FIELD}__in": names})}
    for name in names:
        if name not in users:
            users[name] = User.objects.create_user(name)
            result.new_users.append(name)
    return users


def _store(entry, collection_name, user, topic, passage, passage2, result, problems):
    key = Judgement.make_key(entry.layer, topic.pk, passage.pk, passage2 and passage2.pk)
    judgement = Judgement.objects.filter(assessor=user, key=key).first()
    if judgement is not None and _already_there(judgement, entry):
        result.present += 1
        return
    try:
        recorded = record_judgement(
            assessor=user, layer=entry.layer, value=entry.value, topic=topic, passage=passage, passage2=passage2,
            client_time=entry.time, client_seq=entry.seq, session_id=entry.session, run_ids=entry.run_ids,
            change_id=entry.change_id(collection_name), source=JudgementChange.Source.IMPORT,
        )
    except JudgementInvalid as exc:
        problems.add(str(exc), field=entry.place)
        raise ImportFailed(problems.items, problems.total) from exc
    if recorded.duplicate:
        result.present += 1
    else:
        result.recorded += 1


def _already_there(judgement, entry):
    """Whether the judgement already has a change saying what `entry` says (value, time, session; runs known)."""
    if not set(entry.run_ids) <= set(judgement.run_ids):
        return False
    same_time = judgement.changes.filter(client_time=entry.time, session_id=entry.session)
    return any(value == entry.value for value in same_time.values_list("value", flat=True))


def assessment_paths(paths) -> list[Path]:
    """The files named by `paths`, a directory standing for the *.json files in it (sorted); ImportFailed if none."""
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            files = sorted(p for p in path.glob("*.json") if p.is_file())
            if not files:
                raise ImportFailed([Problem(str(path), None, None, "the directory holds no .json files")])
            found.extend(files)
        else:
            found.append(path)
    return found
