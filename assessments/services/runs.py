"""THE run-name rules: whose names a new run's name must differ from, how a name finds a run, and how runs that
share a name are told apart.

A participant's run name is theirs within a campaign: two teams may both call a run "bm25" in the same campaign,
and an upload is checked only against the uploader's own runs there, so its answer never tells whether another
team has a name. The organisers' own runs (imported, made by retrievers: no owner) keep one name per collection.
Where runs are shown side by side (evaluations, exports, results) a name that several of them share is written
`owner/name`; the same `owner/name` finds the run on a command line, and a bare name that several runs have is
refused, naming the field, with the choices.
"""

from collections import Counter

from django.db.models import Q

from assessments.models import Run


class RunLookupError(ValueError):
    """A run name that finds no run, or several; `field` names what to fix and `message` says why."""

    def __init__(self, field, message):
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


def name_scope(collection, *, owner=None, track=""):
    """The runs whose names a new run of `owner` (None: the organisers' own) submitted to `track` may not
    repeat: the owner's runs of that track in the collection, or the organisers' own runs of the collection (no
    owner and no campaign; a deleted participant's runs keep their campaign and do not count)."""
    runs = Run.objects.filter(collection=collection)
    if owner is None:
        return runs.filter(owner__isnull=True, track="")
    return runs.filter(owner=owner, track=track)


def taken_names(collection, names, *, owner=None, track="") -> set[str]:
    """Those of `names` already used in the scope of a new run (see name_scope)."""
    return set(
        name_scope(collection, owner=owner, track=track).filter(name__in=set(names)).values_list("name", flat=True)
    )


def name_taken_message(collection, name, *, owner=None, track="") -> str:
    """Why `name` cannot be a new run's, in words that speak only of the scope's own runs."""
    if owner is None:
        return f"collection {collection.name!r} already has a run named {name!r}"
    return f"you already have a run named {name!r}" + (f" in campaign {track!r}" if track else "")


def qualified_name(run) -> str:
    """`owner/name` for a participant's run, the name for the organisers' own."""
    return f"{run.owner.username}/{run.name}" if run.owner_id else run.name


def run_labels(runs) -> dict[int, str]:
    """{run id: label}: the run's name, or `owner/name` where several of `runs` share that name."""
    runs = list(runs)
    shared = Counter(run.name for run in runs)
    return {run.pk: qualified_name(run) if shared[run.name] > 1 else run.name for run in runs}


def find_runs(names, runs=None, *, field="runs") -> list[Run]:
    """The runs named by `names` (each a name or `owner/name`) among `runs` (a queryset; all runs by default), in
    the order given, repeats dropped. RunLookupError(field, …) for a name that finds none or several."""
    runs = (Run.objects.all() if runs is None else runs).select_related("owner", "collection")
    found = []
    for given in dict.fromkeys(names):
        matches = _matches(runs, given)
        if not matches:
            raise RunLookupError(field, f"no run named {given!r}")
        if len(matches) > 1:
            choices = ", ".join(sorted(_choice(run, matches) for run in matches))
            raise RunLookupError(field, f"several runs are named {given!r}: give one of {choices}")
        if matches[0] not in found:
            found.append(matches[0])
    return found


def find_run(name, runs=None, *, field="run") -> Run:
    """The one run `name` (a name or `owner/name`) finds among `runs`; RunLookupError otherwise."""
    return find_runs([name], runs, field=field)[0]


def matching(runs, given):
    """The runs among `runs` (a queryset) that `given` (a name or `owner/name`) may mean."""
    owner, slash, name = given.partition("/")
    if slash and owner and name:
        return runs.filter(Q(name=given) | Q(owner__username=owner, name=name))
    return runs.filter(name=given)


def _matches(runs, given) -> list[Run]:
    return list(matching(runs, given).order_by("pk")[:50])


def _choice(run, matches) -> str:
    """How to name `run` apart from the other `matches`: owner/name, or with its collection and track when that
    is not enough."""
    label = qualified_name(run)
    if sum(qualified_name(other) == label for other in matches) == 1:
        return label
    where = f"collection {run.collection.name}" + (f", campaign {run.track}" if run.track else "")
    return f"{label} ({where})"
