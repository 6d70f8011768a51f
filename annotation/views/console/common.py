"""What the console's views share: who may use them, the campaign of a URL, and problems as the pages list them."""

from django.shortcuts import get_object_or_404

from annotation.models import Campaign
from annotation.views.campaigns import organisers_only  # noqa: F401 — the one rule: organisers, 404 for the rest


def campaign_of(name) -> Campaign:
    """The campaign named in the URL (with its track), or 404."""
    return get_object_or_404(Campaign.objects.select_related("track__collection"), name=name)


def problems_of(exc) -> list[dict]:
    """An ImportFailed's problems as {source, line, field, message}, file names without folders."""
    from pathlib import Path

    rows = []
    for p in exc.problems:
        source = Path(p.source).name if p.source.startswith("/") else p.source
        rows.append({"source": source, "line": p.line, "field": (p.field or "").lstrip("-") or None,
                     "message": p.message})
    return rows


def more_problems(exc) -> int:
    return max(0, exc.total - len(exc.problems))
