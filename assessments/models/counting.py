"""Counting related rows as a correlated subquery: one home for the pages', the API's and the admin's counts."""

from django.db.models import Count, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce


def related_count(model, field, outer="pk", what=None):
    """The number of `model` rows whose `field` is the outer row's `outer` (0 when none), as an expression to annotate.

    A subquery per count, not a join grouped over every row: a page counts its own rows only, and two counts never
    multiply into a product of each other. `what` counts something else than rows (e.g. Count("topic_id",
    distinct=True))."""
    rows = model.objects.filter(**{field: OuterRef(outer)}).order_by().values(field).annotate(n=what or Count("*"))
    return Coalesce(Subquery(rows.values("n"), output_field=IntegerField()), Value(0))
