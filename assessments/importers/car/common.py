"""What the CAR importers share: limits, the collection they write to, small checks."""



from retrieval.ingest import ImportFailed, Problems, json_type
from retrieval.models import Collection

DEFAULT_COLLECTION = "car-y3"
LOOKUP_CHUNK = 500
MAX_EXTERNAL_ID = 200  # Topic.external_id, Passage.external_id
MAX_TITLE = 500  # Topic.title
MAX_HEADING = 500  # Facet.heading
MAX_HEADING_ID = 300  # Facet.heading_id
MAX_RUN_NAME = 100  # Run.name
MAX_FACETS = 1000  # far more than any outline; keeps positions well inside a small integer
SHOWN_DIFFERENCES = 3

# --- small helpers ------------------------------------------------------------------------------------------


def short(value, limit=60) -> str:
    """repr() of a value, cut to `limit` characters for messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"


def check_text(value, problems, *, line, field, limit, what="", required=True) -> bool:
    """A string of at most `limit` characters (non-blank when required); a problem otherwise."""
    if not isinstance(value, str):
        expected = f"{what} as a string" if what else "a string"
        problems.add(f"expected {expected}, got {json_type(value)}", line=line, field=field)
        return False
    if required and not value.strip():
        problems.add(f"{what or 'the value'} is empty", line=line, field=field)
        return False
    if len(value) > limit:
        label = f"{what} " if what else ""
        problems.add(f"{label}{short(value)} is longer than {limit} characters", line=line, field=field)
        return False
    return True


def merge_failure(exc: ImportFailed, problems: Problems):
    """Copy the problems of an ImportFailed (e.g. from read_text) into a collector of the same source."""
    for problem in exc.problems:
        problems.add(problem.message, line=problem.line, field=problem.field)


def find_collection(name, problems):
    """The collection called `name` (None if there is none yet); it must hold passages."""
    collection = Collection.objects.filter(name=name).first()
    if collection is not None and collection.kind != Collection.Kind.PASSAGES:
        problems.add(
            f"collection {name!r} holds {collection.get_kind_display().lower()}, not passages", field="collection"
        )
    return collection
