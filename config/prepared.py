"""Querysets compiled once and run again with new values: the hot paths' reads without the ORM's compile cost.

Building and compiling a queryset (filters, joins, annotations) costs a save more CPU than the database does
with it: a save's assignment read (three joined tables, two EXISTS annotations) took about 4 ms of the web
process's CPU to compile and 0.3 ms to run. `Prepared` compiles a queryset the first time a connection runs it,
with sentinel values in the places of its parameters, and afterwards runs the same SQL with the real values,
building the rows exactly as the ORM would (the same converters; for model rows the same instances, with
select_related objects and annotations set).

    ASSIGNMENT = Prepared(lambda token, user: Assignment.objects.select_related("topic").filter(token=token,
                          assessor_id=user), token="\\x00sentinel-token", user=2_147_275_001)
    assignment = ASSIGNMENT.first(token=t, user=request.user.pk)

The SQL is the ORM's own (same query plan, same quoting, any backend), kept per database connection (each
thread has its own). Parameters must be plain values (str or int) the ORM passes through unchanged, each
sentinel unlike any other parameter of the query and in its field's range (Django drops a lookup whose value is out
of range, e.g. a negative number for a positive field); the first compile checks that every sentinel was found once.
"""

from django.db import connections
from django.db.models.query import get_related_populators


class Prepared:
    """A queryset shape compiled once per connection; `rows`, `objects` and `first` run it with new values."""

    def __init__(self, build, **sentinels):
        self.build = build  # (**values) -> QuerySet
        self.sentinels = sentinels

    def rows(self, using="default", **values) -> list:
        """The rows of a values_list() queryset (tuples, converted as the ORM converts them)."""
        compiled = self._compiled(using)
        return [tuple(row) for row in compiled.run(values)]

    def objects(self, using="default", **values) -> list:
        """The model instances of a model queryset (select_related objects and annotations set)."""
        compiled = self._compiled(using)
        return [compiled.instance(row) for row in compiled.run(values)]

    def first(self, using="default", **values):
        """The first model instance, or None."""
        found = self.objects(using, **values)
        return found[0] if found else None

    def _compiled(self, using):
        connection = connections[using]
        cache = connection.__dict__.setdefault("_pj_prepared", {})
        compiled = cache.get(self)  # keyed by the object itself (an id could be reused by a later one)
        if compiled is None:
            compiled = cache[self] = _Compiled(self.build(**self.sentinels).using(using), self.sentinels)
        return compiled


class _Compiled:
    def __init__(self, queryset, sentinels):
        compiler = queryset.query.get_compiler(using=queryset.db)
        sql, params = compiler.as_sql()
        self.compiler, self.sql, self.params = compiler, sql, list(params)
        self.slots = []
        for name, sentinel in sentinels.items():
            # isinstance: the PostgreSQL backend passes integers as psycopg's Int2/Int4/Int8 (subclasses of int)
            places = [i for i, p in enumerate(params) if isinstance(p, type(sentinel)) and p == sentinel]
            if len(places) != 1:
                raise ValueError(f"Prepared: the sentinel for {name!r} is in the parameters {len(places)} times")
            self.slots.append((places[0], name, type(params[places[0]])))  # a value is passed as the ORM passed it
        self.col_count = compiler.col_count
        self.converters = compiler.get_converters([s[0] for s in compiler.select[: self.col_count]])
        self.klass_info = compiler.klass_info
        if self.klass_info:  # a model queryset (values_list() has none)
            start, end = self.klass_info["select_fields"][0], self.klass_info["select_fields"][-1] + 1
            self.model_slice = slice(start, end)
            self.init_list = [f[0].target.attname for f in compiler.select[start:end]]
            self.related = get_related_populators(self.klass_info, compiler.select, queryset.db)
            self.annotations = dict(compiler.annotation_col_map or {})

    def run(self, values) -> list:
        params = list(self.params)
        for place, name, kind in self.slots:
            params[place] = kind(values[name])
        with self.compiler.connection.cursor() as cursor:
            cursor.execute(self.sql, params)
            rows = [row[: self.col_count] for row in cursor.fetchall()]
        if self.converters:
            rows = list(self.compiler.apply_converters(rows, self.converters))
        return rows

    def instance(self, row):
        obj = self.klass_info["model"].from_db(self.compiler.using, self.init_list, row[self.model_slice])
        for populator in self.related:
            populator.populate(row, obj)
        for name, position in self.annotations.items():
            setattr(obj, name, row[position])
        return obj
