"""Keyset pagination of the API's lists: a page is read from where the previous one ended, never with OFFSET.

Each list view names its `ordering`: integer or text fields of the model, unique together (`-id`, `name`, or
`topic_id, rank` within a pool), so that the position of a row is the tuple of those values. The cursor in `next` and
`previous` holds the position of the last (first) row of the page; the next page is the rows after it in that
order, found through the index that serves the ordering, so a page costs the same on the first and the
thousandth page, whatever the table holds. There is no count: it would read every row.

A cursor or page size the client did not get from us (or mistyped) is a 400 naming `cursor` or `page_size`; so is
a cursor holding text no database stores (NUL, a lone surrogate).
"""

import binascii
import json
from base64 import urlsafe_b64decode, urlsafe_b64encode

from django.core.exceptions import FieldDoesNotExist
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Q
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from config.ids import parse_id

PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
MAX_CURSOR_CHARS = 600  # ours hold a name of at most 100 characters or two ids; and JSON nests < 1000 deep
BIGINT = 2**63  # a position outside PostgreSQL's bigint names no row of ours


class KeysetPagination(CursorPagination):
    """`?cursor=` from `next`/`previous` and `?page_size=` (1-1000, default 100); the order is the view's `ordering`."""

    page_size = PAGE_SIZE
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
    cursor_query_description = "Where the page starts: the `next` or `previous` link of the page before."
    page_size_query_description = f"Items per page, 1 to {MAX_PAGE_SIZE} (default {PAGE_SIZE})."

    def paginate_queryset(self, queryset, request, view=None):
        self.request = request
        self.ordering = self.get_ordering(request, queryset, view)
        self.page_size = self.get_page_size(request)
        self.base_url = request.build_absolute_uri()
        reverse, position = self.decode_cursor(request, queryset.model)
        ordering = [flip(field) for field in self.ordering] if reverse else list(self.ordering)
        if position is not None:
            queryset = queryset.filter(after(ordering, position))
        rows = list(queryset.order_by(*ordering)[: self.page_size + 1])
        page, more = rows[: self.page_size], len(rows) > self.page_size
        if reverse:
            page.reverse()
        self.page = page
        self.position = position
        self.has_next = position is not None if reverse else more
        self.has_previous = more if reverse else position is not None
        self.display_page_controls = self.has_next or self.has_previous
        return page

    def get_ordering(self, request, queryset, view):
        ordering = getattr(view, "ordering", None)
        assert ordering, f"{type(view).__name__} must name its keyset `ordering` (unique as a whole)."
        return tuple(ordering)

    def get_page_size(self, request):
        """The page_size parameter (empty: not given), or 400 naming it."""
        value = request.query_params.get(self.page_size_query_param, "")
        if value == "":
            return self.page_size
        size = parse_id(value, maximum=self.max_page_size)
        if size is None:
            raise ValidationError(
                {self.page_size_query_param: [f"A whole number from 1 to {self.max_page_size}, not {value[:50]!r}."]}
            )
        return size

    def decode_cursor(self, request, model=None):
        """(reverse, position or None) from the cursor parameter (empty: the first page), or 400 naming it."""
        encoded = request.query_params.get(self.cursor_query_param, "")
        if encoded == "":
            return False, None
        try:
            if len(encoded) > MAX_CURSOR_CHARS:
                raise ValueError("too long")
            data = json.loads(urlsafe_b64decode(encoded.encode("ascii") + b"=" * (-len(encoded) % 4)))
            if not isinstance(data, dict) or set(data) != {"r", "p"} or data["r"] not in (0, 1):
                raise ValueError("not a cursor")
            return bool(data["r"]), self.read_position(model, data["p"])
        except (ValueError, TypeError, RecursionError, binascii.Error, DjangoValidationError, FieldDoesNotExist):
            raise ValidationError({self.cursor_query_param: ["Not a cursor of this list: use a next or previous link."]})

    def read_position(self, model, values):
        """The position's values, each checked against its field (a wrong type or out of range: ValueError)."""
        if not isinstance(values, list) or len(values) != len(self.ordering):
            raise ValueError("not a position")
        position = []
        for name, value in zip(self.ordering, values):
            if not isinstance(value, (int, str)) or isinstance(value, bool):
                raise ValueError("not a value")
            value = model._meta.get_field(name.lstrip("-")).to_python(value)
            if isinstance(value, int) and not -BIGINT <= value < BIGINT or isinstance(value, str) and "\x00" in value:
                raise ValueError("out of range")
            if isinstance(value, str):
                value.encode("utf-8")  # a lone surrogate (JSON's "\ud800") cannot be: UnicodeEncodeError, a ValueError
            position.append(value)
        return tuple(position)

    def encode_cursor(self, reverse, position):
        return replace_query_param(self.base_url, self.cursor_query_param, cursor_value(reverse, position))

    def position_of(self, row):
        return tuple(getattr(row, name.lstrip("-")) for name in self.ordering)

    def get_next_link(self):
        if not self.has_next:
            return None
        return self.encode_cursor(False, self.position_of(self.page[-1]) if self.page else self.position)

    def get_previous_link(self):
        if not self.has_previous:
            return None
        return self.encode_cursor(True, self.position_of(self.page[0]) if self.page else self.position)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_page_size)
        return parameters

    def get_paginated_response(self, data):
        return Response({"next": self.get_next_link(), "previous": self.get_previous_link(), "results": data})


def cursor_value(reverse, position):
    """The cursor parameter of the page after (reverse: before) the row at `position`."""
    data = json.dumps({"r": int(reverse), "p": list(position)}, separators=(",", ":")).encode()
    return urlsafe_b64encode(data).decode("ascii").rstrip("=")


def flip(field):
    return field[1:] if field.startswith("-") else f"-{field}"


def after(ordering, position):
    """Rows after `position` in `ordering`: (a, b) > (x, y) as `a >= x AND (a > x OR (a = x AND b > y))`.

    The leading bound alone is what the index can seek to; the rest is checked on the rows of equal first key."""
    def beyond(field, value):
        return Q(**{f"{field.lstrip('-')}__{'lt' if field.startswith('-') else 'gt'}": value})

    first = ordering[0].lstrip("-")
    bound = Q(**{f"{first}__{'lte' if ordering[0].startswith('-') else 'gte'}": position[0]})
    either = Q()
    equal = Q()
    for field, value in zip(ordering, position):
        either |= equal & beyond(field, value)
        equal &= Q(**{field.lstrip("-"): value})
    return either if len(ordering) == 1 else bound & either
