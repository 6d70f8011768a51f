"""The roles people have on the site, as Django groups."""

from django.db import models


class Role(models.TextChoices):
    """A person's role; organisers also get Django's staff flag to reach the admin pages."""

    ORGANISER = "organiser", "Organiser"
    REVIEWER = "reviewer", "Reviewer"
    ASSESSOR = "assessor", "Assessor"
    PARTICIPANT = "participant", "Participant"


ORGANISER_APPS = ("retrieval", "assessments", "annotation")


def ensure_groups():
    """Create the role groups; organisers get every permission on the project's own models."""
    from django.contrib.auth.models import Group, Permission

    groups = {role: Group.objects.get_or_create(name=role.value)[0] for role in Role}
    organiser_perms = Permission.objects.filter(content_type__app_label__in=ORGANISER_APPS)
    groups[Role.ORGANISER].permissions.set(organiser_perms)
    return groups
