"""What the machine-assistance commands share: finding a campaign by name, and a progress bar on stderr."""

from django.apps import apps
from django.core.management.base import CommandError


def campaign_id(name, what="nothing was done"):
    """The id of the campaign named `name` (None for no name); CommandError when there is none."""
    if not name:
        return None
    found = apps.get_model("annotation", "Campaign").objects.filter(name=name).values_list("pk", flat=True).first()
    if found is None:
        raise CommandError(f"{what}: --campaign: no campaign named {name!r}")
    return found


def progress_bar(command, total, description, enabled=True):
    """A tqdm bar on the command's stderr with the time left, or None when hidden."""
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=description, unit="item", file=command.stderr._out, dynamic_ncols=True)


def number(value, digits=3):
    return "–" if value is None else f"{value:.{digits}f}"
