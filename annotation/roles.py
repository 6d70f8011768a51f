"""The roles people have on the site, as Django groups, and the one place that decides who has which role.

Pages, the API (annotation.api.permissions), the admin and the commands all ask here."""

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


def has_role(user, role) -> bool:
    """Whether an active user is in the role's group (one query; cached on the user object for the request)."""
    if not (user and user.is_authenticated and user.is_active):
        return False
    if not hasattr(user, "_role_names"):
        user._role_names = set(user.groups.values_list("name", flat=True))
    return role in user._role_names


def is_organiser(user) -> bool:
    """Organisers (superusers, staff, or the organiser group) may see and do everything in campaigns."""
    return bool(user and user.is_authenticated and user.is_active) and (
        user.is_superuser or user.is_staff or has_role(user, Role.ORGANISER)
    )


def is_reviewer(user) -> bool:
    """Reviewers and organisers have a review queue."""
    return is_organiser(user) or has_role(user, Role.REVIEWER)


def can_be_assigned(user) -> bool:
    """Whether work may be given to the user: active, and not a participant team alone (a team judging the pool its
    own runs made would grade its own systems); a participant who is also an assessor may be."""
    if not (user and user.is_active):
        return False
    return not has_role(user, Role.PARTICIPANT) or has_role(user, Role.ASSESSOR)


def api_role(user) -> str | None:
    """The API role a user has now: organiser, participant, or None (assessors and reviewers work on the site)."""
    if is_organiser(user):
        return Role.ORGANISER.value
    if has_role(user, Role.PARTICIPANT):
        return Role.PARTICIPANT.value
    return None


def can_view_assignment(user, assignment) -> bool:
    """An assignment's page opens for its assessor, and read-only for organisers."""
    return assignment.assessor_id == user.pk or is_organiser(user)
