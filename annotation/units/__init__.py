"""The kinds of unit of work: one module per kind holds everything about it (its noun, layers and page, its change
key, its progress for one unit and for many, its review items and labels, its row in the queue), and registers it in
annotation.units.registry. Callers reach a unit's kind by `units.of(assignment)`, never by its name.

To add a kind of work, add one module and register it (import it below; its Assignment.Kind value and the model's
kind_of rule make units of it).
"""

from annotation.units import (  # noqa: F401 (each module registers its kind, in this order)
    outline, plot_labels, choice, pair, adhoc, nugget_support, nugget_creation, citation_support,
)
from annotation.units.registry import UnitKind, get, grading_kinds, kinds, of  # noqa: F401 (the registry's readers)
