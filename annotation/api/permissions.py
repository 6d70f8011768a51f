"""Who may call what: a request's API role comes from its token, or, in a browser session, from the user's groups.

Roles: an organiser may do everything; a participant (a team) works with its own runs and its
campaigns' topics; anyone else (an assessor, a reviewer) gets 403, and an anonymous request 401.
A token with a campaign acts on that campaign only.
"""

from rest_framework.permissions import BasePermission

from annotation.models import ApiToken
from annotation.roles import api_role

ORGANISER = ApiToken.Role.ORGANISER
PARTICIPANT = ApiToken.Role.PARTICIPANT


def request_token(request) -> ApiToken | None:
    """The token the request came with, if any."""
    return request.auth if isinstance(request.auth, ApiToken) else None


def request_role(request) -> str | None:
    """ORGANISER, PARTICIPANT or None for this request (computed once per request)."""
    if not hasattr(request, "_api_role"):
        request._api_role = _role(request)
    return request._api_role


def _role(request):
    """The token's role while its user still has it (checked at every use: a demoted user's token stops working),
    else the user's own role (annotation.roles decides)."""
    user = request.user
    if not user or not user.is_authenticated:
        return None
    current = api_role(user)
    token = request_token(request)
    if token is None:
        return current
    if token.role == ORGANISER:
        return ORGANISER if current == ORGANISER else None
    return PARTICIPANT if current in (PARTICIPANT, ORGANISER) else None


def scope_campaign(request):
    """The campaign a token is limited to, or None."""
    token = request_token(request)
    return token.campaign if token is not None else None


def is_organiser(request) -> bool:
    return request_role(request) == ORGANISER


class IsParticipantOrOrganiser(BasePermission):
    """Participants and organisers (assessors and reviewers work on the site, not through the API)."""

    message = "This needs a participant or organiser token."

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated) and request_role(request) is not None


class IsOrganiser(BasePermission):
    """Organisers only."""

    message = "This needs an organiser token."

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated) and is_organiser(request)


class IsUnscopedOrganiser(IsOrganiser):
    """Organisers whose token is not limited to one campaign (the endpoint reaches beyond campaigns)."""

    message = "This needs an organiser token that is not limited to one campaign."

    def has_permission(self, request, view):
        return super().has_permission(request, view) and scope_campaign(request) is None
