"""People on the site: creating assessors, reviewers, organisers and participant teams, their roles, and the
one-time sign-in link a new person chooses a password with.

A new person gets either a password (made here, shown to the organiser once: only its hash is stored) or a
sign-in link. The link is Django's password-reset token for the user: it holds a hash of the password and
the last sign-in, so it stops working as soon as it has been used (the password changes and the person is
signed in) and after PASSWORD_RESET_TIMEOUT (3 days by default). Roles are groups (annotation.roles);
organisers also get the staff flag (the admin pages). A participant team is a participant account with an
API token scoped to a campaign (annotation.services.tokens).
"""

import secrets
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.encoding import force_bytes, force_str
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode

from annotation.roles import Role, ensure_groups
from annotation.services.errors import ServiceError
from annotation.services.tokens import issue_token

PASSWORD_BYTES = 12  # secrets.token_urlsafe(12): 16 characters, 96 random bits


class PersonInvalid(ServiceError):
    """A person who cannot be made or changed as asked; `field` names the input."""


@dataclass
class NewPerson:
    """A person just made; `password` or `link` (uidb64, token) is shown to the organiser once."""

    user: object
    password: str | None = None
    link: tuple[str, str] | None = None


def _roles(roles) -> list[Role]:
    try:
        chosen = [Role(r) for r in dict.fromkeys(roles)]
    except ValueError:
        raise PersonInvalid("roles", f"roles are {', '.join(Role.values)}") from None
    if not chosen:
        raise PersonInvalid("roles", "give the person at least one role")
    return chosen


def create_person(*, username, roles, sign_in="password", email="", reviewer_of=None) -> NewPerson:
    """Make an active user with these roles; `sign_in` "password" makes a password, "link" a one-time link.

    `reviewer_of` (a Campaign) makes them one of its reviewers.
    """
    chosen = _roles(roles)
    if sign_in not in ("password", "link"):
        raise PersonInvalid("sign_in", "choose a password or a sign-in link")
    User = get_user_model()
    username = (username or "").strip()
    with transaction.atomic():
        if User.objects.filter(username__iexact=username).exists():
            raise PersonInvalid("username", f"someone is already called {username!r}")
        user = User(username=username, email=(email or "").strip())
        password = None
        if sign_in == "password":
            password = secrets.token_urlsafe(PASSWORD_BYTES)
            user.set_password(password)
        else:
            user.set_unusable_password()
        try:
            user.full_clean(exclude=["password"])
        except ValidationError as exc:
            field, errors = next(iter(exc.message_dict.items()))
            raise PersonInvalid(field, " ".join(errors)) from None
        user.is_staff = Role.ORGANISER in chosen
        user.save()
        groups = ensure_groups()
        user.groups.add(*(groups[r] for r in chosen))
        if reviewer_of is not None:
            reviewer_of.reviewers.add(user)
    return NewPerson(user=user, password=password, link=sign_in_link(user) if sign_in == "link" else None)


def set_roles(user, roles) -> None:
    """Give `user` exactly these roles (organisers also the staff flag); superusers stay superusers."""
    chosen = _roles(roles)
    groups = ensure_groups()
    with transaction.atomic():
        user.groups.remove(*groups.values())
        user.groups.add(*(groups[r] for r in chosen))
        staff = Role.ORGANISER in chosen or user.is_superuser
        if user.is_staff != staff:
            user.is_staff = staff
            user.save(update_fields=["is_staff"])
    if hasattr(user, "_role_names"):
        del user._role_names


def new_password(user) -> str:
    """A fresh password for `user` (shown once); every sign-in link made before stops working."""
    password = secrets.token_urlsafe(PASSWORD_BYTES)
    user.set_password(password)
    user.save(update_fields=["password"])
    return password


def sign_in_link(user) -> tuple[str, str]:
    """(uidb64, token) of a one-time link for `user` (see the module docstring)."""
    return urlsafe_base64_encode(force_bytes(user.pk)), default_token_generator.make_token(user)


def user_of_link(uidb64, token):
    """The active user a sign-in link is for, or None when it is wrong, used or too old."""
    try:
        pk = int(force_str(urlsafe_base64_decode(uidb64)))
    except (TypeError, ValueError, OverflowError):
        return None
    user = get_user_model().objects.filter(pk=pk, is_active=True).first()
    if user is None or not default_token_generator.check_token(user, token):
        return None
    return user


def issue_api_token(*, name, role, campaign=None) -> tuple[object, str]:
    """A token for a participant team (made if new; scoped to `campaign`, which it needs) or an existing organiser;
    returns (token, key), the key to be shown once."""
    if role == Role.PARTICIPANT:
        if campaign is None:
            raise PersonInvalid("campaign", "a participant team's token is for one campaign: choose it")
        return create_team(name=name, campaign=campaign)
    if role != Role.ORGANISER:
        raise PersonInvalid("role", "tokens are for participant teams and organisers")
    from annotation.roles import is_organiser

    user = get_user_model().objects.filter(username=(name or "").strip()).first()
    if user is None or not is_organiser(user):
        raise PersonInvalid("name", f"no organiser called {name!r}: make the person first")
    return issue_token(username=user.username, role=Role.ORGANISER.value, campaign=campaign.name if campaign else None)


def create_team(*, name, campaign) -> tuple[object, str]:
    """A participant team: an account `name` with a new API token for `campaign`; returns (token, key)."""
    name = (name or "").strip()
    if not name:
        raise PersonInvalid("name", "give the team a name")
    User = get_user_model()
    existing = User.objects.filter(username=name).first()
    if existing is not None and not existing.groups.filter(name=Role.PARTICIPANT).exists():
        raise PersonInvalid("name", f"{name!r} is someone who is not a participant")
    from annotation.services.tokens import TokenError

    try:
        return issue_token(username=name, role=Role.PARTICIPANT.value, campaign=campaign.name)
    except TokenError as exc:
        raise PersonInvalid("name", str(exc)) from None
