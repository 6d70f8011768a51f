"""REST API tokens: issue (the key is shown once), look up by key, revoke.

A key is 43 URL-safe characters (256 random bits); only its SHA-256 is stored, so a leaked
database does not leak working keys. A fast hash is enough for keys this random (a slow
password hash guards guessable secrets). The first characters are kept as `prefix` to name a
token in listings and on the command line.
"""

import hashlib
import secrets
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from annotation.models import ApiToken, Campaign
from annotation.roles import Role, api_role, ensure_groups

PREFIX_LENGTH = 8
LAST_USED_RESOLUTION = timedelta(minutes=1)  # last_used_at is written at most this often per token


class TokenError(ValueError):
    """A token that cannot be issued or revoked as asked; the message says why."""


def hash_key(key: str) -> str:
    """The stored form of a key."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def issue_token(*, username: str, role: str, campaign: str | None = None) -> tuple[ApiToken, str]:
    """Make a token for `username`; returns (token, key). The key is returned only here.

    Issuing a token never widens what its user may do: an organiser token needs a user who already is an
    organiser (annotation.roles), and the token's role is checked again at every use. A participant token for a
    name that does not exist yet makes that participant (a team account without a usable password).
    """
    if role not in ApiToken.Role.values:
        raise TokenError(f"role {role!r} is not one of {', '.join(ApiToken.Role.values)}")
    username = username.strip()
    if not username:
        raise TokenError("the user name is empty")
    with transaction.atomic():
        scope = None
        if campaign:
            scope = Campaign.objects.filter(name=campaign).first()
            if scope is None:
                raise TokenError(f"no campaign named {campaign!r}")
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        if user is None and role == ApiToken.Role.PARTICIPANT:
            user = User(username=username)
            user.set_unusable_password()
            user.full_clean(exclude=["password"])
            user.save()
            user.groups.add(ensure_groups()[Role.PARTICIPANT])
        elif user is None:
            raise TokenError(f"no user named {username!r}: make them an organiser first, then issue the token")
        elif not user.is_active:
            raise TokenError(f"user {username!r} is not active")
        if api_role(user) not in (role, Role.ORGANISER.value):
            raise TokenError(
                f"user {username!r} is not a{'n' if role == 'organiser' else ''} {role}: give the role first "
                "(a token never gives its user more than they have)"
            )
        key = secrets.token_hex(32)  # hex: never starts with "-", which a command line would take for an option
        token = ApiToken.objects.create(
            user=user, role=role, campaign=scope, prefix=key[:PREFIX_LENGTH], key_hash=hash_key(key)
        )
    return token, key


def token_for_key(key: str) -> ApiToken | None:
    """The active token with this key, or None; notes when it was used (at most once a minute)."""
    token = ApiToken.objects.active().select_related("user", "campaign").filter(key_hash=hash_key(key)).first()
    if token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def revoke_tokens(*, key_or_prefix: str | None = None, username: str | None = None) -> list[ApiToken]:
    """Revoke one token (by its key, or a prefix naming exactly one) or all tokens of a user; returns them.

    Revoking is final: a revoked token is kept (for the record) but never authenticates again.
    """
    if bool(key_or_prefix) == bool(username):
        raise TokenError("name either a token (its key or prefix) or a user")
    with transaction.atomic():
        tokens = ApiToken.objects.select_for_update().filter(revoked_at__isnull=True)
        if username:
            if not get_user_model().objects.filter(username=username).exists():
                raise TokenError(f"no user named {username!r}")
            chosen = list(tokens.filter(user__username=username))
        else:
            chosen = list(tokens.filter(key_hash=hash_key(key_or_prefix)))
            if not chosen:
                if len(key_or_prefix) < 4:
                    raise TokenError("give at least 4 characters of the token's prefix")
                chosen = list(tokens.filter(prefix__startswith=key_or_prefix[:PREFIX_LENGTH]))
                if len(key_or_prefix) > PREFIX_LENGTH:
                    chosen = []  # longer than a prefix and not a key: a mistyped key
            if not chosen:
                raise TokenError(f"no active token {key_or_prefix[:PREFIX_LENGTH]!r}…")
            if len(chosen) > 1:
                names = ", ".join(f"{t.prefix} ({t.user.username})" for t in chosen)
                raise TokenError(f"{key_or_prefix!r} names {len(chosen)} tokens ({names}); give more of the key")
        ApiToken.objects.filter(pk__in=[t.pk for t in chosen]).revoke()
        for token in chosen:
            token.refresh_from_db(fields=["revoked_at"])
    return chosen


def revoke_token(token_id) -> ApiToken:
    """Revoke one token by its id (the console's button); TokenError when there is no such active token."""
    with transaction.atomic():
        token = ApiToken.objects.select_for_update().select_related("user").filter(pk=token_id).first()
        if token is None or token.revoked_at is not None:
            raise TokenError("no such active token")
        ApiToken.objects.filter(pk=token.pk).revoke()
        token.refresh_from_db(fields=["revoked_at"])
    return token
