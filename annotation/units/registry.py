"""THE registry of unit kinds: what each kind of unit of work is, reached by `of(assignment)`.

A kind's module (annotation/units/<kind>.py) builds one UnitKind and registers it here; annotation/units/__init__.py
imports every kind's module. The save path, the judging page, the queue, review and the home page ask the registry,
never a kind by name: to add a kind of work, add one module and register it.
"""

from dataclasses import dataclass
from typing import Callable

_KINDS = {}  # Assignment.Kind value -> UnitKind, in the order the kinds registered


@dataclass(frozen=True)
class UnitKind:
    """Everything about one kind of unit of work (Assignment.Kind value `kind`; its page is named by it too)."""

    kind: str
    title: str  # what the queue's Task column says
    noun: str  # one thing the unit labels ("candidate", "nugget"): its progress counts these
    layers: tuple  # the label layers its page writes
    template: str  # its judging page's template, script and the id of the page's data (JSON)
    script: str
    data_id: str
    page: Callable  # (assignment, *, readonly) -> the template's context, with `state` (the page's data)
    change_key: Callable  # (assignment, data, layer, value) -> record_judgement keyword arguments (ChangeInvalid)
    progress: Callable  # (assignment[, passage ids the change key gave]) -> Progress
    progress_of_units: Callable  # (user, assignments) -> {pk: Progress}: kinds sharing one function are read together
    review_units: Callable  # (assignment) -> [(passage id, item key)]: the batch's items, in a fixed order
    review_labels: Callable  # (assignment, units) -> {(passage id, item key): {layer: value}}
    queue_row: str  # the template of its row in the assessor's queue (home.html)
    done_by_mark: bool = False  # no change makes it done, only the assessor's mark (status.after_change)
    labels_by_topic: bool = False  # its labels are the topic's: a change may complete the assessor's other units
    blind_items: bool = False  # its review items' keys may name a run: the reviewer sees no key
    check_mark: Callable | None = None  # (assignment) -> None, or raises: may the unit be marked done now
    review_texts: Callable | None = None  # (review) -> {item id: what the reviewer reads of it}
    review_name: Callable | None = None  # (key) -> the item's key as the reviewer may see it


def without_user(read):
    """A kind's reading of many units' progress that needs no user (its units name their assessor): as UnitKind's
    progress_of_units takes it, (user, assignments)."""
    def progress_of_units(user, assignments):
        return read(assignments)
    return progress_of_units


def register(unit: UnitKind) -> UnitKind:
    """Add a kind (its module calls this once, at import)."""
    if unit.kind in _KINDS:
        raise ValueError(f"unit kind {unit.kind!r} is registered twice")
    _KINDS[unit.kind] = unit
    return unit


def of(assignment) -> UnitKind:
    """The kind of `assignment` (its stored kind, Assignment.kind_of)."""
    return _KINDS[assignment.kind]


def get(kind: str) -> UnitKind:
    """The kind registered as `kind` (an Assignment.Kind value); KeyError when none is."""
    return _KINDS[kind]


def grading_kinds() -> list[str]:
    """The kinds whose units grade their pool's candidates of the topic (a layer of CANDIDATE_GRADES: plot labels,
    ad hoc): the units a judging order serves and a stopping estimate reads."""
    from assessments.models import CANDIDATE_GRADES

    return [unit.kind for unit in _KINDS.values() if unit.layers[0] in CANDIDATE_GRADES]


def kinds() -> list[UnitKind]:
    """Every registered kind, in the order they registered."""
    return list(_KINDS.values())
